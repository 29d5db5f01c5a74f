"""herdr's commands that work on local files, not the socket (``completion``, ``config``...).

The commands are ``completion``, ``config``, ``channel``, ``update``, ``session
list|stop|delete``, and the flags ``--default-config`` and ``--skill``.

What is offered follows herdr's own rules (herdrdev/herdr src/cli.rs:95-280,
src/cli/completion.rs:1-87, src/main.rs:590-620 and src/update.rs:1096-1108@v0.8.2):
usage lines, exit codes and message forms are herdr's. What cannot be offered
here (self-update, editing herdr's config.toml, deleting a session directory,
printing herdr's bundled default config or agent skill) exits 1 with one line in
herdr's form. ``completion`` prints a script of this library's own making that
completes this CLI's commands.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._runtime import Context

__all__ = [
    "LAUNCHER_WORDS",
    "SHELLS",
    "command_words",
    "completion_script",
    "config_path",
    "local_command",
    "refused_flag",
]

SHELLS = ("bash", "elvish", "fish", "powershell", "zsh")
"""The shells ``herdr completion`` knows (src/cli/completion.rs:5@v0.8.2)."""

LAUNCHER_WORDS = ("server", "completion", "config", "channel", "update")
"""Top-level words served besides the socket commands (completed after them)."""

_SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "server": ("stop", "reload-config"),
    "completion": SHELLS,
    "config": ("check", "reset-keys"),
    "channel": ("show", "set"),
    "update": ("--handoff",),
}

_STAND_IN = "this herdr stand-in (shedproto)"
_CONFIG_HELP = (
    "herdr config commands:\n"
    "  herdr config check  validate config.toml and print diagnostics\n"
    "  herdr config reset-keys  back up config.toml and remove custom keybindings"
)
_CHANNEL_HELP = (
    "herdr channel commands:\n"
    "  herdr channel show                  print the configured update channel\n"
    "  herdr channel set <stable|preview>  choose the update channel"
)
_UPDATE_USAGE = "usage: herdr update [--handoff]"
_SESSION_HELP = (
    "herdr session commands:\n"
    "  herdr session list [--json]\n"
    "  herdr session attach <name>\n"
    "  herdr session stop <name> [--json]\n"
    "  herdr session delete <name> [--json]\n"
    "  use 'default' as <name> to target the default session for stop"
)
STOP_WAIT_SECONDS = 15.0
"""How long ``session stop`` waits for the sockets to go (src/session.rs:14@v0.8.2)."""


def local_command(ctx: Context, args: Sequence[str], tree: Mapping[str, Any]) -> int | None:
    """Run ``args`` when it is one of this module's commands; ``None`` otherwise.

    ``tree`` is the CLI's command table (``_main.COMMANDS``), for ``completion``.
    """
    command = args[0] if args else None
    rest = list(args[1:])
    if command in ("completion", "completions"):
        return _completion(ctx, rest, tree)
    if command == "config":
        return _config(ctx, rest)
    if command == "channel":
        return _channel(ctx, rest)
    if command == "update":
        return _update(ctx, rest)
    if command == "session" and rest[:1] != ["attach"]:
        return _session(ctx, rest)
    return None


def refused_flag(ctx: Context, args: Sequence[str]) -> int | None:
    """Refuse ``--default-config`` / ``--skill`` (herdr prints files built into its binary).

    Returns 1 after one line on stderr, or ``None`` when neither flag is given.
    """
    for flag, what in (("--default-config", "default configuration"), ("--skill", "agent skill")):
        if flag in args:
            ctx.err(f"herdr: `herdr {flag}` is not available in {_STAND_IN}: herdr's {what} "
                    "is built into herdr's own binary")  # fmt: skip
            return 1
    return None


def _completion(ctx: Context, args: list[str], tree: Mapping[str, Any]) -> int:
    usage = f"usage: herdr completion <{'|'.join(SHELLS)}>"
    if args[:1] in (["help"], ["--help"], ["-h"]):
        ctx.err(usage)
        return 0
    if len(args) != 1:
        ctx.err(usage)
        return 2
    if args[0] not in SHELLS:
        ctx.err(f"unknown shell: {args[0]}")
        ctx.err(usage)
        return 2
    ctx.stdout.write(completion_script(args[0], command_words(tree)))
    return 0


def command_words(tree: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Return each top-level word and the words that may follow it."""
    words: dict[str, tuple[str, ...]] = {}
    for name, entry in tree.items():
        words[name] = tuple(entry[0]) if isinstance(entry, tuple) else ()
    for name in LAUNCHER_WORDS:
        words[name] = tuple(dict.fromkeys((*words.get(name, ()), *_SUBCOMMANDS[name])))
    return words


