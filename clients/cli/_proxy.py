"""``shedproto proxy``, ``shedproto replay`` and ``shedproto check``: traffic tools (issue 15).

``proxy`` relays a client and a server byte for byte and prints one line per
deviation (NDJSON with ``--json``); ``replay`` serves a recorded cassette;
``check`` probes a live server with the protocol's edge cases.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ._convention import EXIT_INTERRUPTED
from ._output import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail, json_flag

__all__ = ["register"]

_PROTOCOLS = ("host-agent", "host-agent-status", "desktop", "herdr", "agents-host")

PROXY_EXAMPLE = """\
examples:
  shedproto proxy --protocol herdr --listen /tmp/p/herdr.sock \\
      --upstream ~/.config/herdr/herdr.sock --record session.ndjson --strict
  HERDR_SOCKET_PATH=/tmp/p/herdr.sock herdr workspace list
"""
REPLAY_EXAMPLE = """\
examples:
  shedproto replay --cassette session.ndjson --listen /tmp/r/herdr.sock
  HERDR_SOCKET_PATH=/tmp/r/herdr.sock herdr workspace list
"""
CHECK_EXAMPLE = """\
examples:
  shedproto check --protocol desktop --dialect mac \\
      --socket ~/Library/Caches/ShedDesktop/shed-desktop.sock
