"""``shedproto agents-host run|submit|receipt|health|sessions``: run the host, talk to it.

* ``run`` parses its arguments with the spec-exact option parser
  (:func:`~shedproto.connector.parse_agents_host_cli_options`): the real
  host's options, ``CF_API_URL`` / ``CF_IDENTITY`` / ``CF_SPACE`` fallbacks,
  the real messages (``Agent host failed: unknown option: --bogus``) and exit
  codes (0, or 1 for any error). shedproto's own additions are taken out
  first with the same syntax: ``--socket PATH`` (default
  ``<lock dir>/agents-host.sock``), ``--state-dir DIR`` (instead of
  ``$XDG_STATE_HOME/commonfabric/agents-host``), ``--lock-dir DIR`` (sets
  ``CF_AGENTS_HOST_LOCK_DIR``) and ``--json`` (the startup report as JSON).
* ``submit COMMAND|-`` queues a command (JSON object or string; ``-`` reads
  stdin), ``--producer ID`` for a producer's queue, ``--wait`` for the
  terminal receipt (exit 1 unless it ``succeeded``).
* ``receipt ID`` or ``receipt --list``, ``health``, ``sessions [--all | --key
  KEY]`` read what the host published.

Client commands take ``--socket`` (default as ``run``) and ``--json``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._convention import usage_error
from ._demo import DemoStep
from ._fleet import add_target_flags, database_client
from ._output import EXIT_FAILURE, EXIT_OK, emit, fail, json_flag

__all__ = ["demo_step", "register_host_commands", "run_help"]

RUN_EXAMPLES = """\
examples:
  shedproto agents-host init ~/agents-demo     (writes a config and prints these commands)
  shedproto agents-host run --config agents.jsonc --api-url http://localhost:8000 \\
      --identity operator.key --space did:key:z6MkExampleSpace --state-dir state --lock-dir run
"""

RUN_EXTRAS = """\
shedproto additions (the real host has none of these):
  --socket <path>     the API socket for submit/receipt/health/sessions
                      (default: <lock dir>/agents-host.sock)
  --state-dir <dir>   the ledger and target directory
                      (default: $XDG_STATE_HOME/commonfabric/agents-host, else
                      ~/.local/state/commonfabric/agents-host)
  --target <target>   sqlite (default) or a postgresql:// fleet database URL
                      (default: $SHEDPROTO_AGENTS_HOST_TARGET)
  --target-wait <s>   seconds a command (or a socket submit) waits for an unreachable
                      PostgreSQL target before failing with claim-publish-failed
                      (default: 30)
  --heartbeat <s>     seconds between the host's heartbeats in a PostgreSQL fleet
                      database; fleet calls a host stale after 3 missed (default: 5)
  --lock-dir <dir>    the lock directory (default: $CF_AGENTS_HOST_LOCK_DIR, else
                      $XDG_RUNTIME_DIR/commonfabric/agents-host, else
                      /tmp/commonfabric-agents-host-<uid>)
  --json              print the startup report as one JSON line, later lines as JSON

