"""``shedproto herdr ...``: talk to a herdr server (or serve the reference one).

* ``ping``: version, protocol and capabilities (herdr's ``status``), plus
  whether the protocol equals this library's (herdr's compatibility rule).
* ``call METHOD [--params JSON]``: any method; prints the result as JSON.
* ``subscribe TYPE...``: prints pushed events as NDJSON until the server
  closes (``--count N`` stops after N events). A TYPE is a dotted
  subscription type or a JSON object for the parameterized ones.
* ``serve [--socket PATH] [--protocol N]``: run the reference server.

The socket is resolved as herdr resolves it (``--session``,
``HERDR_SOCKET_PATH``, ``HERDR_SESSION``, the config directory) unless
``--socket`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._demo import DemoStep
from ._output import EXIT_OK, EXIT_USAGE, emit, fail, json_flag

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the herdr commands to the ``herdr`` group's sub-parsers."""
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--socket", help="API socket path (default: resolved as herdr does)")
    target.add_argument("--session", help="herdr session name (like herdr --session)")
    target.add_argument(
        "--protocol", type=int, default=None, help="protocol to speak (default: newest)"
    )
    target.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per request (default 30)"
    )
    ping = subparsers.add_parser(
        "ping", parents=[target, json_flag()], help="show the server's version and protocol"
    )
    ping.set_defaults(func=_ping)
    call = subparsers.add_parser(
        "call", parents=[target, json_flag()], help="call any API method and print its result"
    )
    call.add_argument("method", help="dotted method name, e.g. workspace.list")
    call.add_argument("--params", default="{}", help="params as a JSON object (default {})")
    call.set_defaults(func=_call)
    subscribe = subparsers.add_parser(
        "subscribe", parents=[target, json_flag()], help="stream events as NDJSON"
    )
    subscribe.add_argument("types", nargs="+", metavar="TYPE", help="e.g. workspace.created")
    subscribe.add_argument("--count", type=int, default=None, help="stop after N events")
    subscribe.set_defaults(func=_subscribe)
    serve = subparsers.add_parser(
        "serve", parents=[json_flag()], help="run the herdr reference server"
    )
    serve.add_argument("--socket", help="socket path (default: resolved as herdr does)")
    serve.add_argument(
        "--protocol", type=int, default=None, help="protocol to speak (20, 21 or 22; default 22)"
    )
    serve.add_argument(
        "--server-version", default=None, help="version to report (default: that protocol's herdr)"
    )
    serve.add_argument("--shell", default=None, help="program each pane runs (default $SHELL)")
    serve.set_defaults(func=_serve)


def _client(args: argparse.Namespace) -> Any:
    from shedproto.clients.herdr import BlockingHerdrClient
    from shedproto.herdr import DEFAULT_PROTOCOL

    protocol = DEFAULT_PROTOCOL if args.protocol is None else args.protocol
    if args.socket:
        return BlockingHerdrClient.for_socket(args.socket, protocol=protocol, timeout=args.timeout)
    return BlockingHerdrClient.local(session=args.session, protocol=protocol, timeout=args.timeout)


def _run(args: argparse.Namespace, action: Any) -> int:
    from shedproto import LocalProtocolError, ProtocolError
    from shedproto.herdr import HerdrApiError

    try:
        return int(action())
    except HerdrApiError as exc:
        return fail(args, exc.code, f"{exc.code}: {exc.message}")
    except LocalProtocolError as exc:
        return fail(args, exc.code.value, exc.message, exit_code=EXIT_USAGE)
    except ProtocolError as exc:
        return fail(args, exc.code.value, exc.message)
    except TimeoutError:
        return fail(args, "timeout", "the server did not answer in time")
    except OSError as exc:
        return fail(args, "connect_failed", str(exc))


def _ping(args: argparse.Namespace) -> int:
    def action() -> int:
        client = _client(args)
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
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        return fail(args, "invalid_argument", f"--params is not JSON: {exc}", exit_code=EXIT_USAGE)
    if not isinstance(params, dict):
        return fail(
            args, "invalid_argument", "--params must be a JSON object", exit_code=EXIT_USAGE
        )

    def action() -> int:
        result = _client(args).request(args.method, params)
        body = msgspec.json.format(msgspec.json.encode(result), indent=2).decode()
        emit(args, body, result)
        return EXIT_OK

    return _run(args, action)


def _subscribe(args: argparse.Namespace) -> int:
    subscriptions: list[Any] = []
    for item in args.types:
        if item.lstrip().startswith("{"):
            try:
                subscriptions.append(json.loads(item))
            except json.JSONDecodeError as exc:
                return fail(
                    args,
                    "invalid_argument",
                    f"bad subscription {item!r}: {exc}",
                    exit_code=EXIT_USAGE,
                )
        else:
            subscriptions.append(item)

    def action() -> int:
        client = _client(args)
        client.timeout = args.timeout
        seen = 0
        with client.subscribe(*subscriptions) as events:
            for event in events:
                sys.stdout.write(msgspec.json.encode(event).decode() + "\n")
                sys.stdout.flush()
                seen += 1
                if args.count is not None and seen >= args.count:
                    break
        return EXIT_OK

    try:
        return _run(args, action)
    except KeyboardInterrupt:
        return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    import anyio

    from shedproto.herdr import DEFAULT_PROTOCOL, SUPPORTED_PROTOCOLS, api_socket_path
    from shedproto.servers import BindError
    from shedproto.servers.herdr import HerdrServer

    protocol = DEFAULT_PROTOCOL if args.protocol is None else args.protocol
    if protocol not in SUPPORTED_PROTOCOLS:
        supported = ", ".join(map(str, SUPPORTED_PROTOCOLS))
        return fail(
            args, "version_unsupported", f"protocol {protocol} is not one of {supported}",
            exit_code=EXIT_USAGE,
        )  # fmt: skip
    path = args.socket or api_socket_path(os.environ)
    shell = [args.shell] if args.shell else None
    server = HerdrServer(path, protocol=protocol, version=args.server_version, shell=shell)
    args.server_version = server.version

    async def main() -> None:
        # SIGINT/SIGTERM end it gracefully (exit 0, socket removed); relying on
        # KeyboardInterrupt would leave it wrapped in an exception group on 3.10.
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:
                bound = await tg.start(server.serve)
                emit(
                    args,
                    f"herdr reference server (protocol {protocol}) on {bound}; Ctrl-C stops it",
                    {"socket": str(bound), "protocol": protocol, "version": args.server_version},
                )
                sys.stdout.flush()
                async for _ in signals:
                    server.shutdown()
                    break

    try:
        anyio.run(main)
    except BindError as exc:
        return fail(args, "bind_failed", str(exc))
    return EXIT_OK


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
