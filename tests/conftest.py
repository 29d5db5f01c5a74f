"""Shared test configuration: both anyio backends for every async test, the Hypothesis profile."""

from __future__ import annotations

import compileall
import inspect
import os
import sys
from pathlib import Path

import pytest

from tests._hypothesis import load_profile

load_profile()  # SHEDPROTO_HYPOTHESIS_PROFILE: the quick default, or ``ci``'s full counts

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = (ROOT / "shedproto", ROOT / "clients", ROOT / "servers")
"""The checkout's own package folders (``src/shedproto`` links them together)."""

# The suite starts hundreds of interpreters (CLI commands, shims, servers) and
# each pytest worker imports every test module: with PYTHONDONTWRITEBYTECODE set
# (as in some containers) each of them would compile the package and rewrite the
# tests' asserts from source every time. Compiled files go to the checkout's own
# (git-ignored) __pycache__ folders, as a plain Python run would put them.
sys.dont_write_bytecode = False


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per usable core, plus one.

    Much of the suite waits on subprocesses, PTYs and sockets, so one more worker
    than cores keeps the cores busy (on 2 cores: 3:07 against 4:02 with 2). The
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` variable still decides when it is set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    if hasattr(os, "sched_getaffinity"):  # Linux; macOS has only cpu_count
        return len(os.sched_getaffinity(0)) + 1
    return (os.cpu_count() or 1) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Compile the checkout's package once, before any worker or subprocess starts.

    Only the controller does it (an xdist worker has ``workerinput``); a
    sdist or a read-only checkout is left as it is.
    """
    if hasattr(config, "workerinput"):
        return
    for folder in PACKAGE_DIRS:
        if folder.is_dir() and os.access(folder, os.W_OK):
            compileall.compile_dir(folder, quiet=1)

SHARED = Path(os.environ.get("SHEDPROTO_SHARED", Path(__file__).resolve().parents[2] / "shared"))
"""The steering repo's shared/ folder (specs and real wire data), beside the project root."""

requires_shared = pytest.mark.skipif(
    not (SHARED / "conformance").is_dir(), reason="../shared/conformance is absent (fresh clone)"
)
"""Mark for tests that replay real wire data from ../shared."""


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv with the wheel and only its runtime dependencies (no pytest).

    Built once per session, offline (see ``tests/_bare_venv.py``).
    """
    from tests._bare_venv import build_wheel, make_bare_venv

    work = tmp_path_factory.mktemp("bare")
    return make_bare_venv(build_wheel(work), work / "venv")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each async test once per anyio backend."""
    backend: str = request.param
    return backend


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Mark every coroutine test function for the anyio plugin before it is parametrized.

    Marking at collection time (not in ``pytest_collection_modifyitems``) lets
    the anyio plugin see the mark when it generates the backend parameters, so
    parametrized async tests work without naming ``anyio_backend``.
    """
    if (
        isinstance(collector, (pytest.Module, pytest.Class))
        and collector.istestfunction(obj, name)
        and inspect.iscoroutinefunction(obj)
    ):
        pytest.mark.anyio(obj)
