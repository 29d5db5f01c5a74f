"""Command receipts, their validation, the worker's receipt builders and the receipt index.

:func:`parse_command_receipt` is the real ``parseCommandReceipt``: every
message is prefixed by its context (``command receipt`` by default,
``command ledger receipt`` in the ledger) and ends with ``: <commandId>``.
Timestamps must be in exact ``toISOString`` form.

The receipt index (:func:`update_receipt_index`) holds at most 200 rows, the
most recent last; republishing a command removes its old row and appends the
new one. A malformed existing index raises :class:`ReceiptIndexError` and the
caller must leave it untouched.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from ._config import is_producer_id
from ._errors import ReceiptError, ReceiptIndexError
from ._identity import (
    IdentityError,
    command_identity,
    normalize_command_id,
    normalize_native_session_id,
    normalize_source_id,
)
from ._text import js_trim
from ._timestamps import is_iso_timestamp

__all__ = [
    "MAX_RESULT_DEPTH",
    "RECEIPT_INDEX_LIMIT",
    "RECEIPT_INDEX_SCHEMA",
    "RECEIPT_SCHEMA",
    "RECEIPT_STATUSES",
    "TERMINAL_STATUSES",
    "Receipt",
    "ReceiptErrorInfo",
    "ReceiptIndex",
    "ReceiptIndexRow",
    "ReceiptLink",
    "ReceiptStatus",
    "claim_publish_failed",
    "extend_receipt_index",
    "in_flight_receipt",
    "js_number_values",
    "orphaned_in_flight",
    "orphaned_shared_claim",
    "parse_command_receipt",
    "parse_receipt_index",
    "provider_call_failed",
    "receipt_index_tail_valid",
    "source_unavailable",
    "terminal_receipt",
    "update_receipt_index",
]

RECEIPT_SCHEMA = "commonfabric.agent-connector.command-receipt"
"""A receipt's schema string."""
RECEIPT_INDEX_SCHEMA = "commonfabric.agent-connector.command-receipts"
"""The receipt index's schema string."""
RECEIPT_INDEX_LIMIT = 200
"""The receipt index keeps the 200 most recently appended rows."""

ReceiptStatus = Literal[
    "pending", "in-flight", "succeeded", "failed", "unsupported", "needs-confirmation", "unknown"
]
"""Every receipt status; the worker writes ``in-flight`` and the terminal ones."""
RECEIPT_STATUSES: frozenset[str] = frozenset(
    ("pending", "in-flight", "succeeded", "failed", "unsupported", "needs-confirmation", "unknown")
)
"""Accepted ``status`` values."""
TERMINAL_STATUSES: frozenset[str] = frozenset(
    ("succeeded", "failed", "unsupported", "needs-confirmation", "unknown")
)
"""Statuses after which nothing more happens; ``unknown`` is never retried automatically."""


