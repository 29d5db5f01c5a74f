"""Health (activity bound, ids, no secrets) and session index rows and keys."""

from __future__ import annotations

import msgspec
import pytest

from shedproto import LocalProtocolError
from shedproto.connector import (
    ACTIVITY_LIMIT,
    HEALTH_SCHEMA,
    NO_CAPABILITIES,
    ActivityLog,
    Capabilities,
    Command,
    CommandProcessingHealth,
    Health,
    HealthTarget,
    IndexEntry,
    IndexSource,
    TargetCells,
    build_session_index,
    check_index_entry,
    decode_command,
    host_status_after_collection,
    in_flight_receipt,
    parse_agents_host_config,
    provider_call_failed,
    receipt_activity_details,
    session_key,
    source_health,
)

from ._helpers import OWNER, SPACE, command, config, source

STARTED = "2026-07-20T00:00:00.000Z"


def test_activity_is_bounded_with_unique_ids() -> None:
    log = ActivityLog(STARTED)
    for i in range(ACTIVITY_LIMIT + 50):
        log.record("sync-started", f"sync {i}", at=STARTED)
    entries = log.entries
    assert len(entries) == ACTIVITY_LIMIT
    assert entries[0].id == f"{STARTED}:51"
    assert entries[-1].id == f"{STARTED}:250"
    assert len({e.id for e in entries}) == ACTIVITY_LIMIT
    small = ActivityLog(STARTED, limit=2)
    for i in range(5):
        small.record("t", str(i), at=STARTED, source_id="codex", details={"i": i})
    assert [e.message for e in small.entries] == ["3", "4"]
    for bad in (0, -1, 1.5, True, 2**53):
        with pytest.raises(
            LocalProtocolError, match=r"^activityLimit must be a positive safe integer$"
        ):
            ActivityLog(STARTED, limit=bad)  # type: ignore[arg-type]


def test_health_never_copies_secrets() -> None:
    cfg = parse_agents_host_config(
        config(
            sources=[
                source(command=["codex", "--token", "SECRET-ARG"], env={"API_KEY": "SECRET-ENV"})
            ]
        )
    )
    cmd = decode_command(command(payload={"text": "SECRET-PROMPT"}, requestedBy="SECRET-REQUESTER"))
    assert isinstance(cmd, Command)
    claim = in_flight_receipt(
        owner_did=OWNER,
        command_id=cmd.id,
        source_id=cmd.sourceId,
        native_session_id=cmd.nativeSessionId,
        claimed_at=STARTED,
    )
    failed = provider_call_failed(
        claim, error=RuntimeError("provider said no"), completed_at=STARTED
    )
    log = ActivityLog(STARTED)
    log.record(
        "command-receipt",
        "Command receipt recorded",
        at=STARTED,
        source_id="codex",
        details=receipt_activity_details(failed),
    )
    health = Health(
        schema=HEALTH_SCHEMA,
        ownerDid=OWNER,
        service="agents-host",
        status="ready",
        startedAt=STARTED,
        updatedAt=STARTED,
        target=HealthTarget(
            spaceDid=SPACE,
            ownerDid=OWNER,
            cells=TargetCells(
                recentIndex="r", allIndex="a", health="h", commands="c", receipts="x"
            ),
        ),
        commandProcessing=CommandProcessingHealth(
            accepting=True, pendingReceiptPublications=0, failedCommands=1
        ),
        sources=tuple(source_health(s, status="ready") for s in cfg.sources),
        activity=log.entries,
    )
    encoded = msgspec.json.encode(health)
    assert b"SECRET" not in encoded
    assert b"provider said no" in encoded  # provider errors are copied verbatim
    decoded = msgspec.json.decode(encoded)
    assert decoded["sources"][0] == {
        "id": "codex",
        "driver": "codex-app-server",
        "enabled": True,
        "status": "ready",
        "capabilities": msgspec.to_builtins(NO_CAPABILITIES),
        "errors": [],
    }
    assert decoded["activity"][0]["details"] == {
        "commandId": "cmd-01",
        "nativeSessionId": "thr_123",
        "status": "failed",
        "error": {
            "code": "provider-call-failed",
            "message": "Error: provider said no",
            "retryable": False,
        },
    }
    assert list(decoded)[:3] == ["schema", "ownerDid", "service"]
    assert "sync" not in decoded


