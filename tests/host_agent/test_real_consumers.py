"""The reference agent as the real consumers read it (issue 30).

A *real-style consumer* here decodes the approval channel the way shed-desktop's
own clients do, so that what they cannot read fails here too:

* the Rust client: ``HelloAck`` is ``Vec<String>`` lists with ``#[serde(default)]``
  (a missing key is ``[]``, ``null`` fails the decode), an undecodable line is
  skipped, a line over 1 MiB disconnects, every ``hello_ack`` (``accepted`` is
  never read) is "connected", and after a disconnect it reconnects in 0.5 s
  (charliek/shed-desktop core/shed-core/src/approval/protocol.rs:29-39@1cedfa7,
  core/shed-app/src/host_agent.rs:33,39,328,350-371@1cedfa7);
* the mac client decodes ``HelloAck`` into non-optional ``[String]`` and skips
  what it cannot decode too (Sources/ShedKit/Approval/HostAgentProtocol.swift:22-33,
  Sources/ShedKit/Approval/HostAgentClient.swift:195-213@1cedfa7).

msgspec rejects ``null`` for a ``list[str]`` field with a default exactly as serde
does, so the model below is a faithful stand-in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest

from shedproto import ErrorCode, LocalProtocolError
from shedproto.host_agent import (
    MAX_LINE_BYTES,
    AgentConfig,
    AuditRecord,
    MintedCredential,
)
from shedproto.servers.host_agent import HostAgentServer
from tests.conftest import requires_shared

from ._agent import HELLO, Raw, running
from ._shared import golden, mask

NOTHING_DELEGATED = AgentConfig(
    policies={
        "ssh-agent": "approve-all",
        "aws-credentials": "approve-all",
        "docker-credentials": "deny-all",
    }
)
SUPERSEDED = re.compile(
    # charliek/shed crates/shed-host-agent/src/desktop_protocol.rs:228-259@861fedae
    # (zero agent, null lists, timeout 0, reason; no agent_capabilities key)
    rb'\{"v":2,"type":"hello_ack","id":"[0-9a-f-]{36}","ts":"[0-9TZ:-]{20}",'
    rb'"agent":\{"version":"","approval_method":""\},"namespaces":null,"gate_namespaces":null,'
    rb'"request_timeout_ms":0,"accepted":false,"reason":"superseded"\}'
)


# --------------------------------------------------------------------------- the real model


class _Tag(msgspec.Struct):
    type: str = ""


class RealAck(msgspec.Struct):
    """protocol.rs:29-39@1cedfa7 (and the Swift HelloAck): lists default, null fails."""

    namespaces: list[str] = []
    gate_namespaces: list[str] = []
    request_timeout_ms: int = 0
    accepted: bool = False


class RealEvent(msgspec.Struct):
    """protocol.rs:44-60@1cedfa7: keyed on ``request_id``, else a random fallback (:88)."""

    result: str
    kind: str | None = None
    shed: str | None = None
    ns: str | None = None
    op: str | None = None
    request_id: str | None = None
    ts: str | None = None


class RealTokenResponse(msgspec.Struct):
    """protocol.rs:66-74@1cedfa7."""

    in_reply_to: str
    server: str = ""
    token: str | None = None
    error: str | None = None


class RealRequest(msgspec.Struct):
    id: str
    namespace: str = ""


_REAL: dict[str, type[msgspec.Struct]] = {
    "hello_ack": RealAck,
    "event": RealEvent,
    "token.response": RealTokenResponse,
    "approval_request": RealRequest,
    "ping": _Tag,
}


def real_decode(line: bytes) -> msgspec.Struct | None:
    """Decode like ``protocol::decode``; None for an unknown type. Raises like serde."""
    kind = msgspec.json.decode(line, type=_Tag).type
    model = _REAL.get(kind)
    return None if model is None else msgspec.json.decode(line, type=model)


def real_hello(name: str, replay: int = 0) -> bytes:
    """protocol.rs ``hello``: what the Rust client sends first."""
    return (
        json.dumps(
            {
                "v": 2,
                "type": "hello",
                "id": "h",
                "ts": "2026-01-01T00:00:00Z",
                "client": {"name": name, "version": "0.0.14", "pid": 1},
                "capabilities": [],
                "replay_events": replay,
            }
        ).encode()
        + b"\n"
    )


class RealConsumer:
    """The Rust client's run loop (host_agent.rs:262-330@1cedfa7), reduced to what matters here.

    ``gate``, when set, is waited for after the real 0.5 s backoff before each
    reconnect, so that a test decides when this consumer fights back.
    """

    BACKOFF = 0.5  # host_agent.rs:33 INITIAL_BACKOFF, and :328 after a disconnect

    def __init__(self, path: Path, name: str, *, approve: bool = True) -> None:
        self.path = path
        self.name = name
        self.approve = approve
        self.log: list[tuple[str, Any]] = []
        self.raw_lines: list[list[bytes]] = []
        self.connects = 0
        self.changed = anyio.Event()
        self.gate: anyio.Event | None = None
        self.stopped = False

    def _record(self, kind: str, value: Any = None) -> None:
        self.log.append((kind, value))
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, kind: str, count: int) -> None:
        with anyio.fail_after(20):
            while sum(1 for k, _ in self.log if k == kind) < count:
                await self.changed.wait()

    async def run(self) -> None:
        while not self.stopped:
            async with await anyio.connect_unix(self.path) as stream:
                await stream.send(real_hello(self.name))
                await self._read(stream)
            gate = self.gate  # the gate of this disconnect (a test swaps in the next one)
            self._record("disconnected")
            await anyio.sleep(self.BACKOFF)
            if gate is not None:
                await gate.wait()

    async def _read(self, stream: anyio.abc.SocketStream) -> None:
        lines: list[bytes] = []
        self.raw_lines.append(lines)
        buffer = b""
        while True:
            while b"\n" not in buffer:
                if len(buffer) >= MAX_LINE_BYTES:
                    self._record("over_cap")
                    return  # host_agent.rs:350-354: over the cap is a disconnect
                try:
                    buffer += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
            line, _, buffer = buffer.partition(b"\n")
            if len(line) + 1 > MAX_LINE_BYTES:
                self._record("over_cap")
                return
            lines.append(line)
            try:
                frame = real_decode(line)
            except msgspec.DecodeError:
                self._record("skipped", line)  # host_agent.rs:360-363: skip a malformed line
                continue
            if isinstance(frame, RealAck):
                self.connects += 1
                self._record("connected", frame)  # accepted is never read
            elif isinstance(frame, RealRequest):
                self._record("request", frame.id)
                decision = "approve" if self.approve else "deny"
                await stream.send(
                    json.dumps(
                        {
                            "v": 2,
                            "type": "approval_response",
                            "id": "r",
                            "ts": "2026-01-01T00:00:00Z",
                            "request_id": frame.id,
                            "decision": decision,
                            "decided_by": "user",
                        }
                    ).encode()
                    + b"\n"
                )
            elif frame is not None:
                self._record(type(frame).__name__, frame)


def stop(server: HostAgentServer, *consumers: RealConsumer) -> None:
    """End the consumers' loops the way they end for real: the agent goes away (EOF)."""
    for consumer in consumers:
        consumer.stopped = True
        if consumer.gate is not None:
            consumer.gate.set()
    server.shutdown()


