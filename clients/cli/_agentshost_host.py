"""``shedproto agents-host run|submit|receipt|health|sessions``: run the host, talk to it.

* ``run --config FILE [--api-url URL --identity FILE --space NAME] [--once]``
  takes the real host's options and ``CF_API_URL`` / ``CF_IDENTITY`` /
  ``CF_SPACE`` fallbacks (they identify the local target), plus this host's
  ``--socket PATH`` (default ``<runtime dir>/agents-host.sock``). It prints
  the real host's startup lines; exit 0 or 1 as the real host (the real
  validation messages, ``Agent host failed: missing required option:
  --config``...). An option the real host does not know is an argparse usage
  error (exit 2), as everywhere else in this CLI.
* ``submit COMMAND|-`` queues a command (JSON object or string; ``-`` reads
  stdin), ``--producer ID`` for a producer's queue, ``--wait`` for the
  terminal receipt (exit 1 unless it ``succeeded``).
* ``receipt ID``, ``health``, ``sessions [--all | --key KEY]`` read what the
  host published.

Client commands take ``--socket`` (default as ``run``) and ``--json``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._demo import DemoStep
from ._output import EXIT_FAILURE, EXIT_OK, emit, fail, json_flag

__all__ = ["demo_step", "register_host_commands"]


def _socket_flag() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--socket",
        metavar="PATH",
        help="the host's API socket (default: <runtime dir>/agents-host.sock)",
    )
    parent.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for a reply (default 30)"
    )
    return parent


def register_host_commands(commands: Any) -> None:
    """Add ``run``, ``submit``, ``receipt``, ``health``, ``sessions`` to the agents-host group."""
    run = commands.add_parser(
        "run",
        help="run the reference agents-host (local SQLite target, socket API)",
        description="Run the reference agents-host with the real host's options (CF_API_URL, "
        "CF_IDENTITY and CF_SPACE are the fallbacks). They identify the local target: its "
        "key is derived from the API URL origin, the space and the configured ownerDid.",
    )
    run.add_argument("--config", metavar="PATH", help="JSONC source configuration (required)")
    run.add_argument("--api-url", metavar="URL", help="Common Fabric API URL, or CF_API_URL")
    run.add_argument(
        "--identity",
        metavar="PATH",
        help="PKCS#8 identity file, or CF_IDENTITY (must be readable; not parsed here)",
    )
    run.add_argument("--space", metavar="NAME", help="space name or DID, or CF_SPACE")
    run.add_argument(
        "--once", action="store_true", help="collect once, publish final health, and exit"
    )
    run.add_argument(
        "--debug-view",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="accepted for compatibility; this host deploys no debug view",
    )
    run.add_argument(
        "--socket", metavar="PATH", help="the API socket (default: <runtime dir>/agents-host.sock)"
    )
    run.set_defaults(func=_run)

    submit = commands.add_parser(
        "submit", parents=[json_flag(), _socket_flag()], help="queue a command on the host"
    )
    submit.add_argument("command", metavar="COMMAND", help="the command as JSON, or - for stdin")
    submit.add_argument("--producer", help="a configured command producer's queue")
    submit.add_argument("--wait", action="store_true", help="wait for the terminal receipt")
    submit.set_defaults(func=_submit)

    receipt = commands.add_parser(
        "receipt", parents=[json_flag(), _socket_flag()], help="show a command's receipt"
    )
    receipt.add_argument("command_id", metavar="ID")
    receipt.add_argument("--producer", help="the producer whose queue delivered the command")
    receipt.add_argument("--list", action="store_true", help="ID is ignored; list recent receipts")
    receipt.set_defaults(func=_receipt)

    health = commands.add_parser(
        "health", parents=[json_flag(), _socket_flag()], help="show the host's published health"
    )
    health.set_defaults(func=_health)

    sessions = commands.add_parser(
        "sessions", parents=[json_flag(), _socket_flag()], help="show the published sessions"
    )
    which = sessions.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="the all index (default: recent)")
    which.add_argument("--key", help="one session (sourceId/nativeSessionId) with its manifest")
    sessions.set_defaults(func=_sessions)


def _socket(args: argparse.Namespace) -> str:
    from shedproto.servers.agents_host import default_socket_path

    return args.socket or default_socket_path(os.environ)


def _run(args: argparse.Namespace) -> int:
    import anyio

    from shedproto.connector import (
        USAGE,
        CliOptionsError,
        ConfigError,
        ConfigFileError,
        HelpRequested,
        load_agents_host_config_text,
        parse_agents_host_cli_options,
    )
    from shedproto.servers.agents_host import HostRun, run_host

    argv: list[str] = []
    for flag, value in (
        ("--config", args.config),
        ("--api-url", args.api_url),
        ("--identity", args.identity),
        ("--space", args.space),
    ):
        if value is not None:
            argv += [flag, value]
    if args.once:
        argv.append("--once")
    if not args.debug_view:
        argv.append("--no-debug-view")
    socket_path = args.socket
    try:
        options = parse_agents_host_cli_options(argv, os.environ, cwd=os.getcwd())
    except CliOptionsError as exc:
        sys.stderr.write(f"Agent host failed: {exc}\n")
        return EXIT_FAILURE
    if isinstance(options, HelpRequested):  # not reachable: argparse owns --help
        sys.stdout.write(USAGE)
        return EXIT_OK
    try:
        with open(options.config_path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        sys.stderr.write(
            f"Agent host failed: configuration file does not exist: {options.config_path}\n"
        )
        return EXIT_FAILURE
    except OSError as exc:
        sys.stderr.write(
            "Agent host failed: could not read configuration file "
            f"{options.config_path}: {exc.strerror}\n"
        )
        return EXIT_FAILURE
    try:
        config = load_agents_host_config_text(data, options.config_path)
    except (ConfigError, ConfigFileError) as exc:
        sys.stderr.write(f"Agent host failed: {exc}\n")
        return EXIT_FAILURE
    run = HostRun(cli=options, config=config, env=dict(os.environ), socket_path=socket_path)
    return anyio.run(run_host, run)


def _client(args: argparse.Namespace) -> Any:
    from shedproto.clients.agents_host import BlockingAgentsHostClient

    return BlockingAgentsHostClient.connect(_socket(args))


def _call(args: argparse.Namespace, action: Any) -> tuple[Any, int | None]:
    from shedproto import ProtocolError
    from shedproto.clients._transport import ConnectError
    from shedproto.clients.agents_host import AgentsHostApiError

    try:
        with _client(args) as client:
            return action(client), None
    except ConnectError as exc:
        return None, fail(args, "connection_failed", str(exc))
    except AgentsHostApiError as exc:
        return None, fail(args, exc.code, exc.message)
    except (ProtocolError, TimeoutError, OSError) as exc:
        return None, fail(args, "connection_failed", str(exc) or type(exc).__name__)


def _receipt_line(receipt: Any) -> str:
    error = f" ({receipt.error.code}: {receipt.error.message})" if receipt.error else ""
    producer = f" [{receipt.producer}]" if receipt.producer else ""
    return (
        f"{receipt.commandId}{producer} {receipt.status}{error} "
        f"{receipt.sourceId}/{receipt.nativeSessionId}"
    )


def _submit(args: argparse.Namespace) -> int:
    text = sys.stdin.read() if args.command == "-" else args.command
    try:
        command = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return fail(args, "invalid_argument", "COMMAND must be JSON (an object or a string)")
    if not isinstance(command, dict | str):
        return fail(args, "invalid_argument", "COMMAND must be a JSON object or a JSON string")
    result, code = _call(
        args,
        lambda c: c.submit(
            command,
            producer=args.producer,
            wait=args.wait,
            timeout=args.timeout if args.wait else 30,
        ),
    )
    if code is not None:
        return code
    if result.receipt is None:
        emit(args, f"queued {result.commandId}; receipt at {result.receiptPath}", result)
        return EXIT_OK
    emit(args, _receipt_line(result.receipt), result)
    return EXIT_OK if result.receipt.status == "succeeded" else EXIT_FAILURE


def _receipt(args: argparse.Namespace) -> int:
    if args.list:
        result, code = _call(args, lambda c: c.receipts(producer=args.producer))
        if code is not None:
            return code
        emit(args, "\n".join(_receipt_line(r) for r in result.receipts) or "no receipts", result)
        return EXIT_OK
    result, code = _call(args, lambda c: c.receipt(args.command_id, producer=args.producer))
    if code is not None:
        return code
    if result.receipt is None:
        return fail(args, "not_found", f"no receipt for command {args.command_id}")
    emit(args, _receipt_line(result.receipt), result.receipt)
    return EXIT_OK


def _health(args: argparse.Namespace) -> int:
    result, code = _call(args, lambda c: c.health())
    if code is not None:
        return code
    health = result.health
    if health is None:
        return fail(args, "not_found", "the host has not published health yet")
    lines = [f"status: {health.status} (since {health.startedAt}, updated {health.updatedAt})"]
    processing = health.commandProcessing
    lines.append(
        f"commands: accepting={str(processing.accepting).lower()} "
        f"pending receipts={processing.pendingReceiptPublications} "
        f"failed={processing.failedCommands}"
    )
    if health.sync is not None:
        lines.append(f"last collection: {health.sync.reason} {health.sync.status}")
    lines += [f"source {s.id} ({s.driver}): {s.status}" for s in health.sources]
    emit(args, "\n".join(lines), health)
    return EXIT_OK


def _sessions(args: argparse.Namespace) -> int:
    if args.key:
        result, code = _call(args, lambda c: c.session(args.key))
        if code is not None:
            return code
        if result.session is None:
            return fail(args, "not_found", f"no session {args.key}")
        row = result.session
        emit(args, f"{row.key} {row.syncStatus} {row.title or ''}".rstrip(), result)
        return EXIT_OK
    result, code = _call(args, lambda c: c.sessions("all" if args.all else "recent"))
    if code is not None:
        return code
    index = result.index
    if index is None:
        return fail(args, "not_found", "the host has not published sessions yet")
    lines = [
        f"{row.key} {row.syncStatus} {row.updatedAt or '-'} {row.title or ''}".rstrip()
        for row in index.sessions
    ]
    emit(args, "\n".join(lines) or "no sessions", index)
    return EXIT_OK


async def demo_step(socket_dir: Path) -> DemoStep:
    """Run a host with an ACP echo agent; submit start and prompt; show what it published."""
    import anyio

    from shedproto.clients.agents_host import AgentsHostClient
    from shedproto.connector import AgentsHostCliOptions, parse_agents_host_config
    from shedproto.servers.agents_host import HostRun, run_host

    owner = "did:key:z6MkDemoOwner"
    root = socket_dir / "agents-host"
    root.mkdir(mode=0o700, parents=True)
    identity = root / "operator.key"
    identity.write_bytes(b"demo")
    config = parse_agents_host_config(
        {
            "schema": "commonfabric.agents-host.config",
            "ownerDid": owner,
            "collectionIntervalMs": 0,
            "sources": [
                {
                    "id": "echo",
                    "driver": "acp",
                    "enabled": True,
                    "command": [
                        sys.executable,
                        "-m",
                        "shedproto.servers.agents_host.example_agent",
                    ],
                }
            ],
        }
    )
    lines: list[str] = []
    run = HostRun(
        cli=AgentsHostCliOptions(
            config_path=str(root / "agents.jsonc"),
            api_url="http://localhost:8000",
            identity_path=str(identity),
            space="did:key:z6MkDemoSpace",
        ),
        config=config,
        env={
            "XDG_STATE_HOME": str(root / "state"),
            "CF_AGENTS_HOST_LOCK_DIR": str(root / "run"),
            "HOME": str(root),
        },
        socket_path=str(socket_dir / "ah.sock"),
        out=lambda line: lines.append(f"host: {line}"),
        err=lambda line: lines.append(f"host (stderr): {line}"),
        handle_signals=False,
    )
    status: list[int] = []
    ok = False
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            async def main() -> None:
                status.append(await run_host(run))
                run.ready.set()

            tg.start_soon(main)
            await run.ready.wait()
            if not status:
                async with await AgentsHostClient.connect(socket_dir / "ah.sock") as client:
                    ok = await _demo_commands(client, owner, lines)
                run.stop_requested.set()
    lines.append(f"host exited with status {status[0] if status else '?'}")
    return DemoStep(name="agents-host", ok=ok and status == [0], lines=lines)


def _demo_command(
    owner: str,
    command_id: str,
    *,
    session: str,
    payload: dict[str, Any],
    type_: str = "prompt",
) -> dict[str, Any]:
    """Return a command for the demo's ``echo`` source (no pytest-based helpers)."""
    from shedproto.connector import COMMAND_SCHEMA

    return {
        "schema": COMMAND_SCHEMA,
        "ownerDid": owner,
        "id": command_id,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "sourceId": "echo",
        "nativeSessionId": session,
        "type": type_,
        "payload": payload,
    }


