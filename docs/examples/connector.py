"""The connector core: a JSONC config, commands, receipts and the durable ledger."""

import tempfile
import time
from pathlib import Path

from shedproto.connector import (
    Command,
    ConfigError,
    decode_command,
    in_flight_receipt,
    iso_from_seconds,
    load_agents_host_config_text,
    parse_command_payload,
    provider_call_failed,
    terminal_receipt,
)
from shedproto.servers.connector import CommandLedger, acquire_host_locks

CONFIG = b"""{
  // comments and trailing commas are fine: this is JSONC
  "schema": "commonfabric.agents-host.config",
  "ownerDid": "did:key:z6MkOwner",
  "sources": [
    { "id": "codex", "driver": "codex-app-server", "enabled": true, },
  ],
}
"""

config = load_agents_host_config_text(CONFIG, "agents.jsonc")
print(config.sources[0].id, config.collectionIntervalMs)  # defaults are filled in

try:
    load_agents_host_config_text(
        CONFIG.replace(b'"codex",', b'" Codex ",'), "agents.jsonc"
    )
except ConfigError as exc:
    print(exc)  # the real program's exact message
    assert 'must already be normalized as "codex"' in str(exc)

queue = [
    {
        "schema": "commonfabric.agent-connector.command",
        "ownerDid": "did:key:z6MkOwner",
        "id": "cmd-01",
        "createdAt": "2026-07-20T00:05:00.000Z",
        "sourceId": "codex",
        "nativeSessionId": "thr_123",
        "type": "prompt",
        "payload": {"text": "run the tests"},
    },
    {"schema": "commonfabric.agent-connector.command", "type": "delete"},  # invalid
]

with tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp:
    state = Path(tmp) / "state"
    with acquire_host_locks(
        Path(tmp) / "run" / "target.lock", f"{state}/ledger.json.lock"
    ):
        ledger = CommandLedger.open(state / "ledger.json")
        for element in queue:
            command = decode_command(element)  # a dict or a JSON string
            # an InvalidCommand is logged and skipped: no receipt
            if not isinstance(command, Command):
                print("skipped:", command.log_line)
                continue
            now = iso_from_seconds(time.time())
            claim = in_flight_receipt(
                owner_did=config.ownerDid,
                command_id=command.id,
                source_id=command.sourceId,
                native_session_id=command.nativeSessionId,
                claimed_at=now,
            )
            ledger.put(claim)  # durable before the provider is called
            try:
                parse_command_payload(command)  # checked after the claim
                final = terminal_receipt(claim, status="succeeded", completed_at=now)
            except ValueError as exc:
                final = provider_call_failed(claim, error=exc, completed_at=now)
            ledger.put(final)
            print(command.id, final.status)
        reopened = CommandLedger.open(state / "ledger.json")
        assert reopened.state == ledger.state  # what is on disk is what we hold
        assert oct((state / "ledger.json").stat().st_mode & 0o777) == "0o600"
