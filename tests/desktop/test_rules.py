"""Pure rules: argv splitting, the host-id grammar, launch fields, codes, paths."""

from __future__ import annotations

import pytest

from shedproto.desktop import (
    CATALOGUE,
    CodeFamily,
    DesktopCode,
    DesktopError,
    Dialect,
    Gate,
    HostIdError,
    LaunchPolicy,
    Release,
    code_family,
    codes_match,
    env_test_mode,
    launch_fields,
    launch_target,
    mac_socket_path,
    normalize_code,
    ops_for,
    parse_host_id,
    release_has_op,
    resolve_client_socket,
    run_command,
    split_argv,
    tauri_socket_path,
)

KINDS = {"claude", "codex", "claude-broker"}


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("codex --model x", ["codex", "--model", "x"]),
        ("a\tb", ["a", "b"]),
        ("a\nb\rc\x0cd", ["a", "b", "c", "d"]),
        ("  lead   trail  ", ["lead", "trail"]),
        ("a\x0bb", ["a\x0bb"]),  # VT is not ASCII whitespace to Rust
        ("a\u00a0b", ["a\u00a0b"]),  # NBSP does not split
        ("a\u2003b c", ["a\u2003b", "c"]),
        ("say 'a b'", ["say", "'a", "b'"]),
        ('echo "$HOME" | wc', ["echo", '"$HOME"', "|", "wc"]),
        ("", []),
    ],
)
def test_split_argv(command: str, argv: list[str]) -> None:
    assert split_argv(command) == argv


def test_split_argv_is_not_str_split() -> None:
    assert ["a", "b"] == ["a", "b"]
    assert split_argv("a\x0bb") == ["a\x0bb"]


@pytest.mark.parametrize("blank", ["", "   ", "  \t \n", "\r\x0c"])
def test_run_command_blank_is_bad_request(blank: str) -> None:
    with pytest.raises(DesktopError) as info:
        run_command(blank)
    assert info.value.code == "bad_request"
    assert "'command'" in info.value.message


@pytest.mark.parametrize(
    ("text", "kind", "origin", "address"),
    [
        ("roost:srv/shed1", "shed", "roost:srv/shed1", "roost:srv/shed1"),
        ("machine:mini", "machine", "machine:mini", "mini"),
        ("  mini  ", "machine", "machine:mini", "mini"),
        ("localhost", "machine", "machine:localhost", "localhost"),
    ],
)
def test_host_id_grammar(text: str, kind: str, origin: str, address: str) -> None:
    host = parse_host_id(text)
    assert (host.kind, host.origin, host.address) == (kind, origin, address)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "an empty host id names nothing"),
        ("   ", "an empty host id names nothing"),
        ("roost:/x", '"roost:/x" names no server (want roost:<server>/<shed>)'),
        (" roost:srv ", '"roost:srv" names no server (want roost:<server>/<shed>)'),
        ("roost:srv/", '"roost:srv/" names no server (want roost:<server>/<shed>)'),
        ('roost:a"\tb', '"roost:a\\"\\tb" names no server (want roost:<server>/<shed>)'),
        ("machine:", '"machine:" names no machine'),
    ],
)
def test_host_id_errors(text: str, message: str) -> None:
    with pytest.raises(HostIdError) as info:
        parse_host_id(text)
    assert str(info.value) == message


def test_bare_words_are_machines_verbatim() -> None:
    assert parse_host_id("shed:a/b").name == "shed:a/b"
    assert parse_host_id("two words").origin == "machine:two words"
    nested = parse_host_id("roost:a/b/c")
    assert (nested.server, nested.name) == ("a", "b/c")


def test_launch_target_prefers_target_then_machine() -> None:
    assert launch_target("roost:a/b", "m") == "roost:a/b"
    assert launch_target(None, "m") == "m"
    with pytest.raises(DesktopError, match="missing 'machine'"):
        launch_target(None, None)


def test_tauri_launch_blank_is_absent_and_extras_ignored() -> None:
    fields = launch_fields(
        Dialect.TAURI,
        kind="claude",
        raw={"workdir": "  ", "display_name": " T ", "initial_prompt": "hi", "permission_mode": 3},
        known_kinds=KINDS,
    )
    assert (fields.kind, fields.workdir, fields.display_name, fields.initial_prompt) == (
        "claude",
        None,
        "T",
        None,
    )


