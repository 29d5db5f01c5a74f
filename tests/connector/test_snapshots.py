"""Exact encoded bytes of the connector's values (syrupy snapshots)."""

from __future__ import annotations

import msgspec
from syrupy.assertion import SnapshotAssertion

from shedproto.connector import (
    in_flight_receipt,
    parse_agents_host_config,
    provider_call_failed,
    terminal_receipt,
)

from ._helpers import OWNER, config, source

CLAIMED = "2026-07-20T00:05:01.000Z"
DONE = "2026-07-20T00:05:09.000Z"


def test_receipt_bytes(snapshot: SnapshotAssertion) -> None:
    claim = in_flight_receipt(
        owner_did=OWNER,
        command_id="cmd-01",
        source_id="codex",
        native_session_id="thr_123",
        claimed_at=CLAIMED,
        producer="workbench",
    )
    done = terminal_receipt(
        claim,
        status="succeeded",
        completed_at=DONE,
        provider_operation_id="turn_77",
        result={"surface": "headless", "tokens": 12.0},
    )
    failed = provider_call_failed(
        claim, error=ValueError("prompt text must be a non-empty string"), completed_at=DONE
    )
    assert [msgspec.json.encode(r) for r in (claim, done, failed)] == snapshot


def test_normalised_config_bytes(snapshot: SnapshotAssertion) -> None:
    parsed = parse_agents_host_config(
        config(
            checkoutRoots=["/w"],
            sources=[
                source(cwd=" /w ", env={"A": "1"}),
                source(id="acp", driver="acp", command=["a"], enabled=False),
            ],
        )
    )
    assert msgspec.json.format(msgspec.json.encode(parsed), indent=2) == snapshot