def completion_script(shell: str, words: Mapping[str, Sequence[str]]) -> str:
    """Return a ``shell`` script completing ``herdr``'s first two words from ``words``.

    Raises:
        ValueError: ``shell`` is not one of :data:`SHELLS`.

    """
    first = " ".join(words)
    if shell == "bash":
        cases = "".join(
            f'            {name}) words="{" ".join(subs)}" ;;\n'
            for name, subs in words.items() if subs
        )  # fmt: skip
        return (
            "# bash completion for herdr (the shedproto herdr stand-in)\n"
            "_herdr() {\n"
            '    local cur="${COMP_WORDS[COMP_CWORD]}" words=""\n'
            '    if [ "$COMP_CWORD" -eq 1 ]; then\n'
            f'        words="{first}"\n'
            '    elif [ "$COMP_CWORD" -eq 2 ]; then\n'
            '        case "${COMP_WORDS[1]}" in\n'
            f"{cases}"
            "        esac\n"
            "    fi\n"
            '    COMPREPLY=($(compgen -W "$words" -- "$cur"))\n'
            "}\n"
            "complete -F _herdr herdr\n"
        )
    if shell == "zsh":
        cases = "".join(
            f"        {name}) choices=({' '.join(subs)}) ;;\n"
            for name, subs in words.items() if subs
        )  # fmt: skip
        return (
            "#compdef herdr\n"
            "# zsh completion for herdr (the shedproto herdr stand-in)\n"
            "_herdr() {\n"
            "    local -a choices\n"
            "    if (( CURRENT == 2 )); then\n"
            f"        choices=({first})\n"
            "    elif (( CURRENT == 3 )); then\n"
            "        case ${words[2]} in\n"
            f"{cases}"
            "        esac\n"
            "    fi\n"
            "    compadd -a choices\n"
            "}\n"
            "compdef _herdr herdr\n"
        )
    if shell == "fish":
        lines = [
            "# fish completion for herdr (the shedproto herdr stand-in)",
            f"complete -c herdr -f -n __fish_use_subcommand -a '{first}'",
        ]
        lines += [
            f"complete -c herdr -f -n '__fish_seen_subcommand_from {name}' -a '{' '.join(subs)}'"
            for name, subs in words.items() if subs
        ]  # fmt: skip
        return "\n".join(lines) + "\n"
    if shell == "elvish":
        cases = "".join(
            f"    }} elif (eq $args[1] {name}) {{\n        put {' '.join(subs)}\n"
            for name, subs in words.items() if subs
        )  # fmt: skip
        return (
            "# elvish completion for herdr (the shedproto herdr stand-in)\n"
            "set edit:completion:arg-completer[herdr] = {|@args|\n"
            "  var n = (count $args)\n"
            "  if (== $n 2) {\n"
            f"    put {first}\n"
            "  } elif (== $n 3) {\n"
            "    if $false {\n"
            f"{cases}"
            "    }\n"
            "  }\n"
            "}\n"
        )
    if shell == "powershell":
        table = "".join(
            f"        '{name}' = @({', '.join(repr(s) for s in subs)})\n"
            for name, subs in words.items() if subs
        )  # fmt: skip
        return (
            "# PowerShell completion for herdr (the shedproto herdr stand-in)\n"
            "Register-ArgumentCompleter -Native -CommandName herdr -ScriptBlock {\n"
            "    param($wordToComplete, $commandAst, $cursorPosition)\n"
            "    $first = @(" + ", ".join(repr(w) for w in words) + ")\n"
            "    $next = @{\n"
            f"{table}"
            "    }\n"
            "    $elements = @($commandAst.CommandElements | ForEach-Object { $_.ToString() })\n"
            "    $index = $elements.Count - $(if ($wordToComplete) { 1 } else { 0 })\n"
            "    $choices = if ($index -le 1) { $first } "
            "elseif ($index -eq 2) { $next[$elements[1]] } else { @() }\n"
            '    $choices | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {\n'
            "        [System.Management.Automation.CompletionResult]::new($_, $_, "
            "'ParameterValue', $_)\n"
            "    }\n"
            "}\n"
        )
    raise ValueError(f"unknown shell: {shell}")


