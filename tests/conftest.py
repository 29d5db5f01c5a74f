"""Shared test configuration: both anyio backends for every async test, the Hypothesis profile."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

from tests._hypothesis import load_profile

load_profile()  # SHEDPROTO_HYPOTHESIS_PROFILE: the quick default, or ``ci``'s full counts

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
