"""herdr's agent identification: which agent kind a pane's foreground job runs.

herdr names 22 agent kinds by a canonical label (``claude``, ``copilot``,
``agy``...) and accepts aliases for each (``claude-code``, ``ghcs``,
``antigravity-cli``...), compared after lower-casing, trimming and dropping
one ``.exe``/``.cmd``/``.bat``/``.ps1``/``.js`` suffix
(herdrdev/herdr src/detect/mod.rs:183-223@1c76079f).

:func:`identify_agent_in_job` applies herdr's rule to a foreground job
(``pane.process_info``'s processes): the group leader wins when it names an
agent; otherwise the best-scoring member does, where a process whose
effective name differs from the name we found scores 3 (an interpreter
running an agent script: ``node /usr/bin/codex``, ``python3 .../hermes``),
a non-runtime program 2, a shell or runtime 1, the first of equal scores
winning (src/detect/mod.rs:225-250,335-375,652-667@1c76079f). Scripts are
found past the runtime's own options (``node --require x /bin/claude``) but
never in ``-e``/``-c`` code, nor behind ``python -m``. A renamed binary
(``/opt/x/bin/claude-wrapper`` -> ``claude``) is found through ``resolve``,
the caller's path resolver (the server passes ``os.path.realpath``): the
core never touches the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .types import PaneProcessInfoProcess

__all__ = [
    "AGENT_LABELS",
    "SCREEN_MANIFEST_AGENTS",
    "agent_executable",
    "identify_agent",
    "identify_agent_in_job",
    "parse_agent_label",
]

AGENT_LABELS: tuple[str, ...] = (
    "pi", "claude", "codex", "gemini", "cursor", "devin", "agy", "cline", "omp",
    "mastracode", "opencode", "copilot", "kimi", "kiro", "droid", "amp", "grok",
    "hermes", "kilo", "qodercli", "qwen", "maki",
)  # fmt: skip
"""herdr's agent labels, in its own order (src/detect/mod.rs:43-92@1c76079f)."""

SCREEN_MANIFEST_AGENTS: tuple[str, ...] = tuple(
    label for label in AGENT_LABELS if label not in ("omp", "mastracode")
)
"""The kinds herdr reads state from the screen for (omp and mastracode report by hook)."""

_ALIASES: dict[str, str] = {
    "claude-code": "claude", "cursor-agent": "cursor", "devin-cli": "devin",
    "devin cli": "devin", "antigravity": "agy", "antigravity-cli": "agy",
    "mastra-code": "mastracode", "mastra code": "mastracode", "opencode2": "opencode",
    "open-code": "opencode", "github-copilot": "copilot", "ghcs": "copilot",
    "kimi-code": "kimi", "kimi code": "kimi", "kiro-cli": "kiro", "amp-local": "amp",
    "grok-build": "grok", "hermes-agent": "hermes", "kilo-code": "kilo",
    "kilo code": "kilo", "qoderclicn": "qodercli", "qoder": "qodercli",
    "qodercn": "qodercli", "qwen-code": "qwen", "qwen code": "qwen",
}  # fmt: skip
_LOOKUP = {**{label: label for label in AGENT_LABELS}, **_ALIASES}
_EXECUTABLES = {"cursor": "cursor-agent", "kiro": "kiro-cli"}
_SUFFIXES = (".exe", ".cmd", ".bat", ".ps1", ".js")
_SHELLS = frozenset(
    ("sh", "bash", "zsh", "fish", "tmux", "node", "bun", "cmd", "powershell", "pwsh")
)
_VALUE_OPTIONS = frozenset(
    ("-r", "--require", "--loader", "--import", "--experimental-loader", "--inspect-port",
     "-W", "-X", "-S", "-L", "-o")
)  # fmt: skip

Resolver = Callable[[str], "str | None"]


def _lookup_name(name: str) -> str:
    name = name.strip().lower()
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def parse_agent_label(name: str) -> str | None:
    """Return the canonical label ``name`` (a label or alias, any case) stands for, or None."""
    return _LOOKUP.get(_lookup_name(name))


identify_agent = parse_agent_label
"""Return the agent kind a program name names (herdr's ``identify_agent``), or None."""


def agent_executable(label: str) -> str:
    """Return the program herdr runs for ``label`` (``cursor-agent`` for cursor)."""
    return _EXECUTABLES.get(label, label)


def _basename(path: str) -> str:
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    return parts[-1] if parts else path


