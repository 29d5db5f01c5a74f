"""Op lookup, the test-mode gate and params decoding, per dialect.

Order (both servers): unknown op, then the test-mode gate, then params (but mac
``policy.set`` and ``terminal.open`` decode their params before they check test mode). The
gate comes before any param check, so a ``ui.show_roost_consent`` without a
``target`` is ``not_enabled`` outside test mode and ``bad_request`` inside it.
Tauri's ``terminal.preview`` and ``terminal.open`` check their ``machine``
refusal before the gate and the params.

mac: keys outside the op's allow-list are ``unknown-field`` (``unknown params:
a, b``, sorted) when ``params`` is an object; then the Struct is decoded
strictly and any mismatch is ``invalid-param``. A null for an optional key reads
as absent (Swift's ``decodeIfPresent``); for a required one it is ``valueNotFound``.

Tauri: unknown keys are dropped; ``params`` that is not an object reads as
``{}``. A required string that is absent or not a string is ``bad_request``
``missing '<key>'`` (a key the op reads raw, :attr:`OpShape.raw`, only when
absent: its ``null`` reaches the op); a mistyped optional is absent (lenient ops), refused as
``'<key>' must be a string`` (strict ops) or refused with a serde-style
message (serde-typed ops).
"""

from __future__ import annotations

import typing
from typing import Any

import msgspec

from ._catalogue import Gate, OpShape, TauriTyping, lookup
from ._codes import DesktopCode
from ._dialect import Dialect
from ._errors import DesktopError
from ._release import Release, release_has_op
from ._rules import json_word
from ._swift import (
    swift_bad_enum,
    swift_enum,
    swift_index,
    swift_mismatch,
    swift_missing,
    swift_null,
    swift_type,
)
from .types import Params

__all__ = ["check_gate", "decode_params", "params_dict", "resolve_op", "validate_request"]

_FIELDS: dict[type[msgspec.Struct], tuple[msgspec.structs.FieldInfo, ...]] = {}
_ALLOWED: dict[type[msgspec.Struct], frozenset[str]] = {}


def _fields(params: type[msgspec.Struct]) -> tuple[msgspec.structs.FieldInfo, ...]:
    found = _FIELDS.get(params)
    if found is None:
        found = _FIELDS[params] = msgspec.structs.fields(params)
        _ALLOWED[params] = frozenset(f.encode_name for f in found)
    return found


def _allowed(params: type[Params]) -> frozenset[str]:
    found = _ALLOWED.get(params)
    if found is None:
        _fields(params)
        found = _ALLOWED[params]
    return found


def resolve_op(dialect: Dialect, op: str, release: Release = Release.LATEST) -> OpShape:
    """Return ``op``'s shape in ``dialect`` as ``release`` has it.

    Raises:
        DesktopError: ``unknown-op`` ``no such op: X`` (mac) or ``unknown_op``
            ``unknown op: X`` (Tauri), also for an op ``release`` lacks.

    """
    shape = lookup(op, dialect, release)
    if shape is None or not release_has_op(release, dialect, op):
        message = f"no such op: {op}" if dialect is Dialect.MAC else f"unknown op: {op}"
        raise DesktopError(dialect.unknown_op, message)
    return shape


def check_gate(
    dialect: Dialect,
    op: str,
    shape: OpShape,
    params: Any,
    *,
    test_mode: bool,
    release: Release = Release.LATEST,
) -> None:
    """Apply the op's test-mode gate.

    Raises:
        DesktopError: ``not-enabled``/``not_enabled`` for a test-only op outside
            test mode, or the op's own refusal for a refused-in-test op in test mode.

    """
    if op in _MACHINE_REFUSED and dialect is Dialect.TAURI and release is Release.LATEST:
        # any non-null machine is refused first, in every mode
        # (charliek/shed desktop/tauri/src-tauri/src/ipc.rs:92-94,849-850@2cd01ef)
        _tauri_machine_refusal(params)
    if shape.gate is Gate.TEST_ONLY and not test_mode:
        if dialect is Dialect.MAC:
            message = f"{op} requires SHED_DESKTOP_TEST_MODE=1"
        else:
            message = f"{op} requires test mode"
        raise DesktopError(dialect.not_enabled, message)
    if shape.gate is Gate.REFUSED_IN_TEST and test_mode:
        assert shape.refusal is not None
        code, message = shape.refusal
        raise DesktopError(code, message)


