"""The newer Tauri app's RC kinds: ``rc.launch``/``roost.launch`` and ``rc.inject_test``.

The socket handler is charliek/shed ``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef``:
``rc_kind`` (286-294) and ``ensure_known_kind`` (277-283) read every launch's ``kind``;
``roost_launch`` (1427-1445), ``rc_launch`` (1828-1843, after ``shed_target``,
1808-1816), ``rc_inject_test`` (1868-1878) and ``build_inject_row`` (1882-1910). The
host layer is ``roost_hosts.rs@9668981``: ``RoostHosts::launch`` (1391-1416) registers
the host, then ``create`` reaches it and ``open_params`` refuses a kind with no recipe;
``RoostHosts::inject_test`` (1709-1742, its refusal at 1713-1718),
``InjectedRow::into_session`` (3391-3414) and ``roost_source`` (3428-3434), whose
exhaustive match names the kinds and whose doc says the kinds without a roost adapter
are the kinds ``launch_argv`` refuses. A row's ``kind`` is shed-core
``RoostSession::agent_kind`` (``crates/shed-core/src/roost/model.rs:239-254@0041e17``, the
newest stored version: roost's ``claude`` is ``claude-rc`` at 244, as in every stored
version), so it is the kind launched or injected.
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import Dialect
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer, failed, web_model

TAURI = Dialect.TAURI
WEB = {"shed": "web", "slug": "4"}


def _rows(model: DesktopModel) -> list[dict[str, Any]]:
    reply = answer(TAURI, model, "rc.list", {})
    assert reply["ok"] is True, reply
    return [row for row in reply["result"]["sessions"] if row["origin"] == "roost:prod/web"]


@pytest.mark.parametrize("kind", [None, 5, True, ["claude-rc"]])
def test_a_null_or_non_string_kind_is_missing_or_invalid(kind: Any) -> None:
    """``build_inject_row`` reads ``kind`` through ``rc_kind`` whenever the key is present:
    ``as_str`` fails on a ``null`` or a non-string (ipc.rs:1898-1901,286-294@2cd01ef)."""
    reply = answer(TAURI, web_model(), "rc.inject_test", {**WEB, "kind": kind})
    assert failed(reply) == ("bad_request", "missing or invalid 'kind'")


@pytest.mark.parametrize("kind", ["claude", "codex", "borg", "Claude-RC"])
def test_a_string_that_is_no_rc_kind_is_unknown(kind: str) -> None:
    """``rc_kind``: ``RcKind::from_wire`` keeps it as ``Other``, ``ensure_known_kind`` refuses
    it ``unknown rc kind '<k>'`` (ipc.rs:277-283,286-294@2cd01ef). roost's agent names are
    not RC kinds."""
    reply = answer(TAURI, web_model(), "rc.inject_test", {**WEB, "kind": kind})
    assert failed(reply) == ("bad_request", f"unknown rc kind '{kind}'")


@pytest.mark.parametrize("kind", ["claude-broker", "craze", "shell"])
def test_a_known_kind_without_a_roost_adapter_is_refused_by_name(kind: str) -> None:
    """roost_hosts.rs:1713-1718@9668981: ``roost_source`` has no source for it
    (3428-3434), so the tab would be unowned, and an unowned tab is no row."""
    model = web_model()
    reply = answer(TAURI, model, "rc.inject_test", {**WEB, "kind": kind})
    assert failed(reply) == (
        "bad_request",
        f'roost has no adapter for kind "{kind}", so an injected {kind} tab is unowned'
        " — and an unowned tab is not a session row",
    )
    assert _rows(model) == []


def test_an_absent_kind_is_claude_rc_and_the_row_reads_it_back() -> None:
    """``build_inject_row``: no ``kind`` key is ``RcKind::ClaudeRc``, the title the slug, the
    cwd ``/home/shed``; the row's ``kind`` is ``agent_kind`` of roost's ``claude``."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", WEB)["result"] == {}
    (row,) = _rows(model)
    assert (row["kind"], row["slug"]) == ("claude-rc", "4")
    assert (row["display_name"], row["workdir"]) == ("4", "/home/shed")