def _is_python(name: str) -> bool:
    if name == "python":
        return True
    version = name.removeprefix("python")
    return (
        version not in (name, "")
        and all(part.isdigit() and part.isascii() for part in version.split("."))
    )


def _is_runtime_or_shell(name: str) -> bool:
    name = _lookup_name(_basename(name))
    return _is_python(name) or name in _SHELLS


_PACKAGE_PATHS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli"), "pi"),
    (("node_modules", "@qwen-code", "qwen-code", "dist", "index"), "qwen"),
    (("node_modules", "mastracode", "dist", "cli"), "mastracode"),
)


def _package_agent(path: str) -> str | None:
    parts = [_lookup_name(part) for part in path.replace("\\", "/").split("/") if part]
    for window, label in _PACKAGE_PATHS:
        size = len(window)
        if any(tuple(parts[i : i + size]) == window for i in range(len(parts) - size + 1)):
            return label
    return None


def _token_agent(token: str, resolve: Resolver | None) -> str | None:
    token = token.strip("\"'")
    if not token or token.startswith("-"):
        return None
    found = parse_agent_label(_basename(token)) or _package_agent(token)
    if found is None and resolve is not None and len([p for p in token.split("/") if p]) >= 2:
        resolved = resolve(token)
        found = parse_agent_label(_basename(resolved)) if resolved else None
    return found


def _flag_matches(arg: str, flags: Sequence[str]) -> bool:
    for flag in flags:
        if arg == flag:
            return True
        if flag.startswith("--") and arg.startswith(flag + "="):
            return True
        if not flag.startswith("--") and arg.startswith(flag) and len(arg) > len(flag):
            return True
    return False


def _script_agent(
    argv: Sequence[str], stop_flags: Sequence[str], resolve: Resolver | None
) -> str | None:
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            following = next(args, None)
            return None if following is None else _token_agent(following, resolve)
        if _flag_matches(arg, stop_flags):
            return None
        if arg.startswith("-"):
            if arg in _VALUE_OPTIONS:
                next(args, None)
            continue
        return _token_agent(arg, resolve)
    return None


def _wrapped_agent(runtime: str, argv: Sequence[str], resolve: Resolver | None) -> str | None:
    name = _lookup_name(_basename(runtime))
    if name in ("node", "bun"):
        return _script_agent(argv, ("-e", "--eval", "-p", "--print"), resolve)
    if _is_python(name):
        return _script_agent(argv, ("-c", "-m"), resolve)
    if name in ("sh", "bash", "zsh", "fish"):
        return _script_agent(argv, ("-c",), resolve)
    return None


def _effective_name(process: PaneProcessInfoProcess, resolve: Resolver | None) -> str:
    effective = process.argv0 or process.name
    argv = process.argv or []
    if _is_runtime_or_shell(effective.lower()) and argv:
        wrapped = _wrapped_agent(effective.lower(), argv, resolve)
        if wrapped is not None:
            return wrapped
    if parse_agent_label(effective) is not None:
        return effective
    if argv and _lookup_name(_basename(argv[0])) in ("node", "bun"):
        wrapped = _wrapped_agent(argv[0], argv, resolve)
        if wrapped == "qwen":
            return wrapped
    from_argv = _token_agent(argv[0], resolve) if argv else None
    if from_argv is not None:
        return from_argv
    words = (process.cmdline or "").split()
    return (_token_agent(words[0], resolve) if words else None) or effective


def _score(process: PaneProcessInfoProcess, found: str) -> int:
    if found.lower() != process.name.lower():
        return 3
    return 1 if _is_runtime_or_shell(found.lower()) else 2


def identify_agent_in_job(
    process_group_id: int | None,
    processes: Sequence[PaneProcessInfoProcess],
    resolve: Resolver | None = None,
) -> tuple[str, str] | None:
    """Return ``(agent label, the name it was found by)`` for a foreground job, or None.

    ``processes`` are the job's members (``pane.process_info``); ``resolve``
    maps a path to its real path (None: renamed binaries stay unseen).
    """
    for process in processes:
        if process.pid == process_group_id:
            name = _effective_name(process, resolve)
            label = parse_agent_label(name)
            if label is not None:
                return label, name
    best: tuple[int, str, str] | None = None
    for process in processes:
        name = _effective_name(process, resolve)
        label = parse_agent_label(name)
        if label is None:
            continue
        score = _score(process, name)
        if best is None or score > best[0]:
            best = (score, label, name)
    return None if best is None else (best[1], best[2])