class ReceiptErrorInfo(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A receipt's structured error: a code, a message and whether a retry may help."""

    code: str
    message: str
    retryable: bool


class Receipt(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One command's receipt; absent optional fields are ``None`` and omitted when encoded.

    Field order is the wire order. ``producer`` is absent for the owner's queue.
    """

    schema: str
    ownerDid: str  # noqa: N815 - wire name
    commandId: str  # noqa: N815 - wire name
    producer: str | None = None
    sourceId: str  # noqa: N815 - wire name
    nativeSessionId: str  # noqa: N815 - wire name
    status: ReceiptStatus
    claimedAt: str | None = None  # noqa: N815 - wire name
    completedAt: str | None = None  # noqa: N815 - wire name
    providerOperationId: str | None = None  # noqa: N815 - wire name
    error: ReceiptErrorInfo | None = None
    result: dict[str, Any] | None = None

    @property
    def identity(self) -> str:
        """The command identity this receipt belongs to (see ``command_identity``)."""
        return command_identity(self.commandId, self.producer)

    @property
    def terminal(self) -> bool:
        """Whether the status is terminal."""
        return self.status in TERMINAL_STATUSES


def _non_empty(value: Any) -> bool:
    return isinstance(value, str) and js_trim(value) != ""


MAX_RESULT_DEPTH = 256
"""The deepest ``result`` nesting accepted (JSON arrays and objects); deeper is refused."""


def _too_deep(value: Any, limit: int = MAX_RESULT_DEPTH) -> bool:
    """Whether ``value`` nests containers deeper than ``limit`` (iterative, never recurses)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def js_number_values(value: Any) -> Any:
    """Return ``value`` with integral floats below 1e21 turned into ints.

    JavaScript prints ``100.0`` as ``100``; this keeps stored JSON byte-equal
    to what the real program writes. Never raises; other values are unchanged.
    """
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return int(value)
        return value
    if isinstance(value, dict):
        return {key: js_number_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [js_number_values(item) for item in value]
    return value


def parse_command_receipt(  # noqa: PLR0915 - the checks in their real order
    command_id: str,
    value: Any,
    context: str = "command receipt",
    *,
    producer: str | None = None,
    owner_did: str | None = None,
) -> Receipt:
    """Validate a receipt stored under ``command_id`` (and ``producer``) and return it.

    ``owner_did``, when given, must equal the receipt's ``ownerDid``.

    Raises:
        ReceiptError: the first failed check, with the real message
            (``command receipt status is invalid: cmd-01``).

    """
    if not isinstance(value, dict):
        raise ReceiptError(f"{context} must be an object: {command_id}")
    if value.get("schema") != RECEIPT_SCHEMA:
        raise ReceiptError(f"{context} schema must be {RECEIPT_SCHEMA}: {command_id}")
    if value.get("commandId") != command_id or value.get("producer") != producer:
        raise ReceiptError(f"{context} key does not match commandId: {command_id}")
    try:
        if normalize_command_id(command_id) != command_id:
            raise ReceiptError(f"{context} commandId is not normalized: {command_id}")
    except IdentityError as exc:
        raise ReceiptError(str(exc)) from None
    if producer is not None and not is_producer_id(producer):
        raise ReceiptError(f"{context} producer is invalid: {command_id}")
    owner = value.get("ownerDid")
    if not isinstance(owner, str) or not _non_empty(owner):
        raise ReceiptError(f"{context} ownerDid must be a string: {command_id}")
    source = value.get("sourceId")
    if not isinstance(source, str) or not _non_empty(source):
        raise ReceiptError(f"{context} sourceId must be a string: {command_id}")
    native = value.get("nativeSessionId")
    if not isinstance(native, str) or not _non_empty(native):
        raise ReceiptError(f"{context} nativeSessionId must be a string: {command_id}")
    try:
        if normalize_source_id(source) != source:
            raise ReceiptError(f"{context} sourceId is not normalized: {command_id}")
        if normalize_native_session_id(native) != native:
            raise ReceiptError(f"{context} nativeSessionId is not normalized: {command_id}")
    except IdentityError as exc:
        raise ReceiptError(str(exc)) from None
    status = value.get("status")
    if not isinstance(status, str) or status not in RECEIPT_STATUSES:
        raise ReceiptError(f"{context} status is invalid: {command_id}")
    stamps: dict[str, str | None] = {}
    for field in ("claimedAt", "completedAt"):
        stamp = value.get(field)
        if stamp is not None or field in value:
            if not _non_empty(stamp):
                raise ReceiptError(f"{context} {field} must be a string")
            if not is_iso_timestamp(stamp):
                raise ReceiptError(f"{context} {field} must be an ISO timestamp")
        stamps[field] = stamp
    operation = value.get("providerOperationId")
    if "providerOperationId" in value and not _non_empty(operation):
        raise ReceiptError(f"{context} providerOperationId must be a string")
    error: ReceiptErrorInfo | None = None
    if "error" in value:
        raw_error = value["error"]
        if (
            not isinstance(raw_error, dict)
            or not _non_empty(raw_error.get("code"))
            or not _non_empty(raw_error.get("message"))
            or not isinstance(raw_error.get("retryable"), bool)
        ):
            raise ReceiptError(f"{context} error is invalid: {command_id}")
        error = ReceiptErrorInfo(
            code=raw_error["code"], message=raw_error["message"], retryable=raw_error["retryable"]
        )
    result = value.get("result")
    if "result" in value and not isinstance(result, dict):
        raise ReceiptError(f"{context} result must be an object: {command_id}")
    if result is not None and _too_deep(result):
        raise ReceiptError(f"{context} result is nested too deeply: {command_id}")
    if owner_did is not None and owner != owner_did:
        raise ReceiptError(f"{context} belongs to another owner: {command_id}")
    return Receipt(
        schema=RECEIPT_SCHEMA,
        ownerDid=owner,
        commandId=command_id,
        producer=producer,
        sourceId=source,
        nativeSessionId=native,
        status=status,  # type: ignore[arg-type]  # checked against RECEIPT_STATUSES
        claimedAt=stamps["claimedAt"] or None,
        completedAt=stamps["completedAt"] or None,
        providerOperationId=operation or None,
        error=error,
        result=js_number_values(result) if result is not None else None,
    )


# --- the worker's receipts --------------------------------------------------------------------


def in_flight_receipt(
    *,
    owner_did: str,
    command_id: str,
    source_id: str,
    native_session_id: str,
    claimed_at: str,
    producer: str | None = None,
) -> Receipt:
    """Return the durable claim written (and published) before the provider is called."""
    return Receipt(
        schema=RECEIPT_SCHEMA,
        ownerDid=owner_did,
        commandId=command_id,
        producer=producer,
        sourceId=source_id,
        nativeSessionId=native_session_id,
        status="in-flight",
        claimedAt=claimed_at,
    )


def terminal_receipt(
    claim: Receipt,
    *,
    status: ReceiptStatus,
    completed_at: str,
    provider_operation_id: str | None = None,
    error: ReceiptErrorInfo | None = None,
    result: dict[str, Any] | None = None,
) -> Receipt:
    """Return the terminal receipt for ``claim`` with the provider's outcome.

    Raises:
        ValueError: ``status`` is not terminal, or ``result`` nests deeper
            than ``MAX_RESULT_DEPTH``.

    """
    if status not in TERMINAL_STATUSES:
        raise ValueError(f"not a terminal status: {status}")
    if result is not None and _too_deep(result):
        raise ValueError("result is nested too deeply")
    return msgspec.structs.replace(
        claim,
        status=status,
        completedAt=completed_at,
        providerOperationId=provider_operation_id,
        error=error,
        result=js_number_values(result) if result is not None else None,
    )


def claim_publish_failed(claim: Receipt, *, message: str, completed_at: str) -> Receipt:
    """``failed`` / ``claim-publish-failed`` (retryable): the claim could not be published."""
    return terminal_receipt(
        claim,
        status="failed",
        completed_at=completed_at,
        error=ReceiptErrorInfo(code="claim-publish-failed", message=message, retryable=True),
    )


def source_unavailable(claim: Receipt, *, completed_at: str) -> Receipt:
    """``unsupported`` / ``source-unavailable`` (retryable): no running driver for the source."""
    return terminal_receipt(
        claim,
        status="unsupported",
        completed_at=completed_at,
        error=ReceiptErrorInfo(
            code="source-unavailable",
            message=f"source is not available: {claim.sourceId}",
            retryable=True,
        ),
    )


def provider_call_failed(claim: Receipt, *, error: BaseException, completed_at: str) -> Receipt:
    """``failed`` / ``provider-call-failed``: the driver raised (payload errors included).

    The message is JavaScript's ``String(error)``: ``Error: <message>``.
    """
    return terminal_receipt(
        claim,
        status="failed",
        completed_at=completed_at,
        error=ReceiptErrorInfo(
            code="provider-call-failed", message=f"Error: {error}", retryable=False
        ),
    )


def orphaned_in_flight(receipt: Receipt, *, completed_at: str) -> Receipt:
    """``unknown`` / ``orphaned-in-flight``: the ledger held a claim when the host started."""
    return msgspec.structs.replace(
        receipt,
        status="unknown",
        completedAt=completed_at,
        error=ReceiptErrorInfo(
            code="orphaned-in-flight",
            message="process restarted after claiming the command; provider outcome is unknown",
            retryable=False,
        ),
    )


def orphaned_shared_claim(receipt: Receipt, *, completed_at: str) -> Receipt:
    """``unknown`` / ``orphaned-shared-claim``: another host's claim has no terminal outcome."""
    return msgspec.structs.replace(
        receipt,
        status="unknown",
        completedAt=completed_at,
        error=ReceiptErrorInfo(
            code="orphaned-shared-claim",
            message="another host published a command claim without a terminal outcome",
            retryable=False,
        ),
    )


# --- the receipt index ------------------------------------------------------------------------


class ReceiptLink(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Where a receipt is stored: a cell id and space in Fabric, or a path in a local store."""

    id: str
    space: str
    path: tuple[str, ...] = ()


LinkFor = Callable[[str, "str | None"], ReceiptLink]
"""``(command_id, producer) -> ReceiptLink``: the link a receipt index row must carry."""


class ReceiptIndexRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One row of the receipt index, linking to the individual receipt."""

    commandId: str  # noqa: N815 - wire name
    ownerDid: str  # noqa: N815 - wire name
    sourceId: str  # noqa: N815 - wire name
    nativeSessionId: str  # noqa: N815 - wire name
    producer: str | None = None
    status: ReceiptStatus
    updatedAt: str  # noqa: N815 - wire name
    error: ReceiptErrorInfo | None = None
    receipt: ReceiptLink

    @property
    def identity(self) -> str:
        """The command identity of this row."""
        return command_identity(self.commandId, self.producer)


class ReceiptIndex(msgspec.Struct, frozen=True, kw_only=True):
    """The bounded receipt index: at most 200 rows, the most recent last."""

    schema: str = RECEIPT_INDEX_SCHEMA
    ownerDid: str  # noqa: N815 - wire name
    updatedAt: str  # noqa: N815 - wire name
    receipts: tuple[ReceiptIndexRow, ...]


def parse_receipt_index(
    value: Any, *, owner_did: str, link_for: LinkFor | None = None
) -> ReceiptIndex:
    """Validate an existing receipt index value.

    ``link_for(command_id, producer) -> ReceiptLink``, when given, is the link
    each row must carry.

    Raises:
        ReceiptIndexError: bad shape, more than 200 rows, a bad row, a
            duplicate identity, another owner or a wrong link.

    """
    if not isinstance(value, dict):
        raise ReceiptIndexError("command receipt index must be an object")
    if value.get("schema") != RECEIPT_INDEX_SCHEMA:
        raise ReceiptIndexError(f"command receipt index schema must be {RECEIPT_INDEX_SCHEMA}")
    if value.get("ownerDid") != owner_did:
        raise ReceiptIndexError("command receipt index belongs to another owner")
    if not is_iso_timestamp(value.get("updatedAt")):
        raise ReceiptIndexError("command receipt index updatedAt must be an ISO timestamp")
    rows = value.get("receipts")
    if not isinstance(rows, (list, tuple)):
        raise ReceiptIndexError("command receipt index receipts must be an array")
    if len(rows) > RECEIPT_INDEX_LIMIT:
        raise ReceiptIndexError(
            f"command receipt index has more than {RECEIPT_INDEX_LIMIT} receipts"
        )
    parsed: list[ReceiptIndexRow] = []
    seen: set[str] = set()
    for i, raw in enumerate(rows):
        row = _parse_index_row(raw, i, owner_did=owner_did)
        if row.identity in seen:
            raise ReceiptIndexError(f"command receipt index has a duplicate row: {row.commandId}")
        seen.add(row.identity)
        _check_index_link(row, link_for)
        parsed.append(row)
    return ReceiptIndex(ownerDid=owner_did, updatedAt=value["updatedAt"], receipts=tuple(parsed))


def _parse_index_row(raw: Any, i: int, *, owner_did: str) -> ReceiptIndexRow:
    """Convert and check one stored row (shape, timestamp, producer, owner); raise as parsed."""
    try:
        row = msgspec.convert(raw, ReceiptIndexRow)
    except msgspec.ValidationError:
        raise ReceiptIndexError(f"command receipt index row {i} is invalid") from None
    if not is_iso_timestamp(row.updatedAt) or (
        row.producer is not None and not is_producer_id(row.producer)
    ):
        raise ReceiptIndexError(f"command receipt index row {i} is invalid")
    if row.ownerDid != owner_did:
        raise ReceiptIndexError(
            f"command receipt index row belongs to another owner: {row.commandId}"
        )
    return row


def _check_index_link(row: ReceiptIndexRow, link_for: LinkFor | None) -> None:
    if link_for is not None and row.receipt != link_for(row.commandId, row.producer):
        raise ReceiptIndexError(
            f"command receipt index row links the wrong receipt: {row.commandId}"
        )


def update_receipt_index(
    existing: Any,
    receipt: Receipt,
    *,
    link: ReceiptLink,
    now: str,
    link_for: LinkFor | None = None,
) -> ReceiptIndex:
    """Return the index after publishing ``receipt``: its old row removed, the new one appended.

    ``existing`` is the current index value (``None`` when there is none).
    The row's ``updatedAt`` is ``completedAt ?? claimedAt ?? now``; only the
    last 200 rows are kept.

    Raises:
        ReceiptIndexError: ``existing`` is malformed (see :func:`parse_receipt_index`).

    """
    current = (
        None
        if existing is None
        else parse_receipt_index(existing, owner_did=receipt.ownerDid, link_for=link_for)
    )
    return extend_receipt_index(current, receipt, link=link, now=now)


def extend_receipt_index(
    index: ReceiptIndex | None, receipt: Receipt, *, link: ReceiptLink, now: str
) -> ReceiptIndex:
    """Return ``index`` after publishing ``receipt``, trusting ``index`` as already validated.

    The same replace-then-append and 200-row bound as :func:`update_receipt_index`
    (which is :func:`parse_receipt_index` followed by this), without re-checking
    the existing rows: ``index`` must come from :func:`parse_receipt_index` for
    ``receipt.ownerDid`` (or be an index this function returned and
    :func:`receipt_index_tail_valid` accepted). ``None`` starts a new index.
    Never raises for a valid ``index``; the new row itself is not checked (see
    :func:`receipt_index_tail_valid`).
    """
    identity = receipt.identity
    rows = [] if index is None else [row for row in index.receipts if row.identity != identity]
    rows.append(
        ReceiptIndexRow(
            commandId=receipt.commandId,
            ownerDid=receipt.ownerDid,
            sourceId=receipt.sourceId,
            nativeSessionId=receipt.nativeSessionId,
            producer=receipt.producer,
            status=receipt.status,
            updatedAt=receipt.completedAt or receipt.claimedAt or now,
            error=receipt.error,
            receipt=link,
        )
    )
    return ReceiptIndex(
        ownerDid=receipt.ownerDid, updatedAt=now, receipts=tuple(rows[-RECEIPT_INDEX_LIMIT:])
    )


def receipt_index_tail_valid(
    index: ReceiptIndex, *, owner_did: str, link_for: LinkFor | None = None
) -> bool:
    """Whether an index from :func:`extend_receipt_index` of a validated index would parse back.

    Checks only what :func:`extend_receipt_index` added: the header (schema,
    owner, ``updatedAt`` timestamp, row count) and the last row, which is
    encoded, decoded and checked exactly as :func:`parse_receipt_index` checks
    a stored row (and must come back equal). The other rows are trusted (they
    were validated before and are unique because the new row's identity was
    removed from them). ``True`` means :func:`parse_receipt_index` of the
    encoded index, with the same ``owner_did`` and ``link_for``, returns
    ``index`` unchanged; ``False`` means a caller must not treat the encoded
    index as validated. Never raises, except what ``link_for`` raises beyond
    ``ValueError`` and ``TypeError``.
    """
    if (
        index.schema != RECEIPT_INDEX_SCHEMA
        or index.ownerDid != owner_did
        or not is_iso_timestamp(index.updatedAt)
        or len(index.receipts) > RECEIPT_INDEX_LIMIT
    ):
        return False
    if not index.receipts:
        return True
    last = index.receipts[-1]
    try:
        encoded = msgspec.json.encode(last)
        row = _parse_index_row(
            msgspec.json.decode(encoded), len(index.receipts) - 1, owner_did=owner_did
        )
        _check_index_link(row, link_for)
    except (ReceiptIndexError, msgspec.MsgspecError, ValueError, TypeError):
        return False
    return row == last and msgspec.json.encode(row) == encoded