"""


def _command(
    subparsers: Any, name: str, summary: str, description: str, example: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        parents=[json_flag()],
        help=summary,
        description=description,
        epilog=example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def register(subparsers: Any) -> None:
    """Add the ``proxy``, ``replay`` and ``check`` commands."""
    proxy = _command(
        subparsers,
        "proxy",
        "relay a protocol's traffic unchanged and report every deviation",
        "Relay a client and a server byte for byte; print one line per deviation. "
        "SIGTERM stops it (exit 1 if --strict met a deviation, else 0), Ctrl-C too (exit 130).",
        PROXY_EXAMPLE,
    )
    _protocol_options(proxy)
    proxy.add_argument("--listen", required=True, help="the socket clients connect to")
    proxy.add_argument("--upstream", required=True, help="the real server's socket")
    proxy.add_argument("--record", help="write a cassette of every connection to this new file")
    proxy.add_argument("--strict", action="store_true", help="exit 1 at the first deviation")
    proxy.set_defaults(func=_proxy)

    replay = _command(
        subparsers,
        "replay",
        "serve a recorded cassette's server side to a client",
        "Serve the server side of a cassette; report frames it did not expect. "
        "SIGTERM stops it (exit 1 if any mismatch occurred, else 0), Ctrl-C too (exit 130).",
        REPLAY_EXAMPLE,
    )
    replay.add_argument("--cassette", required=True, help="the cassette file to serve")
    replay.add_argument("--listen", required=True, help="the socket clients connect to")
    replay.add_argument("--strict", action="store_true", help="exit 1 at the first mismatch")
    replay.set_defaults(func=_replay)

    check = _command(
        subparsers,
        "check",
        "probe a live server with the protocol's edge cases; print a pass/fail table",
        "Probe a live server with the specs' edge cases (read-only by default).",
        CHECK_EXAMPLE,
    )
    _protocol_options(check)
    check.add_argument("--socket", required=True, help="the server's socket")
    check.add_argument(
        "--allow-mutations", action="store_true", help="also run cases that change server state"
    )
    check.add_argument(
        "--timeout", type=float, default=3.0, help="seconds each case waits (default 3)"
    )
    check.set_defaults(func=_check)


def _protocol_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", required=True, choices=_PROTOCOLS)
    parser.add_argument("--dialect", choices=("mac", "tauri"), help="desktop only (default tauri)")
    parser.add_argument("--version", type=int, help="herdr only: protocol number (default newest)")


def _line(args: argparse.Namespace, text: str, data: Any) -> None:
    if args.json:
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _run_until_signal(
    serve: Callable[..., Awaitable[None]], stop: Callable[[], None], ready: Callable[[Any], None]
) -> bool:
    """Run ``serve`` until it ends or SIGINT/SIGTERM asks ``stop`` to end it gracefully.

    Returns whether Ctrl-C (SIGINT) stopped it: the command then exits 130.
    """
    import anyio

    stopped_by: list[int] = []

    async def main() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tasks:

                async def run(*, task_status: Any) -> None:
                    await serve(task_status=task_status)
                    tasks.cancel_scope.cancel()

                ready(await tasks.start(run))
                async for signum in signals:
                    stopped_by.append(signum)
                    stop()
                    break

    from shedproto.servers._loop import run as run_server_loop

    run_server_loop(main)
    return stopped_by == [signal.SIGINT]


def _proxy(args: argparse.Namespace) -> int:
    from shedproto.clients.proxy import Proxy, Recorder
    from shedproto.observe import CassetteHeader, Diagnostic, observer_factory, resolve_options

    try:
        dialect, version = resolve_options(
            args.protocol, dialect=args.dialect, version=args.version
        )
    except ValueError as exc:
        return fail(args, "invalid_argument", str(exc), exit_code=EXIT_USAGE)
    recorder = None
    if args.record:
        header = CassetteHeader(protocol=args.protocol, dialect=dialect, version=version)
        try:
            recorder = Recorder(args.record, header, overwrite=False)
        except FileExistsError:
            return fail(
                args, "invalid_argument", f"{args.record} exists; choose a new cassette path",
                exit_code=EXIT_USAGE,
            )  # fmt: skip
        except OSError as exc:
            return fail(args, "io_error", f"cannot create {args.record}: {exc.strerror}")

    def diagnostic(found: Diagnostic) -> None:
        _line(args, found.human(), found)

    def error(message: str) -> None:
        fail(args, "upstream_unreachable", message)

    proxy = Proxy(
        args.listen,
        args.upstream,
        observer_factory(args.protocol, dialect=dialect, version=version),
        on_diagnostic=diagnostic,
        on_error=error,
        recorder=recorder,
        strict=args.strict,
    )

    def ready(path: Any) -> None:
        text = f"proxy ({args.protocol}) on {path} -> {args.upstream}; Ctrl-C stops it"
        _line(args, text, {"listening": str(path), "upstream": args.upstream})

    if _run_until_signal(proxy.serve, proxy.shutdown, ready):
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if proxy.failed is not None else EXIT_OK


def _replay(args: argparse.Namespace) -> int:
    from shedproto.clients.proxy import ReplayMismatch, ReplayServer
    from shedproto.observe import CassetteError

    failed: list[ReplayMismatch] = []

    def mismatch(found: ReplayMismatch) -> None:
        _line(args, found.human(), found)
        failed.append(found)
        if args.strict:
            server.shutdown()

    try:
        server = ReplayServer(args.cassette, args.listen, on_mismatch=mismatch)
    except CassetteError as exc:
        return fail(args, "invalid_cassette", f"{args.cassette}: {exc.message}")
    except OSError as exc:
        return fail(args, "io_error", f"cannot read {args.cassette}: {exc.strerror}")

    def ready(path: Any) -> None:
        text = f"replaying {args.cassette} ({server.header.protocol}) on {path}; Ctrl-C stops it"
        _line(args, text, {"listening": str(path), "cassette": args.cassette})

    if _run_until_signal(server.serve, server.shutdown, ready):
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if failed else EXIT_OK


def _check(args: argparse.Namespace) -> int:
    import anyio

    from shedproto.clients.proxy import CheckResult, run_check

    async def probe() -> list[CheckResult]:
        return await run_check(
            args.protocol,
            args.socket,
            dialect=args.dialect,
            version=args.version,
            allow_mutations=args.allow_mutations,
            timeout=args.timeout,
        )

    try:
        results = anyio.run(probe)
    except ValueError as exc:
        return fail(args, "invalid_argument", str(exc), exit_code=EXIT_USAGE)
    except OSError as exc:
        return fail(args, "unreachable", f"cannot reach {args.socket}: {exc.strerror or exc}")
    failed = [r for r in results if r.status == "fail"]
    lines = [
        f"{r.status.upper():4}  {r.case}" + (f": {r.detail}" if r.detail else "") for r in results
    ]
    passed = len([r for r in results if r.status == "pass"])
    lines.append(f"{args.protocol}: {passed} passed, {len(failed)} failed, "
                 f"{len(results) - passed - len(failed)} skipped")  # fmt: skip
    if args.json:
        sys.stdout.write(
            msgspec.json.encode({"ok": not failed, "results": results}).decode() + "\n"
        )
    else:
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_FAILURE if failed else EXIT_OK
