"""The command ledger's pure state: file format, validation and operations.

:class:`LedgerState` is immutable: every operation returns the next state
with ``generation + 1``, which the file layer (``servers.connector.ledger``)
writes durably before it adopts it. Stored receipts are treated as immutable:
never mutate one in place; store a new one with ``put``. The file format and
the encoding cost are described in the documentation:
``docs/protocols/connector.md`` (*The command ledger*).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

import msgspec

from shedproto import ErrorCode, LocalProtocolError

from ._collation import locale_sort_key, locale_sorted
from ._errors import LedgerError, LedgerExhaustedError, ReceiptError
from ._identity import split_command_identity
from ._receipts import Receipt, orphaned_in_flight, parse_command_receipt

__all__ = ["LEDGER_SCHEMA", "MAX_SAFE_INTEGER", "LedgerState", "parse_ledger", "parse_ledger_value"]

LEDGER_SCHEMA = "commonfabric.agent-connector.command-ledger"
"""The ledger file's schema string; older formats are rejected, not migrated."""
MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's ``Number.MAX_SAFE_INTEGER``: the last generation a ledger can reach."""

_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()
_CONTEXT = "command ledger receipt"
_INNER_INDENT = b"\n    "  # a receipt's lines sit two levels deep in the file


def _file_order_key(key: str) -> tuple[int, Any]:
    """Order keys as ``JSON.stringify`` writes a ``localeCompare``-sorted object.

    JavaScript objects list array-index keys (``"0"``, ``"42"``) first, in
    numeric order, then the others in insertion (here ``localeCompare``) order.
    """
    if key[:1].isdigit() and _is_array_index(key):
        return (0, int(key))
    return (1, locale_sort_key(key))


class _FragmentCache:
    """Encoded ``"<key>": {receipt}`` lines, shared by a lineage of states.

    An entry is reused only while the state holds the very receipt object it
    was encoded from (receipts are immutable Structs), so states that
    diverged (a failed write, a replaced receipt) never see a stale fragment.
    """

    __slots__ = ("entries", "pending_lines")

    def __init__(self) -> None:
        self.entries: dict[str, tuple[Receipt, bytes]] = {}
        self.pending_lines: dict[str, bytes] = {}

    def pending_line(self, key: str) -> bytes:
        line = self.pending_lines.get(key)
        if line is None:
            line = self.pending_lines[key] = b"    " + _ENCODER.encode(key)
        return line

    def fragment(self, key: str, receipt: Receipt) -> bytes:
        entry = self.entries.get(key)
        if entry is not None and entry[0] is receipt:
            return entry[1]
        body = msgspec.json.format(_ENCODER.encode(receipt), indent=2)
        # encoded JSON strings never hold a raw newline, so every b"\n" is a line break
        data = b"    " + _ENCODER.encode(key) + b": " + body.replace(b"\n", _INNER_INDENT)
        self.entries[key] = (receipt, data)
        return data