_MACHINE_REFUSED = frozenset({"terminal.preview", "terminal.open"})
"""Tauri ops that refuse a machine row before anything else (v0.0.14 had no machines)."""


def _tauri_machine_refusal(params: Any) -> None:
    if isinstance(params, dict) and params.get("machine") is not None:
        raise DesktopError(
            DesktopCode.NOT_ENABLED_T, "terminal unavailable: attach is native-remote"
        )


def _serde_type(annotation: Any) -> str:
    text = str(annotation)
    for name, label in (("str", "a string"), ("bool", "a boolean"), ("int", "an integer")):
        if text.startswith(name) or f"'{name}'" in text:
            return label
    if "list" in text:
        return "a sequence"
    if "dict" in text:
        return "a map"
    return "a value"


def _decode_mac(op: str, shape: OpShape, params: Any) -> Params:
    if isinstance(params, dict):
        allowed = _allowed(shape.params)
        unknown = [] if params.keys() <= allowed else sorted(set(params) - allowed)
        if unknown:
            raise DesktopError(DesktopCode.UNKNOWN_FIELD, f"unknown params: {', '.join(unknown)}")
    try:
        return msgspec.convert(params, shape.params, strict=True)
    except msgspec.ValidationError as exc:
        if isinstance(params, dict):
            present = _without_null_optionals(shape.params, params)
            if present is not None:
                return _decode_mac(op, shape, present)
        message = _swift_params_error(shape.params, params) or f"{op}: {exc}"
        raise DesktopError(DesktopCode.INVALID_PARAM, message) from None


def _without_null_optionals(struct: type[Any], params: dict[str, Any]) -> dict[str, Any] | None:
    """Drop the nulls of optional keys (``decodeIfPresent`` reads a null as absent).

    Returns ``None`` when there is no such null to drop.
    """
    optional = {info.encode_name for info in _fields(struct) if not info.required}
    dropped = {k: v for k, v in params.items() if v is not None or k not in optional}
    return dropped if len(dropped) < len(params) else None


def _swift_params_error(params_type: type[Params], params: Any) -> str | None:
    """Word the first failure as the Swift decoder does (fields in declaration order)."""
    if not isinstance(params, dict):
        return swift_mismatch(
            "Swift.Dictionary<Swift.String, Any>", "Dictionary<String, Any>", params, []
        )
    return _swift_object_error(params_type, params, [])


def _swift_object_error(struct: type[Any], obj: dict[str, Any], path: list[str]) -> str | None:
    for info in _fields(struct):
        key = info.encode_name
        element = _struct_elements(info.type)
        if element is not None:  # an array of objects: each element in turn
            found = _swift_array_error(element, key, obj, path, info.required)
            if found is not None:
                return found
            continue
        enum = swift_enum(info.type)
        names = ("Swift.String", "String") if enum is not None else swift_type(info.type)
        if names is None:
            return None  # a nested shape: fall back to msgspec's wording
        if key not in obj:
            if info.required:
                return swift_missing(key, path)
            continue
        value = obj[key]
        if value is None:
            if info.required:
                return swift_null(*names, [*path, key])
            continue
        try:
            msgspec.convert(value, info.type, strict=True)
        except msgspec.ValidationError:
            if enum is not None and isinstance(value, str):
                return swift_bad_enum(enum[0], value, [*path, key])
            return swift_mismatch(*names, value, [*path, key])
    return None


def _swift_array_error(
    element: type[Any], key: str, obj: dict[str, Any], path: list[str], required: bool
) -> str | None:
    if key not in obj or obj[key] is None:
        if not required:
            return None
        if key not in obj:
            return swift_missing(key, path)
        return swift_null("Swift.Array<Any>", "Array<Any>", [*path, key])
    value = obj[key]
    if not isinstance(value, list):
        return swift_mismatch("Swift.Array<Any>", "Array<Any>", value, [*path, key])
    for index, item in enumerate(value):
        where = [*path, key, swift_index(index)]
        if not isinstance(item, dict):
            dictionary = ("Swift.Dictionary<Swift.String, Any>", "Dictionary<String, Any>")
            return swift_mismatch(*dictionary, item, where)
        found = _swift_object_error(element, item, where)
        if found is not None:
            return found
    return None


