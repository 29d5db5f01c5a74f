"""Generated types vs herdr's published schemas (20, 21) and the reconstructed 22."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import ValidationError
from jsonschema.protocols import Validator

from shedproto import herdr
from shedproto.herdr import types as t
from tests._hypothesis import examples
from tests._tools import TOOLS, load_tool
from tests._upstream_schema import schema_validator
from tests.conftest import SHARED, requires_shared

codegen = load_tool("herdr_codegen")

SCHEMA_DIR = SHARED / "conformance" / "herdr"
SCHEMAS = {
    20: SCHEMA_DIR / "herdr-api.schema.json",
    21: SCHEMA_DIR / "herdr-api.protocol21.schema.json",
    22: codegen.DELTA_22,
}
PACKAGE = Path(herdr.__file__).parent


def _document(protocol: int) -> dict[str, Any]:
    return _documents()[protocol]


@functools.cache
def _documents() -> dict[int, dict[str, Any]]:
    return {
        int(document["protocol"]): document
        for _, document in codegen.load_documents(list(SCHEMAS.values()))
    }


@functools.cache
def _validator(protocol: int, pointer: str) -> Validator:
    return schema_validator(_document(protocol), pointer)


def _check(protocol: int, section: str, value: Any) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``value`` matches the schema of ``section``."""
    _validator(protocol, f"/schemas/{section}").validate(value)


@requires_shared
def test_regenerating_gives_the_committed_modules() -> None:
    files = codegen.generate_files(list(SCHEMAS.values()))
    assert set(files) == {"types.py", "_methods.py"}
    for name, source in files.items():
        assert (PACKAGE / name).read_text(encoding="utf-8") == source, name


@requires_shared
def test_codegen_cli_check_passes_and_detects_drift(tmp_path: Path) -> None:
    args = [
        sys.executable,
        str(TOOLS / "herdr_codegen.py"),
        str(SCHEMAS[20]),
        str(SCHEMAS[21]),
        str(SCHEMAS[22]),
    ]
    ok = subprocess.run([*args, "--check"], capture_output=True, timeout=120, check=False)
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "types.py").write_text("stale\n")
    drift = subprocess.run(
        [*args, "--check", "--out", str(tmp_path)], capture_output=True, timeout=120, check=False
    )
    assert drift.returncode == 1
    assert b"out of date" in drift.stderr


def test_codegen_rejects_a_file_that_is_not_a_schema(tmp_path: Path) -> None:
    bogus = tmp_path / "x.json"
    bogus.write_text('{"hello": 1}')
    with pytest.raises(codegen.SchemaError):
        codegen.generate([bogus])


@requires_shared
@pytest.mark.parametrize("protocol", [20, 21, 22])
def test_every_schema_def_has_a_type(protocol: int) -> None:
    document = _document(protocol)
    names = {name for section in document["schemas"].values() for name in section.get("$defs", {})}
    table = t.PROTOCOL_TABLES[protocol][2]
    assert set(table) == names
    for name, python_type in table.items():
        if name == "SubscriptionEventData":
            continue  # an untagged union of Structs: decoded by event name instead
        msgspec.json.Decoder(python_type)  # every type is decodable


@requires_shared
@pytest.mark.parametrize("protocol", [20, 21, 22])
def test_every_method_has_a_request_type(protocol: int) -> None:
    document = _document(protocol)
    methods = [m["properties"]["method"]["const"] for m in document["schemas"]["request"]["oneOf"]]
    requests, params, _ = t.PROTOCOL_TABLES[protocol]
    assert list(requests) == methods
    assert len(methods) == (106 if protocol == 22 else 91)
    assert set(params) == set(methods) <= set(t.METHOD_RESULTS)
    assert protocol != 22 or set(methods) == set(t.METHOD_RESULTS)


