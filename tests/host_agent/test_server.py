from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import anyio
import pytest

from shedproto.clients.host_agent import (
    AgentNotRunningError,
    AsyncApprovalConsumer,
    StatusTimeoutError,
    SupersededError,
    read_status,
    read_status_async,
)
from shedproto.host_agent import (
    ApprovalRequest,
    CredentialGet,
    CredentialResponse,
    Event,
    Outcome,
    ServerHealth,
    StatusSchemaError,
    TokenGet,
    TokenResponse,
)
from shedproto.servers import UnixServer
from shedproto.servers.host_agent import HostAgentServer, MintedCredential, MintError
from tests.conftest import requires_shared

from ._agent import HELLO, Raw, connected, running
from ._shared import golden, mask


async def test_status_socket_writes_one_compact_line_and_closes(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, config_path="/abs/extensions.yaml") as agent:
        raw = await Raw.connect(agent.status_path)
        await raw.send(b"anything at all\n")
        lines = []
        while (line := await raw.line()) is not None:
            lines.append(line)
        assert len(lines) == 1
        status = json.loads(lines[0])
        assert list(status) == [
            "schema",
            "version",
            "pid",
            "started_at",
            "written_at",
            "config_path",
            "policies",
            "gate_namespaces",
            "approval_channel",
            "rc_hub",
            "servers",
        ]
        assert status["pid"] == os.getpid()
        assert status["approval_channel"] == {
            "socket_path": str(short_socket_dir / "host-agent.sock"),
            "consumer_connected": False,
        }
        assert b'", "' not in lines[0]  # compact
        await raw.aclose()


async def test_status_line_cache_follows_policy_consumer_and_servers_within_a_second(
    short_socket_dir: Path,
) -> None:
    """Regression (issue 16): the status line is cached per second; any input change re-encodes."""
    async with running(short_socket_dir) as agent:
        agent.set_policy("ssh-agent", "approve-all")
        first = await read_status_async(short_socket_dir)
        agent.set_policy("ssh-agent", "shed-desktop")
        second = await read_status_async(short_socket_dir)
        agent.set_servers([ServerHealth(name="web")])
        third = await read_status_async(short_socket_dir)
        consumer = await connected(agent, short_socket_dir)
        fourth = await read_status_async(short_socket_dir)
        await consumer.aclose()
    assert first.policies["ssh-agent"] == "approve-all"
    assert second.policies["ssh-agent"] == "shed-desktop"
    assert [server.name for server in third.servers] == ["web"]
    assert not third.approval_channel.consumer_connected
    assert fourth.approval_channel.consumer_connected


async def test_status_reads_of_two_agents_in_turn_each_reach_their_own(
    short_socket_dir: Path,
) -> None:
    """The status socket path is cached per directory (issue 16): alternating
    directories, each read still reaches the agent of its own directory."""
    one, two = short_socket_dir / "one", short_socket_dir / "two"
    one.mkdir()
    two.mkdir()
    async with running(one) as first, running(two) as second:
        first.set_policy("ssh-agent", "approve-all")
        second.set_policy("ssh-agent", "shed-desktop")
        for _ in range(2):
            assert (await read_status_async(one)).policies["ssh-agent"] == "approve-all"
            assert (await read_status_async(str(two))).policies["ssh-agent"] == "shed-desktop"


async def test_socket_modes_rechmod_and_cleanup(short_socket_dir: Path) -> None:
    directory = short_socket_dir / "agent"
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)
    async with running(directory) as agent:
        assert oct(stat.S_IMODE(os.stat(directory).st_mode)) == "0o700"
        for path in (agent.status_path, agent.approval_path):
            st = os.stat(path)
            assert stat.S_ISSOCK(st.st_mode)
            assert oct(stat.S_IMODE(st.st_mode)) == "0o600"
    assert not agent.status_path.exists()
    assert not agent.approval_path.exists()


@requires_shared
async def test_socket_perm_goldens(short_socket_dir: Path) -> None:
    directory = short_socket_dir / "pre"
    directory.mkdir()
    os.chmod(directory, 0o777)
    async with running(directory) as agent:
        mode = oct(stat.S_IMODE(os.stat(agent.status_path).st_mode))
        assert mode == golden("test_socket_perms__test_status_socket_is_0600.json")
        dir_mode = oct(stat.S_IMODE(os.stat(directory).st_mode))
        assert dir_mode == golden(
            "test_socket_rebind__test_socket_dir_rechmod_0700_when_preexisting.json"
        )


