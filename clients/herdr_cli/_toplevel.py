"""herdr's launcher commands: ``herdr server`` (headless), ``--version``, the TUI launches.

The TUI launches and the commands that need herdr's own binary or files are
refused with herdr's message form.

herdr's own rules (herdrdev/herdr src/main.rs:559-800@v0.8.2): ``herdr server``
with no subcommand runs the headless server in the foreground
(``server::headless::run_server``), refusing a live one with ``error: herdr
server is already running`` / ``api socket: PATH`` (exit 1,
src/server/headless.rs:5073-5076); ``--version``/``-V`` anywhere prints ``herdr
VERSION``; an unknown flag or command is ``unknown option: X`` / ``unknown
command: X`` plus ``run 'herdr --help' for usage`` (exit 2); ``herdr`` with no
command (or ``--no-session``, ``--remote``, ``session attach``) starts the
terminal UI, and a failure there prints ``herdr: <why>`` (exit 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._local import local_command, refused_flag
from ._runtime import Context, Usage

if TYPE_CHECKING:
    from shedproto.servers import BindError

__all__ = ["KNOWN_FLAGS", "TUI_COMMANDS", "run_headless_server", "toplevel"]

KNOWN_FLAGS = frozenset(
    {
        "--no-session",
        "--session",
        "--remote",
        "--remote-keybindings",
        "--version",
        "-V",
        "--default-config",
        "--skill",
        "--help",
        "-h",
        "--handoff",
    }
)
"""The flags herdr's launcher accepts (src/main.rs:752-763@v0.8.2)."""

TUI_COMMANDS = frozenset({"client", "remote-client-bridge", "session"})
"""herdr commands that need the terminal UI or herdr's binary: not offered here.

``completion``, ``config``, ``channel``, ``update`` and ``session`` (but ``attach``)
are :mod:`._local`'s.
"""

TUI_MESSAGE = (
    "herdr: the terminal UI is not available in this herdr stand-in (shedproto); "
    "run `herdr server` for the headless server and the socket API"
)
"""What a TUI launch prints (herdr's ``herdr: <why>`` form), with exit 1."""

UNAVAILABLE = "herdr: `herdr {command}` is not available in this herdr stand-in (shedproto)"


def toplevel(ctx: Context, args: Sequence[str], commands: Mapping[str, Any]) -> int | None:
    """Handle what herdr's launcher handles before the TUI; ``None``: not a launcher command.

    ``commands`` is the CLI's command table (its keys are the socket commands).

    Raises:
        Usage: an unknown flag or command (herdr's message, exit 2).

    """
    if args and args[0] in commands and not (args[0] == "server" and len(args) == 1):
        return None  # herdr's CLI subcommands come first (cli::maybe_run)
    local = local_command(ctx, args, commands)
    if local is not None:
        return local
    if any(arg in ("--help", "-h") for arg in args):
        return None  # the CLI's own usage (herdr: help before --version, src/main.rs:625)
    if any(arg in ("--version", "-V") for arg in args):
        ctx.out(f"herdr {ctx.client_version}")
        return 0
    refused = refused_flag(ctx, args)
    if refused is not None:
        return refused
    if args == ["server"]:
        return run_headless_server(ctx)
    for arg in args:
        name = arg.split("=", 1)[0]
        if arg.startswith("-") and name not in KNOWN_FLAGS:
            raise Usage(f"unknown option: {arg}\nrun 'herdr --help' for usage")
    if not args or all(arg.startswith("-") for arg in args):
        ctx.err(TUI_MESSAGE)
        return 1
    if args[0] in TUI_COMMANDS:
        ctx.err(TUI_MESSAGE if args[0] in ("client", "session") else UNAVAILABLE.format(
            command=args[0]))  # fmt: skip
        return 1
    return None


def run_headless_server(ctx: Context) -> int:
    """Run the reference server on herdr's API socket path in the foreground.

    SIGINT and SIGTERM stop it; so does ``herdr server stop`` (``server.stop``).
    Returns 0 when it stopped, 1 when the socket is taken or cannot be bound.
    """
    import signal

    import anyio
    import anyio.abc

    from shedproto.herdr import RELEASES
    from shedproto.servers import BindError, SocketInUseError
    from shedproto.servers._loop import run as run_server_loop
    from shedproto.servers.herdr import HerdrServer

    path = ctx.socket_path
    # one binary: the server is the client's own release when the library models it
    release = RELEASES.get(ctx.client_version)
    own = release is not None and release.protocol == ctx.client_protocol
    server = HerdrServer(
        path,
        protocol=ctx.client_protocol,
        version=ctx.client_version,
        herdr_version=ctx.client_version if own else None,
    )
    shim = ctx.env.get("SHEDPROTO_HERDR_BIN")
    if shim:
        server.handoff_command = [shim]  # herdr hands off to its own binary by default
    failure: list[BindError] = []

    async def main() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:

                async def serve_until_stopped(
                    *, task_status: anyio.abc.TaskStatus[object] = anyio.TASK_STATUS_IGNORED
                ) -> None:
                    await server.serve(task_status=task_status)
                    tg.cancel_scope.cancel()  # stopped: by a signal or by ``server.stop``

                try:
                    await tg.start(serve_until_stopped)
                except BindError as exc:
                    failure.append(exc)
                    tg.cancel_scope.cancel()
                    return
                async for _ in signals:
                    server.shutdown()
                    return

    try:
        run_server_loop(main)
    except Exception as exc:  # a bind refusal, maybe inside the task group's group
        refused = _bind_error(exc)
        if refused is None:
            raise
        failure.append(refused)
    if failure:
        if isinstance(failure[0], SocketInUseError):
            ctx.err("error: herdr server is already running")
            ctx.err(f"api socket: {path}")
        else:
            ctx.err(f"herdr: {failure[0]}")
        return 1
    return 0


def _bind_error(exc: BaseException) -> BindError | None:
    """Return the bind refusal ``exc`` is or holds alone (groups are walked), else None."""
    from shedproto.servers import BindError

    if isinstance(exc, BindError):
        return exc
    members = getattr(exc, "exceptions", None)  # an exception group (the backport on 3.10)
    if isinstance(members, tuple) and len(members) == 1 and isinstance(members[0], BaseException):
        return _bind_error(members[0])
    return None
