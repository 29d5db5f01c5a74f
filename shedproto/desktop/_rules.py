"""Pure launch rules: the host-id grammar, ``roost.run`` argv splitting, launch fields.

The version implemented for the Tauri launch doors is selectable with
:class:`LaunchPolicy`; the default is the current Tauri code (charliek/shed
desktop/tauri/src-tauri/src/ipc.rs:868@2cd01ef, roost_launch), which
reads ``display_name``, ``permission_mode`` and ``initial_prompt`` as optional
strings and ignores them. ``LaunchPolicy.REFUSE_EXTRAS`` is the newest ipc.md
text, which refuses the latter two with ``bad_request`` in any JSON shape.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ._codes import DesktopCode
from ._dialect import Dialect
from ._errors import DesktopError
from ._rc import WHITE_SPACE

__all__ = [
    "DEFAULT_MAC_KIND",
    "INITIAL_PROMPT_MAX_BYTES",
    "HostId",
    "HostIdError",
    "LaunchFields",
    "LaunchPolicy",
    "json_word",
    "launch_fields",
    "launch_target",
    "parse_host_id",
    "run_command",
    "rust_debug",
    "split_argv",
]

_ASCII_WHITESPACE = re.compile(r"[ \t\n\x0c\r]+")
DEFAULT_MAC_KIND = "claude"
"""The kind the mac app launches when ``rc.launch`` names none."""
INITIAL_PROMPT_MAX_BYTES = 2000
"""mac: a trimmed ``initial_prompt`` over this many UTF-8 bytes is ``invalid-param``."""
PROMPTLESS_KINDS = frozenset({"claude-broker"})
"""mac: kinds that accept no typed input, so any ``initial_prompt`` is refused."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

INITIAL_PROMPT_REFUSAL = (
    "initial_prompt is not supported by a roost launch; type it into the tab, "
    "or start a craze session, whose create takes a first prompt"
)
PERMISSION_MODE_REFUSAL = (
    "permission_mode is not supported by a roost launch; "
    "set the mode in the agent once its tab is open"
)


def split_argv(command: str) -> list[str]:
    r"""Split ``command`` on ASCII whitespace (space, ``\t``, ``\n``, ``\x0c``, ``\r``).

    Rust's ``split_ascii_whitespace``: empty pieces are dropped, ``\x0b`` and
    Unicode whitespace do not split, quotes and ``$`` stay literal. This is
    not ``str.split()``. Never raises.
    """
    return [word for word in _ASCII_WHITESPACE.split(command) if word]


class HostIdError(ValueError):
    """A host id that does not parse; ``str(error)`` is the server's message."""


@dataclass(frozen=True)
class HostId:
    """A parsed host id: ``roost:<server>/<shed>`` or ``machine:<name>`` (a bare word)."""

    kind: str
    """``"shed"`` or ``"machine"``."""
    name: str
    """The machine name, or the shed name."""
    server: str = ""
    """The shed server (empty for a machine)."""

    @property
    def origin(self) -> str:
        """The row origin: ``machine:<name>`` or ``roost:<server>/<shed>``."""
        return f"roost:{self.server}/{self.name}" if self.kind == "shed" else f"machine:{self.name}"

    @property
    def address(self) -> str:
        """The ``machine`` field of answers: the bare name, or the full token for a shed."""
        return self.origin if self.kind == "shed" else self.name


