"""``shedproto schemas export [--check] [--dir DIR]``: write or verify ``schemas/*.json``.

The export writes and removes only the files it owns (the registry's names
and its manifest, :mod:`shedproto._schema_registry`); anything else in the
directory is never read, rewritten or deleted.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shedproto import json_schemas
from shedproto._schema_registry import MANIFEST_NAME, ExportPlan, plan_export

from ._output import EXIT_FAILURE, EXIT_OK, emit, fail, json_flag

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


def _read(target: Path) -> Callable[[str], bytes | None]:
    def read(name: str) -> bytes | None:
        try:
            return (target / name).read_bytes()
        except FileNotFoundError:
            return None

    return read


def _export(args: argparse.Namespace) -> int:
    target: Path = args.dir
    schemas = json_schemas()
    try:
        plan = plan_export(schemas, _read(target) if target.is_dir() else lambda name: None)
    except OSError as exc:
        return fail(args, "io_error", f"cannot read schemas in {target}: {exc.strerror}")
    if args.check:
        if set(schemas) <= set(plan.missing):
            return fail(
                args,
                "not_found",
                f"no schemas in {target}: run shedproto schemas export --dir {target}",
            )
        return _report_check(args, target, plan, len(schemas))
    written = sorted({*plan.missing, *plan.changed})
    try:
        if written:
            target.mkdir(parents=True, exist_ok=True)
        for name in written:
            (target / name).write_bytes(plan.files[name])
        for name in plan.stale:
            (target / name).unlink(missing_ok=True)
    except OSError as exc:
        return fail(args, "io_error", f"cannot write schemas to {target}: {exc.strerror}")
    written_schemas = [name for name in written if name != MANIFEST_NAME]
    text = (
        f"wrote {len(written_schemas)} and removed {len(plan.stale)} of {len(schemas)} "
        f"schemas in {target}"
    )
    if MANIFEST_NAME in written:
        text += f" (updated {MANIFEST_NAME})"
    emit(
        args,
        text,
        {"written": written_schemas, "removed": list(plan.stale), "total": len(schemas)},
    )
    return EXIT_OK


def _report_check(args: argparse.Namespace, target: Path, plan: ExportPlan, total: int) -> int:
    ok = plan.up_to_date
    lines = [f"schemas in {target} are up to date ({total} files)"] if ok else []
    lines += [f"missing: {name}" for name in plan.missing]
    lines += [f"differs: {name}" for name in plan.changed]
    lines += [f"stale: {name}" for name in plan.stale]
    if not ok:
        lines.append(f"run: shedproto schemas export --dir {target}")
    data = {
        "ok": ok,
        "missing": list(plan.missing),
        "changed": list(plan.changed),
        "stale": list(plan.stale),
    }
    emit(args, "\n".join(lines), data)
    return EXIT_OK if ok else EXIT_FAILURE
