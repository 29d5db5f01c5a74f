"""A venv holding the built wheel and only its runtime dependencies, made without downloading.

The dependencies are the distributions this test environment already has:
the runtime requirement closure of ``shedproto`` (markers evaluated for this
interpreter, extras ignored) is linked into the new venv's site-packages, so
pytest and the other test extras are absent and nothing is fetched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

__all__ = ["build", "build_wheel", "copy_checkout", "make_bare_venv", "runtime_closure"]

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def runtime_closure(name: str = "shedproto") -> list[metadata.Distribution]:
    """Return the installed distributions ``name`` needs at run time (not ``name`` itself)."""
    seen: dict[str, metadata.Distribution] = {}
    pending = [Requirement(text) for text in metadata.requires(name) or ()]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        key = requirement.name.lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = dist = metadata.distribution(requirement.name)
        pending.extend(Requirement(text) for text in dist.requires or ())
    return list(seen.values())


def _link_distribution(dist: metadata.Distribution, site: Path) -> None:
    """Symlink each top-level entry of ``dist``'s files (packages, dist-info) into ``site``."""
    top = {Path(str(file)).parts[0] for file in dist.files or () if not str(file).startswith("..")}
    base = Path(str(dist.locate_file("")))
    for entry in sorted(top):
        target = site / entry
        if not target.exists():
            target.symlink_to(base / entry)


def build(kind: str, source: Path, out: Path) -> Path:
    """Build ``kind`` (``"wheel"`` or ``"sdist"``) of the project at ``source`` into ``out``.

    Offline: setuptools' backend runs in this interpreter, without build isolation.
    """
    backend = "import sys; from setuptools import build_meta as b; "
    script = f"{backend}print(b.build_{kind}(sys.argv[1]))"
    built = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        cwd=source, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    return out / built.stdout.strip().splitlines()[-1]


def copy_checkout(work: Path) -> Path:
    """Copy the checkout (without caches, builds and venvs) to ``work/src``; return it."""
    source = work / "src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=IGNORED)
    return source


def build_wheel(work: Path) -> Path:
    """Build the project's wheel offline from a copy of the checkout under ``work``."""
    return build("wheel", copy_checkout(work), work / "dist")


def make_bare_venv(wheel: Path, where: Path) -> Path:
    """Create a venv at ``where`` with ``wheel`` and its runtime dependencies; return its python."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120
    )
    python = where / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    site = Path(purelib)
    assert site.is_dir(), site
    for dist in runtime_closure():
        _link_distribution(dist, site)
    return python
