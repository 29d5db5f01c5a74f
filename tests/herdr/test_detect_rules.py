# ruff: noqa: E501, RUF001 - refused manifests and screens read best one a line
"""herdr's agent identification and screen-state rules, as pure functions.

Sources: herdrdev/herdr src/detect/mod.rs, src/detect/manifest.rs,
src/pane/agent_detection.rs and src/detect/manifests/*.toml, all @1c76079f.
"""

from __future__ import annotations

import pytest

from shedproto.herdr import types as t
from shedproto.herdr._builtin_manifests import BUILTIN_MANIFESTS
from shedproto.herdr._detect import (
    AGENT_LABELS,
    SCREEN_MANIFEST_AGENTS,
    agent_executable,
    identify_agent_in_job,
    parse_agent_label,
)
from shedproto.herdr._detect_state import DetectionTracker
from shedproto.herdr._manifests import (
    Detection,
    ManifestError,
    detect,
    load_agent_manifest,
    manifest_from_mapping,
    override_path,
    parse_manifest,
    region_text,
    rust_regex,
)

from ._agent_screens import SCREENS


def proc(pid: int, name: str, *argv: str) -> t.PaneProcessInfoProcess:
    return t.PaneProcessInfoProcess(
        pid=pid, name=name, argv=list(argv) or None, cmdline=" ".join(argv) or None
    )


# -- labels (src/detect/mod.rs:183-223@1c76079f) ----------------------------------------


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("claude", "claude"), ("claude-code", "claude"), ("CLAUDE", "claude"),
        ("ghcs", "copilot"), ("github-copilot", "copilot"), ("opencode2.exe", "opencode"),
        ("Kimi Code", "kimi"), ("antigravity-cli", "agy"), ("kiro-cli", "kiro"),
        ("qoder", "qodercli"), ("Qwen Code", "qwen"), ("cursor-agent", "cursor"),
    ],
)  # fmt: skip
def test_labels_and_aliases(name: str, label: str) -> None:
    assert parse_agent_label(name) == label


@pytest.mark.parametrize("name", ["bash", "zsh", "vim", "node", "python3", ""])
def test_shells_and_runtimes_are_no_agent(name: str) -> None:
    assert parse_agent_label(name) is None


def test_every_label_round_trips_and_has_an_executable() -> None:
    assert len(AGENT_LABELS) == 22
    assert all(parse_agent_label(label) == label for label in AGENT_LABELS)
    assert agent_executable("cursor") == "cursor-agent"
    assert agent_executable("kiro") == "kiro-cli"
    assert agent_executable("claude") == "claude"


# -- the foreground job (src/detect/mod.rs:225-250,335-667@1c76079f) -------------------


def test_group_leader_that_names_an_agent_wins() -> None:
    job = [proc(42, "claude", "claude"), proc(43, "node", "node", "/tmp/mcp/bin/codex")]
    assert identify_agent_in_job(42, job) == ("claude", "claude")


def test_unrecognised_leader_falls_back_to_the_best_member() -> None:
    job = [proc(42, "bash", "bash"), proc(43, "node", "node", "/tmp/mcp/bin/codex")]
    assert identify_agent_in_job(42, job) == ("codex", "codex")


def test_node_running_an_agent_script() -> None:
    job = [proc(7, "node", "node", "/usr/local/bin/claude", "--resume")]
    assert identify_agent_in_job(7, job) == ("claude", "claude")


def test_node_options_with_values_are_skipped() -> None:
    job = [proc(7, "node", "node", "--require", "/x/hook.js", "/opt/bin/codex")]
    assert identify_agent_in_job(7, job) == ("codex", "codex")


def test_python_version_runs_an_agent_script() -> None:
    job = [proc(9, "python3.12", "/nix/store/x/bin/python3.12", "/nix/store/x/bin/hermes")]
    assert identify_agent_in_job(9, job) == ("hermes", "hermes")


@pytest.mark.parametrize(
    "argv",
    [
        ("python3", "-c", "codex"),
        ("python3", "-m", "codex"),
        ("node", "-e", "codex"),
        ("node", "--eval=codex"),
        ("bash", "-c", "codex"),
    ],
)
def test_code_given_on_the_command_line_is_not_a_script(argv: tuple[str, ...]) -> None:
    assert identify_agent_in_job(5, [proc(5, argv[0], *argv)]) is None


def test_known_package_paths_name_their_agent() -> None:
    cli = "/usr/lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"
    assert identify_agent_in_job(3, [proc(3, "node", "node", cli)]) == ("pi", "pi")


def test_node_wrapped_qwen_under_a_thread_name() -> None:
    job = [proc(123, "MainThread", "node", "/home/u/.fnm/bin/qwen")]
    assert identify_agent_in_job(123, job) == ("qwen", "qwen")


def test_renamed_binary_is_found_through_the_resolver() -> None:
    job = [proc(4, "my-helper", "/opt/tools/my-helper")]
    assert identify_agent_in_job(4, job) is None
    resolved = {"/opt/tools/my-helper": "/opt/cursor-agent/versions/1/cursor-agent"}
    assert identify_agent_in_job(4, job, resolved.get) == ("cursor", "cursor")


