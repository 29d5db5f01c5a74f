"""Command objects: decoding queue elements, field rules, payload rules.

A command queue is an array whose elements are command objects or JSON
strings holding one. :func:`decode_command` turns one element into a
:class:`Command` or an :class:`InvalidCommand` (a typed reason plus the real
program's message); an invalid command is logged and skipped and never gets a
receipt. Payload fields are checked later, after the in-flight claim, by
:func:`parse_command_payload`; a :class:`PayloadError` there becomes a
``failed`` / ``provider-call-failed`` receipt (see :mod:`._receipts`).

Checks run in the real program's order: JSON, object, ``schema``, ``type``,
``payload`` is an object, ``id``, ``sourceId``, ``nativeSessionId`` (and the
session key), ``createdAt``, then ``ownerDid`` (must be a non-empty string;
whether it equals the host's owner is :func:`check_command_owner`, a separate
step, as in the real worker).
"""

from __future__ import annotations

import enum
import math
from typing import Any, Literal

import msgspec

from ._identity import IdentityError, session_key
from ._jsonc import js_json_parse
from ._text import has_control_character, js_length, js_trim

__all__ = [
    "COMMAND_SCHEMA",
    "COMMAND_TYPES",
    "MAX_PROMPT_TEXT",
    "CancelPayload",
    "Command",
    "CommandPayload",
    "CommandType",
    "InvalidCommand",
    "InvalidCommandReason",
    "PayloadError",
    "PromptPayload",
    "RenamePayload",
    "SetConfigOptionPayload",
    "SetModePayload",
    "StartPayload",
    "StartSurface",
    "check_command_owner",
    "decode_command",
    "parse_command_payload",
]

COMMAND_SCHEMA = "commonfabric.agent-connector.command"
"""The command object's schema string (unversioned)."""
CommandType = Literal["prompt", "start", "cancel", "rename", "set-mode", "set-config-option"]
"""The six command types."""
COMMAND_TYPES: frozenset[str] = frozenset(
    ("prompt", "start", "cancel", "rename", "set-mode", "set-config-option")
)
"""Accepted ``type`` values."""
StartSurface = Literal["headless", "desktop"]
"""Where a ``start`` runs its first prompt."""
MAX_PROMPT_TEXT = 128 * 1024
"""The longest prompt or start text, in UTF-16 code units (128 KiB)."""
_DEFAULT_MAX = 4096


