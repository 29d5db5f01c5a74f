"""The PostgreSQL target: one database shared by a fleet of agents-hosts.

:class:`PostgresTarget` implements
:class:`~shedproto.servers.agents_host.AgentsHostTarget` like
:class:`~shedproto.servers.agents_host.SqliteTarget`, with every row keyed by
the host's target key, so any number of hosts with distinct keys share one
database. Documents are the same byte-exact msgspec encodings (``bytea``);
each receipt and its index row commit in one transaction; the observation,
receipt and queue sequences are per-key counter rows
(``INSERT ... ON CONFLICT ... RETURNING``, so two writers serialise on the row
lock and sequences commit in order).

Schema: versioned migrations (:data:`MIGRATIONS`) are applied at open under a
transaction-level advisory lock, each recorded in
``agents_host_schema_migrations``; a database newer than this code is refused.

Ownership: the spec's one-host-per-target-key rule holds across machines
through a session advisory lock (``pg_try_advisory_lock`` of the key's first
64 bits) held on the working connection for the host's life. A second host
with the same key fails fast with ``another agent host holds the process lock:
<database>/target-<key>.lock``. If the connection drops, the lock is taken
again on reconnect before anything is written; when another host took it
meanwhile, every later call fails with that message.

Command delivery (no polling): :meth:`PostgresTarget.append_command` inserts the row and
``NOTIFY``-s the key's channel in the same transaction; a listener thread
holding a dedicated ``LISTEN`` connection (sync psycopg, ``notifies()``)
turns each notification into a ``("command", (producer, seq))`` change,
delivered in the event loop that subscribed (through its anyio token), or
directly when there is none. :meth:`PostgresTarget.read_commands` claims the rows it returns
(``claimed_at``) with ``FOR UPDATE SKIP LOCKED`` and stops at the first gap,
so a row some other session holds is read on the next wake-up, never
skipped. Claims in the database are informational: the command ledger stays
the local source of truth, and re-reading a queue from 0 is always safe.

Documents the owning host wrote are remembered (the advisory lock makes it
the only writer of its key), so reading them back costs no round trip; a
write's transaction is sent as one pipeline. Every dropped connection
forgets what was remembered.

Connection loss: calls run on the caller's thread (the host's event loop,
as with SQLite) and fail with
:class:`~shedproto.servers.agents_host.TargetStoreError` while the database is
unreachable (reconnection is attempted at most once per backoff step, so a
down database costs no waiting). Idempotent calls are retried once on a
fresh connection, so the first call after a restart succeeds. The listener
thread reconnects with exponential backoff (:data:`BACKOFF`) and reports
``("target", TargetState)`` changes (``disconnected`` / ``reconnected`` /
``lock-lost``); the host records them in health and, on reconnect, wakes its
queues and publishes the receipts the ledger still holds.

Why the synchronous psycopg API, and the fleet's other decisions:
``docs/architecture/decisions/agents-host.rst`` (*PostgreSQL fleet target*).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import msgspec
import psycopg
from psycopg import sql
from typing_extensions import Self

from shedproto.connector import (
    Health,
    Receipt,
    SessionIndex,
    command_identity,
)

from .target import (
    ALL_INDEX_DOC,
    HEALTH_DOC,
    OBSERVATIONS_DOC,
    RECEIPT_INDEX_DOC,
    RECENT_INDEX_DOC,
    ChangeListener,
    StoredDocuments,
    StoredReceipt,
    TargetStoreError,
    TargetUnavailableError,
)

__all__ = [
    "BACKOFF",
    "DEFAULT_HEARTBEAT",
    "MIGRATIONS",
    "STALE_HEARTBEATS",
    "Liveness",
    "FleetHost",
    "PostgresTarget",
    "TargetState",
    "describe_database",
    "is_postgres_url",
    "list_fleet",
    "liveness",
]

T = TypeVar("T")

BACKOFF = (0.05, 2.0)
"""First and largest delay (seconds) between reconnection attempts; doubles in between."""

DEFAULT_HEARTBEAT = 5.0
"""Seconds between an owning host's heartbeats (``run --heartbeat``)."""