def _record(detail: str) -> AuditRecord:
    return AuditRecord(
        ts="2026-01-01T00:00:00Z", shed="web", ns="ssh-agent", op="list", result="ok", detail=detail
    )


# --------------------------------------------------------------------------- 1. gate_namespaces


async def test_accepted_ack_with_nothing_delegated_decodes_in_the_real_consumers(
    short_socket_dir: Path,
) -> None:
    # The real agent writes null here (charliek/shed crates/shed-host-agent/src/
    # desktop_protocol.rs:175,207,223-227@861fedae), which protocol.rs:34@1cedfa7 and
    # HostAgentProtocol.swift:24@1cedfa7 cannot decode: the ack is skipped and the app never
    # connects. The reference agent writes [] by default.
    async with running(short_socket_dir, config=NOTHING_DELEGATED) as server:
        peer = await Raw.connect(server.approval_path)
        await peer.send(HELLO)
        line = await peer.line()
        assert line is not None
        assert b'"gate_namespaces":[],' in line
        ack = real_decode(line)
        assert isinstance(ack, RealAck)
        assert ack.gate_namespaces == []
        assert ack.accepted
        assert ack.namespaces == ["ssh-agent", "aws-credentials", "docker-credentials", "egress"]
        await peer.aclose()


async def test_the_real_agents_null_gate_namespaces_is_what_the_real_consumers_skip(
    short_socket_dir: Path,
) -> None:
    # The conflict, kept reproducible: ack_null_when_empty writes the real agent's bytes.
    async with running(short_socket_dir, config=NOTHING_DELEGATED, ack_null_when_empty=True) as s:
        peer = await Raw.connect(s.approval_path)
        await peer.send(real_hello("shed-desktop"))
        line = await peer.line()
        assert line is not None
        assert b'"gate_namespaces":null,' in line
        with pytest.raises(msgspec.ValidationError, match="gate_namespaces"):
            real_decode(line)
        await peer.aclose()