async def _demo_commands(client: Any, owner: str, lines: list[str]) -> bool:
    """Submit a start and a prompt, then report receipts, sessions and settled health."""
    import anyio

    start = _demo_command(
        owner, "demo-start", type_="start", session="new", payload={"text": "hello"}
    )
    started = (await client.submit(start, wait=True)).receipt
    assert started is not None
    lines.append(f"receipt: {_receipt_line(started)}")
    session = (started.result or {}).get("nativeSessionId", "new")
    prompt = _demo_command(owner, "demo-prompt", session=session, payload={"text": "how are you?"})
    prompted = (await client.submit(prompt, wait=True)).receipt
    assert prompted is not None
    lines.append(f"receipt: {_receipt_line(prompted)}")
    await client.collect()
    index = None
    for _ in range(200):
        index = (await client.sessions("all")).index
        if index is not None and any(len(row.recentMessages) == 4 for row in index.sessions):
            break
        await anyio.sleep(0.01)
    for row in index.sessions if index is not None else ():
        texts = " | ".join(m.textPreview or "" for m in row.recentMessages)
        lines.append(f"session {row.key} {row.syncStatus}: {texts}")
    health = None
    for _ in range(200):  # the collection just requested settles first
        health = (await client.health()).health
        if health is not None and health.status == "ready":
            break
        await anyio.sleep(0.01)
    if health is not None:
        lines.append(f"health: {health.status}, {len(health.activity)} activity entries")
    return (
        started.status == "succeeded"
        and prompted.status == "succeeded"
        and health is not None
        and health.status == "ready"
    )