def config_path(env: Mapping[str, str]) -> Path:
    """Return herdr's config file: ``HERDR_CONFIG_PATH``, else ``config.toml`` in its config dir.

    herdrdev/herdr src/config/io.rs:169-174 and src/config.rs:52@v0.8.2.
    """
    from shedproto.herdr import config_dir

    override = env.get("HERDR_CONFIG_PATH")
    return Path(override) if override else Path(config_dir(env)) / "config.toml"


def _read_config(ctx: Context) -> tuple[dict[str, Any] | None, str | None]:
    """Return (the parsed config or None when absent, herdr's diagnostic line or None)."""
    path = config_path(ctx.env)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"config read error: {exc}; using defaults"
    try:  # the standard library's from Python 3.11 (3.10 has no TOML parser)
        tomllib: Any = importlib.import_module("tomllib")
    except ImportError:
        return None, "config parse error: cannot parse TOML on Python 3.10; using defaults"
    try:
        parsed: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return None, f"config parse error: {exc}; using defaults"
    return parsed, None


def _config(ctx: Context, args: list[str]) -> int:
    sub = args[0] if args else None
    if sub in ("help", "--help", "-h"):
        ctx.err(_CONFIG_HELP)
        return 0
    if sub == "check":
        if args[1:] in (["help"], ["--help"], ["-h"]):
            ctx.err("usage: herdr config check")
            return 0
        if args[1:]:
            ctx.err("usage: herdr config check")
            return 2
        _, problem = _read_config(ctx)
        if problem is None:
            ctx.out("config: ok")
            return 0
        ctx.out("config: issues found")
        ctx.out(problem)
        return 1
    if sub == "reset-keys":
        if args[1:]:
            ctx.err("usage: herdr config reset-keys")
            return 2
        ctx.err(f"herdr: `herdr config reset-keys` is not available in {_STAND_IN}: it would "
                f"rewrite {config_path(ctx.env)}, a file this tool did not create")  # fmt: skip
        return 1
    ctx.err(_CONFIG_HELP)
    return 2


def _channel(ctx: Context, args: list[str]) -> int:
    if args == ["show"]:
        parsed, _ = _read_config(ctx)
        update = parsed.get("update") if parsed else None
        channel = update.get("channel") if isinstance(update, dict) else None
        ctx.out(channel if channel in ("stable", "preview") else "stable")
        return 0
    if args[:1] == ["set"]:
        if len(args) != 2 or args[1] not in ("stable", "preview"):
            ctx.err("usage: herdr channel set <stable|preview>")
            return 2
        ctx.err(f"herdr: `herdr channel set` is not available in {_STAND_IN}: it would "
                f"rewrite {config_path(ctx.env)}, a file this tool did not create")  # fmt: skip
        return 1
    ctx.err(_CHANNEL_HELP)
    return 0 if args[:1] in (["help"], ["--help"], ["-h"]) else 2


def _update(ctx: Context, args: list[str]) -> int:
    for arg in args:
        if arg in ("--help", "-h"):
            ctx.err(_UPDATE_USAGE)
            return 0
        if arg != "--handoff":
            ctx.err(f"unknown update option: {arg}")
            ctx.err(_UPDATE_USAGE)
            return 2
    # herdr's wording for an install it cannot update itself (src/update.rs:2077-2092@v0.8.2)
    ctx.err("self-update is disabled for this herdr stand-in (shedproto); "
            "run `pip install --upgrade shedproto`")  # fmt: skip
    return 1


def _session(ctx: Context, args: list[str]) -> int:
    """``session list|stop|delete`` (src/cli.rs:418-520 and src/session.rs:187-330@v0.8.2)."""
    sub = args[0] if args else None
    if sub == "list":
        if args[1:] not in ([], ["--json"]):
            ctx.err("usage: herdr session list [--json]")
            return 2
        sessions = list_sessions(ctx.env)
        if args[1:]:
            ctx.out(_dumps({"sessions": sessions}))
            return 0
        ctx.out(f"{'name':<20} {'status':<8} {'directory':<48} socket")
        for info in sessions:
            status = "running" if info["running"] else "stopped"
            ctx.out(
                f"{info['name']:<20} {status:<8} {info['session_dir']:<48} {info['socket_path']}"
            )
        return 0
    if sub in ("stop", "delete"):
        parsed = _name_and_json(args[1:])
        if parsed is None:
            ctx.err(f"usage: herdr session {sub} <name> [--json]")
            return 2
        name, json_out = parsed
        if sub == "delete":
            ctx.err(f"herdr: `herdr session delete` is not available in {_STAND_IN}: it would "
                    "remove a session directory this tool did not create")  # fmt: skip
            return 1
        return _session_stop(ctx, name, json_out)
    ctx.err(_SESSION_HELP)
    return 0 if sub in ("help", "--help", "-h") else 2


