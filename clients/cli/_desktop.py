"""``shedproto desktop ...``: talk to (or stand in for) shed-desktop's control socket.

* ``call OP [k=v ...] [--params JSON]``: like shedctl's ``call``; each value
  is parsed as a JSON fragment, else kept as a string (see :mod:`._params`).
  Prints the result, keys sorted (``--json``: ``{"op", "result"}``).
* ``identify``: which app answers, in which dialect, in test mode or not.
* ``ops [--dialect D]``: the op catalogue from the core: name, dialects,
  params, test-mode gating.
* ``serve --dialect mac|tauri [--test-mode] [--socket PATH] [--release R]``: run the
  reference server; SIGTERM stops it (exit 0), Ctrl-C too (exit 130).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._convention import EXIT_INTERRUPTED
from ._demo import DemoStep
from ._output import EXIT_OK, emit, fail, json_flag
from ._params import add_params_arguments, merge_params

__all__ = ["desktop_step", "register"]


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
        epilog="examples:\n  shedproto desktop call sheds.list\n"
        "  shedproto desktop call rc.list host=prod --dialect tauri",
    )
    call.add_argument("op", help="the op, e.g. rc.list (see: shedproto desktop ops)")
    add_params_arguments(call)
    call.set_defaults(func=_call)

    identify = subparsers.add_parser(
        "identify",
        parents=[json_flag(), common],
        help="show which app answers, and its dialect",
        epilog="examples:\n  shedproto desktop identify\n"
        "  shedproto desktop identify --socket /tmp/shed-tauri-1000/shed-tauri.sock --json",
    )
    identify.set_defaults(func=_identify)

    ops = subparsers.add_parser(
        "ops",
        parents=[json_flag()],
        help="list the op catalogue: dialects, params, test-mode gating",
        description="List every op the core knows: which dialects have it, its params "
        "(? marks optional ones) and whether test mode gates it.",
        epilog="examples:\n  shedproto desktop ops\n  shedproto desktop ops --dialect mac --json",
    )
    ops.add_argument("--dialect", choices=["mac", "tauri"], help="only the ops of this dialect")
    ops.set_defaults(func=_ops)

    serve = subparsers.add_parser(
        "serve",
        parents=[json_flag()],
        help="run the reference shed-desktop server",
        description="Serve the control socket from an in-memory model until SIGTERM (exit 0) "
        "or Ctrl-C (exit 130); the socket file is removed either way.",
        epilog="examples:\n  shedproto desktop serve --dialect tauri --test-mode\n"
        "  shedproto desktop serve --dialect tauri --release 0.0.14\n"
        "  shedproto desktop serve --dialect mac --socket /tmp/desk/ctl.sock --json",
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
    serve.add_argument(
        "--release",
        choices=["latest", "0.0.14"],
        default="latest",
        help="answer like the newer app (default) or shed-desktop v0.0.14",
    )
    serve.set_defaults(func=_serve)


def _pretty(value: Any) -> str:
    return msgspec.json.format(msgspec.json.encode(value, order="sorted"), indent=2).decode()


def _connect(args: argparse.Namespace) -> Any:
    from shedproto.clients.desktop import BlockingDesktopClient
    from shedproto.desktop import Dialect

    dialect = Dialect(args.dialect) if args.dialect else None
    return BlockingDesktopClient.connect(args.socket, dialect=dialect, timeout=args.timeout)


def _call(args: argparse.Namespace) -> int:
    from shedproto.desktop import DesktopError

    params = merge_params(args.params, args.pairs)
    try:
        with _connect(args) as client:
            result = client.call(args.op, params)
    except DesktopError as exc:
        return fail(args, exc.code, f"{exc.code}: {exc.message}")
    emit(args, _pretty(result), {"op": args.op, "result": result})
    return EXIT_OK


def _identify(args: argparse.Namespace) -> int:
    from shedproto.desktop import DesktopError

    try:
        with _connect(args) as client:
            info = client.identify()
            dialect = client.dialect
    except DesktopError as exc:
        return fail(args, exc.code, f"{exc.code}: {exc.message}")
    data = {"dialect": dialect.value, **msgspec.to_builtins(info)}
    text = "\n".join(f"{key}: {value}" for key, value in data.items())
    emit(args, text, data)
    return EXIT_OK


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and "[" not in repr(annotation) else repr(annotation)


def _ops(args: argparse.Namespace) -> int:
    from shedproto.desktop import CATALOGUE, Dialect

    dialects = [Dialect(args.dialect)] if args.dialect else list(Dialect)
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    for name in sorted(CATALOGUE):
        spec = CATALOGUE[name]
        shapes = {d.value: spec.shape(d) for d in dialects if spec.shape(d) is not None}
        if not shapes:
            continue
        params: dict[str, list[dict[str, Any]]] = {}
        gates: dict[str, str] = {}
        for dialect, shape in shapes.items():
            assert shape is not None
            params[dialect] = [
                {"name": f.encode_name, "required": f.required, "type": _type_name(f.type)}
                for f in msgspec.structs.fields(shape.params)
            ]
            gates[dialect] = shape.gate.value
        rows.append(
            {"name": name, "dialects": list(shapes), "params": params, "gate": gates,
             "alias_of": spec.alias_of}
        )  # fmt: skip
        lines.append(_op_line(name, spec.alias_of, params, gates))
    emit(args, "\n".join(lines), rows)
    return EXIT_OK


def _op_line(
    name: str, alias_of: str | None, params: dict[str, list[dict[str, Any]]], gates: dict[str, str]
) -> str:
    def names(fields: list[dict[str, Any]]) -> str:
        return ", ".join(f["name"] + ("" if f["required"] else "?") for f in fields) or "-"

    rendered = {dialect: names(fields) for dialect, fields in params.items()}
    if len(set(rendered.values())) == 1:
        shown = next(iter(rendered.values()))
    else:
        shown = "; ".join(f"{dialect}: {text}" for dialect, text in rendered.items())
    gate_values = set(gates.values()) - {"none"}
    if not gate_values:
        gate = ""
    elif len(set(gates.values())) == 1:
        gate = f" [{gate_values.pop()}]"
    else:
        gate = " [" + ", ".join(f"{d}: {g}" for d, g in gates.items() if g != "none") + "]"
    alias = f" (alias of {alias_of})" if alias_of else ""
    return f"{name:<28} {','.join(params):<10} {shown}{gate}{alias}"


def _serve(args: argparse.Namespace) -> int:
    import anyio

    from shedproto.desktop import Dialect, LaunchPolicy, Release, server_socket_path
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
        release=Release(args.release),
    )
    stopped_by: list[int] = []

    async def run() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:
                bound = await tg.start(server.serve)
                mode = "on" if server.test_mode else "off"
                emit(
                    args,
                    f"serving the {dialect.value} dialect on {bound} (test mode {mode}); "
                    f"release {server.release.value}; Ctrl-C stops",
                    {
                        "dialect": dialect.value,
                        "release": server.release.value,
                        "path": str(bound),
                        "test_mode": server.test_mode,
                    },
                )
                sys.stdout.flush()
                async for signum in signals:
                    stopped_by.append(signum)
                    server.shutdown()  # stop accepting, unlink the socket
                    break

    from shedproto.servers._loop import run as run_server_loop
    run_server_loop(run)
    return EXIT_INTERRUPTED if stopped_by == [signal.SIGINT] else EXIT_OK


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
                        f"{[(e.server, e.kind) for e in _listed(dump.host_errors)]}"
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


def _listed(value: Any) -> list[Any]:
    """Return ``value`` when it is a list, else ``[]`` (a field the release did not send)."""
    return value if isinstance(value, list) else []
