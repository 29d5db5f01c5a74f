"""The agents-host socket API server (protocol: :mod:`shedproto.agents_host.types`).

One task per connection (:class:`~shedproto.servers._unix.UnixServer`).
Requests are answered in order. ``submit`` validates the command with the
connector's own validator and appends it to the queue: the socket never
bypasses the queue, so deduplication across restarts stays the ledger's
(spec 8.2). A subscribed connection gets events from a bounded buffer of
:data:`EVENT_BUFFER` lines; a subscriber that falls that far behind is
disconnected rather than allowed to grow the host's memory. ``health``
answers the published health; while a remote target (PostgreSQL) is
unreachable it answers the host's live health instead, which reports the
outage (``degraded``, ``target-disconnected``).

Deadlines: a connection that sends nothing for :data:`IDLE_TIMEOUT` seconds
is closed unless it subscribed; each write must finish within
:data:`WRITE_TIMEOUT` seconds.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import anyio.abc
import msgspec

from shedproto import LineSkipped
from shedproto.agents_host import (
    ApiConnectionClosed,
    ApiRequest,
    ApiServerConnection,
    CollectRequest,
    CollectResult,
    HealthRequest,
    HealthResult,
    ReceiptRequest,
    ReceiptResult,
    ReceiptsRequest,
    ReceiptsResult,
    SessionRequest,
    SessionResult,
    SessionsRequest,
    SessionsResult,
    SubmitRequest,
    SubmitResult,
    SubscribeRequest,
    SubscribeResult,
    encode_error,
    encode_event,
    encode_result,
)
from shedproto.connector import (
    TERMINAL_STATUSES,
    Command,
    Health,
    InvalidCommand,
    Receipt,
    check_command_owner,
    decode_command,
)
from shedproto.servers._idle import IdleDeadline
from shedproto.servers._receive import SocketPump, WatchedReads
from shedproto.servers._unix import UnixServer

from .host import AgentsHost
from .target import receipt_link
from .worker import CommandTaskError

__all__ = [
    "EVENT_BUFFER",
    "IDLE_TIMEOUT",
    "SOCKET_NAME",
    "WRITE_TIMEOUT",
    "api_server",
    "serve_api_connection",
]

SOCKET_NAME = "agents-host.sock"
"""The socket's file name inside the lock (runtime) directory."""
IDLE_TIMEOUT = 300.0
"""Seconds an unsubscribed connection may stay silent."""
WRITE_TIMEOUT = 10.0
"""Seconds one reply or event write may take."""
EVENT_BUFFER = 4096
"""Events buffered per subscriber before it is disconnected."""


class _Connection:
    """One API connection's stream, its writers' lock and its subscriptions.

    Reads and writes go through a :class:`~shedproto.servers._receive.SocketPump`
    (issue 16): a request costs one event-loop pass (the wait for it), not
    four (anyio's receive and send checkpoints and the lock's). Reads are
    :class:`~shedproto.servers._receive.WatchedReads`: the socket is
    registered with the loop once for the connection's life, not added and
    removed around every wait (on uvloop each registration makes and
    destroys a poll handle, a visible share of a ``health`` round trip);
    :meth:`close` ends the watch before the socket closes. The lock is
    taken without a checkpoint when free (``fast_acquire``) and keeps the
    writers of a subscribed connection (answers, events) from interleaving;
    a write starts straight on the socket and only what it does not take
    waits, under :data:`WRITE_TIMEOUT`.
    """

    def __init__(self, stream: anyio.abc.ByteStream, host: AgentsHost) -> None:
        self.stream = stream
        self.pump = SocketPump(stream)
        self.reads = WatchedReads(self.pump)
        self.host = host
        self.lock = anyio.Lock(fast_acquire=True)
        self.subscribed = False
        self.unsubscribe: list[Any] = []

    async def write(self, data: bytes) -> None:
        """Write ``data`` whole, after any write already under way.

        Raises:
            TimeoutError: what the socket did not take at once took over :data:`WRITE_TIMEOUT` s.
            anyio.BrokenResourceError: the peer is gone.

        """
        if not self.lock.locked():  # no write under way: nothing can come between
            data = self.pump.send_now(data)
            if not data:
                return
        async with self.lock:
            rest = self.pump.send_now(data)
            if rest:
                with anyio.fail_after(WRITE_TIMEOUT):
                    await self.pump.send(rest)

    async def close(self) -> None:
        """Stop watching the socket, then close the stream (a receive under way gets ``b""``)."""
        self.reads.close()
        await self.stream.aclose()


