from __future__ import annotations

import json

import msgspec
import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.host_agent import (
    LiveStatus,
    NamespaceHealth,
    RcHubStatus,
    ServerHealth,
    StatusSchemaError,
    StatusUsageError,
    build_live_status,
    decode_live_status,
    encode_live_status,
    gate_namespaces,
    go_quote,
    not_running_message,
    parse_status_args,
    pretty_live_status,
    render_status,
    tabwrite,
)
from tests.conftest import requires_shared

from ._shared import canonical, golden

WATCH_NONE = {
    "ssh-agent": "shed-desktop",
    "aws-credentials": "approve-all",
    "docker-credentials": "deny-all",
}


def watch_none(**overrides: object) -> LiveStatus:
    kwargs: dict[str, object] = {
        "version": "v1.0.0",
        "pid": 4242,
        "started_at": "2026-06-11T00:00:00Z",
        "written_at": "2026-06-11T00:00:01Z",
        "config_path": "/abs/extensions.yaml",
        "policies": WATCH_NONE,
        "socket_path": "/d/host-agent.sock",
    }
    kwargs.update(overrides)
    return build_live_status(**kwargs)  # type: ignore[arg-type]


def test_compact_encoding_is_exact() -> None:
    assert encode_live_status(watch_none()) == (
        b'{"schema":1,"version":"v1.0.0","pid":4242,"started_at":"2026-06-11T00:00:00Z",'
        b'"written_at":"2026-06-11T00:00:01Z","config_path":"/abs/extensions.yaml",'
        b'"policies":{"aws-credentials":"approve-all","docker-credentials":"deny-all",'
        b'"ssh-agent":"shed-desktop"},"gate_namespaces":["ssh-agent"],'
        b'"approval_channel":{"socket_path":"/d/host-agent.sock","consumer_connected":false},'
        b'"rc_hub":{"state":"disabled"},"servers":[]}\n'
    )


def test_omit_rules() -> None:
    status = watch_none(
        policies={},
        consumer_name="ShedDesktop",
        consumer_version="",
        rc_hub=RcHubStatus(state="listening", addr="127.0.0.1:1029"),
        servers=[
            ServerHealth(
                name="b",
                url="u",
                namespaces=(
                    NamespaceHealth(namespace="ssh-agent", state="connected"),
                    NamespaceHealth(
                        namespace="aws-credentials", state="reconnecting", last_error="e"
                    ),
                ),
            ),
            ServerHealth(name="", url="u0"),
        ],
    )
    wire = json.loads(encode_live_status(status))
    assert "gate_namespaces" not in wire
    assert wire["policies"] == dict.fromkeys(sorted(WATCH_NONE), "deny-all")
    assert wire["approval_channel"] == {
        "socket_path": "/d/host-agent.sock",
        "consumer_connected": True,
        "client_name": "ShedDesktop",
    }
    assert wire["rc_hub"] == {"state": "listening", "addr": "127.0.0.1:1029"}
    assert [s["name"] for s in wire["servers"]] == ["", "b"]  # sorted by name
    assert wire["servers"][0]["namespaces"] == []
    assert wire["servers"][1]["namespaces"] == [  # sorted by namespace, since always present
        {"namespace": "aws-credentials", "state": "reconnecting", "last_error": "e", "since": ""},
        {"namespace": "ssh-agent", "state": "connected", "since": ""},
    ]


def test_policies_sorted_whatever_the_mapping_order() -> None:
    status = LiveStatus(schema=1, policies={"z": "1", "a": "2"})
    assert b'"policies":{"a":"2","z":"1"}' in encode_live_status(status)


def test_lenient_decode_of_an_old_daemon() -> None:
    old = b'{"schema":1,"version":"v","pid":1,"started_at":"s","written_at":"w","config_path":"",'
    old += b'"policies":{},"approval_channel":{"socket_path":"/s","consumer_connected":false},'
    old += b'"servers":[],"brand_new":{"x":1}}\n'
    status = decode_live_status(old)
    assert status.rc_hub == RcHubStatus(state="")
    assert status.gate_namespaces == ()
    # re-encoded from the struct: the unknown key is dropped, rc_hub gets its zero value
    assert b"brand_new" not in encode_live_status(status)
    assert b'"rc_hub":{"state":""}' in encode_live_status(status)