def test_opencode_injects_an_opencode_row_with_its_own_title_and_cwd() -> None:
    """``roost_source``: ``opencode`` is roost's ``opencode`` (roost_hosts.rs:3428-3434@9668981)."""
    model = web_model()
    params = {**WEB, "kind": "opencode", "display_name": "t", "workdir": "/w"}
    assert answer(TAURI, model, "rc.inject_test", params)["result"] == {}
    (row,) = _rows(model)
    assert (row["kind"], row["display_name"], row["workdir"]) == ("opencode", "t", "/w")


def test_the_host_is_resolved_before_the_slug_is_read() -> None:
    """``rc_inject_test``: ``shed_target`` (``shed``, then the host) before
    ``build_inject_row`` reads ``slug`` (ipc.rs:1872-1873,1886@2cd01ef)."""
    reply = answer(TAURI, web_model(), "rc.inject_test", {"shed": "web", "host": "nope"})
    assert failed(reply) == ("bad_request", "no configured host: nope")
    assert failed(answer(TAURI, web_model(), "rc.inject_test", {"shed": "web"})) == (
        "bad_request",
        "missing 'slug'",
    )


@pytest.mark.parametrize(
    "slug", [" 4", "4 ", "x", "", "٤", "9223372036854775808", "1" * 5000, "-" + "9" * 5000]
)
def test_the_slug_must_parse_as_an_i64_untrimmed(slug: str) -> None:
    """``build_inject_row``: ``slug.parse::<i64>()``, as sent (no ``trim``), before the kind."""
    reply = answer(TAURI, web_model(), "rc.inject_test", {**WEB, "slug": slug, "kind": 5})
    assert reply["error"]["code"] == "bad_request"
    assert reply["error"]["message"].endswith("is not a roost tab id")
    assert reply["error"]["message"].startswith("slug ")


def test_a_signed_slug_is_the_tab_id_it_parses_to() -> None:
    """``i64`` parsing takes a sign: ``+7`` is tab 7, and the row's slug is the id's text."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", {**WEB, "slug": "+7"})["result"] == {}
    assert [row["slug"] for row in _rows(model)] == ["7"]


def test_a_shed_its_server_has_not_listed_is_refused_after_the_adapter() -> None:
    """``inject_test`` runs ``ensure_registered`` after the adapter check (1709-1742@9668981):
    an unlisted shed is ``ssh_entry``'s refusal, ``bad_request`` as every inject error."""
    reply = answer(TAURI, web_model(), "rc.inject_test", {"shed": "gone", "slug": "4"})
    code, message = failed(reply)
    assert code == "bad_request"
    assert message.startswith('no shed "gone" on server "prod"')
    shell = answer(
        TAURI, web_model(), "rc.inject_test", {"shed": "gone", "slug": "4", "kind": "shell"}
    )
    assert failed(shell)[1].startswith('roost has no adapter for kind "shell"')


def test_injecting_a_tab_again_replaces_its_row() -> None:
    """``inject_test`` drops the host's row with the same tab id before it pushes the new one."""
    model = web_model()
    answer(TAURI, model, "rc.inject_test", {**WEB, "display_name": "first"})
    answer(TAURI, model, "rc.inject_test", {**WEB, "kind": "opencode", "display_name": "second"})
    assert [(row["kind"], row["display_name"]) for row in _rows(model)] == [("opencode", "second")]


@pytest.mark.parametrize("word", ["asleep", "Working", ""])
def test_a_lifecycle_roost_does_not_have_is_refused_before_the_adapter(word: str) -> None:
    """``InjectedRow::into_session`` (roost_hosts.rs:3391-3414@9668981) reads ``lifecycle`` as
    roost's ``AgentLifecycle`` (charliek/roost crates/roost-ipc/src/agent.rs:38-49@7ed439a:
    ``inactive``, ``working``, ``waiting``, ``finished``, ``failed``), after the kind is read
    and before the adapter check (1712-1713)."""
    refusal = ("bad_request", f'"{word}" is not a roost agent_lifecycle')
    assert failed(answer(TAURI, web_model(), "rc.inject_test", {**WEB, "lifecycle": word})) == (
        refusal
    )
    shell = {**WEB, "kind": "shell", "lifecycle": word}
    assert failed(answer(TAURI, web_model(), "rc.inject_test", shell)) == refusal
    borg = {**WEB, "kind": "borg", "lifecycle": word}
    assert failed(answer(TAURI, web_model(), "rc.inject_test", borg)) == (
        "bad_request",
        "unknown rc kind 'borg'",
    )