async def serve_api_connection(stream: anyio.abc.ByteStream, host: AgentsHost) -> None:
    """Serve one API connection until EOF, idle timeout or a framing error."""
    connection = _Connection(stream, host)
    conn = ApiServerConnection()
    idle = IdleDeadline(IDLE_TIMEOUT)
    try:
        async with anyio.create_task_group() as tasks:
            with idle.scope:
                reading = True
                while reading:
                    data = await connection.reads.receive()
                    if not connection.subscribed:
                        idle.touch()
                    else:
                        idle.scope.deadline = float("inf")
                    for event in conn.receive_data(data):
                        if conn.outbox:  # error lines due before this event
                            await connection.write(conn.data_to_send())
                        if isinstance(event, ApiConnectionClosed):
                            reading = False
                        elif not isinstance(event, LineSkipped):
                            await _answer(connection, conn, event, tasks)
                    if conn.outbox:
                        await connection.write(conn.data_to_send())
            tasks.cancel_scope.cancel()
    finally:
        connection.reads.close()  # before the server closes the socket
        for remove in connection.unsubscribe:
            remove()


async def _answer(
    connection: _Connection,
    conn: ApiServerConnection,
    request: ApiRequest,
    tasks: anyio.abc.TaskGroup,
) -> None:
    if isinstance(request, SubmitRequest) and request.wait:
        conn.detach()  # answered by its own task, when the receipt is terminal
        tasks.start_soon(_answer_submit_and_wait, connection, request)
        return
    if isinstance(request, SubmitRequest):
        try:
            queued = await _queue_when_reachable(connection.host, request)
        except Exception as exc:
            queued = encode_error(request.id, "unavailable", str(exc) or type(exc).__name__)
        reply = queued if isinstance(queued, bytes) else encode_result(request.id, queued)
        await connection.write(conn.send(reply))
        return
    await connection.write(conn.send(_dispatch(connection, request, tasks)))


def _dispatch(connection: _Connection, request: ApiRequest, tasks: anyio.abc.TaskGroup) -> bytes:
    host = connection.host
    target = host.target
    try:
        if isinstance(request, ReceiptRequest):
            receipt = target.read_receipt(request.commandId.strip(), request.producer)
            return encode_result(request.id, ReceiptResult(receipt=receipt))
        if isinstance(request, ReceiptsRequest):
            receipts = target.list_receipts(limit=request.limit, producer=request.producer)
            return encode_result(request.id, ReceiptsResult(receipts=tuple(receipts)))
        if isinstance(request, HealthRequest):
            try:
                health = target.read_health()
            except Exception:  # an unreachable remote target: the host's own, live view
                if not host.health_owned:
                    raise
                health = host.health()
            return encode_result(request.id, _health_result(health))
        if isinstance(request, SessionsRequest):
            return encode_result(
                request.id, SessionsResult(index=target.read_index(request.bucket))
            )
        if isinstance(request, SessionRequest):
            row = target.published_sessions().get(request.key)
            body = target.read_manifest(request.key)
            manifest = None if body is None else msgspec.json.decode(body)
            return encode_result(request.id, SessionResult(session=row, manifest=manifest))
        if isinstance(request, CollectRequest):
            outcome = host.request_collection("socket")
            return encode_result(request.id, CollectResult(outcome=outcome))
        if isinstance(request, SubmitRequest):  # answered by _answer
            raise AssertionError("submit is not dispatched")  # pragma: no cover
        return _subscribe(connection, request, tasks)
    except Exception as exc:
        return encode_error(request.id, "unavailable", str(exc) or type(exc).__name__)


_HEALTH_RESULT: list[tuple[Health, msgspec.Raw] | None] = [None]
"""The last health answered and its encoded result, replaced whole (one slot)."""


def _health_result(health: Health | None) -> HealthResult | msgspec.Raw:
    """Return the ``health`` result, encoded once per health document.

    The targets hand out the same (frozen) :class:`Health` object for the
    same stored bytes, so identity is the memo key; the entry keeps the
    object alive, so the key cannot be reused by another one.
    """
    if health is None:
        return HealthResult(health=None)
    last = _HEALTH_RESULT[0]  # one read: hosts in other threads may replace it
    if last is not None and last[0] is health:
        return last[1]
    raw = msgspec.Raw(msgspec.json.encode(HealthResult(health=health)))
    _HEALTH_RESULT[0] = (health, raw)
    return raw


