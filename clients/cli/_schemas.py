"""``shedproto schemas export [--check] [--dir DIR]``: write or verify ``schemas/*.json``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from shedproto import json_schemas
from shedproto._schema_registry import render_schema

from ._output import EXIT_FAILURE, EXIT_OK, emit, json_flag

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``schemas`` command group."""
    group = subparsers.add_parser("schemas", help="JSON Schemas generated from the core's types")
    commands = group.add_subparsers(title="commands", metavar="COMMAND", required=True)
    export = commands.add_parser(
        "export", parents=[json_flag()], help="write schemas/*.json (or --check them)"
    )
    export.add_argument("--dir", type=Path, default=Path("schemas"), help="target directory")
    export.add_argument(
        "--check", action="store_true", help="exit 1 if the files differ from the generated ones"
    )
    export.set_defaults(func=_export)


def _export(args: argparse.Namespace) -> int:
    target: Path = args.dir
    wanted = {name: render_schema(schema) for name, schema in json_schemas().items()}
    present = {p.name: p.read_bytes() for p in target.glob("*.json")} if target.is_dir() else {}
    stale = sorted(name for name in present if name not in wanted)
    changed = sorted(name for name, body in wanted.items() if present.get(name) != body)
    if args.check:
        ok = not stale and not changed
        lines = [f"schemas in {target} are up to date ({len(wanted)} files)"] if ok else []
        lines += [f"differs: {name}" for name in changed] + [f"stale: {name}" for name in stale]
        if not ok:
            lines.append("run: shedproto schemas export")
        emit(args, "\n".join(lines), {"ok": ok, "changed": changed, "stale": stale})
        return EXIT_OK if ok else EXIT_FAILURE
    target.mkdir(parents=True, exist_ok=True)
    for name in changed:
        (target / name).write_bytes(wanted[name])
    for name in stale:
        (target / name).unlink()
    emit(
        args,
        f"wrote {len(changed)} and removed {len(stale)} of {len(wanted)} schemas in {target}",
        {"written": changed, "removed": stale, "total": len(wanted)},
    )
    return EXIT_OK
