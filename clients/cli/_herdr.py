"""``shedproto herdr ...``: talk to a herdr server (or serve the reference one).

* ``ping``: version, protocol and capabilities (herdr's ``status``), plus
  whether the protocol equals this library's (herdr's compatibility rule).
* ``call METHOD [k=v ...] [--params JSON]``: any method, params as for
  ``desktop call``; prints the result as JSON.
* ``subscribe TYPE...``: prints pushed events until the server closes
  (``--count N`` stops after N); ``--json`` prints each whole event as NDJSON.
  A TYPE is a dotted subscription type or a JSON object for the
  parameterized ones.
* ``methods [--protocol N]``: the methods of a protocol, from the core's tables.
* ``serve [--socket PATH] [--protocol N]``: run the reference server.

The socket is resolved as herdr resolves it (``--session``,
``HERDR_SOCKET_PATH``, ``HERDR_SESSION``, the config directory) unless
``--socket`` is given. Commands register in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ._convention import EXIT_INTERRUPTED, usage_error
from ._demo import DemoStep
from ._output import EXIT_OK, EXIT_USAGE, emit, fail, json_flag
from ._params import add_params_arguments, merge_params

__all__ = ["COMMANDS", "register"]


def _target() -> argparse.ArgumentParser:
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--socket", help="API socket path (default: resolved as herdr does)")
    target.add_argument("--session", help="herdr session name (like herdr --session)")
    target.add_argument(
        "--protocol", type=int, default=None, help="protocol to speak (default: newest)"
    )
    target.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per request (default 30)"
    )
    return target


def _add_ping(subparsers: Any) -> None:
    ping = subparsers.add_parser(
        "ping",
        parents=[_target(), json_flag()],
        help="show the server's version and protocol",
        epilog="examples:\n  shedproto herdr ping\n  shedproto herdr ping --session work --json",
    )
    ping.set_defaults(func=_ping)


def _add_call(subparsers: Any) -> None:
    call = subparsers.add_parser(
        "call",
        parents=[_target(), json_flag()],
        help="call any API method and print its result",
        description="Call METHOD with params k=v (JSON fragment, else string) and print the "
        "result as JSON.",
        epilog="examples:\n  shedproto herdr call workspace.list\n"
        "  shedproto herdr call pane.read pane_id=w1:p1 source=recent lines=20",
    )
    call.add_argument("method", help="dotted method name (see: shedproto herdr methods)")
    add_params_arguments(call)
    call.set_defaults(func=_call)


def _add_subscribe(subparsers: Any) -> None:
    subscribe = subparsers.add_parser(
        "subscribe",
        parents=[_target(), json_flag()],
        help="print pushed events until the server closes",
        description="Subscribe and print one line per event: its name and data (--json: the "
        "whole event as NDJSON). Ctrl-C stops (exit 130).",
        epilog="examples:\n  shedproto herdr subscribe workspace.created pane.created\n"
        '  shedproto herdr subscribe \'{"type":"pane.output_matched","pane_id":"w1:p1",'
        '"match":{"type":"substring","value":"done"}}\' --count 1 --json',
    )
    subscribe.add_argument("types", nargs="+", metavar="TYPE", help="e.g. workspace.created")
    subscribe.add_argument("--count", type=int, default=None, help="stop after N events")
    subscribe.set_defaults(func=_subscribe)


def _add_methods(subparsers: Any) -> None:
    methods = subparsers.add_parser(
        "methods",
        parents=[json_flag()],
        help="list the API methods of a protocol, with their params",
        description="List the methods this library knows for a protocol (? marks optional params).",
        epilog="examples:\n  shedproto herdr methods\n"
        "  shedproto herdr methods --protocol 20 --json",
    )
    methods.add_argument("--protocol", type=int, default=None, help="protocol (default: newest)")
    methods.set_defaults(func=_methods)


def _add_serve(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve",
        parents=[json_flag()],
        help="run the herdr reference server",
        description="Serve herdr's JSON socket API until SIGTERM (exit 0) or Ctrl-C (exit 130); "
        "the socket file is removed either way.",
        epilog="examples:\n  shedproto herdr serve --socket /tmp/herdr-demo/api.sock\n"
        "  shedproto herdr serve --protocol 20 --shell /bin/sh --json\n"
        "  shedproto herdr serve --herdr-version 0.9.1\n"
        "  shedproto herdr serve --config-dir /tmp/h/config --home /tmp/h/home",
    )
    serve.add_argument("--socket", help="socket path (default: resolved as herdr does)")
    serve.add_argument(
        "--protocol", type=int, default=None, help="protocol to speak (20, 21 or 22; default 22)"
    )
    serve.add_argument(
        "--herdr-version",
        default=None,
        metavar="X.Y.Z",
        help="herdr release to behave as (default: that protocol's newest; 22: 0.9.0 to 0.9.5)",
    )
    serve.add_argument(
        "--server-version", default=None, help="version to report (default: the release's)"
    )
    serve.add_argument("--shell", default=None, help="program each pane runs (default $SHELL)")
    serve.add_argument(
        "--config-dir",
        default=None,
        help="herdr config directory: agent-detection/ manifests, plugin folders "
        "(default: herdr's own)",
    )
    serve.add_argument(
        "--home",
        default=None,
        help="home directory integration.install may edit (default: none, so it refuses)",
    )
    serve.add_argument(
        "--handoff-import",
        nargs=2,
        metavar=("SOCKET", "TOKEN"),
        default=None,
        help="take over a live handoff (started by server.live_handoff; the session, "
        "socket paths and options come from the old server)",
    )
    serve.set_defaults(func=_serve)
    _register_compat(subparsers)


def _register_compat(subparsers: Any) -> None:
    """Add ``cli ARGS...`` (herdr's own client subcommands) and ``shim DIR``."""
    cli = subparsers.add_parser(
        "cli",
        prefix_chars="+",  # every ARG, --flags included, belongs to herdr's parser
        add_help=False,
        help="run herdr's client subcommands (workspace, pane, agent, ...) as herdr does",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  shedproto herdr cli workspace list\n"
        "  shedproto herdr cli pane read w1:p1 --source recent",
    )
    cli.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")
    cli.set_defaults(func=lambda args: _compat().run(args.args))
    shim = subparsers.add_parser(
        "shim", parents=[json_flag()], help="write an executable `herdr` into DIR that runs `cli`",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  shedproto herdr shim /tmp/bin\n  shedproto herdr shim ./bin --json",
    )  # fmt: skip
    shim.add_argument("dir", help="directory to write `herdr` into (created if missing)")
    shim.set_defaults(func=_shim)


def _compat() -> Any:
    from shedproto.clients import herdr_cli

    return herdr_cli


def _shim(args: argparse.Namespace) -> int:
    compat = _compat()
    try:
        path = compat.write_shim(args.dir)
    except compat.ShimRefused as exc:
        return fail(args, "shim_refused", str(exc))
    except OSError as exc:
        return fail(args, "shim_failed", f"cannot write the shim into {args.dir}: {exc}")
    emit(args, f"wrote {path}; put {path.parent} first on PATH", {"path": str(path)})
    return EXIT_OK


COMMANDS: list[Callable[[Any], None]] = [
    _add_ping,
    _add_call,
    _add_subscribe,
    _add_methods,
    _add_serve,
]
"""Each function adds one command to the group (append a new module's to add one)."""


def register(subparsers: Any) -> None:
    """Add the herdr commands to the ``herdr`` group's sub-parsers."""
    for add in COMMANDS:
        add(subparsers)


def _protocol(args: argparse.Namespace) -> int | None:
    """Return the protocol asked for, or ``None`` after reporting an unsupported one."""
    from shedproto.herdr import DEFAULT_PROTOCOL, SUPPORTED_PROTOCOLS

    protocol: int = DEFAULT_PROTOCOL if args.protocol is None else args.protocol
    if protocol not in SUPPORTED_PROTOCOLS:
        supported = ", ".join(map(str, SUPPORTED_PROTOCOLS))
        usage_error(args, f"protocol {protocol} is not one of {supported}")
        return None
    return protocol


def _client(args: argparse.Namespace, protocol: int) -> Any:
    from shedproto.clients.herdr import BlockingHerdrClient

    if args.socket:
        return BlockingHerdrClient.for_socket(args.socket, protocol=protocol, timeout=args.timeout)
    return BlockingHerdrClient.local(session=args.session, protocol=protocol, timeout=args.timeout)


def _run(args: argparse.Namespace, action: Callable[[Any], int]) -> int:
    """Run ``action(client)``; a server's error answer is one line and exit 1."""
    from shedproto.herdr import HerdrApiError

    protocol = _protocol(args)
    if protocol is None:
        return EXIT_USAGE
    try:
        return action(_client(args, protocol))
    except HerdrApiError as exc:
        return fail(args, exc.code, f"{exc.code}: {exc.message}")


def _ping(args: argparse.Namespace) -> int:
    def action(client: Any) -> int:
        status = client.runtime_status()
        data = {
            "socket": client.path,
            "version": status.version,
            "protocol": status.protocol,
            "client_protocol": status.client_protocol,
            "compatible": status.compatible,
            "capabilities": status.capabilities,
        }
        verdict = "compatible" if status.compatible else "NOT compatible"
        text = (
            f"herdr {status.version} at {client.path}: protocol {status.protocol} "
            f"({verdict} with protocol {status.client_protocol})"
        )
        emit(args, text, data)
        return EXIT_OK

    return _run(args, action)


def _call(args: argparse.Namespace) -> int:
    params = merge_params(args.params, args.pairs)

    def action(client: Any) -> int:
        result = client.request(args.method, params)
        body = msgspec.json.format(msgspec.json.encode(result), indent=2).decode()
        emit(args, body, {"method": args.method, "result": result})
        return EXIT_OK

    return _run(args, action)


def _subscribe(args: argparse.Namespace) -> int:
    subscriptions: list[Any] = []
    for item in args.types:
        if item.lstrip().startswith("{"):
            try:
                subscriptions.append(msgspec.json.decode(item))
            except msgspec.DecodeError as exc:
                return usage_error(args, f"bad subscription {item!r}: {exc}")
        else:
            subscriptions.append(item)

    def action(client: Any) -> int:
        seen = 0
        with client.subscribe(*subscriptions) as events:
            for event in events:
                if args.json:
                    line = msgspec.json.encode(event).decode()
                else:
                    line = f"{event.event} {msgspec.json.encode(event.data).decode()}"
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
                seen += 1
                if args.count is not None and seen >= args.count:
                    break
        return EXIT_OK

    return _run(args, action)


def _methods(args: argparse.Namespace) -> int:
    from shedproto.herdr import types as t

    protocol = _protocol(args)
    if protocol is None:
        return EXIT_USAGE
    params_types: dict[str, Any] = t.PROTOCOL_TABLES[protocol][1]
    rows: list[dict[str, Any]] = []
    for name in sorted(params_types):
        fields = [
            {"name": f.encode_name, "required": f.required}
            for f in msgspec.structs.fields(params_types[name])
        ]
        rows.append({"method": name, "params": fields})
    lines = [
        f"{row['method']:<32} "
        + (", ".join(f["name"] + ("" if f["required"] else "?") for f in row["params"]) or "-")
        for row in rows
    ]
    emit(args, "\n".join(lines), {"protocol": protocol, "methods": rows})
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    import anyio
    import anyio.abc

    from shedproto.herdr import VersionMismatchError, api_socket_path
    from shedproto.servers.herdr import HerdrServer

    if args.handoff_import is not None:
        return _handoff_import(args)
    protocol = _protocol(args)
    if protocol is None:
        return EXIT_USAGE
    path = args.socket or api_socket_path(os.environ)
    shell = [args.shell] if args.shell else None
    try:
        server = HerdrServer(
            path,
            protocol=protocol,
            version=args.server_version,
            herdr_version=args.herdr_version,
            shell=shell,
            config_dir=args.config_dir,
            home=args.home,
        )
    except VersionMismatchError as exc:
        usage_error(args, exc.message)
        return EXIT_USAGE
    stopped_by: list[int] = []
    args.server_version = server.version

    async def main() -> None:
        # SIGINT/SIGTERM end it gracefully (socket removed); relying on
        # KeyboardInterrupt would leave it wrapped in an exception group on 3.10.
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:

                async def serve_until_stopped(
                    *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
                ) -> None:
                    await server.serve(task_status=task_status)
                    tg.cancel_scope.cancel()  # server.stop or a live handoff: the command ends

                bound = await tg.start(serve_until_stopped)
                emit(
                    args,
                    f"herdr reference server (protocol {protocol}) on {bound}; Ctrl-C stops it",
                    {
                        "socket": str(bound),
                        "protocol": protocol,
                        "version": args.server_version,
                        "herdr_version": server.release.version,
                    },
                )
                sys.stdout.flush()
                async for signum in signals:
                    stopped_by.append(signum)
                    server.shutdown()
                    break

    from shedproto.servers._loop import run as run_server_loop
    run_server_loop(main)
    return EXIT_INTERRUPTED if stopped_by == [signal.SIGINT] else EXIT_OK


def _handoff_import(args: argparse.Namespace) -> int:
    """``serve --handoff-import SOCKET TOKEN``: be the successor of a live handoff."""
    from shedproto.servers.herdr import ImportIdentity, run_handoff_import

    taken = [flag for flag, value in (("--socket", args.socket), ("--shell", args.shell),
             ("--config-dir", args.config_dir), ("--home", args.home)) if value]  # fmt: skip
    if taken:
        return usage_error(
            args, f"--handoff-import takes the old server's options; drop {', '.join(taken)}"
        )
    identity = ImportIdentity(
        protocol=args.protocol, version=args.server_version, herdr_version=args.herdr_version
    )
    socket_path, token = args.handoff_import
    code: int = run_handoff_import(socket_path, token, identity)
    return code


async def demo_step(socket_dir: Path) -> DemoStep:
    """Drive the herdr reference server end to end (the ``shedproto demo`` step).

    A workspace with a real shell, text in and output back, a split, an agent
    kind running a harmless program (``cat``), the lifecycle events of it all,
    and every process reaped at the end.
    """
    import time

    import anyio

    from shedproto.clients.herdr import AsyncHerdrClient
    from shedproto.herdr import types as t
    from shedproto.servers.herdr import HerdrServer

    lines: list[str] = []
    server = HerdrServer(
        socket_dir / "herdr.sock",
        shell=["/bin/sh"],
        agent_commands={"claude": "cat"},
        cwd="/tmp",
        poll_interval=0.02,
    )
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            status = await client.runtime_status()
            lines.append(
                f"herdr reference server {status.version}, protocol {status.protocol}, on {path}"
            )
            start = time.perf_counter()
            created = await client.workspace_create(cwd="/tmp", focus=True)
            pane = created.root_pane.pane_id
            await client.pane_send_text(pane, "echo hello from $HERDR_PANE_ID\r")
            matched = await client.pane_wait_for_output(
                pane, "recent", t.SubstringOutputMatch(value="hello from w1:p1"), timeout_ms=10_000
            )
            where = f"{created.workspace.workspace_id}/{pane}"
            lines.append(f"{where}: a real /bin/sh printed {matched.matched_line!r}")
            split = await client.pane_split("down", target_pane_id=pane)
            agent = await client.agent_start("helper", "claude", split.pane.pane_id)
            lines.append(
                f"split {split.pane.pane_id}; agent {agent.agent.name!r} typed {agent.argv} (cat)"
            )
            kinds: list[str] = []
            async with client.subscribe("tab.created", "pane.created") as events:
                await client.tab_create(workspace_id=created.workspace.workspace_id)
                async for event in events:
                    kinds.append(event.event)
                    if len(kinds) == 2:
                        break
            lines.append(f"subscription saw {sorted(kinds)} (protocol 22: no history replay)")
            pids = [p.process.pid for ws in server.workspaces for p in ws.panes()]
            await client.workspace_close(created.workspace.workspace_id)
            elapsed = (time.perf_counter() - start) * 1000
            server.shutdown()
    leftovers = [pid for pid in pids if _process_exists(pid)]
    ok = bool(matched.matched_line) and sorted(kinds) == ["pane_created", "tab_created"]
    ok = ok and not leftovers
    lines.append(f"closed everything in {elapsed:.0f} ms; pane processes left: {len(leftovers)}")
    return DemoStep(name="herdr", ok=ok, lines=lines)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
