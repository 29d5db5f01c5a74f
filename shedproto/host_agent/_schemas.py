"""JSON Schemas of the host-agent wire shapes (``schemas/host_agent-*.json``)."""

from __future__ import annotations

from typing import Any

import msgspec

from ._approvals import AuditRecord
from ._status import LiveStatus
from .types import AgentFrame, ConsumerFrame

__all__ = ["json_schemas"]


def json_schemas() -> dict[str, Any]:
    """Return ``{file name: schema}``: the status report, both frame directions, the audit line.

    The frame schemas describe the Structs; on the wire every frame also
    carries ``"v": 2`` first, which readers ignore.
    """
    return {
        "host-agent-live-status.json": msgspec.json.schema(LiveStatus),
        "host-agent-consumer-frames.json": msgspec.json.schema(ConsumerFrame),
        "host-agent-agent-frames.json": msgspec.json.schema(AgentFrame),
        "host-agent-audit-record.json": msgspec.json.schema(AuditRecord),
    }
