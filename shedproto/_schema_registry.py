"""Every JSON Schema the project publishes, generated from the core's types.

``schemas/*.json`` in the repository is this mapping written out
(``shedproto schemas export``); CI fails when the two drift apart
(``shedproto schemas export --check``). Each protocol core contributes a
function returning ``{file name: schema}``, listed in :data:`SCHEMA_PROVIDERS`
as ``"module:function"``; file names must be unique across providers.
"""

from __future__ import annotations

import importlib
from typing import Any

import msgspec

from ._errors import ErrorReport

__all__ = ["SCHEMA_PROVIDERS", "core_schemas", "json_schemas", "render_schema"]

SCHEMA_PROVIDERS: tuple[str, ...] = (
    "shedproto._schema_registry:core_schemas",
    "shedproto.hostagent._schemas:json_schemas",
    "shedproto.desktop:catalogue_schemas",
    "shedproto.connector:connector_schemas",
    "shedproto.agentshost:api_schemas",
)
"""``"module:function"`` references, resolved lazily; each protocol adds its own."""


def core_schemas() -> dict[str, Any]:
    """Schemas of the library's own shapes (the error report)."""
    return {"shedproto-error.json": msgspec.json.schema(ErrorReport)}


def json_schemas() -> dict[str, Any]:
    """Return every published schema, keyed by file name, sorted by name.

    Raises:
        ValueError: two providers publish the same file name.

    """
    merged: dict[str, Any] = {}
    for reference in SCHEMA_PROVIDERS:
        module_name, _, function_name = reference.partition(":")
        provider = getattr(importlib.import_module(module_name), function_name)
        for name, schema in provider().items():
            if name in merged:
                raise ValueError(f"schema file {name} is published twice ({reference})")
            merged[name] = schema
    return dict(sorted(merged.items()))


def render_schema(schema: Any) -> bytes:
    """Render one schema as the checked-in bytes: 2-space indented JSON plus a newline."""
    return msgspec.json.format(msgspec.json.encode(schema), indent=2) + b"\n"
