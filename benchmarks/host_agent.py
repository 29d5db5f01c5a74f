"""host-agent: approval round trips and event fan-out, against raw anyio baselines.

* **approval vs raw exchange** (target 0.90): ``HostAgentServer.request_approval``
  (request frame out, the :class:`AsyncApprovalConsumer` decides, response in,
  Decision back), sequentially, against the raw anyio exchange with the same
  shape: a requester task writes a line of the same size, a peer echoes it,
  and the connection's reader task wakes the requester through an
  ``anyio.Event``. Both cost two socket crossings and one task wake-up (the
  agent cannot read the reply in the asking task: one consumer connection
  carries many concurrent approvals). What the candidate adds is per-frame
  Python work on both ends: ids, timestamps, two encodes, two decodes, the
  state machines and the registry. Both ends wait on a reader the loop keeps
  registered and whose callback reads for the waiting task (the client
  transport; the agent's ``WatchedReads``): no spurious wake-up from the
  loop's stale readiness report, no reader added and removed per wait. That
  and the consumer's fast paths took the median candidate from ~83 to ~53 us
  on asyncio (ratio 1.26 -> 2.0 on this machine, same-run medians).
* **approval, server side, vs raw exchange** (target 0.95): the same, answered
  by a raw consumer that cuts the request's id out and writes a pre-encoded
  ``approval_response``: what it adds over the raw exchange is the agent's own
  work, so the gap between this case and the first is the typed consumer's.
* **approval vs raw echo, one task** (floor 0.60): the same candidate against
  the cheapest possible two-crossing round trip (the asking task reads the
  reply itself, no wake-up); it states the whole cost honestly.
* **event fan-out, server side** (target 0.50, issue 16): ``emit_audit`` to a
  raw consumer (it sends its hello, then splits lines as the baseline's
  reader does), in windows of 200 (the agent's writer queue holds 256
  frames), against raw pre-encoded lines written in the same windows. Per
  event the agent makes one line with a fresh id (:class:`~shedproto.host_agent.EventLines`: the
  id stays ASCII bytes, the ``ts`` part is cached for the second, the rest is
  the record's own encoding; once per event, not per consumer) and corks it
  into a batched write (after a burst's first event, one append each);
  ``emit_audit`` costs ~0.8 µs an event (the uuid, one encode and splice,
  three appends), which puts this ratio near 0.6 on asyncio and just over
  0.5 on uvloop, where the raw reader is cheaper and the agent is not.
* **event fan-out, end to end** (floor 0.20): the same with the typed
  :class:`AsyncApprovalConsumer`, which also decodes every event.

asyncio backend, one process (both ends share the CPU, so library work on
either end counts). Runs are timed in CPU seconds of this process
(``time.process_time``), as in the servers suite: nothing sleeps, and wall
time on the shared machine mostly measured other tenants (the approval ratio
swung 0.66-1.11 between runs of one build). p50/p99 per round trip (wall
clock) are printed to stderr after the last run; compare medians of several
runs.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.clients.host_agent import AsyncApprovalConsumer
from shedproto.host_agent import (
    AgentConfig,
    ApprovalRequest,
    ApprovalResponse,
    AuditRecord,
    ClientInfo,
    Event,
    Hello,
    encode_frame,
)
from shedproto.servers.host_agent import HostAgentServer

from ._harness import Case

WINDOW = 200
_clock = time.process_time
"""Run totals are CPU seconds of this process (both ends live in it and nothing sleeps):
wall time on the shared machine mostly measures other tenants. Per-operation latencies
(p50/p99) stay wall-clock."""
REQUEST_LINE = encode_frame(
    ApprovalRequest(
        id="6f1c2d4e-8a9b-4c3d-9e2f-0a1b2c3d4e5f",
        ts="2026-07-10T00:00:00Z",
        namespace="ssh-agent",
        op="sign",
        shed="web",
        detail="SSH sign request",
        expires_at="2026-07-10T00:00:25Z",
    )
)
RECORD = AuditRecord(
    ts="2026-07-10T00:00:00Z",
    shed="web",
    ns="ssh-agent",
    op="sign",
    result="ok",
    detail="ssh-ed25519",
    approval="shed-desktop",
    decided_by="user",
)
RESPONSE_HEAD, RESPONSE_TAIL = encode_frame(
    ApprovalResponse(
        id="reply-1", ts="2026-07-10T00:00:00Z", request_id="@" * 36, decision="approve"
    )
).split(b"@" * 36)
"""A raw consumer's ``approval_response``, cut where the request's id goes."""
EVENT_LINE = encode_frame(RECORD.to_event("6f1c2d4e-8a9b-4c3d-9e2f-0a1b2c3d4e5f"))
HELLO_LINE = encode_frame(
    Hello(
        id="hello-1",
        ts="2026-07-10T00:00:00Z",
        client=ClientInfo(name="bench", version="0", pid=1),
    )
)
CONFIG = AgentConfig(
    policies={"ssh-agent": "shed-desktop", "aws-credentials": "", "docker-credentials": ""}
)


class Latencies:
    """Per-operation latencies of the last run, reported as p50/p99 after the final run."""

    def __init__(self, label: str, runs: int) -> None:
        self.label = label
        self.runs_left = runs
        self.samples: list[float] = []

    def finish_run(self, samples: list[float]) -> None:
        self.samples = samples
        self.runs_left -= 1
        if self.runs_left == 0 and samples:
            ordered = sorted(samples)
            p50 = statistics.median(ordered) * 1e6
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6
            sys.stderr.write(f"  {self.label}: p50 {p50:8.1f} us, p99 {p99:8.1f} us\n")


async def _accept_one(
    listener: anyio.abc.SocketListener,
    handler: Callable[[anyio.abc.SocketStream], Awaitable[None]],
) -> None:
    await handler(await listener.accept())


async def _echo(stream: anyio.abc.SocketStream) -> None:
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            while True:
                await stream.send(await reader.receive_until(b"\n", 1 << 20) + b"\n")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


async def _raw_round_trips(path: Path, count: int, stats: Latencies) -> float:
    listener = await anyio.create_unix_listener(path)
    samples = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(_accept_one, listener, _echo)
        stream = await anyio.connect_unix(path)
        reader = BufferedByteReceiveStream(stream)
        start = _clock()
        for _ in range(count):
            began = time.perf_counter()
            await stream.send(REQUEST_LINE)
            await reader.receive_until(b"\n", 1 << 20)
            samples.append(time.perf_counter() - began)
        elapsed = _clock() - start
        await stream.aclose()  # the echo task ends at EOF: nothing is cancelled mid-receive
    await listener.aclose()
    await anyio.Path(path).unlink()
    stats.finish_run(samples)
    return elapsed


async def _raw_exchange(path: Path, count: int, stats: Latencies) -> float:
    """Time the raw anyio twin of an approval: a requester task and a reader task.

    The requester writes the request line and waits on an ``anyio.Event``;
    the connection's reader task reads the peer's reply and sets it. That is
    the minimum any multiplexed request/response server pays (the agent
    serves many concurrent approvals over one consumer connection, so the
    reply cannot be read by the task that asked): two socket crossings and
    one task wake-up, with no ids, timestamps, codec or registry.
    """
    listener = await anyio.create_unix_listener(path)
    samples = []
    replied = anyio.Event()

    async def read_replies(reader: BufferedByteReceiveStream) -> None:
        nonlocal replied
        try:
            while True:
                await reader.receive_until(b"\n", 1 << 20)
                replied.set()
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
            return

    async with anyio.create_task_group() as tg:
        tg.start_soon(_accept_one, listener, _echo)
        stream = await anyio.connect_unix(path)
        tg.start_soon(read_replies, BufferedByteReceiveStream(stream))
        start = _clock()
        for _ in range(count):
            began = time.perf_counter()
            replied = anyio.Event()
            await stream.send(REQUEST_LINE)
            await replied.wait()
            samples.append(time.perf_counter() - began)
        elapsed = _clock() - start
        await stream.send_eof()  # the echo task ends at EOF, then the reader sees EOF
    await stream.aclose()
    await listener.aclose()
    await anyio.Path(path).unlink()
    stats.finish_run(samples)
    return elapsed


async def _approvals(directory: Path, count: int, stats: Latencies | None) -> float:
    samples = []
    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(directory, config=CONFIG).serve)
        consumer = await AsyncApprovalConsumer.connect(directory, client_name="bench")
        await agent.wait_for_consumer(client_name="bench")

        async def decide() -> None:
            async for item in consumer:
                if isinstance(item, ApprovalRequest):
                    await consumer.approve(item)

        tg.start_soon(decide)
        start = _clock()
        for _ in range(count):
            began = time.perf_counter()
            decision = await agent.request_approval("ssh-agent", "sign", "web", audit_denial=False)
            samples.append(time.perf_counter() - began)
            assert decision.approved
        elapsed = _clock() - start
        await consumer.aclose()
        agent.shutdown()
    if stats is not None:
        stats.finish_run(samples)
    return elapsed


async def _raw_consumer(
    agent: HostAgentServer,
) -> tuple[anyio.abc.SocketStream, BufferedByteReceiveStream]:
    """Connect a raw consumer to ``agent``: send the hello, read the ack, wait until active."""
    stream = await anyio.connect_unix(agent.approval_path)
    reader = BufferedByteReceiveStream(stream)
    await stream.send(HELLO_LINE)
    await reader.receive_until(b"\n", 1 << 20)  # the ack
    await agent.wait_for_consumer(client_name="bench")
    return stream, reader


async def _approvals_raw_consumer(directory: Path, count: int) -> float:
    """Time approvals answered by a raw consumer: the server's own share of the round trip.

    The consumer sends its hello, then per request line it cuts the id out and
    writes a pre-encoded ``approval_response`` around it: no decode, no state
    machine, so what the candidate adds over the raw exchange is the agent's.
    """
    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(directory, config=CONFIG).serve)
        stream, reader = await _raw_consumer(agent)

        async def decide() -> None:
            try:
                while True:
                    line = await reader.receive_until(b"\n", 1 << 20)
                    at = line.index(b'"id":"') + 6
                    await stream.send(RESPONSE_HEAD + line[at : at + 36] + RESPONSE_TAIL)
            except (
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.ClosedResourceError,
                anyio.BrokenResourceError,
            ):
                return

        tg.start_soon(decide)
        start = _clock()
        for _ in range(count):
            decision = await agent.request_approval("ssh-agent", "sign", "web", audit_denial=False)
            assert decision.approved
        elapsed = _clock() - start
        agent.shutdown()
    await stream.aclose()
    return elapsed


async def _raw_fanout(path: Path, count: int) -> float:
    listener = await anyio.create_unix_listener(path)
    batch = EVENT_LINE * WINDOW
    received = 0
    drained = anyio.Event()

    async def produce(stream: anyio.abc.SocketStream) -> None:
        nonlocal drained
        async with stream:
            for _ in range(count // WINDOW):
                await stream.send(batch)
                await drained.wait()
                drained = anyio.Event()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_accept_one, listener, produce)
        stream = await anyio.connect_unix(path)
        reader = BufferedByteReceiveStream(stream)
        start = _clock()
        while received < count:
            await reader.receive_until(b"\n", 1 << 20)
            received += 1
            if received % WINDOW == 0:
                drained.set()
        elapsed = _clock() - start
        await stream.aclose()
    await listener.aclose()
    await anyio.Path(path).unlink()
    return elapsed


async def _fanout(directory: Path, count: int) -> float:
    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(directory, config=CONFIG).serve)
        consumer = await AsyncApprovalConsumer.connect(directory, client_name="bench")
        await agent.wait_for_consumer(client_name="bench")
        start = _clock()
        received = 0
        for _ in range(count // WINDOW):
            for _ in range(WINDOW):
                agent.emit_audit(RECORD)
            for _ in range(WINDOW):
                item = await consumer.receive()
                assert isinstance(item, Event)
                received += 1
        elapsed = _clock() - start
        await consumer.aclose()
        agent.shutdown()
    assert received == count
    return elapsed


async def _fanout_raw_consumer(directory: Path, count: int) -> float:
    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(directory, config=CONFIG).serve)
        stream, reader = await _raw_consumer(agent)
        start = _clock()
        for _ in range(count // WINDOW):
            for _ in range(WINDOW):
                agent.emit_audit(RECORD)
            for _ in range(WINDOW):
                await reader.receive_until(b"\n", 1 << 20)
        elapsed = _clock() - start
        await stream.aclose()
        agent.shutdown()
    return elapsed


def cases(quick: bool) -> list[Case]:
    round_trips = 500 if quick else 3000
    events = 4000 if quick else 40000
    repeat = 3 if quick else 7
    directory = Path(tempfile.mkdtemp(prefix="spbha-", dir="/tmp"))
    raw_stats = Latencies("raw echo round trip (one task)", repeat + 1)
    exchange_stats = Latencies("raw exchange (requester + reader task)", repeat + 1)
    approval_stats = Latencies("approval round trip", repeat + 1)
    unreported = Latencies("raw exchange (again)", 0)
    counter = iter(range(1 << 30))

    def fresh(name: str) -> Path:
        return directory / f"{name}{next(counter)}"

    import atexit

    atexit.register(shutil.rmtree, directory, True)
    return [
        Case(
            name=f"host-agent: approval vs raw exchange ({round_trips} rt)",
            baseline=lambda: anyio.run(_raw_exchange, fresh("x"), round_trips, exchange_stats),
            candidate=lambda: anyio.run(_approvals, fresh("a"), round_trips, approval_stats),
            target=0.90,
            units=round_trips,
            unit="round trip",
            repeat=repeat,
        ),
        Case(
            name=f"host-agent: approval, server side, vs raw exchange ({round_trips} rt)",
            baseline=lambda: anyio.run(_raw_exchange, fresh("x"), round_trips, unreported),
            candidate=lambda: anyio.run(_approvals_raw_consumer, fresh("r"), round_trips),
            target=0.95,
            units=round_trips,
            unit="round trip",
            repeat=repeat,
        ),
        Case(
            name=f"host-agent: approval vs raw echo, one task ({round_trips} rt)",
            baseline=lambda: anyio.run(_raw_round_trips, fresh("e"), round_trips, raw_stats),
            candidate=lambda: anyio.run(_approvals, fresh("b"), round_trips, None),
            target=0.60,
            units=round_trips,
            unit="round trip",
            repeat=repeat,
        ),
        Case(
            name=f"host-agent: event fan-out, server side, vs raw lines ({events} events)",
            baseline=lambda: anyio.run(_raw_fanout, fresh("f"), events),
            candidate=lambda: anyio.run(_fanout_raw_consumer, fresh("s"), events),
            target=0.50,
            units=events,
            unit="event",
            repeat=repeat,
        ),
        Case(
            name=f"host-agent: event fan-out, end to end, vs raw lines ({events} events)",
            baseline=lambda: anyio.run(_raw_fanout, fresh("f"), events),
            candidate=lambda: anyio.run(_fanout, fresh("g"), events),
            target=0.20,
            units=events,
            unit="event",
            repeat=repeat,
        ),
    ]