Errors print "Agent host failed: <message>" and exit 1, as the real host.
"""


def run_help() -> str:
    """Return ``run --help``: the real host's usage, shedproto's additions, examples."""
    from shedproto.connector import USAGE

    real = USAGE.split("\n", 1)[1].strip("\n")  # the real usage minus its first line
    head = "Usage: shedproto agents-host run --config <path> [options]"
    return f"{head}\n{real}\n\n{RUN_EXTRAS}\n{RUN_EXAMPLES}"


_RUN_STRINGS = ("socket", "state-dir", "lock-dir", "target", "target-wait", "heartbeat")


def _socket_flag() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--socket",
        metavar="PATH",
        help="the host's API socket (default: <lock dir>/agents-host.sock)",
    )
    parent.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for a reply (default 30)"
    )
    add_target_flags(parent)
    return parent


def register_host_commands(commands: Any) -> None:
    """Add ``run``, ``submit``, ``receipt``, ``health``, ``sessions`` to the agents-host group."""
    run = commands.add_parser(
        "run",
        help="run the reference agents-host (local SQLite target, socket API)",
        description="Run the reference agents-host with the real host's options and messages "
        "(see: shedproto agents-host run --help).",
        prefix_chars="+",  # every token goes to the spec-exact parser, as the real host does
        add_help=False,
        epilog=RUN_EXAMPLES,
    )
    run.add_argument("tokens", nargs=argparse.REMAINDER, metavar="OPTIONS")
    run.set_defaults(func=_run)

    submit = commands.add_parser(
        "submit",
        parents=[json_flag(), _socket_flag()],
        help="queue a command on the host",
        epilog="examples:\n"
        '  shedproto agents-host submit "$(cat command.json)" --wait\n'
        "  shedproto agents-host submit - --producer ci < command.json",
    )
    submit.add_argument("command", metavar="COMMAND", help="the command as JSON, or - for stdin")
    submit.add_argument("--producer", help="a configured command producer's queue")
    submit.add_argument("--wait", action="store_true", help="wait for the terminal receipt")
    submit.set_defaults(func=_submit)

    receipt = commands.add_parser(
        "receipt",
        parents=[json_flag(), _socket_flag()],
        help="show a command's receipt (or --list the recent ones)",
        epilog="examples:\n  shedproto agents-host receipt cmd-01\n"
        "  shedproto agents-host receipt --list --json",
    )
    receipt.add_argument("command_id", metavar="ID", nargs="?", help="the command's id")
    receipt.add_argument("--producer", help="the producer whose queue delivered the command")
    receipt.add_argument("--list", action="store_true", help="list recent receipts (no ID)")
    receipt.set_defaults(func=_receipt)

    health = commands.add_parser(
        "health",
        parents=[json_flag(), _socket_flag()],
        help="show the host's published health",
        epilog="examples:\n  shedproto agents-host health\n"
        "  shedproto agents-host health --socket /tmp/ah/agents-host.sock --json",
    )
    health.set_defaults(func=_health)

    sessions = commands.add_parser(
        "sessions",
        parents=[json_flag(), _socket_flag()],
        help="show the published sessions",
        epilog="examples:\n  shedproto agents-host sessions --all\n"
        "  shedproto agents-host sessions --key echo/session-1 --json",
    )
    which = sessions.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="the all index (default: recent)")
    which.add_argument("--key", help="one session (sourceId/nativeSessionId) with its manifest")
    sessions.set_defaults(func=_sessions)


def _socket(args: argparse.Namespace) -> str:
    from shedproto.servers.agents_host import default_socket_path

    return args.socket or default_socket_path(os.environ)


def _host_failed(message: str) -> int:
    sys.stderr.write(f"Agent host failed: {message}\n")
    return EXIT_FAILURE


class _JsonReport:
    """With ``run --json``: the startup lines as one JSON document, later lines one each."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.lines: list[str] = []
        self.reported = False

    def __call__(self, line: str) -> None:
        if self.reported:
            self._write({"line": line})
            return
        self.lines.append(line)
        if line.startswith("Ready;"):
            self._write({"ready": True, "socket": self.socket_path, "lines": self.lines})
            self.reported = True

    def finish(self) -> None:
        if not self.reported and self.lines:
            self._write({"ready": False, "socket": self.socket_path, "lines": self.lines})

    @staticmethod
    def _write(document: Any) -> None:
        sys.stdout.write(msgspec.json.encode(document).decode() + "\n")
        sys.stdout.flush()


