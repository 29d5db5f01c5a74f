"""The core never does I/O: it imports with the I/O modules blocked."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import shedproto

BLOCKED = ("socket", "asyncio", "anyio", "threading", "subprocess", "selectors", "trio")
SHELLS = ("shedproto.servers", "shedproto.clients", "shedproto.testing")

# The permitted dependencies are imported first: on Python 3.10 msgspec pulls in
# subprocess through uuid -> platform, which is the stdlib's doing, not the core's.
# Then every blocked module is purged, so any import the core makes hits the blocker.
PROBE = """
import importlib, importlib.abc, sys
import msgspec, msgspec.json, typing_extensions
blocked = set(sys.argv[1].split(","))

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ImportError(f"core imported blocked module {name}")
        return None

for name in list(sys.modules):
    if name.split(".")[0] in blocked:
        del sys.modules[name]
sys.meta_path.insert(0, Block())
for module in sys.argv[2].split(","):
    importlib.import_module(module)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in blocked)
assert not leaked, leaked
print("ok", len(sys.argv[2].split(",")))
"""


def core_modules() -> list[str]:
    root = Path(shedproto.__file__).parent
    walked = pkgutil.walk_packages([str(root)], prefix="shedproto.")
    return ["shedproto", *(info.name for info in walked if not info.name.startswith(SHELLS))]


def test_core_module_list_covers_the_shared_parts() -> None:
    modules = core_modules()
    assert {"shedproto._framing", "shedproto._errors", "shedproto._codec"} <= set(modules)
    assert not any(m.startswith(SHELLS) for m in modules)


def test_core_imports_with_io_modules_blocked() -> None:
    modules = core_modules()
    result = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(BLOCKED), ",".join(modules)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ok {len(modules)}"


def test_the_probe_catches_a_blocked_import() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "socket", "shedproto.servers"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "blocked module socket" in result.stderr