# --------------------------------------------------------------------------- 2. superseded


@requires_shared
async def test_superseded_notice_is_the_real_agents_bytes_and_the_real_consumers_skip_it(
    short_socket_dir: Path,
) -> None:
    # Bytes: desktop_protocol.rs:228-259@861fedae, sent by promote() before the old
    # connection is closed (desktop.rs:9-11@4a113e5); golden test_desktop_supersede.
    async with running(short_socket_dir) as server:
        first = await Raw.connect(server.approval_path)
        await first.send(real_hello("a"))
        assert await first.line() is not None
        await server.wait_for_consumer(client_name="a")
        second = await Raw.connect(server.approval_path)
        await second.send(real_hello("b"))
        assert await second.line() is not None
        notice = await first.line()
        assert notice is not None
        assert SUPERSEDED.fullmatch(notice)
        expected = golden("test_desktop_supersede__test_second_consumer_supersedes_first.json")
        assert mask(json.loads(notice), "id", "ts") == expected["a_superseded"]
        with pytest.raises(msgspec.ValidationError):
            real_decode(notice)  # namespaces: null
        assert await first.line() is None  # then the connection closes
        await first.aclose()
        await second.aclose()


async def test_a_superseded_real_consumer_reconnecting_does_not_starve_the_new_one(
    short_socket_dir: Path,
) -> None:
    # The real agent is last-writer-wins and never refuses a new connection
    # (desktop.rs:9-11@4a113e5); the real consumer reconnects 0.5 s after any disconnect
    # (host_agent.rs:328@1cedfa7) and never reads `accepted`. So two real consumers take the
    # slot in turn: neither is starved, and each one, once promoted, gets and answers the
    # approvals. The reference agent behaves the same.
    async with running(short_socket_dir) as server:
        old = RealConsumer(server.approval_path, "old", approve=False)
        new = RealConsumer(server.approval_path, "new")
        old.gate = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(old.run)
            await server.wait_for_consumer(client_name="old")
            tg.start_soon(new.run)
            for turn in range(1, 3):
                await server.wait_for_consumer(client_name="new")
                await new.wait_for("connected", turn)
                decision = await server.request_approval("ssh-agent", "sign", "web")
                assert decision.approved, f"turn {turn}: the new consumer did not get the request"
                assert new.log[-1][0] == "request"
                await old.wait_for("disconnected", turn)
                gate, old.gate = old.gate, anyio.Event()
                gate.set()  # the old one fights back (after its real 0.5 s)
                await server.wait_for_consumer(client_name="old")
                await new.wait_for("disconnected", turn)
                status = server.status()
                assert status.approval_channel.client_name == "old"
            await server.wait_for_consumer(client_name="new")  # the new one is back: not starved
            stop(server, old, new)
        # every hand-over gave the superseded side the real notice, which it skipped
        for consumer in (old, new):
            assert consumer.connects >= 2
            for lines in consumer.raw_lines[:-1]:
                assert SUPERSEDED.fullmatch(lines[-1]), lines[-1][:120]
            skipped = [value for kind, value in consumer.log if kind == "skipped"]
            assert skipped
            assert all(SUPERSEDED.fullmatch(line) for line in skipped)


