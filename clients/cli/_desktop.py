"""``shedproto desktop ...``: talk to (or stand in for) shed-desktop's control socket.

* ``call OP [k=v ...] [--params JSON]``: shedctl-compatible; each value is
  parsed as a JSON fragment, else kept as a string; an argument without ``=``
  is ignored (as shedctl does). Prints the result, keys sorted.
* ``identify``: which app answers, in which dialect, in test mode or not.
* ``serve --dialect mac|tauri [--test-mode] [--socket PATH]``: run the
  reference server until interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._demo import DemoStep
from ._output import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, emit, fail, json_flag

__all__ = ["desktop_step", "parse_call_args", "register"]


def register(subparsers: Any) -> None:
    """Add the ``desktop`` commands to the group's sub-parsers."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--socket",
        metavar="PATH",
        help="socket path (default: $SHED_DESKTOP_SOCKET, then the app's)",
    )
    common.add_argument(
        "--dialect", choices=["mac", "tauri"], help="which app's default socket to use"
    )
    common.add_argument("--timeout", type=float, default=15.0, help="seconds to wait (default 15)")

    call = subparsers.add_parser(
        "call",
        parents=[json_flag(), common],
        help="send one op and print its result (shedctl call)",
        description="Send OP with params k=v (JSON fragment, else string) and print the result.",
    )
    call.add_argument("op", help="the op, e.g. rc.list")
    call.add_argument("pairs", nargs="*", metavar="k=v", help="params; values are JSON or strings")
    call.add_argument("--params", metavar="JSON", help="a JSON object of params (k=v override it)")
    call.set_defaults(func=_call)

    identify = subparsers.add_parser(
        "identify", parents=[json_flag(), common], help="show which app answers, and its dialect"
    )
    identify.set_defaults(func=_identify)

    serve = subparsers.add_parser(
        "serve",
        parents=[json_flag()],
        help="run the reference shed-desktop server",
        description="Serve the control socket from an in-memory model until interrupted.",
    )
    serve.add_argument("--dialect", choices=["mac", "tauri"], required=True)
    serve.add_argument(
        "--test-mode",
        action="store_true",
        help="enable test mode (else SHED_DESKTOP_TEST_MODE / SHED_TAURI_TEST_MODE decide)",
    )
    serve.add_argument("--socket", metavar="PATH", help="socket path (default: the app's own)")
    serve.add_argument("--mock-base-url", metavar="URL", help="what identify reports in test mode")
    serve.add_argument(
        "--launch-policy",
        choices=["ignore_extras", "refuse_extras"],
        default="ignore_extras",
        help="launch extras: ignored (current Tauri code) or refused (newest ipc.md)",
    )
    serve.set_defaults(func=_serve)


def parse_call_args(pairs: list[str], params_json: str | None) -> dict[str, Any]:
    """Build params from ``--params`` and ``k=v`` pairs the way shedctl does.

    Raises:
        ValueError: ``--params`` is not a JSON object, or a key is empty.

    """
    params: dict[str, Any] = {}
    if params_json is not None:
        try:
            base = msgspec.json.decode(params_json)
        except msgspec.DecodeError as exc:
            raise ValueError(f"--params is not valid JSON: {exc}") from None
        if not isinstance(base, dict):
            raise ValueError("--params must be a JSON object")
        params.update(base)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            continue  # shedctl ignores an argument without '='
        if not key:
            raise ValueError(f"empty key in {pair!r}")
        try:
            params[key] = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            params[key] = raw
    return params


def _pretty(value: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(value, order="sorted"), indent=2).decode()


def _connect(args: argparse.Namespace) -> Any:
    from shedproto.clients.desktop import DesktopClient
    from shedproto.desktop import Dialect

    dialect = Dialect(args.dialect) if args.dialect else None
    return DesktopClient.connect(args.socket, dialect=dialect, timeout=args.timeout)


def _call(args: argparse.Namespace) -> int:
    from shedproto import ProtocolError
    from shedproto.desktop import DesktopError

    try:
        params = parse_call_args(args.pairs, args.params)
    except ValueError as exc:
        return fail(args, "usage", str(exc), exit_code=EXIT_USAGE)
    try:
        with _connect(args) as client:
            result = client.call(args.op, params)
    except DesktopError as exc:
        if args.json:
            return fail(args, exc.code, exc.message)
        sys.stderr.write(f"error: {exc.code}: {exc.message}\n")
        return EXIT_FAILURE
    except (OSError, ProtocolError) as exc:
        return fail(args, type(exc).__name__, str(exc))
    emit(args, _pretty(result), result)
    return EXIT_OK