STALE_HEARTBEATS = 3
"""Missed heartbeats after which ``fleet`` calls a host stale (``fleet --stale-after``)."""

Liveness = Literal["live", "stale", "gone"]

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE agents_host_hosts (
        target_key TEXT PRIMARY KEY,
        owner_did TEXT NOT NULL,
        space TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE agents_host_receipts (
        target_key TEXT NOT NULL,
        identity BYTEA NOT NULL,
        command_id TEXT NOT NULL,
        producer TEXT NOT NULL,
        updated_seq BIGINT NOT NULL,
        body BYTEA NOT NULL,
        PRIMARY KEY (target_key, identity)
    );
    CREATE INDEX agents_host_receipts_recent
        ON agents_host_receipts (target_key, updated_seq DESC);
    CREATE TABLE agents_host_documents (
        target_key TEXT NOT NULL, name TEXT NOT NULL, body BYTEA NOT NULL,
        PRIMARY KEY (target_key, name)
    );
    CREATE TABLE agents_host_manifests (
        target_key TEXT NOT NULL, key TEXT NOT NULL, body BYTEA NOT NULL,
        PRIMARY KEY (target_key, key)
    );
    CREATE TABLE agents_host_commands (
        target_key TEXT NOT NULL,
        producer TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body BYTEA NOT NULL,
        claimed_at TIMESTAMPTZ,
        PRIMARY KEY (target_key, producer, seq)
    );
    CREATE TABLE agents_host_meta (
        target_key TEXT NOT NULL, name TEXT NOT NULL, value BIGINT NOT NULL,
        PRIMARY KEY (target_key, name)
    );
    -- documents are rewritten whole on every publish (the 200-row receipt index,
    -- the session indexes): uncompressed out-of-line storage makes each rewrite
    -- about 3x cheaper than the default pglz compression (measured, 34 KB index)
    ALTER TABLE agents_host_documents ALTER COLUMN body SET STORAGE EXTERNAL;
    ALTER TABLE agents_host_manifests ALTER COLUMN body SET STORAGE EXTERNAL;
    """,
    """
    ALTER TABLE agents_host_hosts ADD COLUMN heartbeat_at TIMESTAMPTZ;
    ALTER TABLE agents_host_hosts ADD COLUMN heartbeat_interval_ms INTEGER;
    """,
)
"""Schema versions 1..n, applied in order at open; never edit one, append a new one."""

# psycopg logs a lost connection while a pipeline closes; the error itself is
# raised and reported, so keep the log line off stderr (no last-resort output).
logging.getLogger("psycopg").addHandler(logging.NullHandler())

_MIGRATION_LOCK = 0x73686564_70726F74  # "shedprot": serialises concurrent first opens
_ENCODER = msgspec.json.Encoder()
_CONNECTION_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError)


def is_postgres_url(value: str) -> bool:
    """Return whether ``value`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return value.startswith(("postgresql://", "postgres://"))


def describe_database(dsn: str) -> str:
    """Return ``postgresql://user@host:port/db`` for messages (never the password)."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql://(invalid)"
    user = f"{info['user']}@" if info.get("user") else ""
    port = f":{info['port']}" if info.get("port") else ""
    return f"postgresql://{user}{info.get('host', '')}{port}/{info.get('dbname', '')}"


def _one_line(exc: BaseException) -> str:
    """Return a driver error's message on one line (libpq's span several)."""
    return " ".join(str(exc).split())


def _lock_id(key: str) -> int:
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _identity(command_id: str, producer: str | None) -> bytes:
    """Return the command identity as bytes (it holds a NUL, which ``text`` cannot)."""
    return command_identity(command_id, producer).encode("utf-8", "surrogatepass")


def _channel(key: str) -> str:
    return "agents_host_" + hashlib.sha256(key.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class TargetState:
    """A connection change: ``disconnected`` / ``reconnected`` / ``lock-lost``, with the error."""

    state: str
    error: str | None = None
    attempts: int = 0


@dataclass(frozen=True)
class FleetHost:
    """One host registered in a fleet database: key, owner, space, start, and liveness.

    ``heartbeat_age`` is measured by the database's clock (no skew between
    machines); ``lock_held`` is whether some session holds the key's
    advisory lock now (``pg_locks``), which ends with the host's process.
    """

    key: str
    owner_did: str
    space: str
    started_at: str
    heartbeat_at: str | None = None
    heartbeat_age: float | None = None
    heartbeat_interval: float | None = None
    lock_held: bool = False
    liveness: Liveness = "gone"


def liveness(lock_held: bool, heartbeat_age: float | None, stale_after: float) -> Liveness:
    """Classify a host: ``live`` (lock held, fresh heartbeat), ``gone`` (neither), else ``stale``.

    A held lock with an old heartbeat is a hung host; a fresh heartbeat
    without the lock is a host that just died, or one reconnecting after a
    database restart (it takes the lock again on its next heartbeat).
    """
    fresh = heartbeat_age is not None and heartbeat_age <= stale_after
    if lock_held and fresh:
        return "live"
    if not lock_held and not fresh:
        return "gone"
    return "stale"


def _migrate(conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS agents_host_schema_migrations ("
            " version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        row = conn.execute(
            "SELECT COALESCE(MAX(version), 0) FROM agents_host_schema_migrations"
        ).fetchone()
        current = int(row[0]) if row is not None else 0
        if current > len(MIGRATIONS):
            raise TargetStoreError(
                f"target database schema version {current} is newer than this host"
                f" supports ({len(MIGRATIONS)})"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            conn.execute(MIGRATIONS[version - 1].encode())
            conn.execute(
                "INSERT INTO agents_host_schema_migrations (version) VALUES (%s)", (version,)
            )


def _connect(dsn: str) -> psycopg.Connection[Any]:
    return psycopg.connect(dsn, autocommit=True, connect_timeout=5)


_ISO = "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'"


def _held_locks(conn: psycopg.Connection[Any]) -> set[int]:
    """Return the 64-bit advisory lock ids some session of this database holds now."""
    rows = conn.execute(
        "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory'"
        " AND granted AND objsubid = 1"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    ).fetchall()
    held = set()
    for high, low in rows:
        value = (int(high) << 32) | int(low)
        held.add(value - (1 << 64) if value >= 1 << 63 else value)
    return held


def list_fleet(dsn: str, *, stale_after: float | None = None) -> list[FleetHost]:
    """Return every host registered in the database at ``dsn``, by key, with its liveness.

    ``stale_after``: seconds without a heartbeat after which a host is stale
    (default: :data:`STALE_HEARTBEATS` of the host's own interval).

    Raises:
        TargetStoreError: the database cannot be reached or holds no fleet.

    """
    try:
        with _connect(dsn) as conn:
            columns = {
                str(row[0])
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_name = 'agents_host_hosts' AND table_schema = current_schema()"
                ).fetchall()
            }
            if not columns:
                raise TargetStoreError(f"no agents-host fleet in {describe_database(dsn)}")
            beats = "heartbeat_at" in columns  # a fleet not yet migrated to version 2
            rows = conn.execute(
                "SELECT target_key, owner_did, space,"
                f" to_char(started_at AT TIME ZONE 'UTC', {_ISO}),"
                + (
                    f" to_char(heartbeat_at AT TIME ZONE 'UTC', {_ISO}),"
                    " EXTRACT(EPOCH FROM (now() - heartbeat_at))::float8, heartbeat_interval_ms"
                    if beats
                    else " NULL, NULL::float8, NULL::integer"
                )
                + " FROM agents_host_hosts ORDER BY target_key"
            ).fetchall()
            held = _held_locks(conn)
    except psycopg.errors.UndefinedTable as exc:
        raise TargetStoreError(f"no agents-host fleet in {describe_database(dsn)}") from exc
    except psycopg.Error as exc:
        raise TargetStoreError(
            f"target database unavailable: {describe_database(dsn)}: {_one_line(exc)}"
        ) from exc
    hosts = []
    for key, owner, space, started, beat_at, age, interval_ms in rows:
        interval = None if interval_ms is None else int(interval_ms) / 1000
        threshold = stale_after
        if threshold is None:
            threshold = STALE_HEARTBEATS * (interval or DEFAULT_HEARTBEAT)
        lock_held = _lock_id(str(key)) in held
        heartbeat_age = None if age is None else max(0.0, float(age))
        hosts.append(
            FleetHost(
                str(key),
                str(owner),
                str(space),
                str(started),
                heartbeat_at=None if beat_at is None else str(beat_at),
                heartbeat_age=heartbeat_age,
                heartbeat_interval=interval,
                lock_held=lock_held,
                liveness=liveness(lock_held, heartbeat_age, threshold),
            )
        )
    return hosts


class PostgresTarget(StoredDocuments):
    """The PostgreSQL target of one host key; see the module docstring.

    Call it from one thread (the host's event loop); the listener thread only
    delivers changes. Use :meth:`open` for an owning host and :meth:`attach`
    for a client acting on a host through the database.
    """

    def __init__(self, dsn: str, key: str, *, owner_did: str, space: str, owner: bool) -> None:
        self.dsn = dsn
        self.key = key
        self.owner_did = owner_did
        self.space = space
        self.lock_name = f"{describe_database(dsn)}/target-{key}.lock"
        self._owner = owner
        self._conn: psycopg.Connection[Any] | None = None
        self._retry_at = 0.0
        self._delay = BACKOFF[0]
        self._lock_lost = False
        self._closed = False
        self._listeners: list[tuple[ChangeListener, anyio.lowlevel.EventLoopToken | None]] = []
        self._index_memo = None
        self._documents: dict[str, bytes | None] = {}
        self._stop = threading.Event()
        self._delivering = False
        self._announced: set[tuple[str | None, int]] = set()
        self._thread: threading.Thread | None = None
        self.connected = True

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        dsn: str,
        key: str,
        *,
        owner_did: str,
        space: str,
        heartbeat_interval: float = DEFAULT_HEARTBEAT,
    ) -> Self:
        """Own ``key`` in the database at ``dsn``: migrate, take the advisory lock, listen.

        Raises:
            TargetStoreError: the database is unreachable or too new, or another
                host holds the key (``another agent host holds the process lock: ...``).

        """
        target = cls(dsn, key, owner_did=owner_did, space=space, owner=True)
        try:
            conn = target._new_connection()
        except psycopg.Error as exc:
            raise TargetStoreError(
                f"target database unavailable: {describe_database(dsn)}: {_one_line(exc)}"
            ) from exc
        target._conn = conn
        try:
            _migrate(conn)
            target._take_lock(conn)
            conn.execute(
                "INSERT INTO agents_host_hosts (target_key, owner_did, space, heartbeat_at,"
                " heartbeat_interval_ms) VALUES (%s, %s, %s, now(), %s)"
                " ON CONFLICT (target_key) DO UPDATE SET owner_did = excluded.owner_did,"
                " space = excluded.space, started_at = now(), heartbeat_at = now(),"
                " heartbeat_interval_ms = excluded.heartbeat_interval_ms",
                (key, owner_did, space, round(heartbeat_interval * 1000)),
            )
        except BaseException:
            conn.close()
            raise
        target._thread = threading.Thread(
            target=target._listen, name=f"agents-host-listen-{key[:8]}", daemon=True
        )
        target._thread.start()
        return target

    @classmethod
    def attach(cls, dsn: str, key: str) -> Self:
        """Act on the host registered as ``key`` (no lock, no listener): a fleet client.

        Raises:
            TargetStoreError: unreachable database, or no host with that key
                (a unique key prefix is accepted).

        """
        hosts = [h for h in list_fleet(dsn) if h.key.startswith(key)]
        if len(hosts) != 1:
            raise TargetStoreError(
                f"no agents-host with key {key} in {describe_database(dsn)}"
                if not hosts
                else f"key prefix {key} names {len(hosts)} hosts; give more of it"
            )
        host = hosts[0]
        return cls(dsn, host.key, owner_did=host.owner_did, space=host.space, owner=False)

    def _new_connection(self) -> psycopg.Connection[Any]:
        return _connect(self.dsn)

    def _take_lock(self, conn: psycopg.Connection[Any]) -> None:
        if not self._owner:
            return
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_lock_id(self.key),)).fetchone()
        if row is None or not row[0]:
            raise TargetStoreError(f"another agent host holds the process lock: {self.lock_name}")

    # -- connection handling ---------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise TargetStoreError("agent host target is closed")
        if self._lock_lost:
            raise TargetStoreError(f"another agent host holds the process lock: {self.lock_name}")
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._drop()
        if time.monotonic() < self._retry_at:
            raise TargetUnavailableError(
                f"target database unavailable: {describe_database(self.dsn)} (reconnecting)"
            )
        try:
            conn = self._new_connection()
        except psycopg.Error as exc:
            self._retry_at = time.monotonic() + self._delay
            self._delay = min(self._delay * 2, BACKOFF[1])
            raise TargetUnavailableError(
                f"target database unavailable: {describe_database(self.dsn)}: {_one_line(exc)}"
            ) from exc
        try:
            self._take_lock(conn)
        except TargetStoreError:
            conn.close()
            self._lock_lost = True
            self._notify("target", TargetState("lock-lost", error=self.lock_name))
            raise
        except psycopg.Error as exc:
            conn.close()
            raise TargetUnavailableError(f"target database unavailable: {_one_line(exc)}") from exc
        self._delay = BACKOFF[0]
        self._retry_at = 0.0
        self._conn = conn
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def _call(self, op: Callable[[psycopg.Connection[Any]], T], *, retry: bool = True) -> T:
        """Run ``op`` on the working connection; reconnect and retry once when it dropped."""
        for attempt in range(2):
            conn = self._connection()
            try:
                return op(conn)
            except _CONNECTION_ERRORS as exc:
                self._documents.clear()  # a cut-off commit may or may not have landed
                self._drop()
                if not retry or attempt:
                    raise TargetUnavailableError(
                        f"target database unavailable: {_one_line(exc)}"
                    ) from exc
            except psycopg.Error as exc:
                raise TargetStoreError(f"target database error: {_one_line(exc)}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    @contextlib.contextmanager
    def _transaction(self, conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
        with conn.transaction():
            yield conn

    # -- listener --------------------------------------------------------------------------

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Register ``listener``; called in the subscribing event loop (or directly without one)."""
        try:
            token: anyio.lowlevel.EventLoopToken | None = anyio.lowlevel.current_token()
        except RuntimeError:
            token = None
        entry = (listener, token)
        self._listeners.append(entry)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(entry)

        return remove

    def _notify(self, kind: str, value: Any) -> None:
        for listener, _token in list(self._listeners):
            listener(kind, value)

    def _notify_from_thread(self, kind: str, value: Any) -> None:
        # Handshake with close(): mark the delivery, then check the stop flag, so
        # close() (stop, then check the mark) never joins a thread that waits
        # for the event loop close() itself is blocking.
        self._delivering = True
        try:
            for listener, token in list(self._listeners):
                if self._stop.is_set():
                    return
                if token is None:
                    listener(kind, value)
                    continue
                with contextlib.suppress(RuntimeError, anyio.RunFinishedError):
                    anyio.from_thread.run_sync(listener, kind, value, token=token)
        finally:
            self._delivering = False

    def _listen(self) -> None:
        delay = BACKOFF[0]
        attempts = 0
        connected = True
        while not self._stop.is_set():
            try:
                conn = self._new_connection()
            except psycopg.Error as exc:
                attempts += 1
                if connected:
                    connected = False
                    self.connected = False
                    self._notify_from_thread("target", TargetState("disconnected", _one_line(exc)))
                self._stop.wait(delay)
                delay = min(delay * 2, BACKOFF[1])
                continue
            try:
                with conn:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(_channel(self.key))))
                    if not connected:
                        connected = True
                        self.connected = True
                        # the database is back: the working connection may try at
                        # once instead of waiting out its own backoff step
                        self._retry_at = 0.0
                        self._delay = BACKOFF[0]
                        self._notify_from_thread(
                            "target", TargetState("reconnected", attempts=attempts)
                        )
                    delay, attempts = BACKOFF[0], 0
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.2):
                            producer, _, seq = note.payload.rpartition("\t")
                            change = (producer or None, int(seq))
                            if change in self._announced:
                                self._announced.discard(change)  # notified at the commit
                                continue
                            self._notify_from_thread("command", change)
            except psycopg.Error as exc:
                if self._stop.is_set():
                    return
                attempts += 1
                connected = False
                self.connected = False
                self._notify_from_thread("target", TargetState("disconnected", _one_line(exc)))
                self._stop.wait(delay)

    def heartbeat(self) -> None:
        """Record that this owner is alive (``heartbeat_at = now()``); retakes a lost lock.

        Raises:
            TargetStoreError: the database failed or another host holds the key.

        """
        self._call(
            lambda conn: conn.execute(
                "UPDATE agents_host_hosts SET heartbeat_at = now() WHERE target_key = %s",
                (self.key,),
            )
        )

    def close(self) -> None:
        """Clear the heartbeat, release the lock, stop the listener, close; idempotent.

        A clean stop clears ``heartbeat_at`` (``fleet`` shows the host
        ``gone`` at once); where the database is unreachable it is left.
        """
        if self._closed:
            return
        conn = self._conn
        if (
            self._owner
            and not self._lock_lost
            and conn is not None
            and not conn.closed
            and not conn.broken
        ):
            with contextlib.suppress(psycopg.Error):
                conn.execute(
                    "UPDATE agents_host_hosts SET heartbeat_at = NULL WHERE target_key = %s",
                    (self.key,),
                )
        self._closed = True
        self._stop.set()
        self._listeners.clear()
        self._drop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread() and not self._delivering:
            thread.join(timeout=5)

    # -- receipts --------------------------------------------------------------------------

    def _document_in(
        self, conn: psycopg.Connection[Any], name: str, *, lock: bool = False
    ) -> bytes | None:
        if self._owner and name in self._documents:
            return self._documents[name]
        row = conn.execute(
            "SELECT body FROM agents_host_documents WHERE target_key = %s AND name = %s"
            + (" FOR UPDATE" if lock else ""),
            (self.key, name),
        ).fetchone()
        body = None if row is None else bytes(row[0])
        if self._owner:
            self._documents[name] = body
        return body

    def _document(self, name: str) -> bytes | None:
        if self._owner and name in self._documents:
            return self._documents[name]
        return self._call(lambda conn: self._document_in(conn, name))

    def _remember(self, docs: list[tuple[str, bytes]]) -> None:
        """Record documents this owner just committed."""
        if self._owner:
            self._documents.update(docs)

    def _bump(self, conn: psycopg.Connection[Any], name: str) -> int:
        row = conn.execute(
            "INSERT INTO agents_host_meta (target_key, name, value) VALUES (%s, %s, 1)"
            " ON CONFLICT (target_key, name) DO UPDATE SET value = agents_host_meta.value + 1"
            " RETURNING value",
            (self.key, name),
        ).fetchone()
        assert row is not None
        return int(row[0])

    def read_receipt(self, command_id: str, producer: str | None) -> Receipt | None:
        """Return the stored receipt (validated), or ``None``.

        Raises:
            TargetStoreError: the stored receipt does not validate, or the database failed.

        """
        row = self._call(
            lambda conn: conn.execute(
                "SELECT body FROM agents_host_receipts WHERE target_key = %s AND identity = %s",
                (self.key, _identity(command_id, producer)),
            ).fetchone()
        )
        return None if row is None else self._decode_receipt(command_id, producer, bytes(row[0]))

    def _store_receipts(
        self, rows: list[StoredReceipt], build_index: Callable[[bytes | None], bytes]
    ) -> None:
        """Write the receipts and the index in one pipelined transaction (see the base class).

        A dropped connection is retried once on a fresh one (the upserts are
        idempotent, and the index is rebuilt from what is stored then).
        """

        def write(conn: psycopg.Connection[Any]) -> None:
            with conn.pipeline(), self._transaction(conn):
                index_body = build_index(self._document_in(conn, RECEIPT_INDEX_DOC, lock=True))
                with conn.cursor() as cur:
                    cur.executemany(
                        "WITH seq AS (INSERT INTO agents_host_meta (target_key, name, value)"
                        " VALUES (%s, 'receipt-seq', 1) ON CONFLICT (target_key, name)"
                        " DO UPDATE SET value = agents_host_meta.value + 1 RETURNING value)"
                        " INSERT INTO agents_host_receipts"
                        " (target_key, identity, command_id, producer, updated_seq, body)"
                        " SELECT %s, %s, %s, %s, seq.value, %s FROM seq"
                        " ON CONFLICT (target_key, identity)"
                        " DO UPDATE SET updated_seq = excluded.updated_seq, body = excluded.body",
                        [
                            (
                                self.key,
                                self.key,
                                row.identity.encode("utf-8", "surrogatepass"),
                                row.command_id,
                                row.producer,
                                row.body,
                            )
                            for row in rows
                        ],
                    )
                self._put_documents(conn, [(RECEIPT_INDEX_DOC, index_body)])

        self._call(write)

    def _remember_document(self, name: str, body: bytes) -> None:
        self._remember([(name, body)])

    def _put_documents(self, conn: psycopg.Connection[Any], docs: list[tuple[str, bytes]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO agents_host_documents (target_key, name, body) VALUES (%s, %s, %s)"
                " ON CONFLICT (target_key, name) DO UPDATE SET body = excluded.body",
                [(self.key, name, body) for name, body in docs],
            )

    def list_receipts(self, *, limit: int, producer: str | None = None) -> list[Receipt]:
        """Return up to ``limit`` receipts, most recently written first (``""``: owner's queue).

        Raises:
            TargetStoreError: a stored receipt does not decode, or the database failed.

        """
        if producer is None:
            query = (
                "SELECT body FROM agents_host_receipts WHERE target_key = %s"
                " ORDER BY updated_seq DESC LIMIT %s"
            )
            params: tuple[Any, ...] = (self.key, limit)
        else:
            query = (
                "SELECT body FROM agents_host_receipts WHERE target_key = %s AND producer = %s"
                " ORDER BY updated_seq DESC LIMIT %s"
            )
            params = (self.key, producer, limit)
        rows = self._call(lambda conn: conn.execute(query, params).fetchall())
        return self._decode_listed(bytes(row[0]) for row in rows)

    # -- health and sessions ---------------------------------------------------------------

    def publish_health(self, health: Health) -> None:
        """Replace the health document."""
        body = _ENCODER.encode(health)
        self._call(lambda conn: self._put_documents(conn, [(HEALTH_DOC, body)]))
        self._remember([(HEALTH_DOC, body)])
        self._notify("health", health)

    def next_observation(self) -> int:
        """Allocate the next observation sequence number."""
        return self._call(lambda conn: self._bump(conn, "observation"), retry=False)

    def publish_sessions(
        self,
        recent: SessionIndex,
        all_index: SessionIndex,
        manifests: dict[str, bytes],
        observations: dict[str, int],
    ) -> None:
        """Write the manifests, both indexes and the observations in one transaction."""
        docs = [
            (OBSERVATIONS_DOC, _ENCODER.encode(observations)),
            (RECENT_INDEX_DOC, _ENCODER.encode(recent)),
            (ALL_INDEX_DOC, _ENCODER.encode(all_index)),
        ]

        def write(conn: psycopg.Connection[Any]) -> None:
            with conn.pipeline(), self._transaction(conn), conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO agents_host_manifests (target_key, key, body) VALUES (%s, %s, %s)"
                    " ON CONFLICT (target_key, key) DO UPDATE SET body = excluded.body",
                    [(self.key, key, body) for key, body in manifests.items()],
                )
                self._put_documents(conn, docs)

        self._call(write)
        self._remember(docs)
        self._notify("sessions", all_index)

    def read_manifest(self, key: str) -> bytes | None:
        """Return a session's manifest document bytes, or ``None``."""
        row = self._call(
            lambda conn: conn.execute(
                "SELECT body FROM agents_host_manifests WHERE target_key = %s AND key = %s",
                (self.key, key),
            ).fetchone()
        )
        return None if row is None else bytes(row[0])

    # -- command queues --------------------------------------------------------------------

    def append_command(self, value: Any, producer: str | None) -> int:
        """Append ``value`` to the queue and notify the owning host; return its sequence.

        Not retried after a dropped connection (the append may have committed).
        """
        queue = producer or ""
        body = _ENCODER.encode(value)

        def write(conn: psycopg.Connection[Any]) -> int:
            with self._transaction(conn):
                seq = self._bump(conn, f"commands/{queue}")
                conn.execute(
                    "INSERT INTO agents_host_commands (target_key, producer, seq, body)"
                    " VALUES (%s, %s, %s, %s)",
                    (self.key, queue, seq, body),
                )
                conn.execute("SELECT pg_notify(%s, %s)", (_channel(self.key), f"{queue}\t{seq}"))
                # announced before the commit, so the listener thread drops this
                # notification's echo instead of delivering the change twice
                if self._thread is not None:
                    self._announced.add((producer or None, seq))
            return seq

        seq = self._call(write, retry=False)
        self._notify("command", (producer, seq))
        return seq

    def read_commands(self, producer: str | None, after: int = 0) -> list[tuple[int, Any]]:
        """Return ``(seq, value)`` of the queue's elements after ``after``, claiming them.

        Rows locked by another session are skipped (``SKIP LOCKED``) and the
        result stops before the first one, so none is ever passed over.
        """

        def claim(conn: psycopg.Connection[Any]) -> list[tuple[int, bytes]]:
            with self._transaction(conn):
                rows = conn.execute(
                    "SELECT seq, body FROM agents_host_commands"
                    " WHERE target_key = %s AND producer = %s AND seq > %s"
                    " ORDER BY seq FOR UPDATE SKIP LOCKED",
                    (self.key, producer or "", after),
                ).fetchall()
                contiguous: list[tuple[int, bytes]] = []
                for seq, body in rows:
                    if int(seq) != after + len(contiguous) + 1:
                        break
                    contiguous.append((int(seq), bytes(body)))
                if contiguous and self._owner:
                    conn.execute(
                        "UPDATE agents_host_commands SET claimed_at = now()"
                        " WHERE target_key = %s AND producer = %s AND seq > %s AND seq <= %s"
                        " AND claimed_at IS NULL",
                        (self.key, producer or "", after, contiguous[-1][0]),
                    )
            return contiguous

        return [(seq, msgspec.json.decode(body)) for seq, body in self._call(claim)]

    def queue_counts(self) -> dict[str, tuple[int, int]]:
        """Return ``{producer: (queued, claimed)}`` for every queue of this key."""
        rows = self._call(
            lambda conn: conn.execute(
                "SELECT producer, count(*), count(claimed_at) FROM agents_host_commands"
                " WHERE target_key = %s GROUP BY producer ORDER BY producer",
                (self.key,),
            ).fetchall()
        )
        return {str(p): (int(q), int(c)) for p, q, c in rows}
