r"""Observers: validate one connection's traffic in both directions with the core (sans-IO).

An :class:`Observer` is fed the client-to-server and server-to-client bytes
of one connection as they were relayed and returns :class:`Diagnostic`
values: unknown op or method, schema violation with its JSON path, a frame
illegal in the connection's state, an error code outside the protocol's
registry, an over-cap line, an answer to a request never sent, an answer out
of order. Each protocol's adapter drives that protocol's own decoders and
connection objects, so no protocol is described twice. The proxy, the replay
server and the conformance probe all use these observers.

Example::

    observe = observer_factory("herdr", version=21)(0)
    for diagnostic in observe.feed("c2s", b'{"id":"1","method":"nope","params":{}}\n'):
        print(diagnostic.human())
"""

from __future__ import annotations

from ._agents_host import AgentsHostObserver
from ._answers import REPLAY_ERROR_CODES, not_in_cassette_answer
from ._base import Observer
from ._cassette import (
    CASSETTE_FORMAT,
    CassetteError,
    CassetteHeader,
    CassetteRecord,
    decode_cassette,
    encode_header,
    encode_record,
)
from ._desktop import DesktopObserver
from ._diagnostic import Diagnostic, DiagnosticKind, Direction, kind_of
from ._factory import PROTOCOLS, ObserverFactory, observer_factory, resolve_options
from ._herdr import HerdrObserver
from ._host_agent import ApprovalObserver, StatusObserver
from ._probe import Outcome, ProbeCase, judge, outcome_of, probe_cases
from ._redact import REDACTED, REDACTION_TABLE, Redaction, redact

__all__ = [
    "CASSETTE_FORMAT",
    "PROTOCOLS",
    "REDACTED",
    "REDACTION_TABLE",
    "REPLAY_ERROR_CODES",
    "CassetteError",
    "CassetteHeader",
    "CassetteRecord",
    "decode_cassette",
    "encode_header",
    "encode_record",
    "judge",
    "not_in_cassette_answer",
    "outcome_of",
    "probe_cases",
    "redact",
    "resolve_options",
    "AgentsHostObserver",
    "ApprovalObserver",
    "DesktopObserver",
    "Diagnostic",
    "DiagnosticKind",
    "Direction",
    "HerdrObserver",
    "Observer",
    "ObserverFactory",
    "Outcome",
    "ProbeCase",
    "Redaction",
    "StatusObserver",
    "kind_of",
    "observer_factory",
]