def test_capability_booleans_are_always_written() -> None:
    caps = Capabilities(
        inventory=True,
        read=True,
        prompt=True,
        cancel=True,
        rename=True,
        setMode=False,
        setConfigOption=False,
        modes=("default",),
    )
    assert msgspec.json.decode(msgspec.json.encode(caps)) == {
        "inventory": True,
        "read": True,
        "prompt": True,
        "cancel": True,
        "rename": True,
        "setMode": False,
        "setConfigOption": False,
        "modes": ["default"],
    }


def test_host_status_after_collection() -> None:
    assert (
        host_status_after_collection(
            ["ready"], pending_receipt_publications=0, outstanding_command_failures=0
        )
        == "ready"
    )
    assert (
        host_status_after_collection(
            ["ready", "degraded"], pending_receipt_publications=0, outstanding_command_failures=0
        )
        == "degraded"
    )
    assert (
        host_status_after_collection(
            ["ready"], pending_receipt_publications=1, outstanding_command_failures=0
        )
        == "degraded"
    )
    assert (
        host_status_after_collection(
            [], pending_receipt_publications=0, outstanding_command_failures=2
        )
        == "degraded"
    )


def _entry(**overrides: object) -> IndexEntry:
    fields: dict[str, object] = {
        "ownerDid": OWNER,
        "key": session_key("codex", "thr/1"),
        "sourceId": "codex",
        "driver": "codex-app-server",
        "nativeSessionId": "thr/1",
        "title": None,
        "cwd": None,
        "createdAt": None,
        "updatedAt": "2026-07-20T00:00:00.000Z",
        "archived": None,
        "active": False,
        "capabilities": NO_CAPABILITIES,
        "syncStatus": "complete",
        "recentMessages": [],
    }
    fields.update(overrides)
    return msgspec.convert(fields, IndexEntry)


def test_session_keys_and_rows() -> None:
    assert session_key(" Codex ", "thr 1/ü") == "codex/thr%201%2F%C3%BC"
    entry = _entry()
    assert entry.key == "codex/thr%2F1"
    assert check_index_entry(entry, owner_did=OWNER) is None
    assert (
        check_index_entry(entry, owner_did="did:key:x")
        == "session index row belongs to another owner: codex/thr%2F1"
    )
    assert (
        check_index_entry(_entry(key="codex/thr/1"), owner_did=OWNER)
        == "session index row key does not match its session: codex/thr/1"
    )
    assert (
        check_index_entry(_entry(sourceId="Codex", key="codex/thr%2F1"), owner_did=OWNER)
        is not None
    )
    assert check_index_entry(_entry(syncStatus="deleted"), owner_did=OWNER) == (
        "session index row deletedAt does not match its status: codex/thr%2F1"
    )
    row = msgspec.to_builtins(entry)
    for nullable in ("title", "cwd", "createdAt", "archived"):
        assert row[nullable] is None  # nullable fields are written as null
    assert "startedAs" not in row
    assert "deletedAt" not in row


def test_index_sorting() -> None:
    entries = [_entry(nativeSessionId=n, key=session_key("codex", n)) for n in ["b", "a", "B"]]
    index = build_session_index(
        owner_did=OWNER,
        bucket="all",
        generated_at=STARTED,
        generation=7,
        total_session_count=3,
        older_session_count=0,
        sources=[
            IndexSource(
                id=i, driver="acp", capabilities=NO_CAPABILITIES, complete=True, sessionCount=0
            )
            for i in ["z", "a"]
        ],
        checkouts=[],
        sessions=entries,
    )
    assert [e.nativeSessionId for e in index.sessions] == ["a", "b", "B"]
    assert [s.id for s in index.sources] == ["a", "z"]
    assert msgspec.to_builtins(index)["schema"] == "commonfabric.agent-connector.session-index"