async def test_stale_sockets_are_rebound(short_socket_dir: Path) -> None:
    for name in ("host-agent-status.sock", "host-agent.sock"):
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(short_socket_dir / name))
        stale.close()  # the file stays, nobody listens
    async with running(short_socket_dir) as agent:
        status = await read_status_async(agent.socket_dir)
        assert status.schema == 1
        async with await AsyncApprovalConsumer.connect(agent.socket_dir) as consumer:
            assert consumer.ack is not None


async def test_a_live_agent_is_not_stolen(short_socket_dir: Path) -> None:
    from shedproto.servers import SocketInUseError

    async with running(short_socket_dir):
        with pytest.raises(SocketInUseError):
            await HostAgentServer(short_socket_dir).serve()
        # the first agent still answers
        assert (await read_status_async(short_socket_dir)).schema == 1


@requires_shared
async def test_handshake_golden(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO)
        ack = await raw.frame()
        ack["agent"]["version"] = "<version>"
        expected = golden(
            "test_desktop_handshake__test_desktop_hello_ack_masked_canonical_equal.json"
        )
        assert mask(ack, "id", "ts") == expected
        await raw.aclose()


@requires_shared
async def test_supersede_golden(short_socket_dir: Path) -> None:
    expected = golden("test_desktop_supersede__test_second_consumer_supersedes_first.json")
    async with running(short_socket_dir) as agent:
        a = await Raw.connect(agent.approval_path)
        await a.send(HELLO)
        await a.frame()
        await agent.wait_for_consumer()
        status = await read_status_async(short_socket_dir)
        assert status.approval_channel.consumer_connected is True
        b = await Raw.connect(agent.approval_path)
        await b.send(HELLO)
        b_ack = await b.frame()
        a_frames = await a.frames_until_eof()
        assert len(a_frames) == 1
        assert mask(a_frames[0], "id", "ts") == expected["a_superseded"]
        await a.aclose()
        assert a.eof is expected["a_closed"]
        b_ack["agent"]["version"] = "<version>"
        assert mask(b_ack, "id", "ts") == expected["b_accepted"]
        await b.aclose()


@requires_shared
@pytest.mark.parametrize(
    "first",
    [
        b'{"type":"pong"}\n',
        b"{not json\n",
        b"\n",
        b'{"type":"approval_response","request_id":"x"}\n',
    ],
)
async def test_first_line_not_hello_golden(
    short_socket_dir: Path, first: bytes, anyio_backend: str
) -> None:
    expected = golden(
        "test_desktop_first_non_hello_drops__test_first_non_hello_line_drops_connection.json"
    )
    async with running(short_socket_dir) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(first + HELLO)
        frames = await raw.frames_until_eof()
        assert {"closed": raw.eof, "frames": frames} == expected
        assert agent.consumer is None
        await raw.aclose()


async def test_hello_deadline(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, hello_timeout=0.2) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO[:20])  # never completes the line
        assert await raw.frames_until_eof(timeout=5) == []
        assert agent.consumer is None
        await raw.aclose()


@requires_shared
async def test_replay_ring_golden(short_socket_dir: Path) -> None:
    expected = golden("test_replay__test_event_replay_ring.json")
    async with running(short_socket_dir) as agent:
        stored = agent.audit("ssh-agent", "list", "web", "ok", detail="1 keys")
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO.replace(b'"replay_events":0', b'"replay_events":10'))
        await raw.frame()  # ack
        replayed_line = await raw.line()
        assert replayed_line is not None
        assert replayed_line + b"\n" == stored  # byte-identical, same id and ts
        replayed = json.loads(replayed_line)
        # the golden's record is ungated: approval "none"
        replayed["approval"] = "none"
        assert mask(replayed, "id", "ts") == expected["replayed"]
        agent.audit("ssh-agent", "list", "web", "ok", detail="1 keys")
        live = await raw.frame()
        live["approval"] = "none"
        assert mask(live, "id", "ts") == expected["live"]
        await raw.aclose()