class Command(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """A validated command: ids trimmed, ``sourceId`` lowercased, ``force`` a real bool.

    ``payload`` is the element's payload object as sent; it is validated per
    type by :func:`parse_command_payload` after the claim. ``requestedBy`` is
    kept here and never copied to receipts or health.
    """

    schema: str
    ownerDid: str  # noqa: N815 - wire name
    id: str
    createdAt: str  # noqa: N815 - wire name
    sourceId: str  # noqa: N815 - wire name
    nativeSessionId: str  # noqa: N815 - wire name
    type: CommandType
    payload: dict[str, Any]
    force: bool = False
    requestedBy: str | None = None  # noqa: N815 - wire name

    @property
    def session_key(self) -> str:
        """Return the session key (the per-session queue) of this command."""
        return session_key(self.sourceId, self.nativeSessionId)


class InvalidCommandReason(str, enum.Enum):
    """Why a queue element is not a command; values are stable identifiers."""

    INVALID_JSON = "invalid-json"
    NOT_AN_OBJECT = "not-an-object"
    UNSUPPORTED_SCHEMA = "unsupported-schema"
    UNSUPPORTED_TYPE = "unsupported-type"
    INVALID_PAYLOAD = "invalid-payload"
    INVALID_ID = "invalid-id"
    INVALID_SOURCE_ID = "invalid-source-id"
    INVALID_NATIVE_SESSION_ID = "invalid-native-session-id"
    INVALID_CREATED_AT = "invalid-created-at"
    INVALID_OWNER_DID = "invalid-owner-did"
    WRONG_OWNER = "wrong-owner"


class InvalidCommand(msgspec.Struct, frozen=True, gc=False):
    """A queue element that is not a valid command: skip it, log it, write no receipt.

    ``message`` is the real program's error text (``unsupported command
    schema``); :attr:`log_line` is the line it logs.
    """

    reason: InvalidCommandReason
    message: str

    @property
    def log_line(self) -> str:
        """The real program's log line: ``[agents-connector] invalid command: Error: <message>``."""
        return f"[agents-connector] invalid command: Error: {self.message}"


class _InvalidError(Exception):
    def __init__(self, reason: InvalidCommandReason, message: str) -> None:
        super().__init__(message)
        self.invalid = InvalidCommand(reason, message)


class _WireCommand(msgspec.Struct, gc=False):
    """The fast path: a JSON element whose every field already has the right JSON type."""

    schema: str
    id: str
    createdAt: str  # noqa: N815 - wire name
    sourceId: str  # noqa: N815 - wire name
    nativeSessionId: str  # noqa: N815 - wire name
    type: str
    payload: dict[str, Any]
    ownerDid: str  # noqa: N815 - wire name
    force: Any = None
    requestedBy: Any = None  # noqa: N815 - wire name


_FAST = msgspec.json.Decoder(_WireCommand)
_ANY = msgspec.json.Decoder()
_MISSING: Any = object()


_ASCII_WHITESPACE = "\t\n\v\f\r "


def _required(value: Any, field: str, max_length: int, reason: InvalidCommandReason) -> str:
    """JavaScript ``requiredString``: a non-empty (trimmed) string, length checked untrimmed."""
    if not isinstance(value, str):
        raise _InvalidError(reason, f"{field} must be a non-empty string")
    if value.isascii():  # the common case: JS trim and length are the ASCII ones
        trimmed = value.strip(_ASCII_WHITESPACE)
        if not trimmed:
            raise _InvalidError(reason, f"{field} must be a non-empty string")
        if len(value) > max_length:
            raise _InvalidError(reason, f"{field} exceeds {max_length} characters")
        return trimmed
    trimmed = js_trim(value)
    if not trimmed:
        raise _InvalidError(reason, f"{field} must be a non-empty string")
    if js_length(value) > max_length:
        raise _InvalidError(reason, f"{field} exceeds {max_length} characters")
    return trimmed


def _validate(  # noqa: PLR0917 - one argument per wire field, shared by both paths
    schema: Any,
    type_: Any,
    payload: Any,
    raw_id: Any,
    raw_source: Any,
    raw_native: Any,
    raw_created: Any,
    raw_owner: Any,
    force: Any,
    requested_by: Any,
) -> Command:
    if schema != COMMAND_SCHEMA:
        raise _InvalidError(InvalidCommandReason.UNSUPPORTED_SCHEMA, "unsupported command schema")
    if not isinstance(type_, str) or type_ not in COMMAND_TYPES:
        raise _InvalidError(
            InvalidCommandReason.UNSUPPORTED_TYPE, f"unsupported command type: {_js_string(type_)}"
        )
    if not isinstance(payload, dict):
        raise _InvalidError(
            InvalidCommandReason.INVALID_PAYLOAD, "command payload must be an object"
        )
    command_id = _required(raw_id, "command id", 256, InvalidCommandReason.INVALID_ID)
    if not _clean(command_id) and has_control_character(command_id):
        raise _InvalidError(
            InvalidCommandReason.INVALID_ID, "commandId must not contain control characters"
        )
    source = _required(raw_source, "sourceId", 256, InvalidCommandReason.INVALID_SOURCE_ID)
    if not _clean(source) and has_control_character(source):
        raise _InvalidError(
            InvalidCommandReason.INVALID_SOURCE_ID, "sourceId must not contain control characters"
        )
    source = source.lower()
    native = _required(
        raw_native, "nativeSessionId", 1024, InvalidCommandReason.INVALID_NATIVE_SESSION_ID
    )
    if not (_clean(native) and source.isascii()):  # the session key must be encodable
        try:
            session_key(source, native)
        except IdentityError as exc:
            raise _InvalidError(InvalidCommandReason.INVALID_NATIVE_SESSION_ID, str(exc)) from None
        except ValueError as exc:  # a lone surrogate: encodeURIComponent's URIError
            raise _InvalidError(InvalidCommandReason.INVALID_NATIVE_SESSION_ID, str(exc)) from None
    created = _required(raw_created, "createdAt", 128, InvalidCommandReason.INVALID_CREATED_AT)
    owner = _required(raw_owner, "ownerDid", _DEFAULT_MAX, InvalidCommandReason.INVALID_OWNER_DID)
    return Command(
        schema=COMMAND_SCHEMA,
        ownerDid=owner,
        id=command_id,
        createdAt=created,
        sourceId=source,
        nativeSessionId=native,
        type=type_,  # type: ignore[arg-type]  # checked against COMMAND_TYPES above
        payload=payload,
        force=force is True,
        requestedBy=requested_by if isinstance(requested_by, str) else None,
    )


def _clean(text: str) -> bool:
    """Whether ``text`` is printable ASCII: no control characters, nothing to percent-check."""
    return text.isascii() and text.isprintable()


def _js_string(value: Any) -> str:
    """``String(value)`` for a decoded JSON value, as the error messages print it."""
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return "[object Object]"


def _decode_object(value: Any) -> Command:
    if not isinstance(value, dict):
        raise _InvalidError(InvalidCommandReason.NOT_AN_OBJECT, "command must be an object")
    get = value.get
    return _validate(
        get("schema", _MISSING),
        get("type", _MISSING),
        get("payload", _MISSING),
        get("id", _MISSING),
        get("sourceId", _MISSING),
        get("nativeSessionId", _MISSING),
        get("createdAt", _MISSING),
        get("ownerDid", _MISSING),
        get("force"),
        get("requestedBy"),
    )


def _decode_json(text: str | bytes) -> Command:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        wire = _FAST.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    else:
        return _validate(
            wire.schema,
            wire.type,
            wire.payload,
            wire.id,
            wire.sourceId,
            wire.nativeSessionId,
            wire.createdAt,
            wire.ownerDid,
            wire.force,
            wire.requestedBy,
        )
    try:
        decoded = _ANY.decode(data)
    except RecursionError:
        raise _InvalidError(
            InvalidCommandReason.INVALID_JSON,
            "command JSON is invalid: SyntaxError: JSON is nested too deeply",
        ) from None
    except msgspec.DecodeError as exc:
        decoded = js_json_parse(data, exc, _MISSING)
        if decoded is _MISSING:
            raise _InvalidError(
                InvalidCommandReason.INVALID_JSON, f"command JSON is invalid: SyntaxError: {exc}"
            ) from None
    if isinstance(decoded, str):
        # JSON.parse of a JSON string element that itself holds a string: the real
        # parser recurses, so a doubly encoded command is still a command.
        return _decode_json(decoded)
    return _decode_object(decoded)


def decode_command(value: Any) -> Command | InvalidCommand:
    """Decode one queue element: a command object (dict) or a JSON string (``str``/``bytes``).

    Returns the :class:`Command`, or an :class:`InvalidCommand` naming the
    first failed check. Never raises for any input.
    """
    try:
        if isinstance(value, (str, bytes)):
            return _decode_json(value)
        return _decode_object(value)
    except _InvalidError as invalid:
        return invalid.invalid


def check_command_owner(command: Command, owner_did: str) -> InvalidCommand | None:
    """Return ``None`` if ``command`` belongs to ``owner_did``, else the rejection to log."""
    if command.ownerDid == owner_did:
        return None
    return InvalidCommand(
        InvalidCommandReason.WRONG_OWNER, f"command belongs to another owner: {command.id}"
    )


# --- payloads (checked after the claim) ------------------------------------------------------


class PayloadError(ValueError):
    """A command payload field is invalid (``prompt text must be a non-empty string``).

    Raised after the in-flight claim; the worker turns it into a terminal
    ``failed`` receipt with code ``provider-call-failed`` and message
    ``Error: <message>`` (see ``provider_call_failed``).
    """


class PromptPayload(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``prompt``: the text to send to an existing session (trimmed)."""

    text: str


class StartPayload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """``start``: a new session's first prompt, directory, title, mode and surface."""

    text: str
    cwd: str | None = None
    title: str | None = None
    mode: str | None = None
    surface: StartSurface = "headless"


class CancelPayload(msgspec.Struct, frozen=True, gc=False):
    """``cancel``: no fields."""


class RenamePayload(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``rename``: the new title (trimmed)."""

    title: str


class SetModePayload(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``set-mode``: the mode to apply (trimmed)."""

    mode: str


class SetConfigOptionPayload(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``set-config-option``: the key (trimmed) and its value (any JSON; ``None`` if absent)."""

    key: str
    value: Any = None


CommandPayload = (
    PromptPayload
    | StartPayload
    | CancelPayload
    | RenamePayload
    | SetModePayload
    | SetConfigOptionPayload
)
"""The typed payload of each command type."""


def _payload_string(value: Any, field: str, max_length: int = _DEFAULT_MAX) -> str:
    if not isinstance(value, str) or not js_trim(value):
        raise PayloadError(f"{field} must be a non-empty string")
    if js_length(value) > max_length:
        raise PayloadError(f"{field} exceeds {max_length} characters")
    return js_trim(value)


def _optional_payload_string(
    payload: dict[str, Any], key: str, field: str, max_length: int = _DEFAULT_MAX
) -> str | None:
    if key not in payload or payload[key] is None:
        return None
    return _payload_string(payload[key], field, max_length)


def parse_command_payload(command: Command) -> CommandPayload:
    """Validate ``command.payload`` for its type and return the typed payload.

    Raises:
        PayloadError: a field is missing, empty or too long, or ``surface`` is
            not ``headless``/``desktop``.

    """
    payload = command.payload
    kind = command.type
    if kind == "prompt":
        text = _payload_string(payload.get("text"), "prompt text", MAX_PROMPT_TEXT)
        return PromptPayload(text=text)
    if kind == "start":
        text = _payload_string(payload.get("text"), "start text", MAX_PROMPT_TEXT)
        cwd = _optional_payload_string(payload, "cwd", "start cwd")
        title = _optional_payload_string(payload, "title", "start title", 512)
        mode = _optional_payload_string(payload, "mode", "start mode", 128)
        raw_surface = payload.get("surface")
        surface: StartSurface = "headless"
        if raw_surface == "desktop":
            surface = "desktop"
        elif raw_surface is not None and raw_surface != "headless":
            raise PayloadError("start surface is not supported")
        return StartPayload(text=text, cwd=cwd, title=title, mode=mode, surface=surface)
    if kind == "cancel":
        return CancelPayload()
    if kind == "rename":
        return RenamePayload(title=_payload_string(payload.get("title"), "rename title", 512))
    if kind == "set-mode":
        return SetModePayload(mode=_payload_string(payload.get("mode"), "mode", 128))
    return SetConfigOptionPayload(
        key=_payload_string(payload.get("key"), "config key", 256), value=payload.get("value")
    )
