"""herdr releases: which protocol each speaks and what changed between releases of one protocol.

The protocol number does not pin behaviour: 0.9.0 to 0.9.5 all speak 22 but
differ in their method sets, in the id an ``invalid_request`` answer carries
and in how a subscription stream ends. :data:`RELEASES` holds one
:class:`HerdrRelease` per release; a server built for a release
(``HerdrServer(herdr_version=...)``) behaves as it does, and ``ping`` reports
its version. The sources of each row are in the docs' release table
(docs/protocols/herdr.md, *Releases*).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import types as t
from ._versions import VersionMismatchError

__all__ = [
    "DEFAULT_RELEASES",
    "HIDDEN_METHODS",
    "RELEASES",
    "RETIRED_GRAPHICS",
    "HerdrRelease",
    "hidden_request_type",
    "release_for",
]

HIDDEN_METHODS: frozenset[str] = frozenset({"pane.graphics.stream"})
"""Methods herdr serves but leaves out of its published schema (``#[schemars(skip)]``).

herdrdev/herdr src/api/schema.rs:182-183@v0.8.2. Protocols 20 and 21 are
generated from the published schemas, so their tables lack it; 22 has it. The
releases of 20 and 21 parse it all the same (serde reads the variant, only the
schema skips it): their method sets add it, and their request decoders take its
type from protocol 22's table (:func:`hidden_request_type`).
"""


def hidden_request_type(method: str) -> type[t.Request]:
    """Return the request type of a :data:`HIDDEN_METHODS` member (protocol 22's).

    Raises:
        KeyError: ``method`` is not hidden.

    """
    if method not in HIDDEN_METHODS:
        raise KeyError(method)
    return t.PROTOCOL_TABLES[22][0][method]


@dataclass(frozen=True)
class HerdrRelease:
    """One herdr release as far as its socket API shows it.

    ``methods`` is what the release parses (every other method name is an
    unknown variant, ``invalid_request``). ``echoes_invalid_id``: an
    ``invalid_request`` answer to a line that carried a string ``id`` echoes
    it (earlier releases always answer ``""``), and so does a subscription
    probe failure (earlier: ``<id>:sub:<n>:probe``). ``reports_events_lost``:
    a subscriber that fell behind the retained history gets one
    ``events_lost`` error line, then EOF (earlier: the lost events are skipped
    silently). ``stream_end_errors``: a subscription whose event cannot be
    encoded ends with one ``internal_error`` line (and one whose event history
    is unavailable with ``server_unavailable``); earlier releases skip such an
    event. In every release a stream ends with a bare EOF when the server
    stops. ``ssh_agent_registration`` is the ``ping`` capability of that name.
    ``retired``: methods the release no longer has but answers ``unknown_method``
    (``unknown method: <name>``, with the line's string id) instead of
    ``invalid_request``: the ``pane.graphics.*`` methods from 0.9.2.
    ``group_close_intent``: ``workspace.close`` of a worktree group's primary
    closes the group only with ``close_group: true`` (one ``workspace_closed``
    per member) and otherwise answers ``workspace_group_close_required``
    leaving every member open; without it (0.8.2) the close takes the whole
    group and reports one ``workspace_closed``, the target's.
    """

    version: str
    protocol: int
    methods: frozenset[str]
    echoes_invalid_id: bool = False
    reports_events_lost: bool = False
    stream_end_errors: bool = False
    ssh_agent_registration: bool = False
    retired: frozenset[str] = frozenset()
    group_close_intent: bool = True
    differences: str = ""


def _methods(protocol: int, *, without: tuple[str, ...] = ()) -> frozenset[str]:
    table = set(t.PROTOCOL_TABLES[protocol][0]) | HIDDEN_METHODS
    missing = set(without) - table
    if missing:
        raise ValueError(f"protocol {protocol} has no {sorted(missing)}")
    return frozenset(table - set(without))


_LATER_092 = ("pane.clear", "server.ssh_agent.register")

RETIRED_GRAPHICS: frozenset[str] = frozenset(
    {"pane.graphics.info", "pane.graphics.set", "pane.graphics.clear", "pane.graphics.stream"}
)
"""The pane graphics API herdr removed in 0.9.2: answered ``unknown_method`` from then on.

herdrdev/herdr src/api/server.rs ``retired_pane_graphics_method_error`` and its
test ``removed_pane_graphics_methods_return_unknown_method_without_stream_upgrade``
@3f32b738; the release (0.9.2) from two independent clients' notes on live
releases (a third says 0.9.3).
"""
_RETIRED = tuple(sorted(RETIRED_GRAPHICS))

_HERDR_092 = HerdrRelease(
    version="0.9.2",
    protocol=22,
    methods=_methods(22, without=_RETIRED),
    retired=RETIRED_GRAPHICS,
    echoes_invalid_id=True,
    reports_events_lost=True,
    stream_end_errors=True,
    ssh_agent_registration=True,
    differences=(
        "adds pane.clear and server.ssh_agent.register (capability "
        "ssh_agent_registration); removes the pane.graphics.* methods (answered "
        "unknown_method); invalid_request and probe failures echo the request id; "
        "a subscriber that falls behind gets events_lost, one whose event cannot "
        "be encoded internal_error, then EOF"
    ),
)
"""0.9.2, as the newest stored source (commit 3f32b738, 0.9.2 or later) answers."""

_AS_092 = {
    "0.9.3": (
        "as 0.9.2: no herdr file is stored at its commit (7b116c05); clients' records of "
        "its live answers (ping capabilities, workspace.close) match 0.9.2's"
    ),
    "0.9.4": "as 0.9.2: no source for this release is stored",
    "0.9.5": "as 0.9.2: no source for this release is stored",
}
"""The releases modelled as 0.9.2, and why (docs/protocols/herdr.md, *Releases*)."""

RELEASES: dict[str, HerdrRelease] = {
    release.version: release
    for release in (
        HerdrRelease(
            version="0.8.2",
            protocol=20,
            methods=_methods(20),
            group_close_intent=False,
            differences=(
                "protocol 20; pane.graphics.stream is served though the published "
                "schema leaves it out; closing a worktree group's primary closes the "
                "group without asking"
            ),
        ),
        HerdrRelease(
            version="0.9.0-preview",
            protocol=21,
            methods=_methods(21),
            differences=(
                "protocol 21 (a preview between 0.8.2 and 0.9.0); pane.graphics.stream "
                "as in 0.8.2"
            ),
        ),
        HerdrRelease(
            version="0.9.0",
            protocol=22,
            methods=_methods(22, without=("pane.link.resolve", *_LATER_092)),
            differences=(
                "protocol 22; no pane.link.resolve, pane.clear, server.ssh_agent.register; "
                "closing a worktree group's primary needs close_group"
            ),
        ),
        HerdrRelease(
            version="0.9.1",
            protocol=22,
            methods=_methods(22, without=_LATER_092),
            differences="adds pane.link.resolve; invalid_request answers carry id \"\"",
        ),
        _HERDR_092,
        *(
            replace(_HERDR_092, version=version, differences=differences)
            for version, differences in _AS_092.items()
        ),
    )
}
"""Every release this library models, oldest first."""

DEFAULT_RELEASES: dict[int, str] = {20: "0.8.2", 21: "0.9.0-preview", 22: "0.9.5"}
"""The release each protocol's server is unless told otherwise (the newest of that protocol)."""


def release_for(protocol: int, herdr_version: str | None = None) -> HerdrRelease:
    """Return the release ``herdr_version`` (default: ``protocol``'s newest).

    Raises:
        VersionMismatchError: the release is unknown, or speaks another protocol;
            the message names the releases of ``protocol``.

    """
    version = DEFAULT_RELEASES.get(protocol) if herdr_version is None else herdr_version
    release = RELEASES.get(version or "")
    if release is not None and release.protocol == protocol:
        return release
    known = ", ".join(v for v, r in RELEASES.items() if r.protocol == protocol) or "none"
    if release is None:
        message = f"herdr {herdr_version} is not a release this library models"
    else:
        message = f"herdr {herdr_version} speaks protocol {release.protocol}, not {protocol}"
    raise VersionMismatchError(
        f"{message} (protocol {protocol}: {known})", ours=protocol, theirs=None
    )
