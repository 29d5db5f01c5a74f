"""``herdr ARGS...`` as herdr's own client subcommands: global ``--session``, then dispatch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from ._agent import AGENT
from ._pane import PANE
from ._plugin import PLUGIN
from ._runtime import CliError, Context, Reported, Usage, dumps, environment, rust_debug_error
from ._server import API, INTEGRATION, NOTIFICATION, SERVER, status
from ._sessions import TAB, WORKSPACE, WORKTREE
from ._terminal import TERMINAL
from ._toplevel import toplevel

__all__ = ["COMMANDS", "run"]

Handler = Callable[[Context, Sequence[str]], int]
Group = tuple[dict[str, Handler], list[str]]

COMMANDS: dict[str, Group | Handler] = {
    "workspace": WORKSPACE,
    "tab": TAB,
    "pane": PANE,
    "agent": AGENT,
    "terminal": TERMINAL,
    "worktree": WORKTREE,
    "notification": NOTIFICATION,
    "integration": INTEGRATION,
    "plugin": PLUGIN,
    "api": API,
    "status": status,
    "server": SERVER,
}
"""Top-level subcommand -> (its subcommands, its help lines) or a handler taking the rest."""

PROTOCOL_ENV = "SHEDPROTO_HERDR_CLIENT_PROTOCOL"
VERSION_ENV = "SHEDPROTO_HERDR_CLIENT_VERSION"


def _strip_session(argv: Sequence[str]) -> tuple[list[str], str | None]:
    """Remove herdr's global ``--session NAME`` / ``--session=NAME`` (not after ``--``)."""
    cleaned: list[str] = []
    session = None
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            cleaned.extend(argv[index:])
            break
        if arg == "--session":
            if index + 1 >= len(argv):
                raise ValueError("missing value for --session")
            session = argv[index + 1]
            index += 2
            continue
        if arg.startswith("--session="):
            session = arg.removeprefix("--session=")
        else:
            cleaned.append(arg)
        index += 1
    return cleaned, session


def _check_session(env: Mapping[str, str], session: str | None) -> None:
    from shedproto import LocalProtocolError
    from shedproto.herdr import normalize_session_name

    try:
        if session is not None:
            normalize_session_name(session)
        elif "HERDR_SOCKET_PATH" not in env and "HERDR_SESSION" in env:
            normalize_session_name(env["HERDR_SESSION"])
    except LocalProtocolError as exc:
        raise ValueError(exc.message) from None


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    client_protocol: int | None = None,
    client_version: str | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run ``herdr ARGV`` and return its exit code (0 ok, 1 failure, 2 usage).

    ``env`` defaults to ``os.environ``; the client's protocol defaults to
    ``SHEDPROTO_HERDR_CLIENT_PROTOCOL`` and then the library's newest, its
    version to ``SHEDPROTO_HERDR_CLIENT_VERSION``. Never raises for anything a
    user or a server can cause; Ctrl-C returns 130.
    """
    import sys

    from shedproto.herdr import DEFAULT_PROTOCOL

    env = environment(env)
    ctx = Context(
        env=env, stdout=stdout or sys.stdout, stderr=stderr or sys.stderr, stdin=stdin or sys.stdin
    )
    try:
        args, session = _strip_session(argv)
        _check_session(env, session)
        raw_protocol = env.get(PROTOCOL_ENV)
        if client_protocol is None and raw_protocol:
            if not raw_protocol.isdigit():
                raise ValueError(f"{PROTOCOL_ENV} must be a protocol number, got {raw_protocol!r}")
            client_protocol = int(raw_protocol)
    except ValueError as exc:
        ctx.err(f"error: {exc}")
        ctx.err("run 'herdr --help' for usage")
        return 2
    ctx.session = session
    ctx.client_protocol = DEFAULT_PROTOCOL if client_protocol is None else client_protocol
    ctx.client_version = client_version or env.get(VERSION_ENV) or ctx.client_version
    try:
        return _dispatch(ctx, args)
    except Usage as exc:
        ctx.err(exc.message)
        return exc.code
    except Reported as exc:
        ctx.err(dumps(exc.response))
        return 1
    except CliError as exc:
        ctx.err(rust_debug_error(str(exc), exc.kind))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (``herdr ... | head``): stop quietly, as a pipeline expects
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _requested_help(ctx: Context, args: Sequence[str]) -> bool:
    """Print help on stdout for ``GROUP [SUB] --help`` (``-h``), as herdr's clap spec does.

    Only when the flag directly follows a known command path; returns whether it printed.
    """
    index = next((i for i, arg in enumerate(args[:3]) if arg in ("--help", "-h")), 0)
    entry = COMMANDS.get(args[0]) if index else None
    if entry is None or callable(entry):
        return False  # ``status`` and ``api`` answer their own help
    lines = entry[1]
    if index == 2:
        if args[1] not in entry[0]:
            return False
        prefix = f"  herdr {args[0]} {args[1]}"
        lines = [line.strip() for line in lines if line.startswith(prefix)]
    for line in lines:
        ctx.out(line)
    return True


def _dispatch(ctx: Context, args: Sequence[str]) -> int:
    handled = toplevel(ctx, args, COMMANDS)
    if handled is not None:
        return handled
    if _requested_help(ctx, args):
        return 0
    launcher_help = bool(args) and args[0].startswith("-") and ("--help" in args or "-h" in args)
    if not args or args[0] in ("help", "--help", "-h") or launcher_help:
        raise Usage(
            "usage: herdr <" + "|".join(COMMANDS) + "> ...\n"
            "(this herdr stand-in serves herdr's client subcommands only)\n\n"
            "examples:\n"
            "  herdr workspace list\n"
            "  HERDR_SOCKET_PATH=/tmp/h/herdr.sock herdr pane read w1:p1 --source recent\n"
            "  shedproto herdr cli --session work agent list",
            0 if args else 2,
        )
    entry = COMMANDS.get(args[0])
    if entry is None:
        raise Usage(
            f"error: unknown command {args[0]!r}: this herdr stand-in serves only "
            f"{', '.join(COMMANDS)}"
        )
    if callable(entry):
        return entry(ctx, args[1:])
    handlers, help_lines = entry
    verb = args[1] if len(args) > 1 else None
    if verb in ("help", "--help", "-h"):
        raise Usage("\n".join(help_lines), 0)
    handler = handlers.get(verb) if verb is not None else None
    if handler is None:
        raise Usage("\n".join(help_lines))
    return handler(ctx, args[2:])
