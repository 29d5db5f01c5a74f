"""The connector's published JSON Schemas (``schemas/connector-*.json``)."""

from __future__ import annotations

from typing import Any

import msgspec

from ._commands import Command
from ._config import AgentsHostConfig
from ._health import Health
from ._receipts import Receipt, ReceiptIndex
from ._session_index import SessionIndex

__all__ = ["connector_schemas"]


def connector_schemas() -> dict[str, Any]:
    """Return ``{file name: JSON Schema}`` for the connector's value types.

    These describe the shapes; the exact validation rules (lengths, trimming,
    messages) are the parsers'.
    """
    return {
        "connector-config.json": msgspec.json.schema(AgentsHostConfig),
        "connector-command.json": msgspec.json.schema(Command),
        "connector-command-receipt.json": msgspec.json.schema(Receipt),
        "connector-command-receipts.json": msgspec.json.schema(ReceiptIndex),
        "connector-health.json": msgspec.json.schema(Health),
        "connector-session-index.json": msgspec.json.schema(SessionIndex),
    }
