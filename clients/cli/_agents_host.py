"""``shedproto agents-host ...``: check configurations, options, targets and ledgers.

* ``init [DIR]`` -- write a commented example configuration (one ACP source
  on the example agent) and print the commands to try next.
* ``check-config FILE`` -- validate a JSONC configuration; print the normalised
  configuration (defaults filled in) as JSON, or the exact validation message.
* ``check-options ARGS...`` -- resolve ``run``'s options as the real host
  would (``CF_API_URL`` / ``CF_IDENTITY`` / ``CF_SPACE`` fallbacks); its
  messages are the real host's, exit 1 when ``run`` would refuse them.
* ``target --api-url URL --space DID --owner DID`` -- the target key and where
  its ledger and locks live on this machine.
* ``ledger FILE`` -- validate a command ledger file and summarise it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from ._agents_host_init import register_init
from ._agents_host_run import register_host_commands
from ._demo import DemoStep
from ._fleet import register_fleet
from ._output import EXIT_OK, emit, fail, json_flag

__all__ = ["register"]


CHECK_OPTIONS_EXAMPLES = (
    "examples:\n  shedproto agents-host check-options --config agents.jsonc --once\n"
    "  CF_SPACE=did:key:z6MkSpace shedproto agents-host check-options --config a.jsonc --json"
)
"""The examples ``check-options --help`` ends with, after the real host's usage."""


def register(subparsers: Any) -> None:
    """Add the agents-host commands to the group's sub-parsers (the host's own included)."""
    register_init(subparsers)
    register_host_commands(subparsers)
    register_fleet(subparsers)
    check = subparsers.add_parser(
        "check-config",
        parents=[json_flag()],
        help="validate a configuration file and print it normalised",
        description="Validate an agents-host JSONC configuration file. A valid file "
        "prints the normalised configuration as JSON (exit 0; --json: {path, valid, config}); "
        "an invalid one prints the real host's validation message on stderr (exit 1).",
        epilog="examples:\n  shedproto agents-host check-config agents.jsonc\n"
        "  shedproto agents-host check-config ~/agents-demo/agents.jsonc --json",
    )
    check.add_argument("file", metavar="FILE", help="the JSONC configuration file")
    check.set_defaults(func=_check_config)

    options = subparsers.add_parser(
        "check-options",
        help="resolve agents-host command-line options (with CF_* fallbacks)",
        description="Resolve ARGS as `agents-host run` would (the real host's parser, "
        "messages and CF_* fallbacks); exit 1 with the message run would print. --json "
        "prints the result as JSON; a leading -- is ignored.",
        prefix_chars="+",  # every token goes to the spec-exact parser
        add_help=False,
        epilog=CHECK_OPTIONS_EXAMPLES,
    )
    options.add_argument("argv", nargs=argparse.REMAINDER, metavar="ARGS")
    options.set_defaults(func=_check_options)

    target = subparsers.add_parser(
        "target",
        parents=[json_flag()],
        help="show a target's key and its ledger and lock paths",
        epilog="examples:\n  shedproto agents-host target --api-url http://localhost:8000 "
        "--space did:key:z6MkSpace --owner did:key:z6MkOwner\n"
        "  shedproto agents-host target --api-url https://fabric.example --space did:key:s "
        "--owner did:key:o --state-dir state --json",
    )
    target.add_argument("--api-url", required=True, help="Common Fabric API URL")
    target.add_argument("--space", required=True, help="the resolved space DID")
    target.add_argument("--owner", required=True, help="the owner DID")
    target.add_argument("--state-dir", metavar="DIR", help="as run --state-dir")
    target.add_argument("--lock-dir", metavar="DIR", help="as run --lock-dir")
    target.set_defaults(func=_target)

    ledger = subparsers.add_parser(
        "ledger",
        parents=[json_flag()],
        help="validate a command ledger file and summarise it",
        epilog="examples:\n  shedproto agents-host ledger state/target-<key>.command-ledger.json"
        "\n  shedproto agents-host ledger LEDGER --json",
    )
    ledger.add_argument("file", metavar="FILE", help="a target-<key>.command-ledger.json file")
    ledger.set_defaults(func=_ledger)


