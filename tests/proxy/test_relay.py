"""The relay itself: concurrency, an unreachable upstream, a failing observer, exact bytes."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.clients.proxy import Proxy, Recorder
from shedproto.observe import CassetteHeader, Diagnostic, Direction, Observer, observer_factory
from shedproto.servers import UnixServer
from shedproto.servers._receive import raw_socket_of
from shedproto.servers.herdr import HerdrServer
from shedproto.testing._cassette import serving

from ._helpers import proxied


async def test_many_concurrent_connections_are_relayed(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    results: list[object] = []
    async with proxied(short_socket_dir / "p.sock", herdr_server.path, "herdr") as run:
        client = AsyncHerdrClient.for_socket(run.path)

        async def one() -> None:
            results.append(await client.request("workspace.list"))

        async with anyio.create_task_group() as tasks:
            for _ in range(20):
                tasks.start_soon(one)
    assert len(results) == 20
    assert run.proxy.connections == 20
    assert run.diagnostics == []


async def test_unreachable_upstream_is_one_error_line_and_a_hang_up(
    short_socket_dir: Path,
) -> None:
    nobody = short_socket_dir / "nobody"
    async with proxied(short_socket_dir / "p.sock", nobody, "herdr") as run:
        stream = await anyio.connect_unix(run.path)
        async with stream:
            await stream.send(b'{"id":"1","method":"ping","params":{}}\n')
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                await stream.receive()
    assert len(run.errors) == 1
    assert "cannot reach upstream" in run.errors[0]


class Exploding(Observer):
    protocol = "herdr"

    def _client_bytes(self, data: bytes) -> None:
        raise RuntimeError("observer bug")

    def _server_bytes(self, data: bytes) -> None:
        raise RuntimeError("observer bug")


async def test_a_failing_observer_never_stops_the_relay(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    errors: list[str] = []
    found: list[Diagnostic] = []
    proxy = Proxy(
        short_socket_dir / "p.sock",
        herdr_server.path,
        Exploding,
        on_diagnostic=found.append,
        on_error=errors.append,
    )
    async with anyio.create_task_group() as tasks:
        path = await tasks.start(proxy.serve)
        pong = await AsyncHerdrClient.for_socket(path).request("ping")
        proxy.shutdown()
    assert pong.protocol == 22
    assert len(errors) == 1
    assert "observer failed" in errors[0]


class Recording(Observer):
    protocol = "herdr"

    def __init__(self, connection: int) -> None:
        super().__init__(connection)
        self.seen: dict[Direction, bytes] = {"c2s": b"", "s2c": b""}
        SEEN.append(self)

    def _client_bytes(self, data: bytes) -> None:
        self.seen["c2s"] += data

    def _server_bytes(self, data: bytes) -> None:
        self.seen["s2c"] += data


SEEN: list[Recording] = []


def served() -> list[Recording]:
    """The observers of real connections (connection 0 is the proxy's warm-up observer)."""
    return [observer for observer in SEEN if observer.connection > 0]


async def test_bytes_arrive_unchanged_even_when_not_protocol(short_socket_dir: Path) -> None:
    """Arbitrary bytes (not JSON, no newline, NULs) pass both ways exactly; EOF is relayed."""
    payload = bytes(range(256)) * 300
    received = b""

    async def echo(stream: anyio.abc.SocketStream) -> None:
        while True:
            try:
                await stream.send(await stream.receive())
            except anyio.EndOfStream:
                return

    SEEN.clear()
    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "echo.sock", echo)
        echo_path = await tasks.start(upstream.serve)
        proxy = Proxy(short_socket_dir / "p.sock", echo_path, Recording, on_diagnostic=print)
        path = await tasks.start(proxy.serve)
        async with await anyio.connect_unix(path) as stream:
            await stream.send(payload)
            await stream.send_eof()
            while True:
                try:
                    received += await stream.receive()
                except anyio.EndOfStream:
                    break
        proxy.shutdown()
        upstream.shutdown()
    assert received == payload
    assert served()[0].seen == {"c2s": payload, "s2c": payload}


