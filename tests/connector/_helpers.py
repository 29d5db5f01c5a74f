"""Shared builders for the connector tests."""

from __future__ import annotations

from typing import Any

OWNER = "did:key:z6MkOwner"
SPACE = "did:key:z6MkSpace"


def source(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"id": "codex", "driver": "codex-app-server", "enabled": True}
    value.update(overrides)
    return value


def config(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "schema": "commonfabric.agents-host.config",
        "ownerDid": OWNER,
        "sources": [source()],
    }
    value.update(overrides)
    return value


def command(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "schema": "commonfabric.agent-connector.command",
        "ownerDid": OWNER,
        "id": "cmd-01",
        "createdAt": "2026-07-20T00:05:00.000Z",
        "sourceId": "codex",
        "nativeSessionId": "thr_123",
        "type": "prompt",
        "payload": {"text": "run the tests"},
    }
    value.update(overrides)
    return value


def receipt(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "schema": "commonfabric.agent-connector.command-receipt",
        "ownerDid": OWNER,
        "commandId": "cmd-01",
        "sourceId": "codex",
        "nativeSessionId": "thr_123",
        "status": "succeeded",
        "claimedAt": "2026-07-20T00:05:01.000Z",
        "completedAt": "2026-07-20T00:05:09.000Z",
        "providerOperationId": "turn_77",
    }
    value.update(overrides)
    return value