def _queue(host: AgentsHost, request: SubmitRequest) -> SubmitResult | bytes:
    command = decode_command(request.command)
    if isinstance(command, Command):
        wrong_owner = check_command_owner(command, host.config.ownerDid)
        if wrong_owner is not None:
            command = wrong_owner
    if isinstance(command, InvalidCommand):
        return encode_error(request.id, "invalid-command", command.message)
    producers = {p.id for p in host.config.commandProducers or ()}
    if request.producer is not None and request.producer not in producers:
        return encode_error(
            request.id,
            "unknown-producer",
            f"command producer is not configured: {request.producer}",
        )
    worker = host.worker
    if worker is None or not worker.accepting or not host.accept_commands:
        return encode_error(request.id, "not-accepting", "the host is not accepting commands")
    host.target.append_command(request.command, request.producer)
    link = receipt_link(command.id, request.producer, host.target.space)
    return SubmitResult(
        commandId=command.id, producer=request.producer, queued=True, receiptPath=link.id
    )


async def _queue_when_reachable(host: AgentsHost, request: SubmitRequest) -> SubmitResult | bytes:
    """Queue the command, waiting up to the host's target wait while the target is down.

    Appending again after a cut-off append is safe: the worker admits each
    command identity once.
    """

    async def queue() -> SubmitResult | bytes:
        return _queue(host, request)

    return await host.availability.retry(queue)


async def _answer_submit_and_wait(connection: _Connection, request: SubmitRequest) -> None:
    host = connection.host
    done = anyio.Event()
    found: list[Receipt] = []
    failed: list[CommandTaskError] = []
    command = decode_command(request.command)

    def watch(kind: str, value: Any) -> None:
        if (
            kind == "receipt"
            and isinstance(command, Command)
            and value.commandId == command.id
            and value.producer == request.producer
            and value.status in TERMINAL_STATUSES
        ):
            found.append(value)
            done.set()

    def watch_failures(error: CommandTaskError) -> None:
        if (
            isinstance(command, Command)
            and error.command_id == command.id
            and error.producer == request.producer
        ):
            failed.append(error)
            done.set()

    remove = host.target.subscribe(watch)
    remove_failure_watch = host.on_task_failure(watch_failures)
    try:
        try:
            queued = await _queue_when_reachable(host, request)
        except Exception as exc:
            queued = encode_error(request.id, "unavailable", str(exc) or type(exc).__name__)
        if isinstance(queued, bytes) or not isinstance(command, Command):
            await connection.write(queued if isinstance(queued, bytes) else b"")
            return
        try:
            existing = host.target.read_receipt(command.id, request.producer)
        except Exception:  # a remote target is unreachable: wait for the receipt event
            existing = None
        if existing is not None and existing.status in TERMINAL_STATUSES:
            found.append(existing)
            done.set()
        await done.wait()
        if not found:  # the command ended without a receipt
            await connection.write(encode_error(request.id, "command-task-failed", str(failed[0])))
            return
        link = receipt_link(command.id, request.producer, host.target.space)
        result = SubmitResult(
            commandId=command.id,
            producer=request.producer,
            queued=True,
            receiptPath=link.id,
            receipt=found[0],
        )
        await connection.write(encode_result(request.id, result))
    finally:
        remove()
        remove_failure_watch()


def _subscribe(
    connection: _Connection, request: SubscribeRequest, tasks: anyio.abc.TaskGroup
) -> bytes:
    topics = set(request.topics)
    kinds = {"receipt": "receipts", "health": "health", "sessions": "sessions"}
    send, receive = anyio.create_memory_object_stream[bytes](EVENT_BUFFER)

    def forward(kind: str, value: Any) -> None:
        topic = kinds.get(kind)
        if topic is None or topic not in topics:
            return
        try:
            send.send_nowait(encode_event(kind, value))  # type: ignore[arg-type]
        except anyio.WouldBlock:
            send.close()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async def writer() -> None:
        async with receive:
            async for line in receive:
                await connection.write(line)
        # the buffer overflowed: drop the slow subscriber. Closing the stream
        # does not wake the reader's wait on the socket (it waits on the
        # socket itself), so the connection's tasks are cancelled first.
        tasks.cancel_scope.cancel()
        await connection.close()

    connection.unsubscribe.append(connection.host.target.subscribe(forward))
    connection.unsubscribe.append(send.close)
    connection.subscribed = True
    tasks.start_soon(writer)
    return encode_result(request.id, SubscribeResult(topics=tuple(sorted(topics))))


def api_server(path: str | os.PathLike[str], host: AgentsHost, *, grace: float = 2.0) -> UnixServer:
    """Return the :class:`~shedproto.servers.UnixServer` serving the API of ``host`` on ``path``."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await serve_api_connection(stream, host)

    return UnixServer(path, handler, grace=grace)