def rust_debug(text: str) -> str:
    """Quote ``text`` as Rust's ``{:?}`` does for a ``str`` (the servers' messages use it)."""
    out = ['"']
    for char in text:
        if char in _DEBUG_ESCAPES:
            out.append(_DEBUG_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_DEBUG_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def parse_host_id(text: str) -> HostId:
    """Parse the target grammar as ``HostId::parse`` does.

    The input is trimmed. ``roost:<server>/<shed>`` splits at the first
    ``/`` and needs both parts; ``machine:<name>`` needs a name; any other
    word is a machine name, verbatim.

    Raises:
        HostIdError: ``an empty host id names nothing``, ``"<t>" names no
            server (want roost:<server>/<shed>)`` or ``"<t>" names no machine``.

    """
    value = text.strip()
    if not value:
        raise HostIdError("an empty host id names nothing")
    if value.startswith("roost:"):
        server, slash, shed = value[len("roost:") :].partition("/")
        if not slash or not server or not shed:
            raise HostIdError(f"{rust_debug(value)} names no server (want roost:<server>/<shed>)")
        return HostId(kind="shed", name=shed, server=server)
    if value.startswith("machine:"):
        name = value[len("machine:") :]
        if not name:
            raise HostIdError(f"{rust_debug(value)} names no machine")
        return HostId(kind="machine", name=name)
    return HostId(kind="machine", name=value)


class LaunchPolicy(Enum):
    """Which version of the launch rules a Tauri server follows."""

    IGNORE_EXTRAS = "ignore_extras"
    """Current Tauri code: the three extras are read as optional strings and ignored."""
    REFUSE_EXTRAS = "refuse_extras"
    """Newest ipc.md: ``initial_prompt``/``permission_mode`` refused with ``bad_request``."""


@dataclass(frozen=True)
class LaunchFields:
    """The normalised fields of a launch: blank is absent everywhere."""

    kind: str
    workdir: str | None = None
    display_name: str | None = None
    initial_prompt: str | None = None


def _blank_to_none(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def launch_target(target: str | None, machine: str | None) -> str:
    """Return the addressing string of ``roost.launch``/``roost.run``: ``target``, else ``machine``.

    Raises:
        DesktopError: ``bad_request`` ``missing 'machine'`` when neither is a string.

    """
    if target is not None:
        return target
    if machine is None:
        raise DesktopError(DesktopCode.BAD_REQUEST, "missing 'machine'")
    return machine


def _present(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key)
    return value is not None and not (isinstance(value, str) and not value.strip())


def launch_fields(
    dialect: Dialect,
    *,
    kind: str | None,
    raw: Any,
    known_kinds: Collection[str],
    policy: LaunchPolicy = LaunchPolicy.IGNORE_EXTRAS,
) -> LaunchFields:
    """Validate and normalise a launch's fields; everything here is answered before any host.

    ``raw`` is the request's params as received (to see non-string extras).
    mac: ``kind`` defaults to :data:`DEFAULT_MAC_KIND`; ``initial_prompt`` is
    trimmed and refused (``invalid-param``) with a control character, over
    ``INITIAL_PROMPT_MAX_BYTES``, or for a promptless kind. Tauri: ``kind``
    must be known (``unknown rc kind '<x>'``); extras per ``policy``.

    Raises:
        DesktopError: ``bad_request`` (Tauri) or ``invalid-param`` (mac).

    """
    params: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    workdir = _blank_to_none(params.get("workdir"))
    display_name = _blank_to_none(params.get("display_name"))
    if dialect is Dialect.MAC:
        chosen = kind if kind is not None and kind.strip() else DEFAULT_MAC_KIND
        if chosen not in known_kinds:
            raise DesktopError(DesktopCode.INVALID_PARAM, f"unknown kind: {chosen}")
        prompt = _blank_to_none(params.get("initial_prompt"))
        if prompt is not None:
            if _CONTROL.search(prompt):
                raise DesktopError(
                    DesktopCode.INVALID_PARAM, "initial_prompt contains a control character"
                )
            size = len(prompt.encode("utf-8", "surrogatepass"))
            if size > INITIAL_PROMPT_MAX_BYTES:
                raise DesktopError(
                    DesktopCode.INVALID_PARAM,
                    f"initial_prompt is {size} bytes; at most {INITIAL_PROMPT_MAX_BYTES} allowed",
                )
            if chosen in PROMPTLESS_KINDS:
                raise DesktopError(
                    DesktopCode.INVALID_PARAM, f"kind {chosen} does not accept an initial_prompt"
                )
        return LaunchFields(
            kind=chosen, workdir=workdir, display_name=display_name, initial_prompt=prompt
        )
    if kind is None:
        raise DesktopError(DesktopCode.BAD_REQUEST, "missing or invalid 'kind'")
    if policy is LaunchPolicy.REFUSE_EXTRAS:
        if _present(params, "initial_prompt"):
            raise DesktopError(DesktopCode.BAD_REQUEST, INITIAL_PROMPT_REFUSAL)
        if _present(params, "permission_mode"):
            raise DesktopError(DesktopCode.BAD_REQUEST, PERMISSION_MODE_REFUSAL)
    if kind not in known_kinds:
        raise DesktopError(DesktopCode.BAD_REQUEST, f"unknown rc kind '{kind}'")
    return LaunchFields(kind=kind, workdir=workdir, display_name=display_name)


def run_command(command: str | None) -> list[str]:
    """Return ``roost.run``'s argv for ``command`` (``RunCommand::parse``).

    Split on ASCII whitespace (:func:`split_argv`); refused when absent (a
    non-string reads as absent) or blank by Rust's ``trim`` (Unicode
    ``White_Space``), so a command that passes always has a first word (charliek/shed
    desktop/tauri/src-tauri/src/roost_hosts.rs:3292-3307@9668981 ``RunCommand::parse``).

    Raises:
        DesktopError: ``bad_request`` ``missing 'command': name the program to run
            (a blank command is not a plain shell \u2014 roost's own UI opens those)``.

    """
    if command is None or not command.strip(WHITE_SPACE):
        raise DesktopError(
            DesktopCode.BAD_REQUEST,
            "missing 'command': name the program to run (a blank command is not a plain "
            "shell \u2014 roost's own UI opens those)",
        )
    return split_argv(command)


def json_word(value: Any) -> str:
    """Name a JSON value the way serde's ``invalid type`` messages do. Never raises."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {rust_debug(value)}"
    return "sequence" if isinstance(value, list) else "map"
