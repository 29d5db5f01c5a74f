"""Helpers for the host-agent tests: the shed goldens and masking."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import SHARED

SHED = SHARED / "conformance" / "shed"


def golden(name: str) -> Any:
    """Load one golden from ../shared/conformance/shed (callers are marked requires_shared)."""
    return json.loads((SHED / name).read_text(encoding="utf-8"))


def canonical(value: Any) -> str:
    """The recorder's normal form: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def mask(frame: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Replace ``keys`` with ``<key>`` placeholders (``id``, ``ts``, ``expires_at``...)."""
    out = dict(frame)
    for key in keys:
        if key in out:
            out[key] = f"<{key}>"
    return out