def _run(args: argparse.Namespace) -> int:

    from shedproto.connector import (
        CliOptionsError,
        ConfigError,
        ConfigFileError,
        HelpRequested,
        load_agents_host_config_text,
        parse_agents_host_cli_options,
    )
    from shedproto.connector._cli_options import resolve_target, split_extra_options
    from shedproto.servers.agents_host import HostRun, default_socket_path, run_host

    cwd = os.getcwd()
    try:
        extras, argv = split_extra_options(args.tokens, strings=_RUN_STRINGS, flags=("json",))
        options = parse_agents_host_cli_options(argv, os.environ, cwd=cwd)
        if isinstance(options, HelpRequested):
            sys.stdout.write(run_help())
            return EXIT_OK
        flag = extras.get("target")
        target = resolve_target(None if flag is None else str(flag), os.environ)
        seconds = {name: _seconds_flag(extras, name) for name in ("target-wait", "heartbeat")}
    except CliOptionsError as exc:
        return _host_failed(exc.message)
    options = msgspec.structs.replace(options, target=target)
    try:
        with open(options.config_path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return _host_failed(f"configuration file does not exist: {options.config_path}")
    except OSError as exc:
        return _host_failed(
            f"could not read configuration file {options.config_path}: {exc.strerror}"
        )
    try:
        config = load_agents_host_config_text(data, options.config_path)
    except (ConfigError, ConfigFileError) as exc:
        return _host_failed(str(exc))
    env = dict(os.environ)
    if "lock-dir" in extras:
        env["CF_AGENTS_HOST_LOCK_DIR"] = os.path.join(cwd, str(extras["lock-dir"]))
    state_dir = os.path.join(cwd, str(extras["state-dir"])) if "state-dir" in extras else None
    socket_path = os.path.join(cwd, str(extras["socket"])) if "socket" in extras else None
    run = HostRun(cli=options, config=config, env=env, socket_path=socket_path, state_dir=state_dir)
    if seconds["target-wait"] is not None:
        run.target_wait = seconds["target-wait"]
    if seconds["heartbeat"] is not None:
        run.heartbeat_interval = seconds["heartbeat"]
    report = None
    if extras.get("json"):
        report = _JsonReport(socket_path or default_socket_path(env))
        run.out = report
    from shedproto.servers._loop import run as run_server_loop
    status = run_server_loop(run_host, run)
    if report is not None:
        report.finish()
    return status


def _seconds_flag(extras: dict[str, Any], name: str) -> float | None:
    """Return ``--<name>`` as seconds (``None`` when absent).

    Raises:
        CliOptionsError: ``--<name> must be a positive number of seconds``.

    """
    from shedproto.connector import CliOptionsError

    raw = extras.get(name)
    if raw is None:
        return None
    try:
        value = float(str(raw))
    except ValueError:
        value = -1.0
    if not (0 < value < float("inf")):
        raise CliOptionsError(f"--{name} must be a positive number of seconds")
    return value


def _client(args: argparse.Namespace) -> Any:
    from shedproto.clients.agents_host import BlockingAgentsHostClient

    if args.target:
        return database_client(args)

    return BlockingAgentsHostClient.connect(_socket(args))


def _call(args: argparse.Namespace, action: Any) -> tuple[Any, int | None]:
    """Run ``action(client)``; the host's error answer is one line and exit 1."""
    from shedproto.clients.agents_host import AgentsHostApiError

    try:
        with _client(args) as client:
            return action(client), None
    except AgentsHostApiError as exc:
        return None, fail(args, exc.code, exc.message)


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
    except msgspec.DecodeError as exc:
        return usage_error(args, f"COMMAND is not valid JSON: {exc}")
    if not isinstance(command, dict | str):
        return usage_error(args, "COMMAND must be a JSON object or a JSON string")
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
    if args.list and args.command_id is not None:
        return usage_error(args, "--list takes no ID")
    if not args.list and args.command_id is None:
        return usage_error(args, "an ID is required (or --list)")
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

    from shedproto.clients.agents_host import AsyncAgentsHostClient
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
                async with await AsyncAgentsHostClient.connect(socket_dir / "ah.sock") as client:
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