def test_protocol_twins_exist_only_where_the_schemas_differ() -> None:
    assert t.PROTOCOL_TABLES[20][1]["workspace.close"] is t.WorkspaceTarget
    assert t.PROTOCOL_TABLES[21][1]["workspace.close"] is t.WorkspaceCloseParams
    assert t.PROTOCOL_TABLES[20][1]["ping"] is t.PROTOCOL_TABLES[21][1]["ping"]
    assert t.PROTOCOL_TABLES[22][1]["workspace.close"] is t.WorkspaceCloseParams
    assert t.PROTOCOL_TABLES[21][1]["workspace.create"] is t.WorkspaceCreateParamsP21
    assert "source_workspace_id" in t.WorkspaceCreateParams.__struct_fields__
    assert "command_code" in t.IntegrationTargetP21.__args__  # type: ignore[attr-defined]
    assert "command_code" not in t.IntegrationTarget.__args__  # type: ignore[attr-defined]
    assert "bgra" not in t.PaneGraphicsFormatP20.__args__  # type: ignore[attr-defined]
    assert "bgra" in t.PaneGraphicsFormat.__args__  # type: ignore[attr-defined]


EXAMPLE_REQUESTS: list[dict[str, Any]] = [
    {"id": "1", "method": "ping", "params": {}},
    {"id": "req_l1", "method": "workspace.create", "params": {"cwd": "/tmp/p", "focus": True}},
    {"id": "2", "method": "pane.send_text", "params": {"pane_id": "w1:p1", "text": "ls\r"}},
    {
        "id": "3",
        "method": "pane.read",
        "params": {"pane_id": "w1:p1", "source": "recent", "lines": 5},
    },
    {
        "id": "4",
        "method": "events.subscribe",
        "params": {
            "subscriptions": [
                {"type": "workspace.created"},
                {
                    "type": "pane.output_matched",
                    "pane_id": "w1:p1",
                    "source": "recent",
                    "match": {"type": "regex", "value": "ok$"},
                },
                {"type": "pane.agent_status_changed", "pane_id": "w1:p1", "agent_status": "idle"},
            ]
        },
    },
    {
        "id": "5",
        "method": "events.wait",
        "params": {
            "match_event": {
                "event": "pane_agent_status_changed",
                "pane_id": "w1:p1",
                "agent_status": "idle",
            },
            "timeout_ms": 1000,
        },
    },
    {
        "id": "6",
        "method": "agent.start",
        "params": {"name": "pi", "kind": "pi", "pane_id": "w1:p1", "args": ["--no-session"]},
    },
    {"id": "7", "method": "workspace.close", "params": {"workspace_id": "w1"}},
]


@requires_shared
@pytest.mark.parametrize("protocol", [20, 21, 22])
@pytest.mark.parametrize("example", EXAMPLE_REQUESTS, ids=lambda e: e["method"])
def test_example_requests_validate_and_round_trip(protocol: int, example: dict[str, Any]) -> None:
    line = json.dumps(example).encode()
    request = herdr.decode_request(line, protocol)
    encoded = herdr.encode_request(request)
    _check(protocol, "request", json.loads(encoded))
    assert json.loads(encoded)["params"].items() >= example["params"].items() or example[
        "method"
    ] in (
        "events.subscribe",
        "events.wait",
    )


def _pane() -> t.PaneInfo:
    return t.PaneInfo(
        pane_id="w1:p1", terminal_id="term_1", workspace_id="w1", tab_id="w1:t1",
        focused=True, cwd="/tmp/p", agent_status="unknown", revision=0,
    )  # fmt: skip


def _workspace() -> t.WorkspaceInfo:
    return t.WorkspaceInfo(
        workspace_id="w1", number=1, label="p", focused=True, pane_count=1, tab_count=1,
        active_tab_id="w1:t1", agent_status="unknown",
    )  # fmt: skip


def _tab() -> t.TabInfo:
    return t.TabInfo(
        tab_id="w1:t1", workspace_id="w1", number=1, label="1", focused=True, pane_count=1,
        agent_status="unknown",
    )  # fmt: skip


def _read() -> t.PaneReadResult:
    return t.PaneReadResult(
        pane_id="w1:p1", workspace_id="w1", tab_id="w1:t1", source="recent", format="text",
        text="ok", revision=0, truncated=False,
    )  # fmt: skip


EXAMPLE_RESULTS: list[Any] = [
    t.PongReply(version="0.8.0", protocol=20, capabilities=t.ServerCapabilities(live_handoff=True)),
    t.PongReply(version="0.8.0", protocol=21),
    t.WorkspaceCreatedReply(workspace=_workspace(), tab=_tab(), root_pane=_pane()),
    t.WorkspaceListReply(workspaces=[_workspace()]),
    t.PaneReadReply(read=_read()),
    t.OutputMatchedReply(pane_id="w1:p1", revision=0, matched_line=None, read=_read()),
    t.SubscriptionStartedReply(),
    t.OkReply(),
]