def _identify(args: argparse.Namespace) -> int:
    from shedproto import ProtocolError
    from shedproto.desktop import DesktopError

    try:
        with _connect(args) as client:
            info = client.identify()
            dialect = client.dialect
    except DesktopError as exc:
        return fail(args, exc.code, exc.message)
    except (OSError, ProtocolError) as exc:
        return fail(args, type(exc).__name__, str(exc))
    data = {"dialect": dialect.value, **msgspec.to_builtins(info)}
    text = "\n".join(f"{key}: {value}" for key, value in data.items())
    emit(args, text, data)
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    import signal

    import anyio

    from shedproto.desktop import Dialect, LaunchPolicy, server_socket_path
    from shedproto.servers import BindError
    from shedproto.servers.desktop import DesktopServer

    dialect = Dialect(args.dialect)
    path = args.socket or server_socket_path(
        dialect, os.environ, uid=os.getuid(), home=str(Path.home())
    )
    server = DesktopServer(
        path,
        dialect=dialect,
        test_mode=True if args.test_mode else None,
        mock_base_url=args.mock_base_url,
        launch_policy=LaunchPolicy(args.launch_policy),
    )

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            bound = await tg.start(server.serve)
            mode = "on" if server.test_mode else "off"
            emit(
                args,
                f"serving the {dialect.value} dialect on {bound} (test mode {mode}); Ctrl-C stops",
                {"dialect": dialect.value, "path": str(bound), "test_mode": server.test_mode},
            )
            sys.stdout.flush()
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    server.shutdown()  # stop accepting, unlink the socket, exit 0
                    break

    try:
        anyio.run(run)
    except BindError as exc:
        return fail(args, "bind_error", str(exc))
    except KeyboardInterrupt:
        pass
    return EXIT_OK


async def desktop_step(socket_dir: Path) -> DemoStep:
    """Run the ``shedproto demo`` step: both dialects, envelopes, roost.run, craze replay."""
    import anyio

    from shedproto.clients.desktop import AsyncDesktopClient
    from shedproto.desktop import CreateTicket, DesktopError, Dialect
    from shedproto.servers.desktop import CrazeSource, DesktopModel, DesktopServer

    lines: list[str] = []
    ok = True
    for dialect in Dialect:
        model = DesktopModel()
        model.add_shed("prod", "web")
        model.make_host_unreachable("lab", kind="agent_upgrade_required", summary="update lab")
        model.add_machine("mini", craze=CrazeSource())
        server = DesktopServer(
            socket_dir / f"{dialect.value}.sock",
            dialect=dialect,
            model=model,
            test_mode=True,
            env={},
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await AsyncDesktopClient.connect(path, timeout=5) as client:
                info = await client.identify()
                answered = client.dialect.value if client.dialect else "?"
                lines.append(
                    f"{dialect.value}: identify says dialect={answered}"
                    f" test_mode={info.test_mode} on {path}"
                )
                ok &= client.dialect is dialect
                try:
                    await client.call("no.such.op")
                except DesktopError as exc:
                    lines.append(f"{dialect.value}: unknown op -> {exc.code}: {exc.message}")
                    ok &= exc.matches("unknown_op")
                if dialect is Dialect.TAURI:
                    run = await client.roost_run("codex --model x\tfast", machine="mini")
                    lines.append(f"tauri: roost.run split argv {run.argv} into tab {run.slug}")
                    ok &= run.argv == ["codex", "--model", "x", "fast"]
                    dump = await client.dashboard_dump()
                    lines.append(
                        f"tauri: dashboard.dump rows={len(dump.rows)} host_errors="
                        f"{[(e.server, e.kind) for e in dump.host_errors]}"
                    )
                    model.lose_craze_answers("mini", 2, applied=True)
                    ticket = CreateTicket()
                    try:
                        await client.craze_create("mini", "/src", ticket=ticket)
                        ok = False
                    except DesktopError as exc:
                        kept = ticket.request_id
                        lines.append(
                            f"tauri: craze.create lost twice -> {exc.code}, id kept: {kept}"
                        )
                    again = await client.craze_create("mini", "/src", ticket=ticket)
                    crazes = [s for s in model.sessions if s.source == "craze"]
                    lines.append(
                        f"tauri: retry under the same id replayed session {again.host_id}; "
                        f"sessions created: {len(crazes)}"
                    )
                    ok &= len(crazes) == 1
            server.shutdown()
    return DemoStep(name="desktop-control", ok=ok, lines=lines)