def test_tauri_launch_kind_rules() -> None:
    with pytest.raises(DesktopError, match="missing or invalid 'kind'") as info:
        launch_fields(Dialect.TAURI, kind=None, raw={}, known_kinds=KINDS)
    assert info.value.code == "bad_request"
    with pytest.raises(DesktopError, match="unknown rc kind 'vim'"):
        launch_fields(Dialect.TAURI, kind="vim", raw={}, known_kinds=KINDS)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"initial_prompt": "do it"}, "initial_prompt is not supported by a roost launch"),
        ({"initial_prompt": ["x"]}, "initial_prompt is not supported"),
        ({"permission_mode": "plan"}, "permission_mode is not supported by a roost launch"),
        ({"permission_mode": 1}, "permission_mode is not supported"),
    ],
)
def test_refuse_extras_policy(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(DesktopError, match=fragment) as info:
        launch_fields(
            Dialect.TAURI,
            kind="claude",
            raw=raw,
            known_kinds=KINDS,
            policy=LaunchPolicy.REFUSE_EXTRAS,
        )
    assert info.value.code == "bad_request"


def test_refuse_extras_blank_is_absent() -> None:
    fields = launch_fields(
        Dialect.TAURI,
        kind="claude",
        raw={"initial_prompt": "  ", "permission_mode": ""},
        known_kinds=KINDS,
        policy=LaunchPolicy.REFUSE_EXTRAS,
    )
    assert fields.kind == "claude"


def test_mac_launch_defaults_kind_and_validates_prompt() -> None:
    fields = launch_fields(
        Dialect.MAC, kind=None, raw={"initial_prompt": "  hello \n"}, known_kinds=KINDS
    )
    assert (fields.kind, fields.initial_prompt) == ("claude", "hello")
    for raw, kind in (
        ({"initial_prompt": "a\x07b"}, None),
        ({"initial_prompt": "é" * 1001}, None),
        ({"initial_prompt": "hi"}, "claude-broker"),
    ):
        with pytest.raises(DesktopError) as info:
            launch_fields(Dialect.MAC, kind=kind, raw=raw, known_kinds=KINDS)
        assert info.value.code == "invalid-param"
    ok = launch_fields(
        Dialect.MAC, kind=None, raw={"initial_prompt": "x" * 2000}, known_kinds=KINDS
    )
    assert ok.initial_prompt == "x" * 2000


def test_code_normaliser_matches_across_dialects() -> None:
    assert normalize_code("not-enabled") == normalize_code("not_enabled") == "not_enabled"
    assert codes_match("unknown-op", DesktopCode.UNKNOWN_OP_T)
    assert not codes_match("unknown-op", "unknown_field")
    assert DesktopCode.INVALID_PARAM.family is CodeFamily.MAC_ENVELOPE
    assert code_family("bad_request") is CodeFamily.OP
    assert code_family("frame_too_large") is CodeFamily.TAURI_ENVELOPE
    assert code_family("unsupported_lane") is CodeFamily.LANE
    assert code_family("brand-new") is None
    error = DesktopError("not-enabled", "x")
    assert error.matches(DesktopCode.NOT_ENABLED_T)
    assert error.normalized == "not_enabled"


def test_catalogue_shape() -> None:
    assert CATALOGUE["policy.set"].mac is not None
    assert CATALOGUE["policy.set"].mac.gate is Gate.TEST_ONLY
    assert CATALOGUE["roost.run"].mac is None
    assert CATALOGUE["machine.launch"].alias_of == "roost.launch"
    # v0.0.14 only: tauri/src-tauri/src/ipc.rs:226, IPCHandlerImpl.swift:112@5a762e8
    assert CATALOGUE["rc.classify"].dialects == {Dialect.MAC, Dialect.TAURI}
    assert not release_has_op(Release.LATEST, Dialect.TAURI, "rc.classify")
    assert release_has_op(Release.V0_0_14, Dialect.MAC, "rc.classify")
    assert "ui.state" in ops_for(Dialect.MAC)
    assert "ui.state" not in ops_for(Dialect.TAURI)
    assert CATALOGUE["terminal.open"].tauri is not None
    assert CATALOGUE["terminal.open"].tauri.gate is Gate.REFUSED_IN_TEST
    tm_tauri = {n for n in ops_for(Dialect.TAURI) if CATALOGUE[n].tauri.gate is Gate.TEST_ONLY}  # type: ignore[union-attr]
    assert {"policy.set", "rc.inject_test", "ui.fill_launch", "ui.hold_lane_view"} <= tm_tauri


def test_socket_paths() -> None:
    assert mac_socket_path("/Users/a") == "/Users/a/Library/Caches/ShedDesktop/shed-desktop.sock"
    assert tauri_socket_path({"SHED_TAURI_SOCKET": "/x.sock"}, 5) == "/x.sock"
    assert tauri_socket_path({"SHED_TAURI_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/5"}, 5) == (
        "/run/user/5/shed-tauri.sock"
    )
    assert tauri_socket_path({"XDG_RUNTIME_DIR": ""}, 5) == "/tmp/shed-tauri-5/shed-tauri.sock"
    env = {"SHED_DESKTOP_SOCKET": "/d.sock", "SHED_TAURI_SOCKET": "/t.sock"}

    def resolve(env: dict[str, str], platform: str, explicit: str | None = None) -> str:
        return resolve_client_socket(env, uid=5, home="/h", platform=platform, explicit=explicit)

    assert resolve(env, "linux") == "/d.sock"
    assert resolve(env, "linux", "/e") == "/e"
    assert resolve({}, "darwin") == mac_socket_path("/h")
    assert resolve({}, "linux") == "/tmp/shed-tauri-5/shed-tauri.sock"
    assert resolve({"SHED_TAURI_SOCKET": "/t"}, "darwin") == "/t"


def test_test_mode_env_is_exactly_one() -> None:
    assert env_test_mode(Dialect.TAURI, {"SHED_TAURI_TEST_MODE": "1"})
    assert not env_test_mode(Dialect.TAURI, {"SHED_TAURI_TEST_MODE": "true"})
    assert not env_test_mode(Dialect.TAURI, {"SHED_DESKTOP_TEST_MODE": "1"})
    assert env_test_mode(Dialect.MAC, {"SHED_DESKTOP_TEST_MODE": "1"})


def test_params_dict_leaves_none_out_and_keeps_false() -> None:
    from shedproto.desktop import types as ops
    from shedproto.desktop._params import params_dict

    params = ops.ApprovalDecideParams(id="a1", decision="deny", ttl=None, persist=False)
    assert params_dict(params) == {"id": "a1", "decision": "deny", "persist": False}
    create = ops.CrazeCreateParams(machine="m", cwd="/src", request_id="r-1")
    assert params_dict(create) == {"machine": "m", "cwd": "/src", "request_id": "r-1"}