def _struct_elements(annotation: Any) -> type[Any] | None:
    """Return ``S`` for a ``list[S]`` field whose ``S`` is a Struct, else ``None``."""
    if typing.get_origin(annotation) is not list:
        return None
    (element,) = typing.get_args(annotation)
    if isinstance(element, type) and issubclass(element, msgspec.Struct):
        return element
    return None


def _decode_tauri(shape: OpShape, params: Any) -> Params:
    source = params if isinstance(params, dict) else {}
    allowed = _allowed(shape.params)
    raw = shape.raw
    present = {k: v for k, v in source.items() if k in allowed and (v is not None or k in raw)}
    try:  # fast path: everything present is well typed
        return msgspec.convert(present, shape.params, strict=True)
    except msgspec.ValidationError:
        pass  # find the first offending field the way the Rust reader does
    kept: dict[str, Any] = {}
    for info in _fields(shape.params):
        key = info.encode_name
        value = source.get(key)
        required = info.required
        if value is None and not (key in raw and key in source):
            if required:
                if shape.typing is TauriTyping.SERDE:
                    raise DesktopError(DesktopCode.BAD_REQUEST, f"missing field `{key}`")
                raise DesktopError(
                    DesktopCode.BAD_REQUEST, shape.missing.get(key, f"missing '{key}'")
                )
            continue
        try:
            msgspec.convert(value, info.type, strict=True)
        except msgspec.ValidationError:
            if shape.typing is TauriTyping.SERDE:
                raise DesktopError(
                    DesktopCode.BAD_REQUEST,
                    f"invalid type: {json_word(value)}, expected {_serde_type(info.type)}",
                ) from None
            if required:
                raise DesktopError(
                    DesktopCode.BAD_REQUEST, shape.missing.get(key, f"missing '{key}'")
                ) from None
            if shape.typing is TauriTyping.STRICT:
                expected = "a string" if _serde_type(info.type) == "a string" else "a number"
                message = shape.missing.get(key, f"'{key}' must be {expected}")
                raise DesktopError(DesktopCode.BAD_REQUEST, message) from None
            continue
        kept[key] = value
    return msgspec.convert(kept, shape.params, strict=True)


def decode_params(dialect: Dialect, op: str, shape: OpShape, params: Any) -> Params:
    """Decode raw ``params`` into ``shape.params`` by ``dialect``'s rules (module docstring).

    Raises:
        DesktopError: ``unknown-field`` / ``invalid-param`` (mac) or
            ``bad_request`` (Tauri).

    """
    if dialect is Dialect.MAC:
        return _decode_mac(op, shape, params)
    return _decode_tauri(shape, params)


def validate_request(
    dialect: Dialect,
    op: str,
    params: Any,
    *,
    test_mode: bool,
    release: Release = Release.LATEST,
) -> tuple[OpShape, Params]:
    """Resolve ``op`` (in ``release``), apply the gate, then decode ``params``: the servers' order.

    An op whose gate comes after its params (``OpShape.gate_after_params``: mac
    ``policy.set``) is decoded first.

    Raises:
        DesktopError: the first refusal, coded for ``dialect``.

    """
    shape = resolve_op(dialect, op, release)
    if shape.gate_after_params:
        decoded = decode_params(dialect, op, shape, params)
        check_gate(dialect, op, shape, params, test_mode=test_mode, release=release)
        return shape, decoded
    check_gate(dialect, op, shape, params, test_mode=test_mode, release=release)
    return shape, decode_params(dialect, op, shape, params)


def params_dict(params: Params) -> dict[str, Any]:
    """Return the wire mapping of a typed params Struct, for a client request.

    Fields that are ``None`` are left out (absent, not ``null``), as both apps
    expect of optional params. Never raises.
    """
    return {k: v for k, v in msgspec.structs.asdict(params).items() if v is not None}