def _check_config(args: argparse.Namespace) -> int:
    from shedproto.connector import ConfigError, ConfigFileError, load_agents_host_config_text

    path = os.path.abspath(args.file)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return fail(args, "invalid_argument", f"configuration file does not exist: {path}")
    except OSError as exc:
        return fail(
            args, "invalid_argument", f"could not read configuration file {path}: {exc.strerror}"
        )
    try:
        config = load_agents_host_config_text(data, path)
    except (ConfigError, ConfigFileError) as exc:
        return fail(args, exc.code.value, exc.message)
    document = msgspec.json.format(msgspec.json.encode(config), indent=2).decode()
    emit(args, document, {"path": path, "valid": True, "config": config})
    return EXIT_OK


def _check_options(args: argparse.Namespace) -> int:
    from shedproto.connector import (
        CliOptionsError,
        HelpRequested,
        parse_agents_host_cli_options,
    )
    from shedproto.connector._cli_options import split_extra_options

    try:
        extras, argv = split_extra_options(args.argv, flags=("json",))
        args.json = bool(extras.get("json"))
        if argv[:1] == ["--"]:  # the separator older versions needed
            argv = argv[1:]
        result = parse_agents_host_cli_options(argv, os.environ, cwd=os.getcwd())
    except CliOptionsError as exc:
        return fail(args, exc.code.value, exc.message)
    if isinstance(result, HelpRequested):
        text = f"{result.usage.rstrip()}\n\n{CHECK_OPTIONS_EXAMPLES}"
        emit(args, text, {"help": True, "usage": result.usage})
        return EXIT_OK
    data = msgspec.to_builtins(result)
    text = "\n".join(f"{key}: {value}" for key, value in data.items())
    emit(args, text, data)
    return EXIT_OK


def _target(args: argparse.Namespace) -> int:
    from shedproto.connector import (
        TargetError,
        TargetIdentity,
        ledger_lock_path,
        ledger_path,
        lock_directory,
        state_directory,
        target_lock_path,
    )

    try:
        identity = TargetIdentity(args.api_url, args.space, args.owner)
        uid = None if sys.platform == "win32" else os.getuid()
        cwd = os.getcwd()
        env = dict(os.environ)
        if args.lock_dir:
            env["CF_AGENTS_HOST_LOCK_DIR"] = args.lock_dir
        state = (
            os.path.join(cwd, args.state_dir)
            if args.state_dir
            else state_directory(env, platform=sys.platform, cwd=cwd)
        )
        locks = lock_directory(env, platform=sys.platform, uid=uid, cwd=cwd)
    except TargetError as exc:
        return fail(args, exc.code.value, exc.message)
    ledger = ledger_path(state, identity.key, platform=sys.platform)
    data = {
        "origin": identity.origin,
        "key": identity.key,
        "ledger": ledger,
        "ledgerLock": ledger_lock_path(ledger),
        "targetLock": target_lock_path(locks, identity.key, platform=sys.platform),
    }
    emit(args, "\n".join(f"{key}: {value}" for key, value in data.items()), data)
    return EXIT_OK


def _ledger(args: argparse.Namespace) -> int:
    from shedproto.connector import LedgerError
    from shedproto.servers.connector import CommandLedger, PrivatePathError

    path = os.path.abspath(args.file)
    if not os.path.lexists(path):
        return fail(args, "invalid_argument", f"command ledger does not exist: {path}")
    try:
        ledger = CommandLedger.open(path)
    except LedgerError as exc:
        return fail(args, exc.code.value, exc.message)
    except (PrivatePathError, OSError) as exc:
        return fail(args, "invalid_argument", str(exc))
    state = ledger.state
    statuses: dict[str, int] = {}
    for receipt in state.receipts.values():
        statuses[receipt.status] = statuses.get(receipt.status, 0) + 1
    by_status = dict(sorted(statuses.items()))
    data = {
        "path": path,
        "generation": state.generation,
        "receipts": len(state),
        "statuses": by_status,
        "pending": [receipt.identity for receipt in state.pending_receipts()],
    }
    lines = [
        f"{path}: generation {state.generation}, {len(state)} receipts, "
        f"{state.pending_publication_count()} pending publication"
    ]
    lines += [f"  {status}: {count}" for status, count in by_status.items()]
    emit(args, "\n".join(lines), data)
    return EXIT_OK


