"""Load a development tool from the repository's tools/ folder (not installed) by its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool(name: str) -> ModuleType:
    """Import ``tools/<name>.py``; skip the calling module when tools/ is absent (an sdist)."""
    path = TOOLS / f"{name}.py"
    if not path.exists():
        pytest.skip(f"{path} is absent (not a repository checkout)", allow_module_level=True)
    module_name = f"shedproto_tools_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
