"""Pure rules: socket paths, ids, keys, versions, subscription names, the screen model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shedproto import ErrorCode, LocalProtocolError, herdr
from shedproto.herdr import types as t
from shedproto.herdr._screen import (
    ReadOutcome,
    clamp_lines,
    join_rows,
    limit_lines,
    recent_window,
    split_lines,
    strip_ansi,
    stripped_terminal_title,
    trim_trailing_blank_rows,
)

HOME = {"HOME": "/home/u"}


# ---------------------------------------------------------------- paths
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"XDG_CONFIG_HOME": "/x"}, "/x/herdr"),
        ({"XDG_CONFIG_HOME": "", "HOME": "/home/u"}, "herdr"),  # empty counts as set
        (HOME, "/home/u/.config/herdr"),
        ({}, "/tmp/herdr"),
    ],
)
def test_config_dir(env: dict[str, str], expected: str) -> None:
    assert herdr.config_dir(env) == expected
    assert herdr.config_dir(env, platform="darwin") == expected  # never ~/Library


def test_config_dir_debug_build_and_windows() -> None:
    assert herdr.config_dir(HOME, debug_build=True) == "/home/u/.config/herdr-dev"
    assert herdr.config_dir({"APPDATA": "C:\\A"}, platform="win32") == "C:\\A\\herdr"
    assert (
        herdr.config_dir({"USERPROFILE": "C:\\U"}, platform="win32")
        == "C:\\U\\AppData\\Roaming\\herdr"
    )
    assert herdr.config_dir({}, platform="win32", temp_dir="C:\\T") == "C:\\T\\herdr"


@pytest.mark.parametrize(
    ("env", "session", "expected"),
    [
        (HOME, None, "/home/u/.config/herdr/herdr.sock"),
        ({**HOME, "HERDR_SOCKET_PATH": "/run/h.sock"}, None, "/run/h.sock"),
        ({**HOME, "HERDR_SOCKET_PATH": ""}, None, ""),  # empty still counts as set
        ({**HOME, "HERDR_SESSION": "work"}, None, "/home/u/.config/herdr/sessions/work/herdr.sock"),
        ({**HOME, "HERDR_SESSION": "default"}, None, "/home/u/.config/herdr/herdr.sock"),
        (
            {**HOME, "HERDR_SESSION": "../x"},
            None,
            "/home/u/.config/herdr/herdr.sock",
        ),  # invalid: ignored
        (
            {**HOME, "HERDR_SOCKET_PATH": "/run/h.sock", "HERDR_SESSION": "work"},
            None,
            "/run/h.sock",
        ),
        (
            {**HOME, "HERDR_SOCKET_PATH": "/run/h.sock"},
            "dev",
            "/home/u/.config/herdr/sessions/dev/herdr.sock",
        ),
        ({**HOME, "HERDR_SESSION": "work"}, "default", "/home/u/.config/herdr/herdr.sock"),
    ],
)
def test_api_socket_path(env: dict[str, str], session: str | None, expected: str) -> None:
    assert herdr.api_socket_path(env, session=session) == expected


@pytest.mark.parametrize(
    ("api", "client"),
    [
        ("/tmp/test-herdr.sock", "/tmp/test-herdr-client.sock"),
        ("/tmp/custom-api", "/tmp/custom-api-client.sock"),
        ("/tmp/a.b.sock", "/tmp/a.b-client.sock"),
        ("/tmp/x.json", "/tmp/x-client.sock"),
        ("/tmp/.hidden", "/tmp/.hidden-client.sock"),
        ("/tmp/x.sock/", "/tmp/x-client.sock"),
        ("x.sock", "x-client.sock"),
        ("/x.sock", "/x-client.sock"),
        ("/", "herdr-client.sock"),
        ("", "herdr-client.sock"),
        ("/tmp/..", "/tmp/herdr-client.sock"),
    ],
)
def test_client_socket_derivation(api: str, client: str) -> None:
    assert herdr.derive_client_socket_path(api) == client


def test_client_socket_path_precedence() -> None:
    both = {**HOME, "HERDR_SOCKET_PATH": "/r/a.sock", "HERDR_CLIENT_SOCKET_PATH": "/r/legacy.sock"}
    assert herdr.client_socket_path(both) == "/r/a-client.sock"
    legacy = {**HOME, "HERDR_CLIENT_SOCKET_PATH": "/r/legacy.sock"}
    assert herdr.client_socket_path(legacy) == "/r/legacy.sock"
    assert herdr.client_socket_path(HOME) == "/home/u/.config/herdr/herdr-client.sock"
    assert (
        herdr.client_socket_path(both, session="s1")
        == "/home/u/.config/herdr/sessions/s1/herdr-client.sock"
    )


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a b", "é", "x" * 65])
def test_invalid_session_names(name: str) -> None:
    with pytest.raises(LocalProtocolError) as info:
        herdr.validate_session_name(name)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    with pytest.raises(LocalProtocolError):
        herdr.api_socket_path(HOME, session=name)


@pytest.mark.parametrize("name", ["a", "A.b_c-9", "x" * 64, "..."])
def test_valid_session_names(name: str) -> None:
    herdr.validate_session_name(name)
    assert herdr.normalize_session_name(name) == name
    assert herdr.normalize_session_name("default") is None


# ---------------------------------------------------------------- ids
def test_public_numbers() -> None:
    assert [herdr.encode_public_number(n) for n in (1, 9, 10, 31, 32, 33, 1056)] == [
        "1", "9", "A", "Z", "0", "11", "00",
    ]  # fmt: skip
    assert herdr.workspace_id(1) == "w1"
    assert herdr.tab_id("w1", 1) == "w1:t1"
    assert herdr.pane_id("wA", 2) == "wA:p2"
    assert herdr.decode_public_number("I") is None
    assert herdr.decode_public_number("") == 0
    with pytest.raises(ValueError, match="negative"):
        herdr.encode_public_number(-1)


@given(st.integers(min_value=1, max_value=10**12))
def test_public_numbers_round_trip(n: int) -> None:
    assert herdr.decode_public_number(herdr.encode_public_number(n)) == n


def test_id_refs_parse_legacy_forms() -> None:
    assert herdr.parse_workspace_ref("w_3").index == 2
    assert herdr.parse_workspace_ref("2").index == 1
    assert herdr.parse_workspace_ref("w1").index is None
    tab = herdr.parse_tab_ref("w1:t2")
    assert tab is not None
    assert (tab.workspace.id, tab.number) == ("w1", 2)
    legacy_tab = herdr.parse_tab_ref("t_w1_2")
    assert legacy_tab is not None
    assert legacy_tab.index == 1
    position = herdr.parse_tab_ref("w1:3")
    assert position is not None
    assert position.index == 2
    assert herdr.parse_tab_ref("w1") is None
    pane = herdr.parse_pane_ref("w1:pA")
    assert pane is not None
    assert pane.number == 10
    dash = herdr.parse_pane_ref("w1-4")
    assert dash is not None
    assert dash.number == 4
    assert herdr.parse_pane_ref("w1:pI") is None


# ---------------------------------------------------------------- keys
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("enter", b"\r"),
        ("Return", b"\r"),
        ("esc", b"\x1b"),
        ("tab", b"\t"),
        ("shift+tab", b"\x1b[Z"),
        ("backspace", b"\x7f"),
        ("ctrl+c", b"\x03"),
        ("C-c", b"\x03"),
        ("ctrl+[", b"\x1b"),
        ("ctrl+space", b"\x00"),
        ("alt+x", b"\x1bx"),
        ("up", b"\x1b[A"),
        ("ctrl+up", b"\x1b[1;5A"),
        ("shift+alt+left", b"\x1b[1;4D"),
        ("f1", b"\x1bOP"),
        ("f5", b"\x1b[15~"),
        ("ctrl+f5", b"\x1b[15;5~"),
        ("shift+f2", b"\x1b[1;2Q"),
        ("minus", b"-"),
        ("+", b"+"),
        ("plus", b"+"),
        ("A", b"A"),
        ("shift+a", b"A"),
        ("space", b" "),
        ("é", "é".encode()),
    ],
)
def test_key_bytes(key: str, expected: bytes) -> None:
    assert herdr.encode_keys([key]) == expected


@pytest.mark.parametrize("key", ["not-a-key", "ctrl+", "home", "ctrl+a+b", "", "fx", "f256"])
def test_unknown_keys(key: str) -> None:
    with pytest.raises(herdr.UnsupportedKeyError) as info:
        herdr.encode_keys(["enter", key])
    assert str(info.value) == f"unsupported key {key}"
    assert info.value.key == key


# ---------------------------------------------------------------- versions
def test_supported_protocols() -> None:
    assert herdr.SUPPORTED_PROTOCOLS == (20, 21, 22)
    assert herdr.DEFAULT_PROTOCOL == 22
    assert herdr.HERDR_VERSIONS == {20: "0.8.2", 21: "0.9.0-preview", 22: "0.9.5"}


def test_exact_rule_names_both_versions() -> None:
    herdr.check_exact(21, 21)
    with pytest.raises(herdr.VersionMismatchError) as newer:
        herdr.check_exact(21, 20)
    assert (newer.value.ours, newer.value.theirs) == (21, 20)
    assert "21" in str(newer.value)
    assert "20" in str(newer.value)
    assert "restart the Herdr server" in newer.value.message
    with pytest.raises(herdr.VersionMismatchError) as older:
        herdr.check_exact(20, 22)
    assert older.value.code is ErrorCode.VERSION_UNSUPPORTED
    assert "upgrade the Herdr client" in older.value.message


def test_looser_per_method_check() -> None:
    ok = herdr.check_methods(21, 20, ["ping", "workspace.create", "pane.read"])
    assert (ok.ours, ok.theirs, ok.exact) == (21, 20, False)
    with pytest.raises(herdr.VersionMismatchError) as info:
        herdr.check_methods(21, 20, ["ping", "workspace.close"])
    assert info.value.methods == ("workspace.close",)
    with pytest.raises(herdr.VersionMismatchError):
        herdr.check_methods(21, 23, ["ping"])
    assert "pane.graphics.info" in herdr.differing_methods(20, 21)
    new = set(herdr.differing_methods(22, 21))
    assert {"ping", "workspace.create", "integration.list", "pane.scroll"} <= new
    assert "pane.read" not in new
    assert herdr.differing_methods(21, 21) == ()


# ---------------------------------------------------------------- subscriptions
def test_subscription_names() -> None:
    assert herdr.LIFECYCLE_SUBSCRIPTIONS["workspace.created"] == "workspace_created"
    assert herdr.LIFECYCLE_SUBSCRIPTIONS["pane.agent_detected"] == "pane_agent_detected"
    assert "pane.output_changed" not in herdr.LIFECYCLE_SUBSCRIPTIONS
    assert len(herdr.LIFECYCLE_SUBSCRIPTIONS) == 24
    assert herdr.event_kind(t.TabCreatedSubscription()) == "tab_created"
    matched = t.PaneOutputMatchedSubscription(
        pane_id="w1:p1", source="recent", match=t.SubstringOutputMatch(value="x")
    )
    assert herdr.event_kind(matched) == "pane.output_matched"
    assert herdr.is_parameterized(matched)
    assert not herdr.is_parameterized(t.TabCreatedSubscription())


# ---------------------------------------------------------------- read arithmetic
def test_limit_lines_keeps_endings_and_reports_omissions() -> None:
    assert limit_lines("one\ntwø\n三\n", 2) == ReadOutcome("twø\n三\n", True)
    assert limit_lines("one\ntwo\nthree", 1) == ReadOutcome("three", True)
    assert limit_lines("one\ntwo", 0) == ReadOutcome("", True)
    assert limit_lines("", 2) == ReadOutcome("", False)
    assert limit_lines("one\ntwo\n", None) == ReadOutcome("one\ntwo\n", False)
    assert limit_lines("one\ntwo\n", 2) == ReadOutcome("one\ntwo\n", False)


def test_text_assembly_helpers() -> None:
    assert join_rows(["a", "b"]) == "a\nb\n"
    assert join_rows([]) == ""
    assert trim_trailing_blank_rows(["a", "", "  ", "b", " ", ""]) == ["a", "", "  ", "b"]
    assert split_lines("a\n\nb\n") == ["a", "", "b"]
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("") == []
    assert clamp_lines(5000) == 1000
    assert clamp_lines(None) is None
    assert strip_ansi("\x1b]0;title\x07a\x1b[1mb\x1bP+q\x1b\\c") == "abc"


def test_recent_window() -> None:
    # primary: ends at the lower of cursor and last content row
    window = recent_window(
        total_rows=30, screen_rows=10, cursor_row=2, last_content_row=5, lines=4, alternate=False
    )
    assert window == range(22, 26)
    window = recent_window(
        total_rows=30, screen_rows=10, cursor_row=8, last_content_row=5, lines=100, alternate=False
    )
    assert window == range(29)
    blank = recent_window(
        total_rows=10, screen_rows=10, cursor_row=0, last_content_row=None, lines=3, alternate=False
    )
    assert blank == range(7, 10)
    alternate = recent_window(
        total_rows=10, screen_rows=10, cursor_row=0, last_content_row=1, lines=3, alternate=True
    )
    assert alternate == range(7, 10)
    assert not recent_window(
        total_rows=10, screen_rows=10, cursor_row=0, last_content_row=1, lines=0, alternate=False
    )


def test_stripped_terminal_title() -> None:
    assert stripped_terminal_title("✳ Claude Code") == "Claude Code"
    assert stripped_terminal_title("  ⠙   task  ") == "task"
    assert stripped_terminal_title("✳") is None
    assert stripped_terminal_title("✳task") == "✳task"  # the glyph must stand alone
    assert stripped_terminal_title("vim ✳ x") == "vim ✳ x"
    assert stripped_terminal_title("   ") is None


def test_agent_start_rules_live_in_the_core() -> None:
    kinds = {"claude"}
    assert herdr.agent_start_error("pi", "claude", kinds, None, ["--x"]) is None
    cases = [
        (("Bad", "claude", None, []), "invalid_agent_name"),
        (("pi", "nope", None, []), "unsupported_agent_kind"),
        (("pi", "claude", 3000, []), "invalid_agent_timeout"),
        (("pi", "claude", 300_001, []), "invalid_agent_timeout"),
        (("pi", "claude", 300_000, ["a\nb"]), "invalid_agent_argument"),
    ]
    for (name, kind, timeout, args), code in cases:
        failure = herdr.agent_start_error(name, kind, kinds, timeout, args)
        assert failure is not None
        assert failure[0].value == code
    assert herdr.agent_name_error("a" * 33) is not None


def test_worktree_argv_never_lets_a_request_value_become_a_git_option() -> None:
    assert herdr.option_shaped("feature", None) is None
    assert herdr.option_shaped("feature", "--upload-pack=x") == "--upload-pack=x"
    assert herdr.option_shaped("-b", "main") == "-b"
    assert herdr.branch_exists_args("a/b") == ["show-ref", "--verify", "--quiet", "refs/heads/a/b"]
    assert herdr.worktree_add_args("/r/x", "b", "main", branch_exists=True) == [
        "worktree", "add", "--", "/r/x", "b",
    ]  # fmt: skip
    assert herdr.worktree_add_args("/r/x", "b", "main", branch_exists=False) == [
        "worktree", "add", "-b", "b", "--", "/r/x", "main",
    ]  # fmt: skip
    assert herdr.worktree_add_args("/r/x", "b", None, branch_exists=False)[-2:] == ["--", "/r/x"]
    assert herdr.worktree_remove_args("/r/x", True) == [
        "worktree",
        "remove",
        "--force",
        "--",
        "/r/x",
    ]
    assert herdr.worktree_remove_args("/r/x", False) == ["worktree", "remove", "--", "/r/x"]


def test_worktree_checkout_path_resolves_in_the_repository() -> None:
    assert herdr.checkout_path("/repo", "../side", "/h/.herdr/worktrees", "repo", "b") == (
        "/repo/../side"
    )
    assert herdr.checkout_path("/repo", "/abs/x", "/w", "repo", "b") == "/abs/x"
    assert herdr.checkout_path("/repo", None, "/w", "repo", "Feature/X") == "/w/repo/feature-x"


def test_worktree_infos_from_git_output() -> None:
    source = herdr.worktree_source("/src/app/sub", "/src/app/.git", "w1")
    assert (source.repo_root, source.repo_name, source.repo_key) == (
        "/src/app", "app", "/src/app/.git",
    )  # fmt: skip
    assert source.source_checkout_path == "/src/app/sub"
    bare = herdr.worktree_source("/srv/app.git", "/srv/app.git", None)
    assert (bare.repo_root, bare.repo_name) == ("/srv/app.git", "app.git")
    main, linked = herdr.parse_worktree_list(
        "worktree /src/app\nHEAD 1\nbranch refs/heads/main\n\n"
        "worktree /w/app/b\nHEAD 2\ndetached\nprunable gone\n"
    )
    info = herdr.worktree_info(main, "/src/app", "w1")
    assert (info.is_linked_worktree, info.branch, info.open_workspace_id, info.label) == (
        False, "main", "w1", "app",
    )  # fmt: skip
    other = herdr.worktree_info(linked, "/src/app", None)
    assert (other.is_linked_worktree, other.is_detached, other.is_prunable) == (True, True, True)
    removed = herdr.removed_worktree("/w/app/b")
    assert removed == t.WorktreeInfo(
        path="/w/app/b", is_bare=False, is_detached=False, is_prunable=False,
        is_linked_worktree=True, label="b",
    )  # fmt: skip