@requires_shared
@pytest.mark.parametrize("protocol", [20, 21, 22])
@pytest.mark.parametrize("result", EXAMPLE_RESULTS, ids=lambda r: type(r).__name__)
def test_example_results_validate(protocol: int, result: Any) -> None:
    line = msgspec.json.encode(herdr.SuccessResponse(id="x", result=result))
    _check(protocol, "success_response", json.loads(line))
    decoded = herdr.decode_response(line, protocol)
    assert isinstance(decoded, herdr.SuccessResponse)
    # an older protocol decodes into its own twin (PongReplyP20): compare the values
    assert msgspec.convert(msgspec.to_builtins(decoded.result), type(result)) == result


@requires_shared
def test_error_and_event_examples_validate() -> None:
    error = msgspec.json.encode(herdr.ErrorResponse.of("", "invalid_request", "invalid request: x"))
    _check(21, "error_response", json.loads(error))
    events = [
        t.WorkspaceCreatedEventData(workspace=_workspace()),
        t.PaneExitedEventData(pane_id="w1:p1", workspace_id="w1"),
        t.PaneAgentStatusChangedEventData(pane_id="w1:p1", workspace_id="w1", agent_status="idle"),
    ]
    for data in events:
        envelope = herdr.LifecycleEvent(event=data.__struct_config__.tag, data=data)  # type: ignore[arg-type]
        _check(20, "event", json.loads(msgspec.json.encode(envelope)))
    sub = herdr.SubscriptionEvent(
        event="pane.output_matched",
        data=t.PaneOutputMatchedEvent(pane_id="w1:p1", matched_line="ok", read=_read()),
    )
    _check(21, "subscription_event", json.loads(msgspec.json.encode(sub)))


@requires_shared
def test_the_validator_can_fail() -> None:
    with pytest.raises(ValidationError):
        _check(21, "request", {"id": 1, "method": "ping", "params": {}})
    with pytest.raises(ValidationError):
        _check(21, "request", {"id": "1", "method": "ping"})
    with pytest.raises(ValidationError):
        _check(20, "success_response", {"id": "1", "result": {"type": "pong", "version": "x"}})


RESULT_TYPES = [
    t.WorkspaceInfo, t.TabInfo, t.PaneInfo, t.AgentInfo, t.PaneReadResult, t.PongReply,
    t.PaneLayoutSnapshot, t.WorkspaceCreatedReply,
]  # fmt: skip

_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)


@functools.cache
def _instances(tp: Any) -> st.SearchStrategy[Any]:
    """Build instances of ``tp`` from JSON built by hypothesis, through msgspec.convert."""
    schema = msgspec.json.schema(tp)
    refs: dict[str, st.SearchStrategy[Any]] = {}
    return _from_schema(schema, schema, refs).map(lambda value: msgspec.convert(value, tp))