DEMO_CONFIG = """{
  // the owner whose sessions this host publishes
  "schema": "commonfabric.agents-host.config",
  "ownerDid": "did:key:z6MkDemoOwner",
  "collectionIntervalMs": 60000,
  "sources": [
    { "id": "codex", "driver": "codex-app-server", "enabled": true, },
    { "id": "gemini", "driver": "acp", "enabled": false, /* off for now */ },
  ],
}
"""


async def demo_step(work_dir: Path) -> DemoStep:
    """Run the connector demo: config, commands, receipts, durable ledger and locks in ``work_dir``.

    Raises only for unexpected errors (the demo reports those as a failed step).
    """
    from shedproto.connector import (
        Command,
        decode_command,
        in_flight_receipt,
        iso_from_seconds,
        load_agents_host_config_text,
        parse_command_payload,
        provider_call_failed,
        target_key,
        terminal_receipt,
    )
    from shedproto.servers.connector import CommandLedger, LockHeldError, acquire_host_locks

    lines: list[str] = []
    config = load_agents_host_config_text(DEMO_CONFIG, str(work_dir / "agents.jsonc"))
    lines.append(
        f"config: JSONC with comments and trailing commas -> {len(config.sources)} sources, "
        f"{len(config.enabled_sources)} enabled, interval {config.collectionIntervalMs} ms"
    )
    key = target_key(
        "https://user:pw@FABRIC.example.test:443/api", "did:key:z6MkSpace", config.ownerDid
    )
    state_dir = work_dir / "state"
    ledger_file = state_dir / f"target-{key}.command-ledger.json"
    elements: list[Any] = [
        '{"schema":"commonfabric.agent-connector.command","ownerDid":"did:key:z6MkDemoOwner",'
        '"id":"cmd-01","createdAt":"2026-07-20T00:05:00.000Z","sourceId":"Codex",'
        '"nativeSessionId":"thr_123","type":"prompt","payload":{"text":"run the tests"}}',
        {
            "schema": "commonfabric.agent-connector.command",
            "ownerDid": "did:key:z6MkDemoOwner",
            "id": "cmd-02",
            "createdAt": "2026-07-20T00:06:00.000Z",
            "sourceId": "codex",
            "nativeSessionId": "thr_123",
            "type": "rename",
            "payload": {},
        },
        {"schema": "commonfabric.agent-connector.command", "type": "delete"},
    ]
    ok = True
    with acquire_host_locks(work_dir / "locks" / f"target-{key}.lock", f"{ledger_file}.lock"):
        try:
            acquire_host_locks(work_dir / "locks" / f"target-{key}.lock", f"{ledger_file}.lock")
            ok = False
        except LockHeldError as exc:
            lines.append(f"locks: target + ledger lock held; a second host gets: {exc}")
        ledger = CommandLedger.open(ledger_file)
        for element in elements:
            command = decode_command(element)
            if not isinstance(command, Command):
                lines.append(
                    f"command skipped, no receipt ({command.reason.value}): {command.message}"
                )
                continue
            now = iso_from_seconds(time.time())
            claim = in_flight_receipt(
                owner_did=config.ownerDid,
                command_id=command.id,
                source_id=command.sourceId,
                native_session_id=command.nativeSessionId,
                claimed_at=now,
            )
            ledger.put(claim)
            try:
                parse_command_payload(command)
                final = terminal_receipt(claim, status="succeeded", completed_at=now)
            except ValueError as exc:  # PayloadError: reported after the claim
                final = provider_call_failed(claim, error=exc, completed_at=now)
            ledger.put(final)
            ledger.mark_published(command.id)
            detail = f" ({final.error.code}: {final.error.message})" if final.error else ""
            lines.append(
                f"{command.type} {command.id} on {command.session_key} -> {final.status}{detail}"
            )
        reopened = CommandLedger.open(ledger_file)
        ok = ok and reopened.state == ledger.state and reopened.pending_publication_count() == 0
        mode = oct(ledger_file.stat().st_mode & 0o777)
        lines.append(
            f"ledger: generation {reopened.generation}, {len(reopened.state)} receipts, "
            f"file {mode}, reopened identical: {reopened.state == ledger.state}"
        )
    return DemoStep(name="connector", ok=ok, lines=lines)
