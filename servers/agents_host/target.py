"""The local target: what Common Fabric stores for the real host, in one SQLite file.

:class:`AgentsHostTarget` is the interface the host needs (connector
``AgentFabricTarget``, spec sections 3.3, 5, 6 and 8.2); :class:`SqliteTarget`
is the embedded default: ``<stateDir>/target-<key>.agents-host.sqlite3``,
``0600``, WAL mode, documents stored as the exact JSON bytes the real host
writes. The tables, the validation shortcut on publish and the listener
events are described in the documentation: ``docs/protocols/agents-host.md``
(*The local target*).
:class:`StoredDocuments` holds what every target shares on top of its stored
bytes (document reads, receipt decoding, the receipt-index memo); the
PostgreSQL target (:mod:`.target_postgres`) builds on it too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec
from typing_extensions import Self

from shedproto.connector import (
    Health,
    IndexEntry,
    Receipt,
    ReceiptError,
    ReceiptIndex,
    ReceiptIndexError,
    ReceiptLink,
    SessionIndex,
    command_identity,
    extend_receipt_index,
    parse_command_receipt,
    parse_receipt_index,
    receipt_index_tail_valid,
)
from shedproto.servers.connector import check_private, ensure_private_directory

__all__ = [
    "AgentsHostTarget",
    "StoredDocuments",
    "TargetStoreError",
    "TargetUnavailableError",
    "ChangeListener",
    "SqliteTarget",
    "StoredReceipt",
    "receipt_link",
    "target_file_name",
]


class TargetStoreError(Exception):
    """The target store refused or failed an operation; nothing was written.

    Raised for a receipt of another owner, a malformed stored receipt or
    receipt index (left untouched), an unusable database file or a closed
    target.
    """


class TargetUnavailableError(TargetStoreError):
    """A remote target could not be reached; retrying later can succeed.

    Raised by :class:`~.target_postgres.PostgresTarget` while its database is
    down or its connection dropped mid-call (a write may or may not have
    committed; every write the host retries is idempotent). Never raised
    for a refused write (another owner, the key's lock held elsewhere).
    """


ChangeListener = Callable[[str, Any], None]
"""Called after a commit with ``(kind, value)``; see the module docstring."""


class StoredReceipt(msgspec.Struct, frozen=True, kw_only=True):
    """One receipt row as a store writes it: identity, command id, producer (``""``), bytes."""

    identity: str
    command_id: str
    producer: str
    body: bytes


_SCHEMA = """
CREATE TABLE IF NOT EXISTS receipts (
    identity TEXT PRIMARY KEY,
    command_id TEXT NOT NULL,
    producer TEXT NOT NULL,
    updated_seq INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (name TEXT PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS manifests (key TEXT PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS commands (
    producer TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (producer, seq)
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

RECEIPT_INDEX_DOC = "receipt-index"
HEALTH_DOC = "health"
RECENT_INDEX_DOC = "index/recent"
ALL_INDEX_DOC = "index/all"
OBSERVATIONS_DOC = "index/observations"

_ENCODER = msgspec.json.Encoder()
_HAS_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)
_BUMP_RETURNING = (
    "INSERT INTO meta (name, value) VALUES (?, 1)"
    " ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value"
)
_SESSION_INDEX_DECODER = msgspec.json.Decoder(SessionIndex)
_HEALTH_DECODER = msgspec.json.Decoder(Health)
_RECEIPT_DECODER = msgspec.json.Decoder(Receipt)
_OBSERVATIONS_DECODER = msgspec.json.Decoder(dict[str, int])


def target_file_name(key: str) -> str:
    """Return ``target-<key>.agents-host.sqlite3``."""
    return f"target-{key}.agents-host.sqlite3"


def receipt_link(command_id: str, producer: str | None, space: str) -> ReceiptLink:
    """Return the deterministic receipt location ``receipts/<producer|_owner>/<sha256(id)>``."""
    digest = hashlib.sha256(command_id.encode("utf-8", "surrogatepass")).hexdigest()
    return ReceiptLink(id=f"receipts/{producer or '_owner'}/{digest}", space=space)


class AgentsHostTarget(Protocol):
    """What the host publishes and reads; failures raise ``TargetStoreError`` or ``OSError``."""

    owner_did: str
    space: str

    def read_receipt(self, command_id: str, producer: str | None) -> Receipt | None:
        """Return the published receipt of a command identity, or ``None``."""

    def publish_receipt(self, receipt: Receipt, *, now: str) -> None:
        """Write the receipt and its index row in one transaction."""

    def publish_receipts(self, receipts: Sequence[Receipt], *, now: str) -> None:
        """Write several receipts and their index rows in one transaction (all or none)."""

    def read_receipt_index(self) -> ReceiptIndex | None:
        """Return the bounded receipt index, or ``None`` before the first receipt."""

    def list_receipts(self, *, limit: int, producer: str | None = None) -> list[Receipt]:
        """Return up to ``limit`` receipts, most recently updated first."""

    def publish_health(self, health: Health) -> None:
        """Replace the health document."""

    def read_health(self) -> Health | None:
        """Return the health document, or ``None``."""

    def next_observation(self) -> int:
        """Allocate the next observation sequence number (durable, increasing)."""

    def published_sessions(self) -> dict[str, IndexEntry]:
        """Return the rows of the ``all`` index by key (``{}`` when none)."""

    def publish_sessions(
        self,
        recent: SessionIndex,
        all_index: SessionIndex,
        manifests: dict[str, bytes],
        observations: dict[str, int],
    ) -> None:
        """Write both indexes, the changed manifests and row observations in one transaction."""

    def read_observations(self) -> dict[str, int]:
        """Return the observation number that last wrote each session row."""

    def read_index(self, bucket: str) -> SessionIndex | None:
        """Return the ``recent`` or ``all`` index, or ``None``."""

    def read_manifest(self, key: str) -> bytes | None:
        """Return a session's manifest document, or ``None``."""

    def append_command(self, value: Any, producer: str | None) -> int:
        """Append one command (object or JSON string) to a queue; return its sequence."""

    def read_commands(self, producer: str | None, after: int = 0) -> list[tuple[int, Any]]:
        """Return ``(seq, value)`` of the queue's elements after ``after``."""

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Register a change listener; returns its unsubscribe function."""

    def close(self) -> None:
        """Close the store; idempotent."""


class StoredDocuments:
    """The reads every target shares, over its ``_document(name)`` (stored bytes or ``None``).

    Also the receipt-index memo of the module docstring (``_parse_index``,
    ``_remember_index``). Subclasses set ``owner_did``, ``space`` and
    ``_index_memo = None``.
    """

    owner_did: str
    space: str
    # (owner_did, space, stored bytes, the index they parse to); a pure memo of
    # parse_receipt_index, so it can never be stale: other bytes miss it.
    _index_memo: tuple[str, str, bytes, ReceiptIndex] | None

    def _document(self, name: str) -> bytes | None:
        raise NotImplementedError

    def _store_receipts(
        self, rows: list[StoredReceipt], build_index: Callable[[bytes | None], bytes]
    ) -> None:
        """Write ``rows`` and the index ``build_index(stored index bytes)`` in one transaction.

        The store reads the stored index inside the transaction and calls
        ``build_index`` on it; whatever that raises rolls the transaction back.
        """
        raise NotImplementedError

    def _notify(self, kind: str, value: Any) -> None:
        raise NotImplementedError

    def publish_receipt(self, receipt: Receipt, *, now: str) -> None:
        """Write ``receipt`` and its receipt-index row in one transaction.

        Raises:
            TargetStoreError: the receipt belongs to another owner, the stored
                index is malformed, or the store failed (nothing is written).

        """
        self.publish_receipts((receipt,), now=now)

    def publish_receipts(self, receipts: Sequence[Receipt], *, now: str) -> None:
        """Write ``receipts`` (in order) and their index rows in one transaction.

        Group commit for the receipt outbox: the host publishes the receipts
        that concurrent sessions produce at the same moment as one write, so
        the bounded receipt index (up to 200 rows) is encoded and stored once
        per batch instead of once per receipt. The result is the same as
        publishing them one by one with the same ``now``. All or none: when
        anything fails, nothing of the batch is written.

        Raises:
            TargetStoreError: a receipt belongs to another owner, the stored
                index is malformed, or the store failed.

        """
        rows: list[StoredReceipt] = []
        for receipt in receipts:
            if receipt.ownerDid != self.owner_did:
                raise TargetStoreError(
                    f"command receipt belongs to another owner: {receipt.commandId}"
                )
            rows.append(
                StoredReceipt(
                    identity=command_identity(receipt.commandId, receipt.producer),
                    command_id=receipt.commandId,
                    producer=receipt.producer or "",
                    body=_ENCODER.encode(receipt),
                )
            )
        if not rows:
            return
        built: list[tuple[bytes, ReceiptIndex, bool]] = []

        def build_index(existing: bytes | None) -> bytes:
            built.clear()
            try:
                index = None if existing is None else self._parse_index(existing)
                valid = True
                for receipt in receipts:
                    link = self.link_for(receipt.commandId, receipt.producer)
                    index = extend_receipt_index(index, receipt, link=link, now=now)
                    valid = valid and receipt_index_tail_valid(
                        index, owner_did=self.owner_did, link_for=self.link_for
                    )
            except (ValueError, ReceiptIndexError) as exc:
                raise TargetStoreError(str(exc)) from exc
            assert index is not None  # receipts is not empty
            body = _ENCODER.encode(index)
            built.append((body, index, valid))
            return body

        self._store_receipts(rows, build_index)
        index_body, index, valid = built[0]
        if valid:
            self._index_memo = (self.owner_did, self.space, index_body, index)
        self._remember_document(RECEIPT_INDEX_DOC, index_body)
        for receipt in receipts:
            self._notify("receipt", receipt)

    def _remember_document(self, name: str, body: bytes) -> None:
        """Note that this host just committed ``body`` as document ``name`` (a cache hook)."""

    def link_for(self, command_id: str, producer: str | None) -> ReceiptLink:
        """Return the receipt link the index must carry for a command identity."""
        return receipt_link(command_id, producer, self.space)

    def _decode_receipt(self, command_id: str, producer: str | None, body: bytes) -> Receipt:
        """Return the stored receipt ``body``, validated.

        Raises:
            TargetStoreError: the stored receipt does not validate.

        """
        try:
            return parse_command_receipt(
                command_id,
                msgspec.json.decode(body),
                producer=producer,
                owner_did=self.owner_did,
            )
        except (ValueError, ReceiptError, msgspec.DecodeError) as exc:
            raise TargetStoreError(
                f"stored command receipt is invalid: {command_id}: {exc}"
            ) from exc

    def _decode_listed(self, bodies: Iterable[bytes]) -> list[Receipt]:
        """Return the stored receipt ``bodies`` decoded, for :meth:`list_receipts`.

        Raises:
            TargetStoreError: a stored body is not a receipt (nothing is returned).

        """
        try:
            return [_RECEIPT_DECODER.decode(body) for body in bodies]
        except msgspec.DecodeError as exc:
            raise TargetStoreError(f"stored command receipt is invalid: {exc}") from exc

    def _parse_index(self, body: bytes) -> ReceiptIndex:
        """Return the validated index stored as ``body``, from the memo when the bytes match.

        Raises:
            ReceiptIndexError, ValueError: ``body`` is not a valid receipt index.

        """
        memo = self._index_memo
        if (
            memo is not None
            and memo[2] == body
            and memo[0] == self.owner_did
            and memo[1] == self.space
        ):
            return memo[3]
        index = parse_receipt_index(
            msgspec.json.decode(body), owner_did=self.owner_did, link_for=self.link_for
        )
        self._index_memo = (self.owner_did, self.space, body, index)
        return index

    def read_receipt_index(self) -> ReceiptIndex | None:
        """Return the receipt index, validated, or ``None``.

        Raises:
            TargetStoreError: the stored index is malformed.

        """
        body = self._document(RECEIPT_INDEX_DOC)
        if body is None:
            return None
        try:
            return self._parse_index(body)
        except (ValueError, ReceiptIndexError) as exc:
            raise TargetStoreError(str(exc)) from exc

    def read_health(self) -> Health | None:
        """Return the health document, or ``None``."""
        body = self._document(HEALTH_DOC)
        return None if body is None else self._decoded(HEALTH_DOC, body, _HEALTH_DECODER.decode)

    def _decoded(self, name: str, body: bytes, decode: Callable[[bytes], Any]) -> Any:
        """Return ``decode(body)``, from the per-document memo when ``body`` is the same bytes.

        The memo keeps the last bytes read or written per document name and
        what they decode to; like the index memo it cannot be stale (other
        bytes miss it). Only immutable values (frozen structs) are memoised.

        Raises:
            msgspec.DecodeError: ``body`` does not decode (nothing is memoised).

        """
        memo = self.__dict__.setdefault("_decoded_memo", {})
        hit = memo.get(name)
        if hit is not None and hit[0] == body:
            return hit[1]
        value = decode(body)
        memo[name] = (body, value)
        return value

    def _remember_decoded(self, name: str, body: bytes, value: Any) -> None:
        """Remember that the just-written ``body`` of document ``name`` decodes to ``value``."""
        self.__dict__.setdefault("_decoded_memo", {})[name] = (body, value)

    def read_index(self, bucket: str) -> SessionIndex | None:
        """Return the ``recent`` or ``all`` index, or ``None`` before the first collection.

        Raises:
            msgspec.DecodeError: the stored index is malformed.

        """
        name = f"index/{bucket}"
        body = self._document(name)
        if body is None:
            return None
        index: SessionIndex = self._decoded(name, body, _SESSION_INDEX_DECODER.decode)
        return index

    def published_sessions(self) -> dict[str, IndexEntry]:
        """Return the ``all`` index rows by key."""
        index = self.read_index("all")
        return {} if index is None else {row.key: row for row in index.sessions}

    def read_observations(self) -> dict[str, int]:
        """Return the observation number that last wrote each session row."""
        body = self._document(OBSERVATIONS_DOC)
        return {} if body is None else msgspec.json.decode(body, type=dict[str, int])


class SqliteTarget(StoredDocuments):
    """The embedded SQLite target; see the module docstring.

    Not thread-safe: call it from one thread (the host calls it from its
    event loop; each call is one short transaction). ``owner``: the caller
    holds the target key's process lock (the runner does), so it is the only
    writer: the health document is then remembered once read or written and
    read back without a query, as the PostgreSQL target remembers what its
    owner wrote (issue 16: the API's ``health`` answer).

    Raises (on :meth:`open`):
        TargetStoreError: the file is not a usable target database.
        PrivatePathError: the directory or file is not private to this user.

    """

    def __init__(
        self,
        db: sqlite3.Connection,
        path: str,
        *,
        owner_did: str,
        space: str,
        owner: bool = False,
    ) -> None:
        self._db = db
        self._owner = owner
        self._health_body: bytes | None = None
        """The owner's health document, once read or written (``None``: ask the file)."""
        self.path = path
        self.owner_did = owner_did
        self.space = space
        self._listeners: list[ChangeListener] = []
        self._closed = False
        self._index_memo = None

    @classmethod
    def open(
        cls, state_dir: str, key: str, *, owner_did: str, space: str, owner: bool = False
    ) -> Self:
        """Open (creating if needed) the target file for ``key`` below ``state_dir``."""
        ensure_private_directory("agent host state directory", state_dir)
        path = os.path.join(state_dir, target_file_name(key))
        if not os.path.lexists(path):
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
        check_private("agent host target file", "file", path, os.lstat(path))
        return cls.open_path(path, owner_did=owner_did, space=space, owner=owner)

    @classmethod
    def open_path(cls, path: str, *, owner_did: str, space: str, owner: bool = False) -> Self:
        """Open the target database at ``path`` without the private-path checks (tests)."""
        try:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise TargetStoreError(f"agent host target is not usable: {path}: {exc}") from exc
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise TargetStoreError(f"agent host target is not usable: {path}: {exc}") from exc
        return cls(db, path, owner_did=owner_did, space=space, owner=owner)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise TargetStoreError("agent host target is closed")
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _write_one(self, sql: str, parameters: tuple[Any, ...]) -> Any:
        """Run one write statement as its own autocommit transaction; return its first row or None.

        One statement instead of ``BEGIN IMMEDIATE``/statement/``COMMIT``:
        atomic all the same, and two fewer calls into SQLite, each of which
        releases and re-takes the GIL while the ledger's threads run.

        Raises:
            TargetStoreError: the target is closed.

        """
        if self._closed:
            raise TargetStoreError("agent host target is closed")
        # fetchall: run the statement to completion, so it is reset and commits now.
        rows = self._db.execute(sql, parameters).fetchall()
        return rows[0] if rows else None

    def _notify(self, kind: str, value: Any) -> None:
        for listener in list(self._listeners):
            listener(kind, value)

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Register ``listener``; the returned function removes it (idempotent)."""
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    def _document(self, name: str) -> bytes | None:
        if name == HEALTH_DOC and self._health_body is not None:
            return self._health_body
        row = self._db.execute("SELECT body FROM documents WHERE name = ?", (name,)).fetchone()
        body = None if row is None else bytes(row[0])
        if name == HEALTH_DOC and self._owner:
            self._health_body = body
        return body

    # -- receipts --------------------------------------------------------------------------

    def read_receipt(self, command_id: str, producer: str | None) -> Receipt | None:
        """Return the stored receipt (validated), or ``None``.

        Raises:
            TargetStoreError: the stored receipt does not validate.

        """
        row = self._db.execute(
            "SELECT body FROM receipts WHERE identity = ?",
            (command_identity(command_id, producer),),
        ).fetchone()
        return None if row is None else self._decode_receipt(command_id, producer, row[0])

    def _store_receipts(
        self, rows: list[StoredReceipt], build_index: Callable[[bytes | None], bytes]
    ) -> None:
        with self._transaction() as db:
            index_body = build_index(self._document(RECEIPT_INDEX_DOC))
            for row in rows:
                seq = self._bump(db, "receipt-seq")
                db.execute(
                    "INSERT INTO receipts (identity, command_id, producer, updated_seq, body)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(identity) DO UPDATE SET"
                    " updated_seq = excluded.updated_seq, body = excluded.body",
                    (row.identity, row.command_id, row.producer, seq, row.body),
                )
            db.execute(
                "INSERT OR REPLACE INTO documents (name, body) VALUES (?, ?)",
                (RECEIPT_INDEX_DOC, index_body),
            )

    def list_receipts(self, *, limit: int, producer: str | None = None) -> list[Receipt]:
        """Return up to ``limit`` receipts, most recently written first.

        ``producer`` ``None`` lists every queue; ``""`` is the owner's queue.

        Raises:
            TargetStoreError: a stored receipt does not decode.

        """
        if producer is None:
            rows = self._db.execute(
                "SELECT body FROM receipts ORDER BY updated_seq DESC LIMIT ?", (limit,)
            ).fetchall()
        else:
            rows = self._db.execute(
                "SELECT body FROM receipts WHERE producer = ? ORDER BY updated_seq DESC LIMIT ?",
                (producer, limit),
            ).fetchall()
        return self._decode_listed(row[0] for row in rows)

    # -- health ----------------------------------------------------------------------------

    def publish_health(self, health: Health) -> None:
        """Replace the health document."""
        body = _ENCODER.encode(health)
        self._write_one(
            "INSERT OR REPLACE INTO documents (name, body) VALUES (?, ?)", (HEALTH_DOC, body)
        )
        if self._owner:
            self._health_body = body
        self._remember_decoded(HEALTH_DOC, body, health)
        self._notify("health", health)

    # -- sessions --------------------------------------------------------------------------

    def _bump(self, db: sqlite3.Connection, name: str) -> int:
        if _HAS_RETURNING:
            # One statement (upsert ... RETURNING, SQLite >= 3.35): see _write_one.
            return int(db.execute(_BUMP_RETURNING, (name,)).fetchall()[0][0])
        db.execute(  # pragma: no cover - SQLite older than 3.35
            "INSERT INTO meta (name, value) VALUES (?, 1)"
            " ON CONFLICT(name) DO UPDATE SET value = value + 1",
            (name,),
        )
        row = db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return int(row[0])

    def _next(self, name: str) -> int:
        """Bump the counter ``name`` and return its new value, in one transaction."""
        if _HAS_RETURNING:
            row = self._write_one(_BUMP_RETURNING, (name,))
            return int(row[0])
        with self._transaction() as db:  # pragma: no cover - SQLite older than 3.35
            return self._bump(db, name)

    def next_observation(self) -> int:
        """Allocate the next observation sequence number."""
        return self._next("observation")

    def publish_sessions(
        self,
        recent: SessionIndex,
        all_index: SessionIndex,
        manifests: dict[str, bytes],
        observations: dict[str, int],
    ) -> None:
        """Write the manifests, then both indexes and the observations, in one transaction."""
        recent_body = _ENCODER.encode(recent)
        all_body = _ENCODER.encode(all_index)
        with self._transaction() as db:
            if manifests:
                db.executemany(
                    "INSERT OR REPLACE INTO manifests (key, body) VALUES (?, ?)",
                    list(manifests.items()),
                )
            db.executemany(
                "INSERT OR REPLACE INTO documents (name, body) VALUES (?, ?)",
                [
                    (OBSERVATIONS_DOC, _ENCODER.encode(observations)),
                    (RECENT_INDEX_DOC, recent_body),
                    (ALL_INDEX_DOC, all_body),
                ],
            )
        # The next targeted refresh reads the ``all`` index back: skip its decode.
        self._remember_decoded(RECENT_INDEX_DOC, recent_body, recent)
        self._remember_decoded(ALL_INDEX_DOC, all_body, all_index)
        self._notify("sessions", all_index)

    def read_manifest(self, key: str) -> bytes | None:
        """Return a session's manifest document bytes, or ``None``."""
        row = self._db.execute("SELECT body FROM manifests WHERE key = ?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    # -- command queues --------------------------------------------------------------------

    def append_command(self, value: Any, producer: str | None) -> int:
        """Append ``value`` (an object or a JSON string) to the queue; return its sequence."""
        queue = producer or ""
        body = _ENCODER.encode(value)
        if _HAS_RETURNING:
            # The MAX(seq) read and the insert in one statement: see _write_one.
            row = self._write_one(
                "INSERT INTO commands (producer, seq, body)"
                " SELECT ?, COALESCE(MAX(seq), 0) + 1, ? FROM commands WHERE producer = ?"
                " RETURNING seq",
                (queue, body, queue),
            )
            seq = int(row[0])
            self._notify("command", (producer, seq))
            return seq
        with self._transaction() as db:  # pragma: no cover - SQLite older than 3.35
            row = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM commands WHERE producer = ?", (queue,)
            ).fetchone()
            seq = int(row[0]) + 1
            db.execute(
                "INSERT INTO commands (producer, seq, body) VALUES (?, ?, ?)",
                (queue, seq, body),
            )
        self._notify("command", (producer, seq))
        return seq

    def read_commands(self, producer: str | None, after: int = 0) -> list[tuple[int, Any]]:
        """Return ``(seq, value)`` of the queue's elements with ``seq > after``."""
        rows = self._db.execute(
            "SELECT seq, body FROM commands WHERE producer = ? AND seq > ? ORDER BY seq",
            (producer or "", after),
        ).fetchall()
        return [(int(seq), msgspec.json.decode(body)) for seq, body in rows]

    def close(self) -> None:
        """Close the database; idempotent."""
        if not self._closed:
            self._closed = True
            self._db.close()


def default_target_path(state_dir: str, key: str) -> Path:
    """Return where :meth:`SqliteTarget.open` keeps the file for ``key``."""
    return Path(state_dir) / target_file_name(key)