async def test_replay_again_on_reconnect_and_cap(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        lines = [agent.audit("egress", "tcp", "", "allow", detail=f"h:{i}") for i in range(120)]
        for _ in range(2):
            async with await AsyncApprovalConsumer.connect(
                short_socket_dir, replay_events=500
            ) as consumer:
                got = []
                for _ in range(100):
                    item = await consumer.receive()
                    assert isinstance(item, Event)
                    got.append(item.detail)
                assert got == [f"h:{i}" for i in range(20, 120)]
        assert len(lines) == 120


@requires_shared
@pytest.mark.parametrize("decision", ["approve", "deny"])
async def test_gated_sign_goldens(
    short_socket_dir: Path, decision: str, anyio_backend: str
) -> None:
    expected = golden(f"test_bus_sign_gated__test_bus_sign_gated_{decision}.json")
    async with running(short_socket_dir) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO)
        await raw.frame()
        await agent.wait_for_consumer()
        async with anyio.create_task_group() as tg:
            result = {}

            async def ask() -> None:
                result["decision"] = await agent.request_approval("ssh-agent", "sign", "web")

            tg.start_soon(ask)
            request = await raw.frame()
            assert mask(request, "id", "ts", "expires_at") == expected["approval_request"]
            response = {"v": 2, "type": "approval_response", "id": "x", "request_id": request["id"]}
            response["decision"] = decision
            await raw.send(json.dumps(response).encode() + b"\n")
        outcome = result["decision"]
        assert outcome.approved is (decision == "approve")
        assert outcome.decided_by == "user"
        if outcome.approved:  # the sign ran: the caller audits its result
            agent.audit("ssh-agent", "sign", "web", "ok", detail="ssh-ed25519", decision=outcome)
        event = await raw.frame()
        assert mask(event, "id", "ts") == expected["event"]
        audit = json.loads(json.dumps(agent.audit_records[-1], default=_struct))
        assert mask(audit, "ts") == expected["audit"]
        await raw.aclose()


def _struct(value: object) -> object:
    import msgspec

    return msgspec.json.decode(msgspec.json.encode(value))


@requires_shared
async def test_no_consumer_fails_closed_golden(short_socket_dir: Path) -> None:
    expected = golden("test_bus_sign_gated__test_bus_sign_no_consumer_fails_closed.json")
    async with running(short_socket_dir) as agent:
        with anyio.fail_after(1):  # immediately, no wait for the timeout
            decision = await agent.request_approval("ssh-agent", "sign", "web")
        assert decision.approved is False
        assert decision.outcome is Outcome.NO_CONSUMER
        audit = _struct(agent.audit_records[-1])
        assert mask(audit, "ts") == expected["audit"]  # type: ignore[arg-type]


