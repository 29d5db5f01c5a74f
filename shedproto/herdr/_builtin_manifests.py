# ruff: noqa: RUF001, E501 - agents print these glyphs; rule tables read best one rule a line
"""The screen rules herdr ships for each agent kind, restated in this library's own terms.

Each entry below is written from herdr's bundled manifest for that agent
(herdrdev/herdr src/detect/manifests/<agent>.toml@1c76079f): the same
screen facts (busy markers, permission prompts, prompt boxes, OSC title
spinners), priorities and regions, expressed with :class:`Gate` and
:class:`Rule` and Python regular expressions. ``version`` is the bundled
manifest's version, which herdr reports in ``server.agent_manifests``.
Where herdr's manifest spells out longer variants of one prompt, the rule
here keeps the ones the current agent releases print; the module's tests
pin each rule against the text herdr's own tests use.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._manifests import Gate, Manifest, ManifestState, Rule

__all__ = ["BUILTIN_MANIFESTS"]

_SPIN = "\u2800-\u28ff"  # braille spinner frames
_CLAUDE_GLYPHS = "*\u00b7\u2722\u2736\u273b\u273d"


def _g(
    *contains: str,
    regex: Sequence[str] = (),
    lines: Sequence[str] = (),
    all: Sequence[Gate] = (),
    any: Sequence[Gate] = (),
    not_: Sequence[Gate] = (),
) -> Gate:
    return Gate(
        contains=tuple(c.lower() for c in contains),
        regex=tuple(re.compile(p) for p in regex),
        line_regex=tuple(re.compile(p) for p in lines),
        all=tuple(all),
        any=tuple(any),
        not_=tuple(not_),
    )


def _anyof(*needles: str) -> Gate:
    return _g(any=[_g(n) for n in needles])


def _r(
    rule_id: str,
    state: ManifestState,
    priority: int,
    region: str,
    gate: Gate,
    *,
    visible: bool = True,
    skip: bool = False,
) -> Rule:
    return Rule(
        id=rule_id,
        state=state,
        gate=gate,
        priority=priority,
        region=region,
        visible_idle=visible and state == "idle",
        visible_blocker=visible and state == "blocked",
        visible_working=visible and state == "working",
        skip_state_update=skip,
    )


def _m(ident: str, version: str, rules: Sequence[Rule], aliases: Sequence[str] = ()) -> Manifest:
    return Manifest(id=ident, version=version, rules=tuple(rules), aliases=tuple(aliases))


_NAVIGATE = ("tab/arrow keys to navigate", "arrow keys to navigate", "arrows to navigate",
             "↑/↓ to navigate", "↑↓ to navigate")  # fmt: skip
_CLAUDE_PERMISSION_NOT = [
    _g(c) for c in ("do you want to proceed?", "esc to cancel", "waiting for permission",
                    "do you want to allow this connection?", "tab to amend", "ctrl+e to explain")
]  # fmt: skip

_CLAUDE = _m("claude", "2026.08.21.1", aliases=["claude-code"], rules=[
    _r("osc_title_working", "working", 1100, "osc_title", _g(regex=[f"^[{_SPIN}\u25d0-\u25d3] "])),
    _r("live_turn_working", "working", 970, "bottom_non_empty_lines(12)", _g(any=[
        _g(lines=[r"^\s*[⏸⏵].*esc to interrupt(?:\s|·|$)"]),
        _g(lines=[rf"^\s*[{_CLAUDE_GLYPHS}]\s+\S.*…(?:\s+\(\d+[smh](?:\s|·)|\s*$)"]),
    ])),
    _r("background_shell_working", "working", 965, "bottom_non_empty_lines(5)",
       _g(lines=[r"^\s*[⏸⏵].*·\s+[1-9]\d*\s+shells?\s+(?:·|$)"])),
    _r("background_agents_working", "working", 965, "last_non_empty_above_prompt_box",
       _g(lines=[rf"^\s*[{_CLAUDE_GLYPHS}]\s+Waiting for [1-9]\d* background agents? to finish\s*$"])),
    _r("background_mcp_task_working", "working", 965, "bottom_non_empty_lines(12)", _g(
        lines=[rf"^[{_CLAUDE_GLYPHS}][ \t]+\S.*·[ \t]+[1-9]\d*[ \t]+MCP[ \t]+tasks?[ \t]+still[ \t]+running[ \t]*$"],
        not_=_CLAUDE_PERMISSION_NOT)),
    _r("btw_overlay_working", "working", 975, "bottom_non_empty_lines(5)",
       _g(lines=[r"^\s*/btw(?:\s|$)", r"(?i)esc to close\s*$"])),
    _r("transcript_viewer", "unknown", 1000, "bottom_non_empty_lines(3)", _g(
        "showing detailed transcript",
        any=[_g("ctrl+o", "to toggle"), _g("ctrl+e", "show all"), _g("ctrl+e", "collapse"),
             _g("↑↓ scroll"), _g("? for shortcuts")]), visible=False, skip=True),
    _r("live_blocked_form", "blocked", 980, "after_last_horizontal_rule", _g(
        "esc to cancel", any=[_g("enter to confirm"), _g("enter to select", any=[_g(n) for n in _NAVIGATE])])),
    _r("dynamic_workflow_prompt", "blocked", 980, "whole_recent",
       _g("run a dynamic workflow?", "esc to cancel")),
    _r("live_prompt_box", "idle", 950, "prompt_box_body", _g(lines=[r"^\s*❯"], not_=[
        _g(c) for c in ("enter to select", "esc to cancel", "tab/arrow keys",
                        "arrow keys to navigate", "↑/↓ to navigate")])),
    _r("model_picker_menu", "unknown", 900, "whole_recent", _g(
        "select model", "enter to set as default", "esc to cancel",
        not_=[_g("do you want to proceed?"), _g("enter to select")]), visible=False, skip=True),
    _r("bash_permission_prompt", "blocked", 850, "whole_recent", _g(
        "do you want to proceed?",
        any=[_g(c) for c in ("bash command", "bash(", "contains expansion", "tab to amend", "ctrl+e to explain")],
        all=[_g(any=[_g(lines=[r"(?i)^\s*❯?\s*yes\b"]), _g(lines=[r"(?i)^\s*1\.\s*yes\b"]),
                     _g(lines=[r"(?i)^\s*2\.\s*no\b"])])])),
    _r("generic_permission_prompt", "blocked", 840, "after_last_horizontal_rule", _g(
        "do you want to proceed?", "esc to cancel",
        all=[_g(any=[_g(lines=[r"(?i)^\s*❯?\s*1\.\s*yes\b"]), _g(lines=[r"(?i)^\s*2\.\s*yes\b"]),
                     _g(lines=[r"(?i)^\s*2\.\s*no\b"]), _g(lines=[r"(?i)^\s*3\.\s*no\b"])])])),
    _r("legacy_no_prompt_blocker", "blocked", 300, "whole_recent", _g(any=[
        _g("do you want to", any=[_g("yes"), _g("❯")]),
        _g("would you like to", any=[_g("yes"), _g("❯")]),
        _g("waiting for permission"), _g("do you want to allow this connection?"),
        _g("tab to amend"), _g("ctrl+e to explain"), _g("do you want to proceed?", "esc to cancel"),
        _g("review your answers"), _g("skip interview and plan immediately"),
    ], not_=[_g(regex=[r"(?m)^\s*❯\s*$"])]), visible=False),
    _r("osc_title_idle", "idle", 250, "osc_title", _g(regex=["^\u2733 "])),
    _r("osc_progress_idle", "idle", 250, "osc_progress", _g(regex=["^4;0"]), visible=False),
])  # fmt: skip

_CODEX_SPINNER = r"(?:^| )[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏](?: |$)"
_CODEX = _m("codex", "2026.08.09.1", rules=[
    _r("osc_title_blocked", "blocked", 1100, "osc_title", _g("Action Required")),
    _r("osc_title_working", "working", 1050, "osc_title", _g(regex=[_CODEX_SPINNER])),
    _r("transcript_viewer", "unknown", 1000, "after_last_prompt_marker", _g(
        "↑/↓ to scroll", "pgup/pgdn to", "home/end to jump", "q to quit",
        any=[_g("esc to edit prev"), _g("esc/← to edit prev")]), visible=False, skip=True),
    _r("trust_directory", "blocked", 950, "top_non_empty_lines(20)", _g(all=[
        _g(regex=[r"\A> You are in [^\r\n]+(?:\r?\n|$)"]),
        _g(regex=[r"(?s)Do\s+you\s+trust\s+the\s+contents\s+of\s+this\s+directory\?"])])),
    _r("live_strong_blocker", "blocked", 900, "after_last_prompt_marker", _anyof(
        "press enter to confirm or esc to cancel", "enter to submit answer",
        "enter to submit all", "allow command?")),
    _r("weak_blocker", "blocked", 600, "whole_recent", _g(any=[
        _g("[y/n]"), _g("yes (y)"), _g("do you want to", any=[_g("yes"), _g("❯")]),
        _g("would you like to", any=[_g("yes"), _g("❯")])]), visible=False),
    _r("screen_working_fallback", "working", 500, "bottom_non_empty_lines(3)", _g(
        lines=[r"^[•◦]\s+Working \([^)]*esc to interrupt\)(?: · .*)?$"],
        not_=[_g("■ Conversation interrupted")])),
    _r("osc_title_idle", "idle", 100, "osc_title", _g(
        regex=[r"\S"], not_=[_g(regex=[_CODEX_SPINNER]), _g("Action Required")])),
])  # fmt: skip

_SELECT_CANCEL = _g(all=[_anyof("esc to cancel", "esc cancel"),
                         _anyof("enter to select", "enter to confirm", "enter to submit", "enter accept")])  # fmt: skip
_COPILOT = _m("copilot", "2026.07.07.1", aliases=["github-copilot", "ghcs"], rules=[
    _r("selection_blocker", "blocked", 300, "whole_recent", _SELECT_CANCEL),
    _r("working_cancel_hint", "working", 100, "whole_recent",
       _anyof("esc to cancel", "esc cancel", "esc again to cancel", "esc interrupt")),
])  # fmt: skip

_PI = _m("pi", "2026.06.10.1", aliases=["herdr:pi"], rules=[
    _r("working_literal", "working", 100, "whole_recent", _g("Working...")),
])

_GEMINI = _m("gemini", "2026.06.10.1", rules=[
    _r("apply_or_allow_change", "blocked", 300, "whole_recent", _g(any=[
        _g("│ Apply this change"), _g("│ Allow execution"),
        _g(all=[_g("yes"), _anyof("waiting for user confirmation", "│ Do you want to proceed",
                                  "do you want to proceed?")]),
        _g(lines=[r"(?i)^\s*❯.*(yes|allow)"])])),
    _r("esc_cancel_working", "working", 100, "whole_recent", _g("esc to cancel")),
])  # fmt: skip

_CURSOR = _m("cursor", "2026.08.03.1", aliases=["cursor-agent"], rules=[
    _r("write_file_approval", "blocked", 320, "bottom_non_empty_lines(8)", _g(
        "write to this file?", "proceed (y)",
        any=[_g("reject & propose changes"), _g("esc or n or p"), _g("add write(")])),
    _r("approval_prompt", "blocked", 300, "whole_recent", _g(any=[
        _g("waiting for approval", "run this command?", any=[_g("run (once) (y)"), _g("skip (esc or n)")]),
        _g("(y) (enter)"), _g(lines=[r"(?i)^\s*allow .*\(y\)"]), _g("keep (n)"),
        _g("skip (esc or n)"), _g(lines=[r"(?i)^\s*(?:→\s*)?run .*\(y\)"])])),
    _r("stop_hint_working", "working", 100, "bottom_non_empty_lines(6)", _g("ctrl+c to stop")),
    _r("background_task_status_working", "working", 95, "bottom_non_empty_lines(5)",
       _g(lines=[r"(?i)\b[1-9][0-9]*\s+background\s+tasks?\b"])),
    _r("spinner_working", "working", 90, "bottom_non_empty_lines(8)",
       _g(lines=[rf"^\s*(⬡|⬢|[{_SPIN}]+)\s+[^\W\d_]+\w*ing\b"])),
])  # fmt: skip

_DEVIN_PERMISSION = _g("approve once", "esc cancel")
_DEVIN = _m("devin", "2026.06.15.1", aliases=["devin-cli", "devin cli"], rules=[
    _r("workspace_trust_prompt", "blocked", 300, "bottom_non_empty_lines(8)", _g(
        "do you trust the authors of this directory?", "with untrusted content.", "yes, trust ")),
    _r("permission_prompt", "blocked", 290, "bottom_non_empty_lines(8)",
       _g("approve once", "select", "confirm", "esc cancel")),
    _r("running_tools_footer", "working", 200, "bottom_non_empty_lines(8)",
       _g("running tools", "esc to interrupt", not_=[_DEVIN_PERMISSION])),
    _r("guide_while_working", "working", 190, "bottom_non_empty_lines(6)",
       _g("guide devin while it works", not_=[_DEVIN_PERMISSION])),
    _r("tool_reading_timeout", "working", 180, "bottom_non_empty_lines(8)",
       _g("reading shell ", "timeout:", not_=[_DEVIN_PERMISSION])),
    _r("welcome_prompt_footer", "idle", 120, "bottom_non_empty_lines(8)", _g(
        "ask devin to build", "features, fix bugs", "your code", lines=[r"^\s*❭ Ask Devin to build"],
        not_=[_DEVIN_PERMISSION, _g("running tools", "esc to interrupt"), _g("guide devin while it works")])),
    _r("live_prompt_footer", "idle", 100, "bottom_non_empty_lines(6)", _g(
        "context:", lines=[r"^\s*❭"],
        not_=[_DEVIN_PERMISSION, _g("running tools", "esc to interrupt"), _g("guide devin while it works")])),
])  # fmt: skip

_AGY = _m("agy", "2026.06.24.1", aliases=["antigravity", "antigravity-cli"], rules=[
    _r("permission_prompt", "blocked", 300, "whole_recent", _g(
        "requesting permission for:", any=[_g("do you want to proceed?"), _g("tab amend", "edit command")])),
    _r("spinner_working", "working", 100, "whole_recent", _g(lines=[rf"^\s*[{_SPIN}]+\s+[^\W\d_]+\w*ing\b"])),
    _r("background_tasks_working", "working", 90, "bottom_non_empty_lines(5)",
       _g(lines=[r"(?i)·\s*[1-9][0-9]*\s+task"])),
])  # fmt: skip

_CLINE = _m("cline", "2026.06.10.1", rules=[
    _r("tool_permission", "blocked", 300, "whole_recent", _g(any=[
        _g("let cline use this tool"),
        *(_g(f"[{mode} mode]", ask, "yes") for mode in ("act", "plan")
          for ask in ("execute command?", "use this tool?"))])),
    _r("default_cline_working", "working", -10, "whole_recent", _g(regex=[r"(?s).+"])),
])  # fmt: skip

_OPENCODE_PERMISSION = _g(any=[
    _g("△ Permission required"),
    _g("esc dismiss", any=[_g("enter confirm"), _g("enter submit"), _g("enter toggle")],
       all=[_anyof("↑↓ select", "⇆ tab")]),
])  # fmt: skip
_OPENCODE = _m("opencode", "2026.06.10.1", aliases=["open-code", "herdr:opencode"], rules=[
    _r("permission_required", "blocked", 300, "whole_recent", _OPENCODE_PERMISSION),
    _r("interrupt_hint_working", "working", 110, "whole_recent", _g(any=[
        _g("esc to interrupt"), _g("ctrl+c to interrupt"), _g("press esc to interrupt"),
        _g(lines=[r"(?i).*opencode.*esc (again to )?interrupt"])])),
    _r("progress_bar_working", "working", 100, "whole_recent", _g(regex=[r"(■|⬝){4,}"])),
])  # fmt: skip

_KILO = _m("kilo", "2026.06.10.1", aliases=["kilo-code", "kilo code", "herdr:kilo"], rules=[
    _r("opencode_permission", "blocked", 300, "whole_recent", _OPENCODE_PERMISSION),
    _r("esc_interrupt_working", "working", 100, "whole_recent", _g("esc interrupt")),
])

_KIMI = _m("kimi", "2026.06.10.1", aliases=["kimi-code", "kimi code"], rules=[
    _r("current_approval_panel", "blocked", 400, "whole_recent", _g(
        "↵ confirm",
        any=[*(_g(c) for c in ("run this command?", "write this file?", "apply these edits?",
                               "stop this task?", "ready to build with this plan?")),
             _g(lines=[r"(?i)^\s*▶?\s*approve .*\?$"])],
        all=[_g(" choose"), _anyof("approve", "reject", "revise")])),
    _r("question_panel", "blocked", 390, "whole_recent", _g(
        "↑↓ select", "esc cancel", lines=[r"^\s*question\s*$", r"^\s*\? "],
        any=[_g("↵ choose"), _g("↵ toggle"), _g("↵ save")])),
    _r("legacy_approval_panel", "blocked", 300, "whole_recent", _g(
        "requesting approval", "reject", any=[_g("approve once"), _g("approve for this session")],
        all=[_anyof("1/2/3/4 choose", "↵ confirm")]), visible=False),
    _r("background_agent_status_working", "working", 120, "bottom_non_empty_lines(3)",
       _g(lines=[r"(?i)\bkimi[-\w.]*\s+thinking\b.*\[[1-9][0-9]*\s+agents?\s+running\]"])),
    _r("moon_spinner_working", "working", 100, "whole_recent",
       _g(lines=[r"^\s*(🌕|🌖|🌗|🌘|🌑|🌒|🌓|🌔)\s*$"])),
    _r("braille_spinner_working", "working", 90, "whole_recent",
       _g(lines=[rf"(?i)^\s*[{_SPIN}]+\s*(thinking\.\.\.|working\.\.\.|using )"])),
])  # fmt: skip

_KIRO = _m("kiro", "2026.08.01.1", aliases=["kiro-cli"], rules=[
    _r("tool_approval", "blocked", 300, "whole_recent", _g(
        "requires approval", any=[_g("yes, single permission"), _g("trust, always allow"),
                                  _g("no (tab to edit)"), _g("esc to close")])),
    _r("subagent_approval", "blocked", 290, "whole_recent", _g(
        "pending from subagents", any=[_g("tool approval"), _g("tool approvals")],
        all=[_anyof("approve all pending", "configure individually", "exit (cancel subagents)")])),
    _r("prompt_idle", "idle", 200, "bottom_non_empty_lines(5)", _g(
        "ask a question or describe a task", "/copy to clipboard",
        not_=[_g("kiro is working"), _g("esc to cancel")])),
    _r("kiro_working_marker", "working", 100, "whole_recent", _g("kiro is working")),
    _r("tool_spinner_working", "working", 90, "whole_recent",
       _g("esc to cancel", lines=[r"^\s*(◔|◑|◕|●)\s+[^\W\d_]"])),
])  # fmt: skip

_DROID = _m("droid", "2026.06.10.1", rules=[
    _r("execute_selection_blocker", "blocked", 300, "whole_recent", _g(
        "enter to select", "esc to cancel", any=[_g("↑↓ to navigate"), _g("use ↑↓ to navigate")],
        all=[_anyof("> yes, allow", "> no, cancel")])),
    _r("selection_menu_blocker", "blocked", 290, "bottom_non_empty_lines(8)", _g(
        "enter select", "esc cancel", any=[_g("↑/↓ navigate"), _g("↑↓ navigate")])),
    _r("spinner_stop_working", "working", 110, "whole_recent",
       _g("esc to stop", lines=[rf"^\s*[{_SPIN}]"])),
    _r("stop_hint_working", "working", 100, "whole_recent", _g("esc to stop")),
])  # fmt: skip

_AMP = _m("amp", "2026.07.09.1", aliases=["amp-local"], rules=[
    _r("osc_title_plugin_confirmation_blocked", "blocked", 1100, "osc_title",
       _g("Plugin confirmation needed")),
    _r("osc_title_working", "working", 1050, "osc_title", _g(regex=[f"^[{_SPIN}] "])),
    _r("approval_footer", "blocked", 300, "whole_recent", _g(any=[
        *(_g(c) for c in ("waiting for approval", "invoke tool", "run this command?",
                          "allow editing file:", "allow creating file:", "confirm tool call")),
        _g("approve", any=[_g(c) for c in ("allow all for this session", "allow all for every session",
                                           "allow file for every session", "deny with feedback")])])),
    _r("status_footer_working", "working", 200, "bottom_non_empty_lines(5)",
       _g(lines=[r"(?i)^\s*╰\s+\S+\s+(thinking|streaming|running tools|waiting)\s+─"])),
    _r("esc_cancel_working", "working", 100, "whole_recent", _g("esc to cancel")),
    _r("osc_title_idle", "idle", 50, "osc_title", _g(
        " - amp - ", not_=[_g(regex=[f"^[{_SPIN}] "]), _g("Plugin confirmation needed")])),
])  # fmt: skip

_GROK = _m("grok", "2026.07.16.2", aliases=["grok-build"], rules=[
    _r("osc_title_blocked", "blocked", 1300, "osc_title", _g("Action Required")),
    _r("option_dialog_blocked", "blocked", 1200, "whole_recent",
       _g(lines=[r"^\s*┃\s+[0-9a-z]+\s+\([●○]\)\s"])),
    _r("permission_hints_blocked", "blocked", 1190, "bottom_non_empty_lines(2)",
       _g(":select", "ctrl+o:yolo", "ctrl+c:cancel")),
    _r("question_dialog_hints_blocked", "blocked", 1185, "bottom_non_empty_lines(2)",
       _g("tab:scrollback", "shift+x:dismiss")),
    _r("permission_scope_selector", "blocked", 1180, "whole_recent", _g(
        "yes, proceed", "no, reject",
        any=[_g("use ← → to choose permission whitelist scope"), _g("←/→:scope")])),
    _r("background_work_chip_working", "working", 1170, "top_non_empty_lines(1)",
       _g(lines=[r"[⋅:⸬⁙.·]\s+[1-9][0-9]*\s+│"])),
    _r("osc_progress_working", "working", 1150, "osc_progress", _g(regex=[r"^4;1;-1$"])),
    _r("osc_title_idle", "idle", 1100, "osc_title", _g(
        regex=[r"(?:^| - )grok$"], not_=[_g(regex=[f"[{_SPIN}]"])])),
    _r("osc_title_working", "working", 1000, "osc_title", _g(regex=[r"\S"])),
    _r("osc_progress_idle", "idle", 950, "osc_progress", _g(regex=[r"^4;0;0$"])),
    _r("spinner_status_working", "working", 200, "whole_recent",
       _g(lines=[r"^\s*[\u2801-\u28ff]\s.*\[stop\]\s*$"])),
    _r("esc_cancel_hints_working", "working", 190, "bottom_non_empty_lines(2)",
       _g("esc:cancel", "ctrl+.:shortcuts")),
    _r("waiting_tool_working", "working", 120, "whole_recent", _g(any=[
        _g(all=[_g("ctrl+c:cancel", "ctrl+enter:interject"), _g("waiting")]),
        _g(lines=[r"^\s*[\u2801-\u28ff]\s+(Run|Read|Search|List)\b"])])),
    _r("prompt_hints_idle", "idle", 100, "bottom_non_empty_lines(2)", _g(
        "ctrl+.:shortcuts", not_=[_g("esc:cancel"), _g("ctrl+c:cancel")])),
])  # fmt: skip

_VS = "[\ufe0e\ufe0f]?"
_HERMES = _m("hermes", "2026.07.24.1", aliases=["hermes-agent"], rules=[
    _r("osc_title_blocked", "blocked", 1100, "osc_title", _g(regex=[rf"^⚠{_VS}(?:\s|$)"])),
    _r("osc_title_working", "working", 1050, "osc_title", _g(regex=[rf"^⏳{_VS}(?:\s|$)"])),
    _r("dangerous_command_approval", "blocked", 900, "bottom_non_empty_lines(14)", _g(
        any=[_g("dangerous"), _g("approval"), _g("allow once", "deny"),
             _g(lines=[r"(?i)^\s*[▸>]?\s*1\.\s*allow"])],
        all=[_anyof("enter confirm", "enter to confirm", "↑/↓ to select")])),
    _r("clarification_prompt", "blocked", 900, "bottom_non_empty_lines(14)", _g(
        any=[_g("hermes needs your"), _g(lines=[r"^\s*ask\s+\S"]), _g("type your answer")],
        all=[_anyof("enter confirm", "enter to confirm", "enter send", "press enter")])),
    _r("credential_prompt", "blocked", 900, "bottom_non_empty_lines(14)",
       _g(any=[_g("sudo password"), _g("skill setup"), _g("🔑", "for ")])),
    _r("confirmation_prompt", "blocked", 900, "bottom_non_empty_lines(14)", _g(all=[
        _g(any=[_g("approve once", "cancel"), _g("start a new session", "keep going")]),
        _anyof("enter to confirm", "enter confirm", "type 1/2/3", "y/n quick")])),
    _r("interrupt_status_working", "working", 950, "bottom_non_empty_lines(5)",
       _anyof("msg=interrupt", "ctrl+c to interrupt")),
    _r("classic_cancel_working", "working", 500, "bottom_non_empty_lines(5)", _g("ctrl+c cancel")),
    _r("osc_title_idle", "idle", 100, "osc_title", _g(regex=[rf"^✓{_VS}(?:\s|$)"])),
])  # fmt: skip

_QODER = _m("qodercli", "2026.06.10.1", aliases=["qoderclicn", "qoder", "qodercn"], rules=[
    _r("confirmation_or_input_blocker", "blocked", 300, "whole_recent", _g(any=[
        _g("waiting for user confirmation", any=[_g("yes"), _g("no"), _g("allow"), _g("reject")]),
        _g("awaiting approval", any=[_g("allow"), _g("reject")]),
        *(_g(c) for c in ("permission required", "allow once or always?", "asking user",
                          "enter your response", "review your answers:", "shell awaiting input"))])),
    _r("cancel_hint_working", "working", 100, "whole_recent", _g("(esc to cancel,")),
    _r("spinner_working", "working", 90, "whole_recent", _g(lines=[rf"^\s*[{_SPIN}]\s+.*[^\W\d_]"])),
])  # fmt: skip

_QWEN_ELAPSED = r"\(\d+(?:m(?:\s+\d+s)?|s)"
_QWEN = _m("qwen", "2026.08.14.1", aliases=["qwen-code", "qwen code"], rules=[
    _r("osc_title_blocked", "blocked", 1200, "osc_title", _g(regex=["^\u2733\ufe0e? "])),
    _r("osc_title_working", "working", 1100, "osc_title", _g(regex=["^\u25d0\ufe0e? "])),
    _r("waiting_for_confirmation", "blocked", 1000, "bottom_non_empty_lines(20)", _g(
        lines=[r"^\s*⠏\s+.*\.\.\.\s*$"],
        any=[_g("Waiting for user confirmation..."), _g("等待用户确认..."), _g("等待用戶確認...")])),
    _r("tool_confirmation", "blocked", 990, "bottom_non_empty_lines(20)", _g(
        "yes, allow once",
        any=[_g(c) for c in ("apply this change?", "allow execution of:", "allow execution of mcp tool",
                             "do you want to proceed?", "shell command execution")])),
    _r("question_dialog", "blocked", 980, "bottom_non_empty_lines(20)", _g(lines=[
        r"^\s*[❯›]\s*(?:\[(?: |✓)\]\s*)?\d+\.\s+", r"^\s*↑/↓\s*:.*(?:Enter|Return)\s*:"])),
    _r("folder_trust_dialog", "blocked", 970, "bottom_non_empty_lines(20)",
       _g("do you trust this folder?", "trust folder (", "don't trust (esc)")),
    _r("cancel_hint_working", "working", 900, "bottom_non_empty_lines(8)",
       _g(lines=[rf"^\s*(?:[⠁-⣿]|\.{{1,2}})\s+.*{_QWEN_ELAPSED}.*\s·\sesc to cancel\)\s*$"])),
    _r("narrow_cancel_hint_working", "working", 890, "bottom_non_empty_lines(8)",
       _g(lines=[rf"^\s*{_QWEN_ELAPSED}\s·\sesc to cancel\)\s*$"])),
    _r("osc_tool_progress_working", "working", 850, "osc_progress", _g(regex=[r"^4;3(?:;|$)"])),
    _r("composer_idle", "idle", 100, "bottom_non_empty_lines(30)", _g(
        lines=[r"^\s*>\s*(?:type\s*)?.*$"],
        any=[_g("type your message"), _g("your message or @path/to/file"), _g("@path/to/file")])),
])  # fmt: skip

_MAKI = _m("maki", "2026.07.09.2", rules=[
    _r("permission_prompt", "blocked", 980, "whole_recent", _g(
        "permission required", any=[_g("y allow", "n deny"), _g("confirm allow"),
                                    _g("confirm deny"), _g("enter deny", "esc cancel")])),
    _r("plan_complete_form", "blocked", 970, "whole_recent", _g(
        "plan complete", "enter confirm", any=[_g("space toggle parallel"), _g("edit plan")])),
    _r("status_bar_spinner_working", "working", 900, "bottom_non_empty_lines(1)",
       _g(lines=[rf"^( [{_SPIN}]){{1,2}} \[(BUILD|PLAN|BASH)\]"])),
    _r("status_bar_idle", "idle", 850, "bottom_non_empty_lines(1)",
       _g(lines=[r"^ \[(BUILD|PLAN|BASH)\]"])),
    _r("prompt_box_idle", "idle", 840, "bottom_non_empty_lines(3)", _g(
        lines=[r"^❯ "], not_=[_g("queue another prompt"), _g(lines=[rf"^( [{_SPIN}]){{1,2}} "])])),
])  # fmt: skip

BUILTIN_MANIFESTS: dict[str, Manifest] = {
    manifest.id: manifest
    for manifest in (
        _PI, _CLAUDE, _CODEX, _GEMINI, _CURSOR, _DEVIN, _AGY, _CLINE, _OPENCODE, _COPILOT,
        _KIMI, _KIRO, _DROID, _AMP, _GROK, _HERMES, _KILO, _QODER, _QWEN, _MAKI,
    )
}  # fmt: skip
"""The bundled manifest of every kind herdr reads from the screen, by agent label."""