# --------------------------------------------------------------------------- 3. events


async def test_events_carry_id_and_no_request_id_like_the_real_agent(
    short_socket_dir: Path,
) -> None:
    # The real event builder has `id` and no `request_id`
    # (charliek/shed crates/shed-host-agent/src/desktop_protocol.rs:311-317@861fedae; golden
    # test_replay__test_event_replay_ring). The real consumer then keys the entry on a random
    # fallback (protocol.rs:58,88@1cedfa7; coordinator.rs:479@1cedfa7).
    async with running(short_socket_dir) as server:
        peer = await Raw.connect(server.approval_path)
        await peer.send(real_hello("a"))
        assert await peer.line() is not None
        await server.wait_for_consumer(client_name="a")
        server.audit("ssh-agent", "list", "web", "ok", detail="1 keys")
        line = await peer.line()
        assert line is not None
        frame = json.loads(line)
        assert list(frame) == [
            "v", "type", "id", "ts", "kind", "shed", "ns", "op", "result", "detail", "approval",
        ]  # fmt: skip
        assert "request_id" not in frame
        event = real_decode(line)
        assert isinstance(event, RealEvent)
        assert event.request_id is None
        assert event.result == "ok"
        await peer.aclose()


# --------------------------------------------------------------------------- 4. frame caps


async def test_emit_audit_refuses_an_event_over_the_consumer_cap_and_rings_nothing(
    short_socket_dir: Path,
) -> None:
    # The Rust consumer disconnects on a line over 1 MiB (host_agent.rs:39,466-498@1cedfa7);
    # the real agent sends any size and rings it (desktop.rs publish_audit@8acd4af), which
    # loops the consumer every 0.5 s. The reference agent refuses it at the API.
    async with running(short_socket_dir) as server:
        consumer = RealConsumer(server.approval_path, "a")
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer.run)
            await consumer.wait_for("connected", 1)
            await server.wait_for_consumer(client_name="a")
            small = server.emit_audit(_record("x"))
            room = MAX_LINE_BYTES - len(small) + 1  # bytes of detail that fill the cap exactly
            fits = server.emit_audit(_record("x" * room))
            assert len(fits) == MAX_LINE_BYTES
            await consumer.wait_for("RealEvent", 2)
            before = (len(server.ring), len(server.audit_records))
            with pytest.raises(LocalProtocolError) as info:
                server.emit_audit(_record("x" * (room + 1)))
            assert info.value.code is ErrorCode.FRAME_TOO_LARGE
            assert (len(server.ring), len(server.audit_records)) == before
            assert all(len(line) <= MAX_LINE_BYTES for line in server.ring.replay(100))
            server.audit("ssh-agent", "list", "web", "ok", detail="after")
            await consumer.wait_for("RealEvent", 3)
            assert [kind for kind, _ in consumer.log if kind != "RealEvent"] == ["connected"]
            stop(server, consumer)


async def test_emit_audit_over_the_cap_writes_no_audit_line(tmp_path: Path) -> None:
    log_path = tmp_path / "audit.jsonl"
    server = HostAgentServer(tmp_path / "s", audit_log=log_path)
    with pytest.raises(LocalProtocolError):
        server.emit_audit(_record("x" * MAX_LINE_BYTES))
    assert not log_path.exists()
    assert len(server.ring) == 0


