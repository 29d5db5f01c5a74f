"""Every JSON Schema the project publishes, generated from the core's types.

``schemas/*.json`` in the repository is this mapping written out
(``shedproto schemas export``); CI fails when the two drift apart
(``shedproto schemas export --check``). Each protocol core contributes a
function returning ``{file name: schema}``, listed in :data:`SCHEMA_PROVIDERS`
as ``"module:function"``; file names must be unique across providers.

The export owns only the files it writes: the registry's names plus a
manifest (:data:`MANIFEST_NAME`) listing them. :func:`plan_export` decides,
from what is on disk, what to write and what to remove: a file is removed
only when the previous manifest lists it and the registry no longer
publishes it, so a user's own ``*.json`` beside the schemas is never touched.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ._errors import ErrorReport

__all__ = [
    "MANIFEST_NAME",
    "SCHEMA_PROVIDERS",
    "ExportPlan",
    "core_schemas",
    "json_schemas",
    "manifest_names",
    "plan_export",
    "render_manifest",
    "render_schema",
]

MANIFEST_NAME = ".shedproto-schemas"
"""The export's record of the files it owns in a directory (one name a line)."""

_MANIFEST_HEADER = (
    "# Written by `shedproto schemas export`: the files it owns in this directory.\n"
    "# A listed file is removed once the library stops publishing it; others are never touched.\n"
)

SCHEMA_PROVIDERS: tuple[str, ...] = (
    "shedproto._schema_registry:core_schemas",
    "shedproto.host_agent._schemas:json_schemas",
    "shedproto.desktop:catalogue_schemas",
    "shedproto.connector:connector_schemas",
    "shedproto.agents_host:api_schemas",
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


def render_manifest(names: Iterable[str]) -> bytes:
    """Render the manifest listing ``names`` (sorted), as the export writes it."""
    return (_MANIFEST_HEADER + "".join(f"{name}\n" for name in sorted(names))).encode()


def manifest_names(body: bytes) -> frozenset[str]:
    """Return the schema file names a manifest lists.

    Comments, blank lines and anything that is not a plain ``*.json`` file
    name (a path, a hidden file) are ignored, so a damaged or hostile
    manifest can never name a file outside the directory. Undecodable bytes
    are replaced, never raised.
    """
    names = set()
    for raw in body.decode("utf-8", "replace").splitlines():
        name = raw.strip()
        plain = not any(char in name for char in "/\\\0") and not name.startswith((".", "#"))
        if plain and name.endswith(".json"):
            names.add(name)
    return frozenset(names)


@dataclass(frozen=True)
class ExportPlan:
    """What ``schemas export`` must do in one directory (every list sorted)."""

    files: dict[str, bytes]
    """Every owned file's wanted bytes: each schema and the manifest."""
    missing: tuple[str, ...]
    """Owned files that do not exist yet."""
    changed: tuple[str, ...]
    """Owned files whose bytes differ from the wanted ones."""
    stale: tuple[str, ...]
    """Files the previous manifest lists that are no longer published (to remove)."""

    @property
    def up_to_date(self) -> bool:
        """True when nothing needs writing or removing."""
        return not (self.missing or self.changed or self.stale)


def plan_export(schemas: Mapping[str, Any], read: Callable[[str], bytes | None]) -> ExportPlan:
    """Compare the published ``schemas`` with a directory's files.

    ``read(name)`` returns a file's bytes, or ``None`` when it does not
    exist; it is asked only for owned names: the schemas, the manifest and
    what the manifest lists. Its exceptions propagate.
    """
    files = {name: render_schema(schema) for name, schema in schemas.items()}
    files[MANIFEST_NAME] = render_manifest(schemas)
    previous = read(MANIFEST_NAME)
    listed = manifest_names(previous or b"")
    present = {MANIFEST_NAME: previous} if previous is not None else {}
    for name in sorted(set(files) | listed):
        if name != MANIFEST_NAME and (body := read(name)) is not None:
            present[name] = body
    return ExportPlan(
        files=files,
        missing=tuple(sorted(name for name in files if name not in present)),
        changed=tuple(
            sorted(name for name, body in files.items() if present.get(name, body) != body)
        ),
        stale=tuple(sorted(name for name in listed if name not in files and name in present)),
    )