class LedgerState:
    """One committed ledger generation: receipts by identity and the identities pending publication.

    Immutable; operations return a new state. Lookups never raise.
    """

    __slots__ = ("_fragments", "_order", "_pending", "_pending_order", "_receipts", "generation")

    def __init__(
        self,
        generation: int = 0,
        receipts: Mapping[str, Receipt] | None = None,
        pending: frozenset[str] = frozenset(),
    ) -> None:
        self.generation = generation
        self._receipts: dict[str, Receipt] = dict(receipts or {})
        self._pending = pending
        self._order: list[str] | None = None  # keys in file order, computed on demand
        self._pending_order: list[str] | None = None  # pending keys, localeCompare order
        self._fragments = _FragmentCache()

    @classmethod
    def _derived(
        cls,
        parent: LedgerState,
        *,
        generation: int,
        receipts: dict[str, Receipt],
        pending: frozenset[str],
        order: list[str] | None,
        pending_order: list[str] | None,
    ) -> LedgerState:
        """Build a state that shares ``receipts`` and the orders (never mutated again).

        It also shares the parent's fragment cache.
        """
        state = cls.__new__(cls)
        state.generation = generation
        state._receipts = receipts
        state._pending = pending
        state._order = order
        state._pending_order = pending_order
        state._fragments = parent._fragments
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LedgerState):
            return NotImplemented
        return (
            self.generation == other.generation
            and self._receipts == other._receipts
            and self._pending == other._pending
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"LedgerState(generation={self.generation}, receipts={len(self._receipts)}, "
            f"pending={len(self._pending)})"
        )

    # --- reads -------------------------------------------------------------------------------

    def get(self, command_id: str, producer: str | None = None) -> Receipt | None:
        """Return the receipt of the command ``(producer, command_id)``, or ``None``."""
        key = command_id if producer is None else f"{producer}\x00{command_id}"
        return self._receipts.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._receipts

    def __len__(self) -> int:
        return len(self._receipts)

    @property
    def receipts(self) -> Mapping[str, Receipt]:
        """Every receipt by identity (a read-only view)."""
        return _ReadOnly(self._receipts)

    @property
    def pending_identities(self) -> frozenset[str]:
        """Identities whose current receipt has not been published yet."""
        return self._pending

    def pending_publication_count(self) -> int:
        """How many receipts wait for publication."""
        return len(self._pending)

    def pending_receipts(self) -> list[Receipt]:
        """Return the receipts pending publication, in ``localeCompare`` order of identity."""
        return [self._receipts[key] for key in self._pending_sorted()]

    # --- transitions -------------------------------------------------------------------------

    def _next_generation(self) -> int:
        if self.generation >= MAX_SAFE_INTEGER:
            raise LedgerExhaustedError
        return self.generation + 1

    def put(self, receipt: Receipt) -> LedgerState:
        """Return the state with ``receipt`` stored (replacing any) and marked pending.

        Raises:
            LocalProtocolError: ``receipt`` fails ledger validation (the
                message is ``command ledger receipt ...``); ``INVALID_ARGUMENT``.
            LedgerExhaustedError: the generation cannot grow.

        """
        generation = self._next_generation()
        try:
            stored = parse_command_receipt(
                receipt.commandId,
                msgspec.to_builtins(receipt),
                _CONTEXT,
                producer=receipt.producer,
            )
        except ReceiptError as exc:
            raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, exc.message) from None
        key = stored.identity
        order = self._order
        if order is not None and key not in self._receipts:
            order = list(order)
            bisect.insort(order, key, key=_file_order_key)
        pending_order = self._pending_order
        if pending_order is not None and key not in self._pending:
            pending_order = list(pending_order)
            bisect.insort(pending_order, key, key=locale_sort_key)
        receipts = dict(self._receipts)
        receipts[key] = stored
        return LedgerState._derived(
            self,
            generation=generation,
            receipts=receipts,
            pending=self._pending | {key},
            order=order,
            pending_order=pending_order,
        )

    def mark_published(self, key: str) -> LedgerState | None:
        """Return the state with ``key`` no longer pending, or ``None`` if it was not pending.

        Raises:
            LedgerExhaustedError: the generation cannot grow.

        """
        if key not in self._pending:
            return None
        generation = self._next_generation()
        pending_order = self._pending_order
        if pending_order is not None:
            pending_order = list(pending_order)
            pending_order.remove(key)
        return LedgerState._derived(
            self,
            generation=generation,
            receipts=self._receipts,
            pending=self._pending - {key},
            order=self._order,
            pending_order=pending_order,
        )

    def with_generation(self, generation: int) -> LedgerState:
        """Return this state stamped with ``generation`` (receipts and pending ids unchanged).

        The file layer uses it to give several folded operations one
        generation: one per durable write.

        Raises:
            LedgerExhaustedError: ``generation`` is above ``MAX_SAFE_INTEGER``.
            ValueError: ``generation`` is negative.

        """
        if generation > MAX_SAFE_INTEGER:
            raise LedgerExhaustedError
        if generation < 0:
            raise ValueError("command ledger generation must be a non-negative safe integer")
        return LedgerState._derived(
            self,
            generation=generation,
            receipts=self._receipts,
            pending=self._pending,
            order=self._order,
            pending_order=self._pending_order,
        )

    def recover(self, *, now: str) -> LedgerState:
        """Return the state with every ``in-flight`` receipt made ``unknown`` (orphaned-in-flight).

        Recovered receipts become pending. The generation always rises, even
        when nothing changed (the real ledger always persists here).

        Raises:
            LedgerExhaustedError: the generation cannot grow.

        """
        generation = self._next_generation()
        receipts = dict(self._receipts)
        pending = set(self._pending)
        for key, receipt in self._receipts.items():
            if receipt.status == "in-flight":
                receipts[key] = orphaned_in_flight(receipt, completed_at=now)
                pending.add(key)
        same = len(pending) == len(self._pending)
        return LedgerState._derived(
            self,
            generation=generation,
            receipts=receipts,
            pending=frozenset(pending),
            order=self._order,
            pending_order=self._pending_order if same else None,
        )

    # --- the file ----------------------------------------------------------------------------

    def to_builtins(self) -> dict[str, Any]:
        """Return the file's JSON value, receipt keys in the order ``JSON.stringify`` writes them.

        That is ``localeCompare`` order, except that JavaScript objects always
        list array-index keys (``"0"``, ``"42"``) first, in numeric order.
        """
        return {
            "schema": LEDGER_SCHEMA,
            "generation": self.generation,
            "receipts": {
                key: msgspec.to_builtins(self._receipts[key]) for key in self._file_order()
            },
            "pendingPublicationCommandIds": list(self._pending_sorted()),
        }

    def _pending_sorted(self) -> list[str]:
        order = self._pending_order
        if order is None:
            order = self._pending_order = locale_sorted(self._pending)
        return order

    def _file_order(self) -> list[str]:
        order = self._order
        if order is None:
            order = self._order = sorted(self._receipts, key=_file_order_key)
        return order

    def encode(self) -> bytes:
        r"""Return the exact file bytes: ``JSON.stringify(value, null, 2) + "\n"``.

        Assembled from cached per-receipt fragments (see the module
        docstring); byte-identical to formatting the whole value at once.
        """
        head = b'{\n  "schema": "%s",\n  "generation": %d,\n' % (
            LEDGER_SCHEMA.encode(),
            self.generation,
        )
        if self._pending:
            line = self._fragments.pending_line
            ids = b",\n".join([line(key) for key in self._pending_sorted()])
            tail = b'  "pendingPublicationCommandIds": [\n' + ids + b"\n  ]\n}\n"
        else:
            tail = b'  "pendingPublicationCommandIds": []\n}\n'
        receipts = self._receipts
        if not receipts:
            return head + b'  "receipts": {},\n' + tail
        fragment = self._fragments.fragment
        parts = [fragment(key, receipts[key]) for key in self._file_order()]
        # one allocation of the whole file: a file this size is mmap-backed, and every
        # extra intermediate copy costs page faults, more than the encoding itself
        parts[0] = head + b'  "receipts": {\n' + parts[0]
        parts[-1] = parts[-1] + b"\n  },\n" + tail
        return b",\n".join(parts)


