"""Shared test configuration: every async test runs on both anyio backends."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("SHEDPROTO_SHARED", Path(__file__).resolve().parents[2] / "shared"))
"""The steering repo's shared/ folder (specs and real wire data), beside the project root."""

requires_shared = pytest.mark.skipif(
    not (SHARED / "conformance").is_dir(), reason="../shared/conformance is absent (fresh clone)"
)
"""Mark for tests that replay real wire data from ../shared."""


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each async test once per anyio backend."""
    backend: str = request.param
    return backend


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every coroutine test function for the anyio plugin."""
    for item in items:
        function = getattr(item, "function", None)
        if function is not None and inspect.iscoroutinefunction(function):
            item.add_marker(pytest.mark.anyio)
