"""Secret redaction for cassettes: fails closed, whatever else is wrong with a frame.

The redaction table names, per protocol and direction, the fields that can
carry a secret. A line of such a direction is decoded as untyped JSON (never
through the protocol's typed decoder, so a frame that fails validation in
another field is redacted all the same) and every such field found is
replaced by :data:`REDACTED`. A line that is not JSON at all (not UTF-8,
truncated, cut by the 64 MiB record cap, the tail of a stream) cannot be
searched, so the whole line is withheld: it becomes ``REDACTED`` and the
result says why (so is a raw ``pane.graphics.stream`` after herdr's
``ok``: its frames are not JSON lines). Blank lines are kept; directions the
table does not name are never touched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from ._diagnostic import Direction

__all__ = ["REDACTED", "REDACTION_TABLE", "Redaction", "redact"]

REDACTED = "REDACTED"
"""The value that replaces a secret (and the text of a withheld line)."""

_ENCODER = msgspec.json.Encoder()
_CREDENTIAL_KEYS = frozenset({"token", "client_cert"})
_CREDENTIAL_ANSWERS = frozenset({"token.response", "credential.response"})
_CREDENTIAL_PLAIN = frozenset(
    {"v", "type", "id", "ts", "in_reply_to", "server", "auth_mode", "cert_serial", "expires_at"}
    | {"error"}
)
"""The fields of a credential answer known to hold no secret; any other field is redacted."""

REDACTION_TABLE: dict[tuple[str, Direction], str] = {
    ("host-agent", "s2c"): "`token` and `client_cert` at any depth of any frame; in a "
    "`token.response` or `credential.response`, every field but `v`, `type`, `id`, `ts`, "
    "`in_reply_to`, `server`, `auth_mode`, `cert_serial`, `expires_at` and `error`",
    ("agents-host", "c2s"): "every value of any `env` object at any depth of any request "
    "(a `submit` command, also when the command is a JSON string)",
    ("herdr", "c2s"): "every value of any `env` object at any depth of any request "
    "(`workspace.create`, `tab.create`, `pane.split`, `plugin.pane.open`, layouts), and a "
    "command string that holds `env` but does not decode",
    ("herdr", "s2c"): "every value of any `env` object at any depth of any answer or event "
    "(a `layout.export` result's panes, `layout_updated` events), and a command string "
    "that holds `env` but does not decode",
}
"""(protocol, direction) -> the fields redacted there, in words (docs/proxy.md has this table)."""


class Redaction(NamedTuple):
    """What :func:`redact` made of one line.

    ``line`` is what goes into the cassette, ``paths`` the JSON paths whose
    values were replaced (``("$",)`` for a withheld line), ``withheld`` the
    reason the whole line was replaced (``None`` when it was searched).
    """

    line: bytes
    paths: tuple[str, ...] = ()
    withheld: str | None = None


def redact(protocol: str, direction: Direction, line: bytes) -> Redaction:
    """Return ``line`` (one frame, with or without its line ending) with its secrets replaced.

    Never raises: a line of a secret-bearing direction that cannot be decoded
    as JSON is withheld whole (see the module docstring).
    """
    scrub = _SCRUBBERS.get((protocol, direction))
    if scrub is None or not line.strip():
        return Redaction(line)
    ending = line[len(line.rstrip(b"\r\n")) :]
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        reason = _why_unreadable(line, ending, exc)
        return Redaction(REDACTED.encode() + ending, ("$",), reason)
    paths: list[str] = []
    value = scrub(value, "$", paths)
    if not paths:
        return Redaction(line)
    return Redaction(_ENCODER.encode(value) + ending, tuple(paths))


def _why_unreadable(line: bytes, ending: bytes, exc: msgspec.DecodeError) -> str:
    size = len(line) - len(ending)
    if not ending:
        what = "a partial line (the stream ended or the record cap was reached before its newline)"
    else:
        what = "a line that is not JSON"
    return f"{what}, {size} bytes, could not be searched for secrets ({exc}); withheld whole"


def _credentials(value: Any, path: str, paths: list[str]) -> Any:
    if isinstance(value, dict):
        kind = value.get("type")
        answer = isinstance(kind, str) and kind in _CREDENTIAL_ANSWERS
        for key, item in value.items():
            where = f"{path}.{key}"
            secret = key in _CREDENTIAL_KEYS or (answer and key not in _CREDENTIAL_PLAIN)
            if secret and item not in ("", None):
                value[key] = REDACTED
                paths.append(where)
            else:
                value[key] = _credentials(item, where, paths)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            value[position] = _credentials(item, f"{path}[{position}]", paths)
    return value


def _env(value: Any, path: str, paths: list[str]) -> Any:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if key == "env":
                value[key] = _env_values(item, where, paths)
            elif key == "command" and isinstance(item, str):
                value[key] = _env_in_string(item, where, paths)
            else:
                value[key] = _env(item, where, paths)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            value[position] = _env(item, f"{path}[{position}]", paths)
    return value


def _env_values(env: Any, path: str, paths: list[str]) -> Any:
    if isinstance(env, dict):
        for name in env:
            env[name] = REDACTED
            paths.append(f"{path}.{name}")
        return env
    if env in ("", None, []):
        return env
    paths.append(path)  # an env of the wrong type: the whole value
    return REDACTED


def _env_in_string(command: str, path: str, paths: list[str]) -> str:
    """Search a command sent as a JSON string; replace one that does not decode but may hold env."""
    try:
        inner = msgspec.json.decode(command)
    except msgspec.DecodeError:
        if "env" not in command and "\\" not in command:
            return command  # no key can be spelled in it: nothing to hide
        paths.append(path)
        return REDACTED
    found = len(paths)
    inner = _env(inner, path, paths)
    return command if len(paths) == found else _ENCODER.encode(inner).decode("utf-8")


_SCRUBBERS: dict[tuple[str, Direction], Callable[[Any, str, list[str]], Any]] = {
    ("host-agent", "s2c"): _credentials,
    ("agents-host", "c2s"): _env,
    ("herdr", "c2s"): _env,
    ("herdr", "s2c"): _env,
}