async def test_host_agent_long_lived_consumer_with_pings(short_socket_dir: Path) -> None:
    """Pings and pongs flow through the proxy on a long-lived consumer; nothing is flagged."""
    from shedproto.host_agent import Hello, Pong, decode_agent_frame, encode_frame
    from shedproto.servers.host_agent import HostAgentServer

    async with anyio.create_task_group() as tasks:
        agent = HostAgentServer(short_socket_dir / "a", ping_interval=0.05)
        await tasks.start(agent.serve)
        listen = short_socket_dir / "p" / "host-agent.sock"
        async with proxied(listen, agent.approval_path, "host-agent") as run:
            stream = await anyio.connect_unix(run.path)
            async with stream:
                await stream.send(encode_frame(Hello(id="h")))
                buffer = b""
                types: list[str] = []
                while types.count("ping") < 3:
                    buffer += await stream.receive()
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        frame = decode_agent_frame(line)
                        types.append(str(frame.__struct_config__.tag))
                        if types[-1] == "ping":
                            await stream.send(encode_frame(Pong(id="p")))
        agent.shutdown()
    assert types[0] == "hello_ack"
    assert run.diagnostics == []


class FullDisk(Recorder):
    def data(self, t: float, conn: int, direction: Direction, chunk: bytes) -> None:
        raise OSError(28, "No space left on device")


async def test_a_recording_failure_never_stops_the_relay(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    errors: list[str] = []
    recorder = FullDisk(
        short_socket_dir / "c.ndjson", CassetteHeader(protocol="herdr"), overwrite=False
    )
    proxy = Proxy(
        short_socket_dir / "p.sock",
        herdr_server.path,
        observer_factory("herdr"),
        on_diagnostic=print,
        on_error=errors.append,
        recorder=recorder,
    )
    async with serving(proxy) as path:
        client = AsyncHerdrClient.for_socket(path)
        first, second = await client.request("ping"), await client.request("ping")
    assert first == second
    assert errors == [f"recording to {recorder.path} stopped: No space left on device"]


async def _echo(stream: anyio.abc.SocketStream) -> None:
    while True:
        try:
            await stream.send(await stream.receive())
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return


async def _send_and_read_all(path: Path, payload: bytes) -> bytes:
    received = bytearray()
    async with await anyio.connect_unix(path) as stream:

        async def read() -> None:
            while True:
                try:
                    received.extend(await stream.receive())
                except anyio.EndOfStream:
                    return

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            await stream.send(payload)
            await stream.send_eof()
    return bytes(received)


async def test_observers_falling_behind_drop_observation_never_bytes(
    short_socket_dir: Path,
) -> None:
    """Past ``max_queued_bytes`` waiting, the connection goes unobserved, reported once."""
    payload = bytes(range(256)) * 4096  # 1 MiB, in chunks far past the 1000 bytes allowed
    SEEN.clear()
    errors: list[str] = []
    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "echo.sock", _echo)
        echo_path = await tasks.start(upstream.serve)
        proxy = Proxy(
            short_socket_dir / "p.sock",
            echo_path,
            Recording,
            on_diagnostic=print,
            on_error=errors.append,
            max_queued_bytes=1000,
        )
        path = await tasks.start(proxy.serve)
        received = await _send_and_read_all(path, payload)
        proxy.shutdown()
        upstream.shutdown()
    assert received == payload
    assert proxy.dropped == 1
    assert len(errors) == 1
    assert "observers fell behind" in errors[0]
    assert len(served()[0].seen["c2s"]) < len(payload)  # observed up to the drop only


async def test_a_large_transfer_with_back_pressure_arrives_whole(short_socket_dir: Path) -> None:
    """8 MiB each way: more than the sockets hold, so the relay waits for room both ways."""
    payload = bytes(range(256)) * (8 << 12)
    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "echo.sock", _echo)
        echo_path = await tasks.start(upstream.serve)
        cassette = short_socket_dir / "c.ndjson"
        recorder = Recorder(cassette, CassetteHeader(protocol="herdr"), overwrite=False)
        listen = short_socket_dir / "p.sock"
        proxy = Proxy(listen, echo_path, Recording, on_diagnostic=print, recorder=recorder)
        path = await tasks.start(proxy.serve)
        received = await _send_and_read_all(path, payload)
        proxy.shutdown()
        upstream.shutdown()
    assert received == payload
    assert recorder.bytes_written > len(payload)  # all of it recorded (as base64)


async def test_observers_are_warmed_up_before_readiness(short_socket_dir: Path) -> None:
    """herdr's decoder takes ~0.25 s to build: built lazily it stalled the first relay batch."""
    SEEN.clear()
    listen, nobody = short_socket_dir / "p.sock", short_socket_dir / "none"
    proxy = Proxy(listen, nobody, Recording, on_diagnostic=print)
    async with serving(proxy):
        assert [(o.connection, o.seen) for o in SEEN] == [(0, {"c2s": b"{}\n", "s2c": b"{}\n"})]