@pytest.mark.parametrize("word", ["inactive", "working", "waiting", "finished", "failed"])
def test_roost_s_lifecycle_words_inject(word: str) -> None:
    """A string ``lifecycle`` roost knows is taken (a non-string reads as absent: ``opt``)."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", {**WEB, "lifecycle": word})["result"] == {}
    activity = {"working": "working", "waiting": "needs_input", "finished": "idle"}
    activity["failed"] = "needs_input"  # RoostSession::activity; inactive claims none
    assert [row.get("activity") for row in _rows(model)] == [activity.get(word)]


def _launch(op: str, kind: Any, model: DesktopModel | None = None, **extra: Any) -> Any:
    params = {"target": "roost:prod/web"} if op == "roost.launch" else {"shed": "web"}
    if kind is not ABSENT:
        params["kind"] = kind
    return answer(TAURI, web_model() if model is None else model, op, {**params, **extra})


ABSENT = object()
LAUNCHES = ["rc.launch", "roost.launch"]


@pytest.mark.parametrize("op", LAUNCHES)
@pytest.mark.parametrize("kind", ["claude", "codex", "gemini", "grok", "cursor", "vim"])
def test_a_launch_takes_rc_kinds_not_roost_agent_names(op: str, kind: str) -> None:
    """``rc_kind``: ``RcKind::from_wire`` keeps any other string as ``Other``, which
    ``ensure_known_kind`` refuses (ipc.rs:277-283,286-294@2cd01ef)."""
    assert failed(_launch(op, kind)) == ("bad_request", f"unknown rc kind '{kind}'")


@pytest.mark.parametrize("op", LAUNCHES)
@pytest.mark.parametrize("kind", ["claude-rc", "opencode"])
def test_a_launch_of_a_kind_with_a_recipe_opens_a_row_of_that_kind(op: str, kind: str) -> None:
    """The two kinds with a roost adapter are the two with a launch recipe; the opened
    row's owner reads back as the kind launched (``opened_session``, ``agent_kind``)."""
    model = web_model()
    reply = _launch(op, kind, model)
    assert reply["ok"] is True, reply
    assert reply["result"]["kind"] == kind
    assert [row["kind"] for row in _rows(model)] == [kind]


@pytest.mark.parametrize("op", LAUNCHES)
@pytest.mark.parametrize("kind", ["claude-broker", "craze", "shell"])
def test_a_known_kind_without_a_recipe_is_refused_after_the_host(op: str, kind: str) -> None:
    """``RoostHosts::launch``: ``ensure_registered``, then ``create``: the reach, then
    ``open_params`` (roost_hosts.rs:1391-1416@9668981), answered ``action_failed``."""
    assert failed(_launch(op, kind)) == (
        "action_failed",
        f'unknown kind "{kind}": roost has no launch recipe for it',
    )
    gone = answer(TAURI, web_model(), "rc.launch", {"shed": "gone", "kind": kind})
    code, message = failed(gone)
    assert code == "action_failed"
    assert message.startswith('no shed "gone" on server "prod"')


@pytest.mark.parametrize("kind", [ABSENT, None, 5])
def test_rc_launch_resolves_the_host_before_it_reads_the_kind(kind: Any) -> None:
    """``rc_launch``: ``shed_target`` (the host, ``bad_request``) before ``rc_kind``
    (ipc.rs:1828-1843,1808-1816@2cd01ef)."""
    assert failed(_launch("rc.launch", kind, host="nope")) == (
        "bad_request",
        "no configured host: nope",
    )
    assert failed(_launch("rc.launch", kind)) == ("bad_request", "missing or invalid 'kind'")


def test_a_seeded_claude_row_lists_as_claude_rc() -> None:
    """A roost tab owned by roost's ``claude`` adapter lists as ``claude-rc``
    (``RoostSession::agent_kind``, read by ``host_row`` through ``to_rc_dto``), so the
    model's seeded row says so unless told otherwise."""
    model = web_model()
    model.add_roost_session("roost:prod/web", "4")
    assert [row["kind"] for row in _rows(model)] == ["claude-rc"]
