r"""``machine.add``'s reading of its params and its refusals, as the newer Tauri app has them.

The app's ``machines::add_from_json`` (charliek/shed
``desktop/tauri/src-tauri/src/machines.rs:76-166@9a84ddf``) and the config editor it
calls (``crates/shed-core/src/config_edit.rs:75-123@156fbed`` ``insert_machine``) decide,
in this order, and every refusal is ``bad_request`` (ipc.rs:1308-1312@2cd01ef
``machine_add``):

1. ``name``: a string, trimmed (anything else reads as ``""``); ``localhost`` is
   reserved for this machine's own session;
2. ``ssh_port``: absent or ``null`` is the default (22); otherwise an unsigned
   integer or a string holding one (trimmed), 1..65535, else ``<value> is not a
   usable SSH port (1-65535)`` with the value as JSON;
3. the name must be a plain key (ASCII letters, digits, ``.``, ``-``, ``_``);
4. a machine already configured under the name is a duplicate;
5. the written entry must read back as written: the config reader cuts a value
   at ``#`` and never unescapes, so a ``host`` or ``user`` with ``#``, ``"`` or
   ``\`` is refused (our reading of the reader's quirks; the rest round-trip).

``host`` and ``user`` are strings, trimmed, blank meaning absent (``host`` then
defaults to the name). Pure: the configured names are an argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ._codes import DesktopCode
from ._errors import DesktopError
from ._rules import rust_debug

__all__ = ["RESERVED_MACHINE", "NewMachine", "read_machine_add"]

RESERVED_MACHINE = "localhost"
"""The name this machine's own roost-session is always known by (machines.rs ``LOCALHOST``)."""

_PLAIN_KEY = re.compile(r"[A-Za-z0-9._-]+\Z")
_UNSIGNED = re.compile(r"\+?[0-9]+\Z")
_NOT_ROUND_TRIPPED = ("#", '"', "\\")


@dataclass(frozen=True)
class NewMachine:
    """The entry ``machine.add`` writes: ``host`` defaults to the name, ``ssh_port`` to 22."""

    name: str
    host: str
    user: str | None
    ssh_port: int


def _field(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _ssh_port(value: Any) -> int:
    if value is None:
        return 22
    port: int | None = None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        port = value
    elif isinstance(value, str) and _UNSIGNED.match(value.strip()):
        port = int(value.strip())
    if port is None or not 1 <= port <= 65535:
        shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        raise DesktopError(DesktopCode.BAD_REQUEST, f"{shown} is not a usable SSH port (1-65535)")
    return port


def read_machine_add(
    name: Any, host: Any, user: Any, ssh_port: Any, *, configured: Collection[str]
) -> NewMachine:
    """Return the entry ``machine.add`` would write, or refuse it as the app does.

    Raises:
        DesktopError: ``bad_request`` with the app's words, in the module's order;
            nothing is written.

    """
    bad = DesktopCode.BAD_REQUEST
    text = name.strip() if isinstance(name, str) else ""
    if text == RESERVED_MACHINE:
        raise DesktopError(
            bad,
            f"{rust_debug(RESERVED_MACHINE)} is this machine's own roost-session and is always "
            "present \u2014 it cannot be added as a machine",
        )
    port = _ssh_port(ssh_port)
    if not _PLAIN_KEY.match(text):
        raise DesktopError(
            bad,
            f"{rust_debug(text)} is not a usable machine name "
            "(letters, digits, dot, dash, underscore)",
        )
    if text in configured:
        raise DesktopError(bad, f"a machine named {rust_debug(text)} is already configured")
    entry = NewMachine(name=text, host=_field(host) or text, user=_field(user), ssh_port=port)
    written = (entry.host, entry.user or "")
    if any(mark in value for value in written for mark in _NOT_ROUND_TRIPPED):
        raise DesktopError(
            bad,
            f"{rust_debug(text)} does not read back as written \u2014 a value is not "
            "representable here (a '#' or a quote in a value is the usual cause)",
        )
    return entry
