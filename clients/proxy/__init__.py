"""The validating proxy, the cassette recorder, the replay server and the conformance probe.

* :class:`Proxy`: relays one protocol's connections from a listen socket to
  an upstream socket byte for byte and reports every deviation the core's
  observers find (:mod:`shedproto.observe`); ``strict`` stops at the first.
* :class:`Recorder`: writes what a proxy relays to a cassette (format in
  :mod:`shedproto.observe`), secrets redacted.
* :class:`ReplayServer`: serves a cassette's server side to a client and
  reports every client frame the cassette did not expect.
* :func:`run_check`: the conformance probe (:mod:`shedproto.observe`'s cases)
  against a live server.
"""

from __future__ import annotations

from ._check import CASE_TIMEOUT, CheckResult, run_check
from ._recorder import MAX_RECORD_BYTES, Recorder
from ._relay import RECEIVE_CHUNK, Proxy
from ._replay import Episode, ReplayMismatch, ReplayServer, episodes_of, frame_key

__all__ = [
    "CASE_TIMEOUT",
    "MAX_RECORD_BYTES",
    "RECEIVE_CHUNK",
    "CheckResult",
    "Episode",
    "Proxy",
    "Recorder",
    "ReplayMismatch",
    "ReplayServer",
    "episodes_of",
    "frame_key",
    "run_check",
]
