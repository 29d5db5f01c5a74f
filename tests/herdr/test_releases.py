"""Release selection within a protocol: each release's method set and request rules (issue 26).

Sources per release are in docs/protocols/herdr.md (*Releases*).
"""

from __future__ import annotations

import json
from dataclasses import replace

import msgspec
import pytest

from shedproto import herdr
from shedproto._errors import RemoteProtocolError
from shedproto.herdr import types as t

P22 = set(t.PROTOCOL_TABLES[22][0])


def _answer(version: str, line: bytes) -> dict[str, object]:
    release = herdr.release_for(22, version)
    conn = herdr.ServerConnection(protocol=22, release=release)
    with pytest.raises(RemoteProtocolError) as refused:
        conn.receive_data(line + b"\n")
    assert refused.value.reply_hint is not None
    assert conn.data_to_send() == refused.value.reply_hint
    answer: dict[str, object] = json.loads(refused.value.reply_hint)
    return answer


GRAPHICS = {f"pane.graphics.{name}" for name in ("info", "set", "clear", "stream")}
EXPECTED_LACKS = {
    "0.9.0": {"pane.link.resolve", "pane.clear", "server.ssh_agent.register"},
    "0.9.1": {"pane.clear", "server.ssh_agent.register"},
    "0.9.2": GRAPHICS,
    "0.9.3": GRAPHICS,
    "0.9.4": GRAPHICS,
    "0.9.5": GRAPHICS,
}


@pytest.mark.parametrize("version", sorted(EXPECTED_LACKS))
def test_each_protocol22_release_has_its_method_set(version: str) -> None:
    release = herdr.release_for(22, version)
    assert release.protocol == 22
    assert P22 - release.methods == EXPECTED_LACKS[version]
    assert release.retired == (GRAPHICS if version >= "0.9.2" else set())
    for method in EXPECTED_LACKS[version]:
        line = json.dumps({"id": "m", "method": method, "params": {"pane_id": "p"}}).encode()
        answer = _answer(version, line)
        if method in GRAPHICS:
            # src/api/server.rs:272-294 (retired_pane_graphics_method_error) and :367-374@3f32b738
            assert answer == {
                "id": "m",
                "error": {"code": "unknown_method", "message": f"unknown method: {method}"},
            }
            continue
        assert answer["error"] == {
            "code": "invalid_request",
            "message": f"invalid request: Invalid value '{method}' - at `$.method`",
        }


@pytest.mark.parametrize(
    ("version", "echoed"),
    [(v, "" if v in ("0.9.0", "0.9.1") else "r1") for v in sorted(EXPECTED_LACKS)],
)
def test_which_id_an_invalid_request_answer_carries(version: str, echoed: str) -> None:
    # src/api/server.rs:190@v0.8.2 answers id ""; src/api/server.rs:351-378@3f32b738
    # (handle_connection_with_stop) recovers a string id from a line starting with "{"
    assert _answer(version, b'{"id":"r1","method":"no.such","params":{}}')["id"] == echoed
    assert _answer(version, b'{"id":"r1","method":"ping"}')["id"] == echoed  # params missing
    assert _answer(version, b'{"id":7,"method":"ping","params":{}}')["id"] == ""  # not a string
    assert _answer(version, b"{not json")["id"] == ""


@pytest.mark.parametrize(
    ("version", "lost", "ends", "ssh"),
    [
        ("0.9.0", False, False, False),
        ("0.9.1", False, False, False),
        ("0.9.2", True, True, True),
        ("0.9.3", True, True, True),
        ("0.9.4", True, True, True),
        ("0.9.5", True, True, True),
    ],
)
def test_stream_endings_and_capabilities_per_release(
    version: str, lost: bool, ends: bool, ssh: bool
) -> None:
    # herdrdev/herdr src/api/subscriptions.rs:326-340 (subscription_events_after) and
    # :342-347 (event_encoding_error)@3f32b738: events_lost, server_unavailable and
    # internal_error come from one poll_batch (:282-323); src/api/subscriptions.rs:337-346@665d6d83
    # and :333-341@v0.8.2 have none (their poll skips an event it cannot encode)
    release = herdr.release_for(22, version)
    assert (release.reports_events_lost, release.stream_end_errors) == (lost, ends)
    assert release.ssh_agent_registration is ssh


def test_older_protocols_have_one_release_each_and_the_default_is_the_newest() -> None:
    assert herdr.release_for(20).version == "0.8.2"
    assert herdr.release_for(21).version == "0.9.0-preview"
    assert herdr.release_for(22).version == "0.9.5"
    assert herdr.release_for(20).methods == set(t.PROTOCOL_TABLES[20][0]) | herdr.HIDDEN_METHODS
    assert herdr.DEFAULT_RELEASES[22] == max(
        (v for v, r in herdr.RELEASES.items() if r.protocol == 22),
        key=lambda v: tuple(map(int, v.split("."))),
    )


