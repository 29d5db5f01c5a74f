"""The one-pass request decoder: envelope, op and typed params in a single msgspec decode.

Each dialect gets one tagged union (tag field ``op``) with a member per op:
``{id, params: <the op's params Struct> | null}``. A well-formed request to an
ungated op decodes straight into its typed params; anything else (an unknown
op, a bad id, unknown or mistyped params, params not an object, JSON the
server would trim first, a gated op, a launch door that reads the raw params,
absent or ``null`` params of an op that needs some) fails this pass and takes
the general path, which words the exact refusal. The fast path therefore
never answers differently from the general one; it only skips its
intermediate ``Any`` decode and per-field checks. A differential test pins
that.

Absent or ``null`` params read as ``{}`` in both dialects, so they take the
fast path too, with the op's params decoded once from ``{}`` (a shared frozen
value): ``identify`` with ``"params":null`` (the servers benchmark, scripts)
no longer pays the general path's second decode (issue 16).
"""

from __future__ import annotations

from typing import Any, Optional, Union

import msgspec

from ._catalogue import Gate, OpShape, lookup, ops_for
from ._dialect import Dialect
from ._release import Release, release_has_op

__all__ = ["FastDecoder", "fast_decoder"]


class FastDecoder:
    """Decode one request line in one pass, or return ``None`` for the general path."""

    def __init__(self, dialect: Dialect, release: Release = Release.LATEST) -> None:
        self.dialect = dialect
        members: list[type[msgspec.Struct]] = []
        self._ops: dict[type[msgspec.Struct], tuple[str, OpShape]] = {}
        self._empty: dict[type[msgspec.Struct], Any] = {}
        mac = dialect is Dialect.MAC
        ops = [op for op in ops_for(dialect) if release_has_op(release, dialect, op)]
        for index, op in enumerate(ops):
            shape = lookup(op, dialect, release)
            assert shape is not None
            if shape.gate is not Gate.NONE or shape.reads_raw:
                continue
            params: Any = Optional[shape.params]  # noqa: UP045 - a runtime-built type
            fields: list[tuple[str, Any] | tuple[str, Any, Any]] = (
                [("id", str), ("params", params, None)]
                if mac
                else [("id", Any, None), ("params", params, None)]
            )
            member = msgspec.defstruct(
                f"_Fast{dialect.value.title()}{index}",
                fields,
                tag_field="op",
                tag=op,
                # the newer mac app refuses unknown envelope keys; v0.0.14 ignores them
                forbid_unknown_fields=mac and release is Release.LATEST,
                frozen=True,
                kw_only=True,
                gc=False,
            )
            members.append(member)
            self._ops[member] = (op, shape)
            self._empty[member] = _empty_params(shape)
        self._decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
            Union[tuple(members)]  # noqa: UP007 - a runtime-built union
        )

    def decode(self, line: bytes) -> tuple[Any, str, Any, OpShape] | None:
        """Return ``(id, op, params, shape)``, or ``None`` when the general path must decide.

        The mac id comes back as received; the caller canonicalises it.
        Never raises.
        """
        try:
            request = self._decoder.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return None
        member = type(request)
        op, shape = self._ops[member]
        params = request.params
        if params is None:  # absent or null: both servers read {}
            params = self._empty[member]
            if params is None:  # {} is not valid params for this op: the general path words it
                return None
        return request.id, op, params, shape


def _empty_params(shape: OpShape) -> Any:
    """Return ``shape.params`` decoded from ``{}`` (one shared frozen value), or ``None``."""
    try:
        return msgspec.convert({}, shape.params, strict=True)
    except msgspec.ValidationError:
        return None


_DECODERS: dict[tuple[Dialect, Release], FastDecoder] = {}


def fast_decoder(dialect: Dialect, release: Release = Release.LATEST) -> FastDecoder:
    """Return the (cached) one-pass decoder of ``dialect`` with the ops of ``release``."""
    key = (dialect, release)
    found = _DECODERS.get(key)
    if found is None:
        found = _DECODERS[key] = FastDecoder(dialect, release)
    return found