async def test_a_maximal_token_get_gets_no_reply_over_the_cap_and_mints_nothing(
    short_socket_dir: Path,
) -> None:
    # A token.get at the inbound cap (1 MiB with its newline, desktop.rs:37-39@4a113e5) echoes
    # its id as in_reply_to; the real agent's reply (desktop.rs handle_token_get@8acd4af) then
    # ends just over the consumer's cap. The reference agent neither mints nor answers it.
    minted: list[str] = []

    async def minter(server: str, csr: str) -> MintedCredential:
        minted.append(server)
        return MintedCredential(token="t")

    async with running(short_socket_dir, minter=minter) as server:
        peer = await Raw.connect(server.approval_path)
        await peer.send(real_hello("a"))
        assert await peer.line() is not None
        head = b'{"type":"token.get","server":"prod","id":"'
        big_id = b"q" * (MAX_LINE_BYTES - len(head) - len(b'"}\n'))
        request = head + big_id + b'"}\n'
        assert len(request) == MAX_LINE_BYTES
        await peer.send(request)
        await peer.send(b'{"type":"token.get","id":"q2","server":"prod"}\n')
        line = await peer.line()
        assert line is not None
        reply = real_decode(line)
        assert isinstance(reply, RealTokenResponse)
        assert reply.in_reply_to == "q2"  # the maximal one was never answered
        assert reply.token == "t"
        assert minted == ["prod"]
        await peer.aclose()


async def test_a_credential_too_long_for_the_cap_becomes_an_error_reply(
    short_socket_dir: Path,
) -> None:
    async def minter(server: str, csr: str) -> MintedCredential:
        return MintedCredential(token="t" * MAX_LINE_BYTES)

    async with running(short_socket_dir, minter=minter) as server:
        peer = await Raw.connect(server.approval_path)
        await peer.send(real_hello("a"))
        assert await peer.line() is not None
        await peer.send(b'{"type":"token.get","id":"q1","server":"prod"}\n')
        line = await peer.line()
        assert line is not None
        assert len(line) + 1 <= MAX_LINE_BYTES
        reply = real_decode(line)
        assert isinstance(reply, RealTokenResponse)
        assert reply.in_reply_to == "q1"
        assert reply.token is None
        assert reply.error is not None
        assert "line cap" in reply.error
        await peer.aclose()


async def test_request_approval_refuses_a_request_over_the_cap(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as server:
        consumer = RealConsumer(server.approval_path, "a")
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer.run)
            await server.wait_for_consumer(client_name="a")
            with pytest.raises(LocalProtocolError) as info:
                await server.request_approval("ssh-agent", "sign", "w" * MAX_LINE_BYTES)
            assert info.value.code is ErrorCode.FRAME_TOO_LARGE
            assert server.pending_approvals == 0
            assert (await server.request_approval("ssh-agent", "sign", "web")).approved
            stop(server, consumer)


# --------------------------------------------------------------------------- 5. peer credentials

_CHILD = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
print(s.makefile("rb").readline().decode(), end="")
"""


_SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
"""An interpreter another user may run (a venv under a private home is not one)."""


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or _SYSTEM_PYTHON is None,
    reason="needs root and a system python3 to connect as another user",
)
async def test_the_agent_checks_no_consumer_credentials(short_socket_dir: Path) -> None:
    # "Trust is filesystem perms only (0700 dir / 0600 socket); there is NO peer-UID check"
    # (charliek/shed crates/shed-host-agent/src/desktop.rs:13-14@4a113e5). Only the consumer
    # checks the agent's UID (host_agent.rs:277-288,419-459@1cedfa7). With the modes opened
    # (here only, in a private temp dir), a consumer running as another user is accepted.
    async with running(short_socket_dir) as server:
        os.chmod(short_socket_dir, 0o711)
        os.chmod(server.approval_path, 0o666)
        hello = real_hello("nobody").decode()
        result = await anyio.to_thread.run_sync(
            lambda: subprocess.run(
                [str(_SYSTEM_PYTHON), "-c", _CHILD, str(server.approval_path), hello],
                user=65534,
                cwd="/",
                capture_output=True,
                check=True,
                timeout=20,
            )
        )
        ack = real_decode(result.stdout.rstrip(b"\n"))
        assert isinstance(ack, RealAck)
        assert ack.accepted
