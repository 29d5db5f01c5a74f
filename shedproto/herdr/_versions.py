"""Supported protocols, herdr's exact-equality rule, and a looser per-method check.

``protocol`` in a ``ping`` answer is herdr's thin-client wire version; the JSON
API has no version of its own, so herdr's CLI refuses any server whose number
differs from its own. :func:`check_exact` is that rule. :func:`check_methods`
is the looser one this library adds: a server is usable for a set of methods
when every one of them exists in both protocols with the same request and
result shapes (same generated types).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from shedproto._errors import ErrorCode, RemoteProtocolError

from . import types as t

__all__ = [
    "DEFAULT_PROTOCOL",
    "HERDR_VERSIONS",
    "SUPPORTED_PROTOCOLS",
    "Compatibility",
    "VersionMismatchError",
    "check_exact",
    "check_methods",
    "differing_methods",
    "require_supported",
]

SUPPORTED_PROTOCOLS: tuple[int, ...] = tuple(sorted(t.PROTOCOL_TABLES))
"""Protocol numbers this library has types for (20, 21 and 22)."""

DEFAULT_PROTOCOL: int = t.NEWEST_PROTOCOL
"""The protocol clients and the reference server speak unless told otherwise."""


HERDR_VERSIONS: dict[int, str] = {20: "0.8.2", 21: "0.9.0-preview", 22: "0.9.5"}
"""The herdr release that speaks each protocol, as ``ping`` reports it.

20 and 22 are what the tools name (herdr-bridge: 0.8.2; claude-focus: 0.9.5);
21 never shipped in a stable release (0.8.2 speaks 20, 0.9.0 already 22), so
it reports herdr's preview form of the release it led to.
"""


class VersionMismatchError(RemoteProtocolError):
    """The two sides speak different protocols; both numbers are attributes.

    ``code`` is ``VERSION_UNSUPPORTED``. ``ours`` is this side's protocol,
    ``theirs`` the peer's (``None`` when a caller asked for a protocol this
    library does not support at all). ``methods`` lists the methods whose
    shapes differ, when the looser check was used.
    """

    def __init__(
        self,
        message: str,
        *,
        ours: int,
        theirs: int | None,
        methods: tuple[str, ...] = (),
    ) -> None:
        super().__init__(ErrorCode.VERSION_UNSUPPORTED, message)
        self.ours = ours
        self.theirs = theirs
        self.methods = methods


def require_supported(protocol: int) -> None:
    """Check that this library has types for ``protocol``.

    Raises:
        VersionMismatchError: it does not (``ours`` is the newest supported).

    """
    if protocol not in t.PROTOCOL_TABLES:
        supported = ", ".join(map(str, SUPPORTED_PROTOCOLS))
        raise VersionMismatchError(
            f"protocol {protocol} is not supported (supported: {supported})",
            ours=DEFAULT_PROTOCOL,
            theirs=protocol,
        )


def check_exact(client: int, server: int) -> None:
    """Herdr's rule: compatible only when the numbers are equal.

    Raises:
        VersionMismatchError: they differ; the message is herdr's advice (restart
            an older server, or upgrade an older client) and names both numbers.

    """
    if client == server:
        return
    if client > server:
        message = (
            f"client protocol {client} is newer than server protocol {server}; "
            "restart the Herdr server to use the new protocol"
        )
    else:
        message = (
            f"client protocol {client} is older than server protocol {server}; "
            "upgrade the Herdr client"
        )
    raise VersionMismatchError(message, ours=client, theirs=server)


def _result_members(protocol: int, method: str) -> tuple[object, ...]:
    union = t.PROTOCOL_TABLES[protocol][2]["ResponseResult"]
    members = {m.__struct_config__.tag: m for m in union.__args__}
    return tuple(members[tag] for tag in t.METHOD_RESULTS.get(method, ()))


_TWIN = re.compile(r"P\d+\b")


@functools.cache
def _shape(tp: Any) -> str:
    """Return the JSON Schema of ``tp`` without protocol twin suffixes (``PongReplyP20``)."""
    return _TWIN.sub("", msgspec.json.encode(msgspec.json.schema(tp)).decode())


def differing_methods(a: int, b: int, methods: Iterable[str] | None = None) -> tuple[str, ...]:
    """Return the methods (of ``methods``, default all) whose shapes differ between ``a`` and ``b``.

    A method differs when it is missing from either protocol, or its params or
    result types have different shapes (two twins of one JSON shape are equal).

    Raises:
        VersionMismatchError: ``a`` or ``b`` is not supported.

    """
    require_supported(a)
    require_supported(b)
    params_a, params_b = t.PROTOCOL_TABLES[a][1], t.PROTOCOL_TABLES[b][1]
    names = list(params_a) if methods is None else list(methods)
    return tuple(
        method
        for method in names
        if method not in params_a
        or method not in params_b
        or _shape(params_a[method]) != _shape(params_b[method])
        or [_shape(m) for m in _result_members(a, method)]
        != [_shape(m) for m in _result_members(b, method)]
    )


@dataclass(frozen=True)
class Compatibility:
    """The outcome of :func:`check_methods` when it does not raise."""

    ours: int
    theirs: int
    exact: bool
    """True when the numbers are equal (herdr's own rule holds)."""


def check_methods(ours: int, theirs: int, methods: Iterable[str]) -> Compatibility:
    """Apply the looser check: every method in ``methods`` has the same shape in both protocols.

    Raises:
        VersionMismatchError: a method differs or is missing, or a protocol is
            unknown to this library; ``methods`` on the error lists which.

    """
    wanted = tuple(methods)
    if theirs not in t.PROTOCOL_TABLES or ours not in t.PROTOCOL_TABLES:
        raise VersionMismatchError(
            f"cannot compare protocol {ours} with protocol {theirs}: "
            f"this library knows {', '.join(map(str, SUPPORTED_PROTOCOLS))}",
            ours=ours,
            theirs=theirs,
            methods=wanted,
        )
    differ = differing_methods(ours, theirs, wanted)
    if differ:
        raise VersionMismatchError(
            f"protocol {ours} and server protocol {theirs} differ for: {', '.join(differ)}",
            ours=ours,
            theirs=theirs,
            methods=differ,
        )
    return Compatibility(ours=ours, theirs=theirs, exact=ours == theirs)
