"""The mac dialect's params decode order and nil-coalescing defaults, in both releases.

The newer mac app is charliek/shed ``desktop/``: the dispatch and its params structs in
``Sources/ShedDesktopApp/IPCHandlerImpl.swift@3fecd8a`` (line numbers counted on the
stored text), the handlers in ``AppModel.swift@5339dc4``. v0.0.14 is charliek/shed-desktop
tag v0.0.14 (``@5a762e8``); every fact pinned here holds in both, so each test runs
against both releases.

A synthesized (or hand-written) Swift decoder reads its keys in declaration order and
throws at the first bad one; ``decodeParams`` runs before the op's own checks
(``IPCHandlerImpl.swift:553-570@3fecd8a``). Swift's ``??`` replaces only ``nil``: an
empty string a caller sent is kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import Dialect, Release, swift_mismatch, swift_missing
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer
from ._helpers import failed as _error
from ._helpers import succeeded as _ok
from ._helpers import web_model as _model

MAC = Dialect.MAC
RELEASES = pytest.mark.parametrize("release", list(Release))


def _not_a_string(key: str, value: Any) -> tuple[str, str]:
    return "invalid-param", swift_mismatch("Swift.String", "String", value, [key])


def _missing(key: str) -> tuple[str, str]:
    return "invalid-param", swift_missing(key, [])


@RELEASES
@pytest.mark.parametrize("op", ["shed.start", "shed.stop", "shed.reset", "shed.delete"])
def test_shed_action_mac_decodes_host_before_name(op: str, release: Release) -> None:
    """ShedActionParams declares ``host`` then ``name`` (IPCHandlerImpl.swift:369-372@3fecd8a,
    :373-376@5a762e8): a mistyped host is refused before a missing name is noticed."""
    reply = answer(MAC, _model(), op, {"host": 5}, release=release)
    assert _error(reply) == _not_a_string("host", 5)
    assert _error(answer(MAC, _model(), op, {"host": "prod"}, release=release)) == _missing("name")


@RELEASES
def test_rc_kill_mac_decodes_host_then_shed_then_slug(release: Release) -> None:
    """RcKillParams is ``host, shed, slug`` (IPCHandlerImpl.swift:406@3fecd8a,
    :411@5a762e8)."""
    model = _model()
    assert _error(answer(MAC, model, "rc.kill", {"host": 5}, release=release)) == _not_a_string(
        "host", 5
    )
    assert _error(answer(MAC, model, "rc.kill", {"slug": 5}, release=release)) == _missing("shed")


@RELEASES
def test_create_start_mac_decodes_the_request_before_host(release: Release) -> None:
    """CreateStartParams.init(from:) decodes the CreateShedRequest first (its fields in
    declaration order: name, repo, local_dir, image, backend, cpus, memory_mb,
    no_provision; Models.swift:221-252@1cea187), then ``host``
    (IPCHandlerImpl.swift:376-385@3fecd8a, :380-389@5a762e8)."""
    model = _model()
    reply = answer(MAC, model, "create.start", {"name": "n", "host": 5, "repo": 6}, release=release)
    assert _error(reply) == _not_a_string("repo", 6)
    reply = answer(MAC, model, "create.start", {"name": "n", "host": 5}, release=release)
    assert _error(reply) == _not_a_string("host", 5)


@RELEASES
def test_terminal_open_mac_reads_its_params_before_refusing_in_test_mode(
    release: Release,
) -> None:
    """handle() runs decodeParams for ``terminal.open`` first; terminalOpenOp's test-mode
    guard comes after (IPCHandlerImpl.swift:109-111,308-314@3fecd8a; :109-111,312-318
    @5a762e8)."""
    model = _model()
    reply = answer(MAC, model, "terminal.open", {"shed": "web", "x": 1}, release=release)
    assert _error(reply) == ("unknown-field", "unknown params: x")
    reply = answer(MAC, model, "terminal.open", {"host": 5, "shed": "web"}, release=release)
    assert _error(reply) == _not_a_string("host", 5)
    assert _error(answer(MAC, model, "terminal.open", {}, release=release)) == _missing("shed")
    reply = answer(MAC, model, "terminal.open", {"shed": "web"}, release=release)
    assert _error(reply)[0] == "not-enabled"


@RELEASES
def test_rc_launch_mac_keeps_an_empty_display_name_and_workdir(release: Release) -> None:
    """rcLaunch: ``displayName ?? "<shed>/<slug>"``, ``workdir ?? defaultWorkdir``
    (AppModel.swift:1008-1063@5339dc4, :998-1030@5a762e8): only an absent value is
    defaulted."""
    params = {"shed": "web", "display_name": "", "workdir": ""}
    session = _ok(answer(MAC, _model(), "rc.launch", params, release=release))
    assert (session["display_name"], session["workdir"]) == ("", "")
    session = _ok(answer(MAC, _model(), "rc.launch", {"shed": "web"}, release=release))
    assert session["display_name"] == f"web/{session['slug']}"
    assert session["workdir"] == "/workspace"


@RELEASES
def test_rc_inject_test_mac_keeps_an_empty_display_name_and_workdir(release: Release) -> None:
    """rcInjectTestOp: ``p.displayName ?? (managed ? slug : "<shed>/<slug>")``,
    ``p.workdir ?? defaultWorkdir`` (IPCHandlerImpl.swift:256-267@3fecd8a,
    :260-271@5a762e8)."""
    model = _model()
    params = {"host": "prod", "shed": "web", "slug": "s1", "display_name": "", "workdir": ""}
    assert _ok(answer(MAC, model, "rc.inject_test", params, release=release)) == {}
    (row,) = _ok(answer(MAC, model, "rc.list", release=release))["sessions"]
    assert (row["display_name"], row["workdir"]) == ("", "")


def test_rc_doors_tauri_v0_0_14_keep_an_empty_display_name_and_workdir() -> None:
    """The same rule in the Tauri v0.0.14 doors the stand-in shares with mac: ``opt`` keeps
    an empty string and only ``None`` is defaulted (charliek/shed-desktop
    ``tauri/src-tauri/src/ipc.rs:490,545-561@5a762e8``, shed-app ``rc.rs:206,228@5a762e8``)."""
    model = _model()
    params = {"shed": "web", "kind": "shell", "display_name": "", "workdir": ""}
    session = _ok(answer(Dialect.TAURI, model, "rc.launch", params, release=Release.V0_0_14))
    assert (session["display_name"], session["workdir"]) == ("", "")
    inject = {"shed": "web", "slug": "s1", "display_name": "", "workdir": ""}
    assert (
        _ok(answer(Dialect.TAURI, model, "rc.inject_test", inject, release=Release.V0_0_14)) == {}
    )
    rows = _ok(answer(Dialect.TAURI, model, "rc.list", release=Release.V0_0_14))["sessions"]
    (row,) = [r for r in rows if r["slug"] == "s1"]
    assert (row["display_name"], row["workdir"]) == ("", "")


@RELEASES
def test_identify_mac_takes_any_value_for_its_two_allowed_keys(release: Release) -> None:
    """identify decodes ``EmptyParams`` (no properties) after the allow-list check
    (IPCHandlerImpl.swift:27-29,361@3fecd8a; :27-29@5a762e8): ``client_name`` and
    ``client_version`` may hold anything; another key is unknown-field."""
    params = {"client_name": 5, "client_version": ["x"]}
    assert _ok(answer(MAC, DesktopModel(), "identify", params, release=release))["app_label"]
    reply = answer(MAC, DesktopModel(), "identify", {"client": "x"}, release=release)
    assert _error(reply) == ("unknown-field", "unknown params: client")


@RELEASES
def test_approval_decide_mac_reads_a_null_optional_as_absent(release: Release) -> None:
    """ApprovalDecideParams reads ``scope``, ``ttl`` and ``persist`` with decodeIfPresent
    (``persist ?? false``), which answers nil for a JSON null
    (IPCHandlerImpl.swift:476-491@3fecd8a, :482-497@5a762e8): the decide goes on to the
    lookup (AppModel.swift:1275-1276@5339dc4)."""
    params = {"id": "a", "decision": "approve", "scope": None, "ttl": None, "persist": None}
    reply = answer(MAC, DesktopModel(), "approval.decide", params, release=release)
    assert _error(reply) == ("not-found", "no pending approval a")
    reply = answer(MAC, DesktopModel(), "approval.decide", {**params, "id": None}, release=release)
    code, message = _error(reply)
    assert (code, message.startswith("valueNotFound(Swift.String")) == ("invalid-param", True)
