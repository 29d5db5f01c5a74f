"""Configuration: JSONC reading and strict validation with the real messages."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.connector import (
    DEFAULT_COLLECTION_INTERVAL_MS,
    AgentsHostConfig,
    ConfigError,
    ConfigFileError,
    JsoncSyntaxError,
    jsonc_to_json,
    load_agents_host_config_text,
    parse_agents_host_config,
    parse_jsonc,
)
from tests._hypothesis import examples

from ._helpers import OWNER, config, source

# --- JSONC -----------------------------------------------------------------------------------

JSONC_CASES: list[tuple[str, Any]] = [
    ('{"a": 1}', {"a": 1}),
    ('{"a": 1,}', {"a": 1}),
    ("[1, 2, ]", [1, 2]),
    ('{"a": [1, {"b": 2,},],}', {"a": [1, {"b": 2}]}),
    ('// lead\n{"a": 1} // trail', {"a": 1}),
    ('{"a": /* inline */ 1}', {"a": 1}),
    ('{"a": 1 /* multi\nline */}', {"a": 1}),
    (
        '{"url": "http://x//y", "c": "/* not a comment */"}',
        {"url": "http://x//y", "c": "/* not a comment */"},
    ),
    ('{"q": "say \\"//hi\\"", "b": 2}', {"q": 'say "//hi"', "b": 2}),
    ('{"bs": "\\\\", "n": 1}', {"bs": "\\", "n": 1}),
    ("[1 /* c */ , /* d */ ]", [1]),
    ("[1, // x\n]", [1]),
    ("\ufeff{}", {}),
    ('"//"', "//"),
    ("{}\r\n// windows line\r\n", {}),
]


@pytest.mark.parametrize(("text", "expected"), JSONC_CASES)
def test_jsonc_accepts(text: str, expected: Any) -> None:
    assert parse_jsonc(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "[,]",
        "{,}",
        "[1,,]",
        "{ invalid",
        '{"a": 1 /* open',
        '{"a": "open',
        "[1]]",
        "",
        "// only",
        "{'a': 1}",
    ],
)
def test_jsonc_rejects(text: str) -> None:
    with pytest.raises(JsoncSyntaxError):
        parse_jsonc(text)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_jsonc_leaves_plain_json_unchanged(value: Any) -> None:
    text = json.dumps(value)
    assert parse_jsonc(text) == value
    assert jsonc_to_json(text) == text  # nothing to strip: returned unchanged
    assert parse_jsonc(json.dumps(value, indent=1) + " // done\n/* and */") == value


@given(st.text(max_size=60))
def test_jsonc_comment_markers_inside_strings_survive(inner: str) -> None:
    text = '{"v": ' + json.dumps("/*" + inner + "//") + ', /* c */ "w": [1,],}'
    assert parse_jsonc(text) == {"v": "/*" + inner + "//", "w": [1]}


@settings(max_examples=examples(300))
@given(st.text(alphabet='{}[],:"/*\\ \n\tab1', max_size=40))
def test_jsonc_fuzz_only_typed_errors(text: str) -> None:
    with contextlib.suppress(JsoncSyntaxError):
        parse_jsonc(text)


# --- validation table -------------------------------------------------------------------------

INVALID: list[tuple[Any, str]] = [
    (None, "configuration must be an object"),
    ([], "configuration must be an object"),
    ("x", "configuration must be an object"),
    (config(extra=True), "configuration has an unknown field: extra"),
    (
        config(schema="commonfabric.agents-host.config.v1"),
        'configuration.schema must be "commonfabric.agents-host.config"',
    ),
    (
        {k: v for k, v in config().items() if k != "schema"},
        'configuration.schema must be "commonfabric.agents-host.config"',
    ),
    (config(ownerDid="not-a-did"), "configuration.ownerDid must be a DID"),
    (config(ownerDid=None), "configuration.ownerDid must be a DID"),
    (config(ownerDid=" did:key:x"), "configuration.ownerDid must be a DID"),
    (
        {k: v for k, v in config().items() if k != "ownerDid"},
        "configuration.ownerDid must be a DID",
    ),
    (config(sources=[]), "configuration.sources must be a non-empty array"),
    (config(sources={}), "configuration.sources must be a non-empty array"),
    (
        {k: v for k, v in config().items() if k != "sources"},
        "configuration.sources must be a non-empty array",
    ),
    (config(sources=[None]), "sources[0] must be an object"),
    (config(sources=[source(), "x"]), "sources[1] must be an object"),
    (config(sources=[source(extra=True)]), "sources[0] has an unknown field: extra"),
    (config(sources=[source(id="")]), "sources[0].id must be a non-empty string"),
    (config(sources=[source(id="  ")]), "sources[0].id must be a non-empty string"),
    (config(sources=[source(id=7)]), "sources[0].id must be a non-empty string"),
    (config(sources=[source(id="Codex")]), 'sources[0].id must already be normalized as "codex"'),
    (config(sources=[source(id=" codex ")]), 'sources[0].id must already be normalized as "codex"'),
    (config(sources=[source(id="co\x01dex")]), "sourceId must not contain control characters"),
    (config(sources=[source(driver="unknown")]), "sources[0].driver is not supported"),
    (config(sources=[source(driver=None)]), "sources[0].driver is not supported"),
    (config(sources=[source(enabled="yes")]), "sources[0].enabled must be a boolean"),
    (config(sources=[source(enabled=1)]), "sources[0].enabled must be a boolean"),
    (config(sources=[source(command=[])]), "sources[0].command must be a non-empty string array"),
    (
        config(sources=[source(command="codex")]),
        "sources[0].command must be a non-empty string array",
    ),
    (
        config(sources=[source(command=["codex", " "])]),
        "sources[0].command[1] must be a non-empty string",
    ),
    (
        config(sources=[source(command=["codex", 3])]),
        "sources[0].command[1] must be a non-empty string",
    ),
    (
        config(sources=[source(id="acp", driver="acp")]),
        "sources[0].command is required for an enabled ACP source",
    ),
    (config(sources=[source(cwd="")]), "sources[0].cwd must be a non-empty string"),
    (config(sources=[source(configDir=" ")]), "sources[0].configDir must be a non-empty string"),
    (config(sources=[source(codexBin=1)]), "sources[0].codexBin must be a non-empty string"),
    (config(sources=[source(codexHome=None)]), "sources[0].codexHome must be a non-empty string"),
    (config(sources=[source(codexSocket="")]), "sources[0].codexSocket must be a non-empty string"),
    (config(sources=[source(env=[])]), "sources[0].env must be an object"),
    (config(sources=[source(env={"BAD": 1})]), "sources[0].env.BAD must be a string"),
    (
        config(sources=[source(codexTransport="unknown")]),
        "sources[0].codexTransport is not supported",
    ),
    (config(sources=[source(codexTransport=None)]), "sources[0].codexTransport is not supported"),
    (
        config(sources=[source(allowDangerFullAccess="yes")]),
        "sources[0].allowDangerFullAccess must be a boolean",
    ),
    (
        config(collectionIntervalMs=None),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (
        config(collectionIntervalMs=-1),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (
        config(collectionIntervalMs=1.5),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (
        config(collectionIntervalMs="900000"),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (
        config(collectionIntervalMs=2147483648),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (
        config(collectionIntervalMs=True),
        "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
    ),
    (config(checkoutRoots="/workspace"), "configuration.checkoutRoots must be a string array"),
    (config(checkoutRoots=[""]), "configuration.checkoutRoots[0] must be a non-empty string"),
    (config(checkoutRoots=["/a", 5]), "configuration.checkoutRoots[1] must be a non-empty string"),
    (config(checkoutRoots=["relative"]), "configuration.checkoutRoots[0] must be an absolute path"),
    (config(checkoutRoots=["/w", "/w"]), "configuration.checkoutRoots contains a duplicate path"),
    (config(commandProducers={}), "configuration.commandProducers must be an array"),
    (config(commandProducers=[None]), "configuration.commandProducers[0] must be an object"),
    (
        config(commandProducers=[{"id": "wb", "piece": "p", "x": 1}]),
        "configuration.commandProducers[0] has an unknown field: x",
    ),
    (
        config(commandProducers=[{"id": "Workbench", "piece": "p"}]),
        "configuration.commandProducers[0].id must be a lowercase token",
    ),
    (
        config(commandProducers=[{"id": "_owner", "piece": "p"}]),
        "configuration.commandProducers[0].id must be a lowercase token",
    ),
    (
        config(commandProducers=[{"piece": "p"}]),
        "configuration.commandProducers[0].id must be a lowercase token",
    ),
    (
        config(commandProducers=[{"id": "wb", "piece": ""}]),
        "configuration.commandProducers[0].piece must be a non-empty string",
    ),
    (
        config(commandProducers=[{"id": "wb", "piece": "a"}, {"id": "wb", "piece": "b"}]),
        "configuration has duplicate command producer id: wb",
    ),
    (config(sources=[source(), source()]), "configuration has duplicate source id: codex"),
    (config(sources=[source(enabled=False)]), "configuration must enable at least one source"),
]


@pytest.mark.parametrize(("value", "message"), INVALID)
def test_invalid_configuration_messages(value: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agents_host_config(value)
    assert str(caught.value) == message
    assert caught.value.code is ErrorCode.SCHEMA_VIOLATION
    assert isinstance(caught.value, ValueError)
    assert not isinstance(caught.value, RemoteProtocolError)  # a local file is not a peer


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # unknown field beats a bad schema; schema beats sources; interval beats sources' contents
        ({"bogus": 1, "schema": "x"}, "configuration has an unknown field: bogus"),
        (
            config(schema="x", sources=[]),
            'configuration.schema must be "commonfabric.agents-host.config"',
        ),
        (
            config(sources=[], collectionIntervalMs=-1),
            "configuration.sources must be a non-empty array",
        ),
        (
            config(collectionIntervalMs=-1, sources=[None]),
            "configuration.collectionIntervalMs must be an integer from 0 through 2147483647",
        ),
        (config(sources=[None], checkoutRoots="x"), "sources[0] must be an object"),
        (
            config(sources=[source(), source()], checkoutRoots="x"),
            "configuration.checkoutRoots must be a string array",
        ),
        (
            config(sources=[source(enabled=False), source(enabled=False)]),
            "configuration has duplicate source id: codex",
        ),
        (
            config(sources=[source(id="Codex", driver="nope")]),
            'sources[0].id must already be normalized as "codex"',
        ),
    ],
)
def test_check_order(value: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agents_host_config(value)
    assert str(caught.value) == message


def test_valid_configuration_is_normalised_with_defaults() -> None:
    parsed = parse_agents_host_config(
        config(
            collectionIntervalMs=1_234,
            checkoutRoots=["/workspace/checkouts"],
            commandProducers=[{"id": "workbench", "piece": "baed-piece"}],
            sources=[
                source(
                    id="codex-work",
                    codexTransport="proxy",
                    codexSocket=" /tmp/codex.sock ",
                    cwd=" /work ",
                    command=["codex", " --profile ", "work"],
                    env={"PROFILE": "work"},
                    allowDangerFullAccess=False,
                ),
                source(id="acp-local", driver="acp", enabled=False),
            ],
        )
    )
    assert isinstance(parsed, AgentsHostConfig)
    assert parsed.collectionIntervalMs == 1_234
    assert parsed.checkoutRoots == ("/workspace/checkouts",)
    assert [p.id for p in parsed.commandProducers or ()] == ["workbench"]
    first, second = parsed.sources
    assert first.codexSocket == " /tmp/codex.sock "  # optional strings are kept untrimmed
    assert first.command == ("codex", " --profile ", "work")
    assert first.allowDangerFullAccess is False
    assert second.enabled is False
    assert second.command is None
    assert [s.id for s in parsed.enabled_sources] == ["codex-work"]
    encoded = msgspec.json.decode(msgspec.json.encode(parsed))
    assert encoded["sources"][1] == {"id": "acp-local", "driver": "acp", "enabled": False}
    assert encoded["sources"][0]["allowDangerFullAccess"] is False
    assert list(encoded) == [
        "schema",
        "ownerDid",
        "collectionIntervalMs",
        "checkoutRoots",
        "commandProducers",
        "sources",
    ]


def test_defaults_and_omissions() -> None:
    parsed = parse_agents_host_config(config(checkoutRoots=[], commandProducers=[]))
    assert parsed.collectionIntervalMs == DEFAULT_COLLECTION_INTERVAL_MS
    encoded = msgspec.json.decode(msgspec.json.encode(parsed))
    assert encoded == {
        "schema": "commonfabric.agents-host.config",
        "ownerDid": OWNER,
        "collectionIntervalMs": 900000,
        "sources": [{"id": "codex", "driver": "codex-app-server", "enabled": True}],
    }


@pytest.mark.parametrize(
    ("raw", "expected"), [(0, 0), (5.0, 5), (1e3, 1000), (2147483647, 2147483647)]
)
def test_interval_accepts_javascript_integers(raw: Any, expected: int) -> None:
    assert (
        parse_agents_host_config(config(collectionIntervalMs=raw)).collectionIntervalMs == expected
    )


def test_disabled_acp_needs_no_command_and_codex_transport_is_not_cross_checked() -> None:
    parsed = parse_agents_host_config(
        config(
            sources=[
                source(),
                source(id="acp", driver="acp", enabled=False),
                source(id="c", driver="claude-agent-sdk", codexTransport="stdio"),
            ]
        )
    )
    assert parsed.sources[2].codexTransport == "stdio"


def test_load_text_jsonc_and_syntax_error() -> None:
    text = """{
      // One source is enough for a host.
      "schema": "commonfabric.agents-host.config",
      "ownerDid": "did:key:test-owner",
      "sources": [
        { "id": "claude", "driver": "claude-agent-sdk", "enabled": true },
      ],
    }"""
    parsed = load_agents_host_config_text(text.encode(), "/etc/agents.jsonc")
    assert parsed.sources[0].id == "claude"
    with pytest.raises(ConfigFileError) as caught:
        load_agents_host_config_text(b"{ invalid", "/etc/agents.jsonc")
    first, second = str(caught.value).split("\n")
    assert first == "configuration file is not valid JSONC: /etc/agents.jsonc"
    assert second == "line 1, column 3: Expecting property name enclosed in double quotes"
    assert caught.value.code is ErrorCode.MALFORMED_FRAME


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    data = json.dumps(config(sources=[source(cwd="/x")])).encode().replace(b"/x", b"/x\xff")
    assert load_agents_host_config_text(data, "p").sources[0].cwd == "/x\ufffd"


def test_config_error_path_points_at_the_value() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agents_host_config(config(sources=[source(), source(driver="x")]))
    assert caught.value.path == "$.sources[1].driver"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def _mutations() -> st.SearchStrategy[Any]:
    keys = st.sampled_from(
        [
            "schema",
            "ownerDid",
            "collectionIntervalMs",
            "checkoutRoots",
            "commandProducers",
            "sources",
            "extra",
        ]
    )
    source_keys = st.sampled_from(
        [
            "id",
            "driver",
            "enabled",
            "command",
            "cwd",
            "env",
            "codexTransport",
            "allowDangerFullAccess",
            "x",
        ]
    )
    return st.tuples(keys, json_values, source_keys, json_values)


@settings(max_examples=examples(400))
@given(_mutations())
def test_fuzz_config_only_typed_errors(mutation: tuple[str, Any, str, Any]) -> None:
    key, value, source_key, source_value = mutation
    document = config(sources=[source(**{source_key: source_value})])
    document[key] = value
    try:
        parsed = parse_agents_host_config(document)
    except ConfigError as exc:
        assert exc.message
    else:
        assert parsed.sources


@settings(max_examples=examples(300))
@given(st.binary(max_size=80))
def test_fuzz_config_bytes_only_typed_errors(data: bytes) -> None:
    with contextlib.suppress(ConfigError, ConfigFileError):
        load_agents_host_config_text(data, "f")
