# ruff: noqa: RUF001, E501 - agents print these glyphs; one screen a line
"""What each agent kind prints when it is working, blocked on a prompt, or idle.

Each sample is a screen herdr's bundled manifest for that agent
(herdrdev/herdr src/detect/manifests/<agent>.toml@1c76079f) reads as the
named state; None where herdr has no rule for that state (the agent then
reads idle by herdr's fallback). The unit tests run them through the
built-in rules and the PTY tests print them from stand-in programs.
"""

from __future__ import annotations

SCREENS: dict[str, dict[str, str | None]] = {
    "pi": {"working": "Working...", "blocked": None, "idle": "> "},
    "claude": {
        "working": "✻ Thinking… (3s · esc to interrupt)",
        "blocked": " Bash command\n   rm -rf build\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel",
        "idle": "──────────\n❯ \n──────────\n  ? for shortcuts",
    },
    "codex": {
        "working": "• Working (5s • esc to interrupt)",
        "blocked": "› run the tests\n  Allow command?\n  pytest -q",
        "idle": None,
    },
    "gemini": {
        "working": "⠏ Thinking (esc to cancel, 2s)",
        "blocked": "│ Apply this change?\n│ ● Yes, allow once",
        "idle": None,
    },
    "cursor": {
        "working": "⬢ Generating\n ctrl+c to stop",
        "blocked": " Run this command?\n Waiting for approval\n Run (once) (y)  Skip (esc or n)",
        "idle": None,
    },
    "devin": {
        "working": " Running tools · esc to interrupt",
        "blocked": " Approve once   Select   Confirm   Esc cancel",
        "idle": " ❭ \n context: 3%",
    },
    "agy": {
        "working": "⠋ Thinking",
        "blocked": " Requesting permission for: run_command\n Do you want to proceed?",
        "idle": None,
    },
    "cline": {
        "working": "Cline is reading files",
        "blocked": "Let Cline use this tool?",
        "idle": None,
    },
    "opencode": {
        "working": "  esc to interrupt",
        "blocked": "△ Permission required\n  bash: ls",
        "idle": None,
    },
    "copilot": {
        "working": "◉ Thinking (Esc to cancel)",
        "blocked": " Allow this tool?\n ❯ Yes\n   No\n Enter to select · Esc to cancel",
        "idle": None,
    },
    "kimi": {
        "working": "🌑",
        "blocked": " Run this command?\n ▶ Approve once\n   Reject\n ↑↓ select  1/2/3 choose  ↵ confirm",
        "idle": None,
    },
    "kiro": {
        "working": " Kiro is working",
        "blocked": " Shell requires approval\n Yes, single permission",
        "idle": " Ask a question or describe a task\n /copy to clipboard",
    },
    "droid": {
        "working": "⠋ Thinking (esc to stop)",
        "blocked": " ↑↓ navigate  enter select  esc cancel",
        "idle": None,
    },
    "amp": {
        "working": "╰ smart thinking ─────",
        "blocked": " Run this command?\n  make test",
        "idle": None,
    },
    "grok": {
        "working": "⠋ Running the tests [stop]",
        "blocked": " allow bash?\n ↑↓:select  ctrl+o:yolo  ctrl+c:cancel",
        "idle": "> \n ctrl+.:shortcuts",
    },
    "hermes": {
        "working": " thinking...\n ctrl+c to interrupt",
        "blocked": " Dangerous command\n ▸ 1. Allow once\n   2. Deny\n ↑/↓ to select",
        "idle": None,
    },
    "kilo": {
        "working": " esc interrupt",
        "blocked": "△ Permission required",
        "idle": None,
    },
    "qodercli": {
        "working": " Thinking (esc to cancel, 3s)",
        "blocked": " Permission required: bash",
        "idle": None,
    },
    "qwen": {
        "working": "⠋ Thinking (3s · esc to cancel)",
        "blocked": " Do you trust this folder?\n Trust folder (/tmp)\n Don't trust (esc)",
        "idle": "> Type your message or @path/to/file",
    },
    "maki": {
        "working": " ⠋ [BUILD] sonnet",
        "blocked": " Permission required\n y allow  n deny",
        "idle": " [BUILD] sonnet",
    },
}
