"""``shed-host-agent status``: argument rules, messages and the text layout, as pure functions.

The layout copies Go ``text/tabwriter`` (padding 2, pad char space, widths in
code points): every non-final cell of a table is padded to the column's
widest cell plus two, the final cell is written as is, so rows whose last
cell is empty keep their trailing spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._constants import GATED_NAMESPACES
from ._status import ApprovalChannelStatus, LiveStatus, RcHubStatus

__all__ = [
    "StatusArgs",
    "StatusUsageError",
    "go_quote",
    "not_running_message",
    "parse_status_args",
    "render_status",
    "tabwrite",
]


def tabwrite(rows: Sequence[Sequence[str]]) -> str:
    """Lay ``rows`` out as Go's tabwriter does with padding 2; every line ends with a newline."""
    widths: list[int] = []
    for row in rows:
        for index, cell in enumerate(row[:-1]):
            if index == len(widths):
                widths.append(0)
            widths[index] = max(widths[index], len(cell))
    out = []
    for row in rows:
        line = "".join(cell.ljust(widths[i] + 2) for i, cell in enumerate(row[:-1]))
        out.append(line + (row[-1] if row else "") + "\n")
    return "".join(out)


def _client_suffix(channel: ApprovalChannelStatus) -> str:
    if not channel.client_name:
        return ""
    if not channel.client_version:
        return f" ({channel.client_name})"
    return f" ({channel.client_name} {channel.client_version})"


def _mark(state: str) -> str:
    if state == "connected":
        return "ok"
    if state == "stopped":
        return "-"
    return "x"


def _rc_hub_line(hub: RcHubStatus) -> str:
    return f"RC hub:   {hub.state}" + (f" ({hub.addr})" if hub.addr else "")


def render_status(status: LiveStatus) -> str:
    """Render ``status`` exactly as ``shed-host-agent status`` prints it (newline-terminated).

    Never raises; missing policies render as empty cells.
    """
    parts = [f"shed-host-agent status (pid {status.pid}, {status.version})\n"]
    if status.config_path:
        parts.append(f"config:   {status.config_path}\n")
    parts.append(f"started:  {status.started_at}\n\nApproval policies:\n")
    gated = set(status.gate_namespaces)
    parts.append(
        tabwrite(
            [
                [
                    f"  {ns}",
                    status.policies.get(ns, ""),
                    "(decided in shed-desktop)" if ns in gated else "",
                ]
                for ns in GATED_NAMESPACES
            ]
        )
    )
    channel = status.approval_channel
    parts.append(f"\nApproval channel:\n  socket    {channel.socket_path}\n")
    if channel.consumer_connected:
        parts.append(f"  consumer  connected{_client_suffix(channel)}\n")
    else:
        parts.append("  consumer  none connected (shed-desktop-policy requests fail closed)\n")
    parts.append("\n")
    if status.rc_hub.state:
        parts.append(_rc_hub_line(status.rc_hub) + "\n\n")
    parts.append(f"Servers ({len(status.servers)}):\n")
    if not status.servers:
        parts.append("  (none being watched)\n")
    for server in status.servers:
        parts.append(f"  {server.name or '(default)'}  ({server.url})\n")
        if not server.namespaces:
            parts.append("    (no subscriptions yet)\n")
            continue
        parts.append(
            tabwrite(
                [
                    [
                        f"    {_mark(ns.state)}",
                        ns.namespace,
                        ns.state + (f": {ns.last_error}" if ns.last_error else ""),
                    ]
                    for ns in server.namespaces
                ]
            )
        )
    return "".join(parts)


def not_running_message(status_socket: str) -> str:
    """Return the three stderr lines ``status`` prints when nothing listens at the socket."""
    return (
        f"shed-host-agent is not running \u2014 nothing is listening at {status_socket}\n"
        "Start it (Homebrew): brew services start shed-host-agent\n"
        "  or run it directly: shed-host-agent -config <path>\n"
    )


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """Quote ``text`` like Go's ``%q``: printable runes kept, the rest escaped."""
    out = ['"']
    for char in text:
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif 0xDC80 <= ord(char) <= 0xDCFF:
            out.append(f"\\x{ord(char) - 0xDC00:02x}")  # an undecodable argv byte
        elif 0xD800 <= ord(char) <= 0xDFFF:
            out.append("\\ufffd")
        elif char.isprintable() or char == " ":
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


@dataclass(frozen=True)
class StatusArgs:
    """The parsed ``status`` arguments: ``json`` when ``--json``/``-json`` was given."""

    json: bool = False


class StatusUsageError(ValueError):
    """A ``status`` argument the real CLI rejects (exit 2); ``str()`` is its stderr line."""


_LIVE_REMOVED = "status: --live was removed; `status` now always queries the running agent"


def parse_status_args(tokens: Sequence[str]) -> StatusArgs:
    """Parse the tokens after ``status`` as the real CLI does; the first bad token wins.

    Raises:
        StatusUsageError: ``--live``/``-live`` (removed) or any unknown token;
            its message is the stderr line without the newline.

    """
    json = False
    for token in tokens:
        if token in ("--json", "-json"):
            json = True
        elif token in ("--live", "-live"):
            raise StatusUsageError(_LIVE_REMOVED)
        else:
            raise StatusUsageError(f"status: unknown argument {go_quote(token)}")
    return StatusArgs(json=json)