@pytest.mark.parametrize(("protocol", "version"), [(22, "0.8.2"), (22, "9.9.9"), (20, "0.9.5")])
def test_a_release_of_another_protocol_or_unknown_is_refused(protocol: int, version: str) -> None:
    with pytest.raises(herdr.VersionMismatchError) as refused:
        herdr.release_for(protocol, version)
    assert version in refused.value.message
    assert f"protocol {protocol}:" in refused.value.message


def test_the_server_connection_refuses_a_release_of_another_protocol() -> None:
    with pytest.raises(ValueError, match="speaks protocol 20"):
        herdr.ServerConnection(protocol=22, release=herdr.release_for(20))


def test_request_id_of_reads_only_a_string_id() -> None:
    assert herdr.request_id_of(b'{"id":"x","method":1}') == "x"
    # herdrdev/herdr src/api/server.rs:356-366@3f32b738 (handle_connection_with_stop): serde
    # refuses a duplicate id, so the answer stays uncorrelated; a nested "id" is not a duplicate
    assert herdr.request_id_of(b'{"id":"a","id":"b","method":"x"}') == ""
    assert herdr.request_id_of(b'{"id":"a","params":{"id":"b"}}') == "a"
    assert herdr.request_id_of(b'{"id":null}') == ""
    assert herdr.request_id_of(b"[1]") == ""
    assert herdr.request_id_of(b"\xff") == ""


def test_hidden_methods_are_in_22_and_not_generated_for_the_schema_only_protocols() -> None:
    # herdrdev/herdr src/api/schema.rs:182-183@v0.8.2: #[schemars(skip)] on pane.graphics.stream
    assert herdr.HIDDEN_METHODS <= P22
    for protocol in (20, 21):
        assert not herdr.HIDDEN_METHODS & set(t.PROTOCOL_TABLES[protocol][0])


@pytest.mark.parametrize("protocol", [20, 21])
def test_the_schema_only_releases_parse_the_hidden_graphics_stream(protocol: int) -> None:
    # herdrdev/herdr src/api/schema.rs:182-183@v0.8.2: the variant is serde-renamed (parsed),
    # only #[schemars(skip)] leaves it out of the published schema; the server dispatches it
    # (src/api/server.rs:205, Method::PaneGraphicsStream@v0.8.2)
    release = herdr.release_for(protocol)
    assert release.methods >= herdr.HIDDEN_METHODS
    conn = herdr.ServerConnection(protocol=protocol, release=release)
    line = b'{"id":"g","method":"pane.graphics.stream","params":{"pane_id":"p","z_index":2}}'
    [request] = conn.receive_data(line + b"\n\x01\x02")
    assert isinstance(request, t.PaneGraphicsStreamRequest)
    assert (request.params.pane_id, request.params.z_index) == ("p", 2)
    assert conn.raw_stream
    assert conn.trailing == b"\x01\x02"
    # without a release the connection follows the published table: an unknown method
    bare = herdr.ServerConnection(protocol=protocol)
    with pytest.raises(RemoteProtocolError):
        bare.receive_data(line + b"\n")


def test_a_hidden_method_is_only_what_herdr_hides() -> None:
    assert herdr.hidden_request_type("pane.graphics.stream") is t.PaneGraphicsStreamRequest
    with pytest.raises(KeyError):
        herdr.hidden_request_type("pane.clear")


def test_restore_error_is_a_pane_field_after_foreground_cwd() -> None:
    # herdrdev/herdr src/api/schema/panes.rs:449-462@3f32b738 (PaneInfo; restore_error:
    # Option<String>, skip_serializing_if none, between foreground_cwd and label); the
    # AgentInfo of src/api/schema/agents.rs@b129bebc has no such field
    fields = list(t.PaneInfo.__struct_fields__)
    assert fields[fields.index("foreground_cwd") + 1] == "restore_error"
    assert "restore_error" not in t.AgentInfo.__struct_fields__
    assert "restore_error" not in t.PaneInfoP21.__struct_fields__
    pane = t.PaneInfo(
        pane_id="p", terminal_id="t", workspace_id="w", tab_id="b", focused=False,
        agent_status="idle", revision=1, restore_error="resume failed",
    )  # fmt: skip
    assert b'"restore_error":"resume failed"' in msgspec.json.encode(pane)
    cleared = msgspec.structs.replace(pane, restore_error=None)
    assert b"restore_error" not in msgspec.json.encode(cleared)


@pytest.mark.parametrize("version", ["0.9.3", "0.9.4", "0.9.5"])
def test_releases_without_a_stored_source_of_their_own_behave_as_092(version: str) -> None:
    # docs/protocols/herdr.md *Releases*: no herdrdev/herdr file is stored at 0.9.3's commit
    # (7b116c05) and nothing at all for 0.9.4 or 0.9.5, so each is 0.9.2 under its own name
    base = herdr.release_for(22, "0.9.2")
    release = herdr.release_for(22, version)
    assert release.version == version
    assert release.differences.startswith("as 0.9.2")
    assert replace(release, version=base.version, differences=base.differences) == base
