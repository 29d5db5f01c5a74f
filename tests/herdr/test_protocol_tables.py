"""Each protocol's request and result unions are exactly its method table (issue 26, the bug).

Regression: the envelope decoded protocol 21 with protocol 22's unions, so
``serve --protocol 21``, the proxy and ``check`` at 21 accepted the twelve
methods protocol 22 added (``integration.list`` answered at 21).
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto._errors import ErrorCode, RemoteProtocolError
from shedproto.clients.proxy import run_check
from shedproto.herdr import types as t
from shedproto.observe import observer_factory, probe_cases
from shedproto.servers.herdr import HerdrServer

RGBA = herdr.GraphicsFrameHeader(format="rgba", image_width=1, image_height=1)

PROTOCOLS = sorted(t.PROTOCOL_TABLES)
ONLY_22 = sorted(set(t.PROTOCOL_TABLES[22][0]) - set(t.PROTOCOL_TABLES[21][0]))


def _names(version: int) -> list[str]:
    return [case.name for case in probe_cases("herdr", dialect=None, version=version)]


def _tags(union: object) -> list[str]:
    return [member.__struct_config__.tag for member in typing.get_args(union)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_request_union_is_exactly_the_method_table(protocol: int) -> None:
    tags = _tags(t.REQUEST_UNIONS[protocol])
    assert len(tags) == len(set(tags))
    assert set(tags) == set(t.PROTOCOL_TABLES[protocol][0])
    assert list(typing.get_args(t.REQUEST_UNIONS[protocol])) == list(
        t.PROTOCOL_TABLES[protocol][0].values()
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_result_union_holds_the_results_of_its_methods_only(protocol: int) -> None:
    results = set(_tags(t.RESULT_UNIONS[protocol]))
    wanted = {tag for m in t.PROTOCOL_TABLES[protocol][0] for tag in t.METHOD_RESULTS.get(m, ())}
    assert wanted <= results
    if protocol == 21:
        # the 22-only results (pane_selection, integration_list, ...) are not in 21's union
        assert "integration_list" not in results
        assert "pane_selection" not in results


def test_protocol_21_has_91_methods_and_22_adds_fifteen() -> None:
    # twelve from herdr-client 0.1.0's pinned schema, three from herdr's source (issue 26)
    assert len(t.PROTOCOL_TABLES[21][0]) == 91
    assert len(ONLY_22) == 15
    assert {"integration.list", "pane.clear", "server.ssh_agent.register"} <= set(ONLY_22)
    assert "pane.graphics.stream" in ONLY_22


@pytest.mark.parametrize("method", ONLY_22)
def test_protocol21_decoder_rejects_protocol22_only_methods(method: str) -> None:
    line = json.dumps({"id": "a", "method": method, "params": {}}).encode()
    with pytest.raises(RemoteProtocolError) as refused:
        herdr.decode_request(line, 21)
    assert refused.value.code is ErrorCode.UNKNOWN_TYPE
    assert refused.value.reply_hint is not None
    assert json.loads(refused.value.reply_hint)["error"]["code"] == "invalid_request"
    try:  # at 22 the method is known (its params may still be incomplete)
        herdr.decode_request(line, 22)
    except RemoteProtocolError as exc:
        assert exc.code is not ErrorCode.UNKNOWN_TYPE


def test_protocol21_result_decoder_rejects_a_protocol22_result() -> None:
    line = b'{"id":"a","result":{"type":"integration_list","integrations":[]}}'
    assert isinstance(herdr.decode_response(line, 22), herdr.SuccessResponse)
    with pytest.raises(RemoteProtocolError):
        herdr.decode_response(line, 21)


async def test_serve_protocol_21_answers_integration_list_as_herdr_21(
    short_socket_dir: Path,
) -> None:
    server = HerdrServer(short_socket_dir / "h.sock", protocol=21, shell=["/bin/sh"])
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await anyio.connect_unix(path) as stream:
                await stream.send(b'{"id":"q","method":"integration.list","params":{}}\n')
                data = b""
                while not data.endswith(b"\n"):
                    data += await stream.receive()
            server.shutdown()
    answer = json.loads(data)
    assert answer["id"] == ""
    assert answer["error"]["code"] == "invalid_request"


def test_proxy_observer_at_21_flags_a_protocol22_only_request() -> None:
    observer = observer_factory("herdr", version=21)(0)
    found = observer.feed("c2s", b'{"id":"q","method":"integration.list","params":{}}\n')
    assert [(d.kind, d.path) for d in found] == [("unknown_op", "$.method")]
    at_22 = observer_factory("herdr", version=22)(0)
    assert at_22.feed("c2s", b'{"id":"q","method":"integration.list","params":{}}\n') == []


async def test_check_at_21_probes_a_newer_method(short_socket_dir: Path) -> None:
    names = _names(21)
    assert sum(n.startswith("newer method ") for n in names) == 1
    assert not any(n.startswith("newer method ") for n in _names(22))
    server = HerdrServer(short_socket_dir / "h.sock", protocol=21, shell=["/bin/sh"])
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            results = await run_check("herdr", path, version=21)
            server.shutdown()
    assert [r.status for r in results if r.case.startswith("newer method ")] == ["pass"]
    assert [r for r in results if r.status == "fail"] == []


@pytest.mark.parametrize("version", [20, 21])
def test_proxy_observer_at_20_and_21_accepts_the_hidden_graphics_stream(version: int) -> None:
    # herdrdev/herdr src/api/schema.rs:182-183@v0.8.2: served, only the schema skips it
    observer = observer_factory("herdr", version=version)(0)
    request = b'{"id":"g","method":"pane.graphics.stream","params":{"pane_id":"p"}}\n'
    assert observer.feed("c2s", request + herdr.encode_frame(RGBA, b"abcd")) == []
    assert observer.feed("s2c", b'{"id":"g","result":{"type":"ok"}}\n') == []


def test_check_never_probes_a_hidden_method_as_newer() -> None:
    for version in (20, 21):
        assert not any("pane.graphics.stream" in n for n in _names(version))