def test_nix_wrapped_agent_from_argv0() -> None:
    job = [proc(8, ".codex-wrapped", "/nix/store/abc/bin/codex", "--yolo")]
    assert identify_agent_in_job(8, job) == ("codex", "codex")


def test_empty_job_is_no_agent() -> None:
    assert identify_agent_in_job(None, []) is None


# -- built-in rules: every kind herdr reads from the screen ---------------------------


def test_every_screen_kind_has_built_in_rules() -> None:
    assert sorted(BUILTIN_MANIFESTS) == sorted(SCREEN_MANIFEST_AGENTS)
    assert "omp" not in BUILTIN_MANIFESTS
    assert "mastracode" not in BUILTIN_MANIFESTS
    assert BUILTIN_MANIFESTS["claude"].version == "2026.08.21.1"


@pytest.mark.parametrize("agent", sorted(SCREENS))
@pytest.mark.parametrize("state", ["working", "blocked", "idle"])
def test_built_in_rules_read_each_agents_screens(agent: str, state: str) -> None:
    screen = SCREENS[agent][state]
    if screen is None and state == "blocked":
        pytest.skip(f"herdr has no blocked rule for {agent}")
    detection = detect(BUILTIN_MANIFESTS[agent], screen or "")
    assert detection.state == state, detection
    if screen is None:  # no idle rule: herdr's fallback for a known agent
        assert detection.fallback_reason == "default_known_agent_idle_fallback"


def test_an_empty_screen_of_a_known_agent_reads_idle_by_fallback() -> None:
    detection = detect(BUILTIN_MANIFESTS["codex"], "")
    assert (detection.state, detection.fallback_reason) == (
        "idle",
        "default_known_agent_idle_fallback",
    )


def test_claude_busy_line_outranks_a_prompt_only_in_the_bottom_twelve_lines() -> None:
    busy, prompt = SCREENS["claude"]["working"], SCREENS["claude"]["blocked"]
    assert busy is not None
    assert prompt is not None
    assert detect(BUILTIN_MANIFESTS["claude"], f"{busy}\n{prompt}").state == "working"
    scrolled = "\n".join([busy, *("output" for _ in range(12)), prompt])
    assert detect(BUILTIN_MANIFESTS["claude"], scrolled).state == "blocked"


def test_claude_transcript_viewer_skips_the_update() -> None:
    screen = "lots of history\n Showing detailed transcript · ctrl+o to toggle"
    assert detect(BUILTIN_MANIFESTS["claude"], screen).skip_state_update


def test_osc_title_spinner_means_working() -> None:
    detection = detect(BUILTIN_MANIFESTS["codex"], "", osc_title="⠋ codex")
    assert (detection.state, detection.matched_rule) == ("working", "osc_title_working")


# -- herdr's manifest format (src/detect/manifest.rs:137-221,800-1020@1c76079f) ------


USER_MANIFEST = """
id = "claude"
version = "9"
[[rules]]
id = "custom_busy"
state = "working"
priority = 5000
region = "bottom_non_empty_lines(2)"
contains = ["CRUNCHING"]
line_regex = ['^\\s*[\\x{2800}-\\x{28FF}] \\p{Alphabetic}+']
"""


def test_user_manifest_parses_with_herdrs_regex_dialect() -> None:
    manifest = parse_manifest(USER_MANIFEST)
    assert manifest.version == "9"
    assert detect(manifest, "⠋ Crunching\nCRUNCHING").state == "working"
    assert detect(manifest, "nothing").fallback_reason == "default_known_agent_idle_fallback"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"id": "x", "rules": []}, "manifest must contain at least one rule"),
        ({"id": "x", "rules": [{"id": " ", "contains": ["a"]}]}, "manifest rule id must not be empty"),
        ({"id": "x", "bogus": 1, "rules": []}, "unknown field `bogus`"),
        (
            {"id": "x", "rules": [{"id": "r", "state": "idle", "skip_state_update": True, "contains": ["a"]}]},
            'rule r uses skip_state_update without state = "unknown"',
        ),
        ({"id": "x", "rules": [{"id": "r", "region": "middle", "contains": ["a"]}]}, "rule r uses invalid region: middle"),
        ({"id": "x", "rules": [{"id": "r", "state": "idle"}]}, "rule r has invalid matcher gates: rule must contain a positive matcher"),
        ({"id": "x", "rules": [{"id": "r", "contains": ["a"], "not": [{}]}]}, "rule contains an empty not gate"),
        ({"id": "x", "rules": [{"id": "r", "contains": ["a" * 513]}]}, "matcher exceeds max length 512"),
        ({"id": "x", "rules": [{"id": "r", "regex": ["("]}]}, "rule contains invalid regex pattern '('"),
        ({"id": "x", "min_engine_version": 2, "rules": [{"id": "r", "region": "top_non_empty_lines(3)", "contains": ["a"]}]},
         "uses top_non_empty_lines but min_engine_version is below 3"),
        ({"id": "x", "rules": [{"id": str(i), "contains": ["a"]} for i in range(129)]}, "manifest contains 129 rules, max is 128"),
    ],
)  # fmt: skip
def test_manifests_herdr_refuses(data: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError, match=None) as caught:
        manifest_from_mapping(data)
    assert message in str(caught.value)