@pytest.mark.parametrize(
    ("body", "schema"), [(b'{"schema":2}', 2), (b"{}", 0), (b'{"schema":0}', 0)]
)
def test_schema_skew_is_typed(body: bytes, schema: int) -> None:
    with pytest.raises(StatusSchemaError) as info:
        decode_live_status(body)
    assert info.value.code is ErrorCode.VERSION_UNSUPPORTED
    assert info.value.schema == schema
    assert str(info.value) == (
        f"agent status schema is {schema}, this CLI expects 1 "
        "(version skew \u2014 match the shed-host-agent binary and CLI versions)"
    )


@pytest.mark.parametrize(
    "body", [b"", b"{", b"[]", b'{"schema":"1"}', b'{"schema":1,"servers":null}']
)
def test_garbage_is_a_remote_error(body: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_live_status(body)
    assert info.value.code in (ErrorCode.MALFORMED_FRAME, ErrorCode.SCHEMA_VIOLATION)


def test_pretty_json_matches_serde_layout() -> None:
    text = pretty_live_status(watch_none()).decode()
    assert text.startswith('{\n  "schema": 1,\n  "version": "v1.0.0",\n')
    assert '  "servers": []\n}\n' in text
    assert text.endswith("}\n")


@requires_shared
def test_status_json_golden() -> None:
    status = decode_live_status(encode_live_status(watch_none()))
    wire = msgspec.json.decode(pretty_live_status(status))
    for key in ("pid", "config_path"):
        wire[key] = f"<{key}>"
    for key in ("started_at", "written_at"):
        wire[key] = "<ts>"
    wire["version"] = "<version>"
    wire["approval_channel"]["socket_path"] = "<dir>/host-agent.sock"
    expected = golden("test_status_running__test_status_json_masked_canonical_equal.json")
    assert canonical(wire) == canonical(expected)


@requires_shared
def test_status_text_golden() -> None:
    status = watch_none(
        version="<version>",
        config_path="<config_path>",
        started_at="<ts>",
        socket_path="<dir>/host-agent.sock",
    )
    # pid is an int on the wire; the golden masks it in the rendered header
    text = render_status(status).replace("(pid 4242,", "(pid <pid>,")
    assert text == golden("test_status_running__test_status_text_masked_equal.json")


def test_render_built_status_sorts_and_shows_the_consumer() -> None:
    status = watch_none(
        config_path="",
        consumer_name="App",
        consumer_version="1.2",
        rc_hub=RcHubStatus(state=""),
        servers=[
            ServerHealth(name="mini2", url="https://mini2:8443"),
            ServerHealth(
                name="",
                url="http://localhost:8080",
                namespaces=(
                    NamespaceHealth(namespace="ssh-agent", state="connected"),
                    NamespaceHealth(namespace="docker-credentials", state="stopped"),
                ),
            ),
        ],
    )
    assert render_status(status) == (
        "shed-host-agent status (pid 4242, v1.0.0)\n"
        "started:  2026-06-11T00:00:00Z\n"
        "\n"
        "Approval policies:\n"
        "  ssh-agent           shed-desktop  (decided in shed-desktop)\n"
        "  aws-credentials     approve-all   \n"
        "  docker-credentials  deny-all      \n"
        "\n"
        "Approval channel:\n"
        "  socket    /d/host-agent.sock\n"
        "  consumer  connected (App 1.2)\n"
        "\n"
        "Servers (2):\n"
        "  (default)  (http://localhost:8080)\n"
        "    -   docker-credentials  stopped\n"
        "    ok  ssh-agent           connected\n"
        "  mini2  (https://mini2:8443)\n"
        "    (no subscriptions yet)\n"
    )


def test_render_server_rows_exactly() -> None:
    status = LiveStatus(
        schema=1,
        pid=55,
        version="v2",
        started_at="2026-01-02T03:04:05Z",
        policies={
            "ssh-agent": "approve-all",
            "aws-credentials": "shed-desktop",
            "docker-credentials": "deny-all",
        },
        gate_namespaces=("aws-credentials",),
        servers=(
            ServerHealth(
                name="",
                url="http://localhost:8080",
                namespaces=(
                    NamespaceHealth(namespace="ssh-agent", state="connected"),
                    NamespaceHealth(
                        namespace="aws-credentials",
                        state="reconnecting",
                        last_error="dial tcp: connection refused",
                    ),
                    NamespaceHealth(namespace="docker-credentials", state="stopped"),
                ),
            ),
            ServerHealth(name="mini2", url="https://mini2:8443"),
        ),
    )
    status = msgspec.structs.replace(
        status,
        approval_channel=msgspec.structs.replace(
            status.approval_channel,
            socket_path="/s.sock",
            consumer_connected=True,
            client_name="App",
        ),
    )
    assert render_status(status) == (
        "shed-host-agent status (pid 55, v2)\n"
        "started:  2026-01-02T03:04:05Z\n"
        "\n"
        "Approval policies:\n"
        "  ssh-agent           approve-all   \n"
        "  aws-credentials     shed-desktop  (decided in shed-desktop)\n"
        "  docker-credentials  deny-all      \n"
        "\n"
        "Approval channel:\n"
        "  socket    /s.sock\n"
        "  consumer  connected (App)\n"
        "\n"
        "Servers (2):\n"
        "  (default)  (http://localhost:8080)\n"
        "    ok  ssh-agent           connected\n"
        "    x   aws-credentials     reconnecting: dial tcp: connection refused\n"
        "    -   docker-credentials  stopped\n"
        "  mini2  (https://mini2:8443)\n"
        "    (no subscriptions yet)\n"
    )


def test_rc_hub_line_with_addr() -> None:
    text = render_status(watch_none(rc_hub=RcHubStatus(state="listening", addr="127.0.0.1:1029")))
    assert "\nRC hub:   listening (127.0.0.1:1029)\n\nServers (0):\n" in text


def test_tabwrite_counts_code_points() -> None:
    assert tabwrite([["é", "x"], ["ab", "y"]]) == "é   x\nab  y\n"
    assert tabwrite([]) == ""


@pytest.mark.parametrize(
    ("ssh", "aws", "docker", "gate"),
    [
        ("", "", "", []),
        ("shed-desktop", "deny-all", "shed-desktop", ["ssh-agent", "docker-credentials"]),
    ],
)
def test_gate_namespaces(ssh: str, aws: str, docker: str, gate: list[str]) -> None:
    policies = {"ssh-agent": ssh, "aws-credentials": aws, "docker-credentials": docker}
    assert list(gate_namespaces(policies)) == gate


@requires_shared
def test_gate_namespaces_fixture() -> None:
    for vector in golden("gate_namespaces.json")["vectors"]:
        policies = {
            "ssh-agent": vector["ssh"],
            "aws-credentials": vector["aws"],
            "docker-credentials": vector["docker"],
        }
        assert list(gate_namespaces(policies)) == vector["gate"]


@requires_shared
def test_not_running_message_golden() -> None:
    expected = golden("test_status_not_running__test_status_not_running_masked_stderr_equal.json")
    assert not_running_message("<DIR>/host-agent-status.sock") == expected


@requires_shared
@pytest.mark.parametrize(
    ("tokens", "name"),
    [
        (["--bogus"], "test_status_badarg__test_status_bogus_arg_exit2_equal.json"),
        (["--live"], "test_status_badarg__test_status_live_removed_exit2_equal.json"),
        (["--json", "-live"], "test_status_badarg__test_status_live_removed_exit2_equal.json"),
    ],
)
def test_bad_argument_messages_golden(tokens: list[str], name: str) -> None:
    with pytest.raises(StatusUsageError) as info:
        parse_status_args(tokens)
    assert str(info.value) + "\n" == golden(name)


def test_status_args() -> None:
    assert parse_status_args([]).json is False
    assert parse_status_args(["-json"]).json is True
    assert parse_status_args(["--json", "--json"]).json is True
    with pytest.raises(StatusUsageError, match='"x"'):
        parse_status_args(["--json", "x", "--live"])  # the first bad token wins


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        ("--bogus", '"--bogus"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("tab\there\n", '"tab\\there\\n"'),
        ("\x00\x7f", '"\\x00\\x7f"'),
        ("caf\u00e9 \u2014", '"caf\u00e9 \u2014"'),
        ("\u00a0\u200b", '"\\u00a0\\u200b"'),
        ("\U0001f600\U000e0001", '"\U0001f600\\U000e0001"'),
        ("\udcff", '"\\xff"'),
    ],
)
def test_go_quote(raw: str, quoted: str) -> None:
    assert go_quote(raw) == quoted


def test_has_live_status_fields_tells_a_skewed_agent_from_another_protocol() -> None:
    from shedproto.host_agent import has_live_status_fields

    # another protocol's error answer to the status probe: no LiveStatus field
    assert not has_live_status_fields(b'{"error":{"code":"unknown_op","message":""},"id":"1"}')
    assert not has_live_status_fields(b"{}")
    # a skewed agent: schema missing, other fields there
    assert has_live_status_fields(b'{"version":"v9","pid":1}')
    assert has_live_status_fields(b"not json")  # the decode error says more
    assert has_live_status_fields(b"[1, 2]")