class _ReadOnly(Mapping[str, Receipt]):
    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Receipt]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Receipt:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _is_array_index(key: str) -> bool:
    """Whether JavaScript treats ``key`` as an array index (ordered first in objects)."""
    if not key.isascii() or not key.isdigit() or (len(key) > 1 and key[0] == "0"):
        return False
    return int(key) < 2**32 - 1


def _safe_generation(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_SAFE_INTEGER:
        return value
    return None


def parse_ledger(data: bytes) -> LedgerState:
    """Parse and validate ledger file bytes.

    Raises:
        LedgerError: ``MALFORMED_FRAME`` when the bytes are not JSON;
            otherwise ``SCHEMA_VIOLATION`` with the real message
            (``command ledger must contain an object``, ``command ledger
            schema must be ...``, ``command ledger generation must be a
            non-negative safe integer``, ``command ledger receipts must be an
            object``, ``command ledger pendingPublicationCommandIds must be a
            string array``, ``... must not contain duplicates``, ``command
            ledger pending receipt is missing: <id>``, or a receipt's
            ``command ledger receipt ...`` message).

    """
    try:
        value = _DECODER.decode(data)
    except RecursionError:
        raise LedgerError(
            ErrorCode.MALFORMED_FRAME, "command ledger is not valid JSON: nested too deeply"
        ) from None
    except msgspec.DecodeError as exc:
        raise LedgerError(
            ErrorCode.MALFORMED_FRAME, f"command ledger is not valid JSON: {exc}"
        ) from None
    return parse_ledger_value(value)


def _fail(message: str) -> LedgerError:
    return LedgerError(ErrorCode.SCHEMA_VIOLATION, message)


def parse_ledger_value(value: Any) -> LedgerState:
    """Validate an already-decoded ledger value; see :func:`parse_ledger` for the errors."""
    if not isinstance(value, dict):
        raise _fail("command ledger must contain an object")
    if value.get("schema") != LEDGER_SCHEMA:
        raise _fail(f"command ledger schema must be {LEDGER_SCHEMA}")
    generation = _safe_generation(value.get("generation"))
    if generation is None:
        raise _fail("command ledger generation must be a non-negative safe integer")
    raw_receipts = value.get("receipts")
    if not isinstance(raw_receipts, dict):
        raise _fail("command ledger receipts must be an object")
    raw_pending = value.get("pendingPublicationCommandIds")
    if not isinstance(raw_pending, list) or not all(isinstance(k, str) for k in raw_pending):
        raise _fail("command ledger pendingPublicationCommandIds must be a string array")
    receipts: dict[str, Receipt] = {}
    for key, raw in raw_receipts.items():
        producer, command_id = split_command_identity(key)
        try:
            receipts[key] = parse_command_receipt(command_id, raw, _CONTEXT, producer=producer)
        except ReceiptError as exc:
            raise _fail(exc.message) from None
    pending = frozenset(raw_pending)
    if len(pending) != len(raw_pending):
        raise _fail("command ledger pendingPublicationCommandIds must not contain duplicates")
    for key in raw_pending:
        if key not in receipts:
            raise _fail(f"command ledger pending receipt is missing: {key}")
    return LedgerState(generation, receipts, pending)