def test_gates_nested_too_deep_are_refused() -> None:
    gate: dict[str, object] = {"contains": ["a"]}
    for _ in range(9):
        gate = {"all": [gate]}
    with pytest.raises(ManifestError, match="exceeds max gate depth 8"):
        manifest_from_mapping({"id": "x", "rules": [{"id": "r", **gate}]})


def test_rust_regex_forms() -> None:
    assert rust_regex(r"^\x{2733} ").search("\u2733 title")
    assert rust_regex(r"^\u{fe0f}?x\z").search("x")
    assert rust_regex(r"\p{Alphabetic}+ing").search("Thinking")
    with pytest.raises(ManifestError, match="unsupported Unicode class"):
        rust_regex(r"\p{Greek}")


# -- regions (src/detect/manifest.rs:1250-1500@1c76079f) --------------------------------


def test_regions() -> None:
    screen = "a\n\nb\n───\nbox body\n───\nfooter\n"
    assert region_text("bottom_non_empty_lines(2)", screen) == "───\nfooter\n"
    assert region_text("bottom_lines(1)", screen) == "footer\n"
    assert region_text("top_non_empty_lines(2)", screen) == "a\n\nb\n"
    assert region_text("prompt_box_body", screen) == "box body\n"
    assert region_text("above_prompt_box", screen) == "a\n\nb\n"
    assert region_text("last_non_empty_above_prompt_box", screen) == "b"
    assert region_text("after_last_horizontal_rule", screen) == "footer\n"
    assert region_text("osc_title", screen, osc_title="T") == "T"
    prompt = "• ran tests\n› next\n"
    assert region_text("after_last_prompt_marker", prompt) == ""
    assert region_text("current_prompt_block_marker", prompt) == "• ran tests"
    assert region_text("whole_recent_without_current_prompt_marker", prompt) == ""


# -- user overrides (src/detect/manifest.rs:576-690,1098-1104@1c76079f) ----------------


def test_override_path_is_herdrs() -> None:
    assert override_path("/cfg/herdr", "claude") == "/cfg/herdr/agent-detection/claude.toml"


def test_override_replaces_the_bundled_manifest() -> None:
    loaded = load_agent_manifest("claude", BUILTIN_MANIFESTS["claude"], "/c/claude.toml", USER_MANIFEST)
    assert (loaded.source, loaded.source_kind, loaded.warning) == ("/c/claude.toml", "local override", None)
    assert loaded.manifest.rules[0].id == "custom_busy"


def test_foreign_or_broken_override_keeps_bundled_with_herdrs_warning() -> None:
    foreign = load_agent_manifest("codex", BUILTIN_MANIFESTS["codex"], "/c/codex.toml", USER_MANIFEST)
    assert foreign.source_kind == "bundled"
    assert foreign.warning == (
        "ignored override /c/codex.toml because manifest id claude does not match codex"
    )
    broken = load_agent_manifest("codex", BUILTIN_MANIFESTS["codex"], "/c/codex.toml", "id = [")
    assert broken.source == "bundled"
    assert broken.warning is not None
    assert broken.warning.startswith("ignored override /c/codex.toml because it could not be loaded: ")
    absent = load_agent_manifest("codex", BUILTIN_MANIFESTS["codex"], "/c/codex.toml", None)
    assert (absent.source, absent.warning) == ("bundled", None)


# -- publishing (src/pane/agent_detection.rs:3-75@1c76079f) ---------------------------


def test_working_to_plain_idle_is_held_until_confirmed() -> None:
    tracker = DetectionTracker()
    assert tracker.observe(Detection(state="working", visible_working=True), 0.0) == "working"
    idle = Detection(state="idle")
    assert tracker.observe(idle, 0.1) is None
    assert tracker.holding
    assert tracker.observe(idle, 0.2) is None
    assert tracker.observe(idle, 0.3) is None
    assert tracker.observe(idle, 0.4) == "idle"
    assert not tracker.holding


def test_idle_hold_ends_at_its_cap() -> None:
    tracker = DetectionTracker(state="working")
    assert tracker.observe(Detection(state="idle"), 0.0) is None
    assert tracker.observe(Detection(state="idle"), 0.75) == "idle"


def test_visible_idle_is_published_at_once() -> None:
    tracker = DetectionTracker(state="working")
    assert tracker.observe(Detection(state="idle", visible_idle=True), 0.0) == "idle"


def test_skipped_readings_change_nothing() -> None:
    tracker = DetectionTracker(state="blocked")
    assert tracker.observe(Detection(state="unknown", skip_state_update=True), 0.0) is None
    assert tracker.state == "blocked"