def _name_and_json(args: list[str]) -> tuple[str, bool] | None:
    name: str | None = None
    json_out = False
    for arg in args:
        if arg == "--json":
            json_out = True
        elif name is None:
            name = arg
        else:
            return None
    return None if name is None else (name, json_out)


def _dumps(value: object) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


def _session_error(ctx: Context, code: str, message: str) -> int:
    ctx.err(_dumps({"error": {"code": code, "message": message}}))
    return 1


def session_info(env: Mapping[str, str], name: str | None) -> dict[str, Any]:
    """Return herdr's ``SessionInfo`` of ``name`` (``None``: the default session)."""
    from shedproto.herdr import api_socket_path, data_dir
    from shedproto.herdr._paths import DEFAULT_SESSION_NAME

    socket_path = api_socket_path(env, session=name or DEFAULT_SESSION_NAME)
    return {
        "name": name or DEFAULT_SESSION_NAME,
        "default": name is None,
        "running": _reachable(socket_path),
        "socket_path": socket_path,
        "session_dir": data_dir(env, name),
    }


def list_sessions(env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Return the default session, then every valid named session directory, sorted."""
    from shedproto import LocalProtocolError
    from shedproto.herdr import config_dir, validate_session_name
    from shedproto.herdr._paths import DEFAULT_SESSION_NAME

    sessions = [session_info(env, None)]
    names = []
    try:
        entries = list(Path(config_dir(env), "sessions").iterdir())
    except OSError:
        entries = []
    for entry in entries:
        if not entry.is_dir() or entry.name == DEFAULT_SESSION_NAME:
            continue
        try:
            validate_session_name(entry.name)
        except LocalProtocolError:
            continue
        names.append(entry.name)
    return sessions + [session_info(env, name) for name in sorted(names)]


def _reachable(path: str) -> bool:
    """Return herdr's ``is_running_at``: the socket file exists and a connection succeeds."""
    import socket

    if not Path(path).exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def _session_stop(ctx: Context, name: str, json_out: bool) -> int:
    """Send ``server.stop`` to the session's socket, then wait until its sockets are gone."""
    import socket

    from shedproto import LocalProtocolError
    from shedproto.herdr import (
        api_socket_path,
        derive_client_socket_path,
        normalize_session_name,
    )
    from shedproto.herdr._paths import DEFAULT_SESSION_NAME

    try:
        target = normalize_session_name(name)
    except LocalProtocolError as exc:
        return _session_error(ctx, "invalid_session_name", exc.message)
    path = api_socket_path(ctx.env, session=target or DEFAULT_SESSION_NAME)
    label = f"session {target or DEFAULT_SESSION_NAME}"
    deadline = ctx.monotonic() + STOP_WAIT_SECONDS
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(STOP_WAIT_SECONDS)
            conn.connect(path)
            conn.sendall(b'{"id":"cli:session:stop","method":"server.stop","params":{}}\n')
            answer = conn.makefile("rb").readline()
    except OSError as exc:
        reason = f"{exc.strerror or exc} (os error {exc.errno})" if exc.errno else str(exc)
        message = f"{label} is not running or cannot be reached at {path}: {reason}"
        return _session_error(ctx, "session_stop_failed", message)
    error = _error_of(answer)
    if error is not None:
        return _session_error(ctx, "session_stop_failed", error)
    paths = [path, derive_client_socket_path(path)]
    while any(_reachable(p) for p in paths):
        if ctx.monotonic() >= deadline:
            live = ", ".join(p for p in paths if _reachable(p))
            message = (
                f"{label} did not stop within {int(STOP_WAIT_SECONDS * 1000)}ms; "
                f"sockets are still reachable at {live}"
            )
            return _session_error(ctx, "session_stop_failed", message)
        ctx.sleep(0.025)
    info = session_info(ctx.env, target)
    if json_out:
        ctx.out(_dumps({"stopped": True, "session": info}))
    else:
        ctx.out(f"stopped session {info['name']}")
    return 0


def _error_of(answer: bytes) -> str | None:
    """Return the ``error`` object of an answer line as JSON text, else ``None``."""
    import json

    try:
        value = json.loads(answer)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) else None
    return None if error is None else _dumps(error)
