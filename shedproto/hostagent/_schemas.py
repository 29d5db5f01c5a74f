"""JSON Schemas of the host-agent wire shapes (``schemas/hostagent-*.json``)."""

from __future__ import annotations

from typing import Any

import msgspec

from ._approvals import AuditRecord
from ._frames import AgentFrame, ConsumerFrame
from ._status import LiveStatus

__all__ = ["json_schemas"]


def json_schemas() -> dict[str, Any]:
    """Return ``{file name: schema}``: the status report, both frame directions, the audit line.

    The frame schemas describe the Structs; on the wire every frame also
    carries ``"v": 2`` first, which readers ignore.
    """
    return {
        "hostagent-live-status.json": msgspec.json.schema(LiveStatus),
        "hostagent-consumer-frames.json": msgspec.json.schema(ConsumerFrame),
        "hostagent-agent-frames.json": msgspec.json.schema(AgentFrame),
        "hostagent-audit-record.json": msgspec.json.schema(AuditRecord),
    }