async def test_timeout_fails_closed_without_decided_by(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        agent.approval_timeout = 0.3
        async with await connected(agent, short_socket_dir) as consumer:
            assert consumer.ack is not None
            assert consumer.ack.request_timeout_ms == 300
            decision = await agent.request_approval("ssh-agent", "sign", "web")
            assert (decision.approved, decision.outcome, decision.decided_by) == (
                False,
                Outcome.TIMEOUT,
                None,
            )
            request = await consumer.receive()
            assert isinstance(request, ApprovalRequest)
            # a late answer is ignored by the agent
            await consumer.approve(request)
            assert agent.pending_approvals == 0
            assert agent.audit_records[-1].decided_by == ""


async def test_policies_decide_without_the_consumer(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        approved = await agent.request_approval("aws-credentials", "get_credentials", "web")
        denied = await agent.request_approval("docker-credentials", "get", "web")
        assert approved.approved
        assert approved.policy == "approve-all"
        assert not denied.approved
        assert denied.policy == "deny-all"
        assert agent.audit_records[-1].code == "APPROVAL_DENIED"
        with pytest.raises(ValueError, match="policy"):
            agent.set_policy("ssh-agent", "maybe")
        with pytest.raises(ValueError, match="namespace"):
            agent.set_policy("egress", "deny-all")
        with pytest.raises(ValueError, match="positive"):
            agent.approval_timeout = 0


async def test_consumer_client_approves_with_scope_and_ttl(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        async with await connected(
            agent, short_socket_dir, client_name="ShedDesktop", client_version="1.2.0"
        ) as consumer:
            status = await anyio.to_thread.run_sync(read_status, short_socket_dir)
            assert status.approval_channel.client_name == "ShedDesktop"
            assert status.approval_channel.client_version == "1.2.0"

            async def answer() -> None:
                async for item in consumer:
                    if isinstance(item, ApprovalRequest):
                        if item.namespace == "ssh-agent":
                            await consumer.approve(
                                item, decided_by="touchid", scope="per-session", ttl="1h"
                            )
                        else:
                            await consumer.deny(item, decided_by="policy")

            async with anyio.create_task_group() as tg:
                tg.start_soon(answer)
                agent.set_policy("aws-credentials", "shed-desktop")
                yes = await agent.request_approval("ssh-agent", "sign", "web", server="prod")
                no = await agent.request_approval("aws-credentials", "get_credentials", "web")
                await consumer.aclose()  # ends the iteration (no cancelled receive)
        assert (yes.approved, yes.decided_by, yes.scope, yes.ttl) == (
            True,
            "touchid",
            "per-session",
            "1h",
        )
        assert (no.approved, no.decided_by) == (False, "policy")


async def test_consumer_answers_pings(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, ping_interval=0.05) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO)
        await raw.frame()
        ping = await raw.frame()
        assert list(ping) == ["v", "type", "id", "ts"]
        assert ping["type"] == "ping"
        await raw.aclose()
        async with await connected(agent, short_socket_dir) as consumer:
            with anyio.move_on_after(0.3):
                await consumer.receive()  # pings are answered inside, never yielded
            assert agent.consumer is not None


async def test_consumer_client_signals_supersede(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        first = await connected(agent, short_socket_dir, client_name="first")
        async with anyio.create_task_group() as tg:
            result = {}

            async def ask() -> None:
                result["d"] = await agent.request_approval("ssh-agent", "sign", "web")

            tg.start_soon(ask)
            request = await first.receive()
            assert isinstance(request, ApprovalRequest)
            second = await connected(agent, short_socket_dir, client_name="second")
            with pytest.raises(SupersededError) as info:
                await first.receive()
            assert info.value.ack.reason == "superseded"
        decision = result["d"]
        assert (decision.approved, decision.outcome, decision.decided_by) == (
            False,
            Outcome.SUPERSEDED,
            "user",
        )
        assert (await agent.wait_for_consumer()).client.name == "second"
        await first.aclose()
        await second.aclose()


async def test_disconnect_fails_inflight_approval_with_user(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        consumer = await connected(agent, short_socket_dir)
        async with anyio.create_task_group() as tg:
            result = {}

            async def ask() -> None:
                result["d"] = await agent.request_approval("ssh-agent", "sign", "web")

            tg.start_soon(ask)
            assert isinstance(await consumer.receive(), ApprovalRequest)
            await consumer.aclose()
        assert (result["d"].outcome, result["d"].decided_by) == (Outcome.DISCONNECTED, "user")


async def test_token_and_credential_replies(short_socket_dir: Path) -> None:
    async def minter(server: str, csr: str) -> MintedCredential:
        if server == "bad":
            raise MintError("reading server config: no such server")
        if server == "boom":
            raise RuntimeError("minter bug")
        if server == "mtls":
            return MintedCredential(
                auth_mode="mtls", client_cert="PEM", cert_serial="0a", expires_at="x"
            )
        return MintedCredential(token=f"tok-{csr or 'none'}", expires_at="2030-01-01T00:00:00Z")

    async with running(short_socket_dir) as agent:
        async with await connected(agent, short_socket_dir) as consumer:
            await consumer.send(TokenGet(id="q1", server="prod"))
            reply = await consumer.receive()
            assert isinstance(reply, TokenResponse)
            assert (reply.in_reply_to, reply.error) == (
                "q1",
                "control-token minting is not available",
            )
            await consumer.send(CredentialGet(id="q2", server="prod"))
            creply = await consumer.receive()
            assert isinstance(creply, CredentialResponse)
            assert creply.error == "control-credential minting is not available"
        agent.minter = minter
        async with await connected(agent, short_socket_dir) as consumer:
            await consumer.send(TokenGet(id="q1", server="prod"))
            await consumer.send(CredentialGet(id="q2", server="mtls", csr="MIIBcsr"))
            await consumer.send(TokenGet(id="q3", server="mtls"))
            await consumer.send(CredentialGet(id="q4", server="bad"))
            await consumer.send(TokenGet(id="q5", server="boom"))
            replies = {}
            for _ in range(5):
                item = await consumer.receive()
                assert isinstance(item, (TokenResponse, CredentialResponse))
                replies[item.in_reply_to] = item
        assert replies["q1"].token == "tok-none"
        q2 = replies["q2"]
        assert isinstance(q2, CredentialResponse)
        assert (q2.auth_mode, q2.client_cert, q2.token) == ("mtls", "PEM", "")
        assert "too old to use one" in replies["q3"].error
        assert replies["q4"].error == "reading server config: no such server"
        assert replies["q5"].error == "minting failed: minter bug"
        assert (await read_status_async(short_socket_dir)).schema == 1  # the agent is still up


async def test_status_reports_servers_and_consumer(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, config_path="/etc/x.yaml", version="v9") as agent:
        agent.set_servers([ServerHealth(name="b", url="u"), ServerHealth(name="a", url="u")])
        status = await anyio.to_thread.run_sync(read_status, short_socket_dir)
        assert [s.name for s in status.servers] == ["a", "b"]
        assert (status.version, status.config_path) == ("v9", "/etc/x.yaml")
        assert status.gate_namespaces == ("ssh-agent",)


async def test_read_status_not_running(short_socket_dir: Path) -> None:
    with pytest.raises(AgentNotRunningError) as info:
        read_status(short_socket_dir)
    assert info.value.filename == str(short_socket_dir / "host-agent-status.sock")
    with pytest.raises(AgentNotRunningError):
        await read_status_async(short_socket_dir)


async def fake_status(directory: Path, body: bytes, *, hold: bool = False) -> UnixServer:
    async def handler(stream: object) -> None:
        await stream.send(body)  # type: ignore[attr-defined]
        if hold:
            await anyio.sleep(30)

    return UnixServer(directory / "host-agent-status.sock", handler, grace=0)


async def test_read_status_skew_garbage_and_timeout(short_socket_dir: Path) -> None:
    cases = [
        (b'{"schema":2}\n', StatusSchemaError, False),
        (b"not json", Exception, False),
        (b'{"schema":1}', StatusTimeoutError, True),
    ]
    for body, error, hold in cases:
        async with anyio.create_task_group() as tg:
            server = await fake_status(short_socket_dir, body, hold=hold)
            await tg.start(server.serve)
            with pytest.raises(error):
                await read_status_async(short_socket_dir, read_timeout=0.3)
            with pytest.raises(error):
                await anyio.to_thread.run_sync(
                    lambda: read_status(short_socket_dir, read_timeout=0.3)
                )
            server.shutdown()
            tg.cancel_scope.cancel()


async def test_fixture_from_the_plugin(host_agent_server: HostAgentServer) -> None:
    status = await read_status_async(host_agent_server.socket_dir)
    assert status.policies == dict.fromkeys(sorted(status.policies), "deny-all")
    assert (await host_agent_server.request_approval("ssh-agent", "sign", "web")).approved is False


async def test_lines_sent_with_the_hello_are_handled_after_the_ack(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        raw = await Raw.connect(agent.approval_path)
        await raw.send(HELLO + b'{"type":"pong"}\ngarbage\n{"type":"hello"}\n{"type":"future"}\n')
        ack = await raw.frame()
        assert ack["accepted"] is True
        await agent.wait_for_consumer()
        decision_holder: list[object] = []

        async def ask() -> None:
            decision_holder.append(await agent.request_approval("ssh-agent", "sign", "web"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            request = await raw.frame()
            reply = {
                "type": "approval_response",
                "request_id": request["id"],
                "decision": "approve",
            }
            await raw.send(json.dumps(reply).encode() + b"\r\n")
        assert getattr(decision_holder[0], "approved", None) is True
        await raw.aclose()


async def test_audit_log_lines(short_socket_dir: Path) -> None:
    log = short_socket_dir / "audit.jsonl"
    async with running(short_socket_dir / "a", audit_log=log) as agent:
        agent.audit("egress", "tcp", "", "allow", detail="h:443 (1.2.3.4)")
        await agent.request_approval("ssh-agent", "sign", "web")  # no consumer: denied
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["result"] for line in lines] == ["allow", "denied"]
    assert lines[0]["approval"] == ""  # always written in the durable line
    assert "decided_by" not in lines[1]