def _from_schema(
    root: dict[str, Any], node: dict[str, Any], refs: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Any]:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        if name not in refs:  # recursive types (filters, layouts) go through st.deferred
            refs[name] = st.deferred(lambda: _from_schema(root, root["$defs"][name], refs))
        return refs[name]
    if "anyOf" in node:
        return st.one_of([_from_schema(root, option, refs) for option in node["anyOf"]])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        if not props:
            return st.dictionaries(
                st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True), _TEXT, max_size=3
            )
        required = set(node.get("required", []))
        fixed = {k: _from_schema(root, v, refs) for k, v in props.items() if k in required}
        optional = {k: _from_schema(root, v, refs) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries(fixed, optional=optional)
    if kind == "array":
        return st.lists(_from_schema(root, node.get("items", {}), refs), max_size=2)
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        return _TEXT
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(
            min_value=node.get("minimum", -(2**31)), max_value=node.get("maximum", 2**31)
        )
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if kind == "null":
        return st.none()
    return st.none()


@requires_shared
@pytest.mark.parametrize("tp", RESULT_TYPES, ids=lambda tp: tp.__name__)
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_instances_encode_to_schema_valid_json(tp: Any, data: st.DataObject) -> None:
    instance = data.draw(_instances(tp))
    encoded = json.loads(msgspec.json.encode(instance))
    if tp in (t.PongReply, t.WorkspaceCreatedReply):
        _check(22, "success_response", {"id": "x", "result": encoded})
    else:
        _check(22, f"success_response/$defs/{tp.__name__}", encoded)


_PARAMS = list(t.PROTOCOL_TABLES[22][1])
_REPLIES: list[Any] = list(typing.get_args(t.ResponseResult))
_EVENTS: list[Any] = list(typing.get_args(t.EventData))


_INT_BOUNDS = {"uint": (0, 2**32), "uint64": (0, 2**40), "uint32": (0, 2**32 - 1)}


def _upstream(
    document: dict[str, Any], node: Any, refs: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Any]:
    """JSON values valid under an upstream schema node (the keywords herdr's schemas use)."""
    if node is True or node == {}:
        return _TEXT
    if "$ref" in node:
        ref = node["$ref"]
        if ref not in refs:
            refs[ref] = st.deferred(lambda: _upstream(document, _resolve(document, ref), refs))
        return refs[ref]
    if "oneOf" in node or "anyOf" in node:
        options = node.get("oneOf") or node["anyOf"]
        return st.one_of([_upstream(document, option, refs) for option in options])
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kinds = node.get("type")
    if isinstance(kinds, list):
        return st.one_of([_upstream(document, {**node, "type": k}, refs) for k in kinds])
    if kinds == "object":
        props = node.get("properties", {})
        if not props:
            names = node.get("propertyNames", {}).get("pattern", r"^[a-z]{1,8}$")
            values = _upstream(document, node.get("additionalProperties", True), refs)
            size = min(3, node.get("maxProperties", 3))
            return st.dictionaries(st.from_regex(names, fullmatch=True), values, max_size=size)
        required = set(node.get("required", []))
        fixed = {k: _upstream(document, v, refs) for k, v in props.items() if k in required}
        optional = {k: _upstream(document, v, refs) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries(fixed, optional=optional)
    if kinds == "array":
        return st.lists(_upstream(document, node.get("items", True), refs), max_size=2)
    if kinds == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        return _TEXT
    if kinds == "integer":
        low, high = _INT_BOUNDS.get(node.get("format", ""), (-(2**31), 2**31 - 1))
        return st.integers(node.get("minimum", low), node.get("maximum", high))
    if kinds == "number":
        return st.floats(allow_nan=False, allow_infinity=False, width=32)
    if kinds == "boolean":
        return st.booleans()
    if kinds == "null":
        return st.none()
    raise KeyError(f"no strategy for {node}")


def _resolve(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


@functools.cache
def _params_values(method: str) -> st.SearchStrategy[Any]:
    document = _document(22)
    for member in document["schemas"]["request"]["oneOf"]:
        if member["properties"]["method"]["const"] == method:
            return _upstream(document, member["properties"]["params"], {})
    raise KeyError(method)


@requires_shared
@pytest.mark.parametrize("method", _PARAMS)
@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_request_type_round_trips_schema_valid_json(method: str, data: st.DataObject) -> None:
    """Upstream-valid params convert into our type and encode back to upstream-valid JSON."""
    value = data.draw(_params_values(method))
    params = msgspec.convert(value, t.PROTOCOL_TABLES[22][1][method])
    request = herdr.make_request(method, params, id="h")
    encoded = json.loads(herdr.encode_request(request))
    _check(22, "request", encoded)
    assert herdr.decode_request(herdr.encode_request(request), 22) == request


@requires_shared
@pytest.mark.parametrize("reply", _REPLIES, ids=lambda tp: tp.__name__)
@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_result_type_encodes_to_schema_valid_json(reply: Any, data: st.DataObject) -> None:
    result = data.draw(_instances(reply))
    line = msgspec.json.encode(herdr.SuccessResponse(id="h", result=result))
    _check(22, "success_response", json.loads(line))
    assert herdr.decode_response(line, 22) == herdr.SuccessResponse(id="h", result=result)


@requires_shared
@pytest.mark.parametrize("event", _EVENTS, ids=lambda tp: tp.__name__)
@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_event_type_encodes_to_schema_valid_json(event: Any, data: st.DataObject) -> None:
    payload = data.draw(_instances(event))
    envelope = herdr.LifecycleEvent(event=event.__struct_config__.tag, data=payload)
    line = msgspec.json.encode(envelope)
    _check(20, "event", json.loads(line))
    assert herdr.decode_stream_line(line) == envelope