async def test_an_observer_overflow_leaves_a_gap_record_that_replay_reports(
    short_socket_dir: Path,
) -> None:
    """The cassette said nothing of a drop: it looked like a whole recording, cut short."""
    from shedproto.clients.proxy import ReplayMismatch, ReplayServer
    from shedproto.observe import decode_cassette

    cassette = short_socket_dir / "c.ndjson"
    recorder = Recorder(cassette, CassetteHeader(protocol="herdr"), overwrite=False)
    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "echo.sock", _echo)
        echo_path = await tasks.start(upstream.serve)
        proxy = Proxy(
            short_socket_dir / "p.sock",
            echo_path,
            Recording,
            on_diagnostic=print,
            recorder=recorder,
            max_queued_bytes=1000,
        )
        path = await tasks.start(proxy.serve)
        payload = bytes(range(256)) * 4096  # its first chunk is past the bound already
        assert await _send_and_read_all(path, payload) == payload
        proxy.shutdown()
        upstream.shutdown()
    _, records = decode_cassette(cassette.read_bytes())
    events = [record.ev for record in records]
    assert events[0] == "open"
    assert events.count("gap") == 1
    assert events[-1] == "gap"  # nothing of the connection after it, not even its close
    found: list[ReplayMismatch] = []
    replay = ReplayServer(cassette, short_socket_dir / "r.sock", on_mismatch=found.append)
    async with serving(replay) as replay_path, await anyio.connect_unix(replay_path) as stream:
        with pytest.raises(anyio.EndOfStream):  # played up to the gap (nothing), then closed
            await stream.receive()
    assert len(found) == 1
    assert found[0].gap
    assert "the cassette has a gap here" in found[0].human()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_full_upstream_backlog_is_waited_for_not_refused(short_socket_dir: Path) -> None:
    """A Unix connect to a full backlog fails at once (EAGAIN): the loop relay retries it.

    asyncio only: that connect is the loop relay's own (trio's goes through anyio).
    """
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(short_socket_dir / "full.sock"))
    listener.listen(0)  # Linux queues one connection at backlog 0
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    filler.connect(str(short_socket_dir / "full.sock"))
    errors: list[str] = []
    proxy = Proxy(
        short_socket_dir / "p.sock",
        short_socket_dir / "full.sock",
        Recording,
        on_diagnostic=print,
        on_error=errors.append,
    )
    with listener, filler:
        async with serving(proxy) as path, await anyio.connect_unix(path) as stream:
            await stream.send(b"hello\n")
            await anyio.sleep(0.05)  # the proxy's connect meets the full backlog meanwhile
            first, _ = listener.accept()  # the filler: the backlog has room again
            first.close()
            with anyio.fail_after(5):
                upstream = await anyio.to_thread.run_sync(listener.accept)
            with upstream[0] as server:
                assert server.recv(100) == b"hello\n"
                server.sendall(b"world\n")
                assert await stream.receive() == b"world\n"
    assert errors == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_answer_with_its_end_of_stream_is_observed_after_that_end_was_relayed(
    short_socket_dir: Path,
) -> None:
    """An answer, then a close: the client has both before the observer parses the answer.

    asyncio only: the loop relay relays the end of stream in the pass that reads the
    answer (trio's pump tasks give no such order).
    """
    import socket

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.setblocking(False)
    seen: list[tuple[bytes, bool]] = []
    observed = anyio.Event()

    class Peeking(Observer):
        protocol = "herdr"

        def _client_bytes(self, data: bytes) -> None:
            pass

        def _server_bytes(self, data: bytes) -> None:
            if data and self.connection > 0:
                got = client.recv(65536)
                try:
                    ended = client.recv(1) == b""
                except BlockingIOError:
                    ended = False
                seen.append((got, ended))
                observed.set()

    async def answer_then_close(stream: anyio.abc.SocketStream) -> None:
        await stream.receive()
        raw = raw_socket_of(stream)
        assert raw is not None
        raw.send(b'{"id":"1","result":{}}\n')  # no checkpoint between the answer and its end:
        raw.shutdown(socket.SHUT_WR)  # the proxy reads both in one pass

    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "u.sock", answer_then_close)
        upstream_path = await tasks.start(upstream.serve)
        proxy = Proxy(short_socket_dir / "p.sock", upstream_path, Peeking, on_diagnostic=print)
        async with serving(proxy) as path:
            with client:
                client.connect(str(path))
                client.send(b'{"id":"1","method":"ping","params":{}}\n')
                with anyio.fail_after(5):
                    await observed.wait()
        upstream.shutdown()
    assert seen == [(b'{"id":"1","result":{}}\n', True)]
