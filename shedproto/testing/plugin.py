"""The shedproto pytest plugin (registered as the ``pytest11`` entry point ``shedproto``).

It provides the fixtures listed in :mod:`shedproto.testing` and one check: a
test that asks for one of the async fixtures without being run by the anyio
pytest plugin fails at setup with one line saying what to do.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._cassette import cassette_server, pytest_addoption
from ._connector import agents_host_dirs, command_ledger
from ._drivers import claude_projects
from ._fixtures import (
    agents_host,
    agents_host_postgres,
    agents_host_postgres_sync,
    agents_host_sync,
    desktop_server,
    desktop_server_factory,
    herdr_server,
    herdr_server_sync,
    host_agent_server,
    host_agent_server_sync,
)
from ._herdr_shim import herdr_shim
from ._postgres import postgres_cluster, postgres_url

__all__ = [
    "agents_host",
    "agents_host_dirs",
    "agents_host_postgres",
    "agents_host_postgres_sync",
    "agents_host_sync",
    "cassette_server",
    "claude_projects",
    "command_ledger",
    "desktop_server",
    "desktop_server_factory",
    "herdr_server",
    "herdr_server_sync",
    "herdr_shim",
    "host_agent_server",
    "host_agent_server_sync",
    "postgres_cluster",
    "postgres_url",
    "pytest_addoption",
    "pytest_runtest_setup",
    "short_socket_dir",
]


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """Yield a new 0700 directory with a short path for Unix sockets; deleted after the test."""
    path = Path(tempfile.mkdtemp(prefix="sp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _async_fixture_misuse(item: pytest.Item) -> str | None:
    """Return the one-line message when ``item`` asks for our async fixture outside anyio."""
    fixturenames: list[str] = getattr(item, "fixturenames", [])
    if "anyio_backend" in fixturenames:
        return None
    info = getattr(item, "_fixtureinfo", None)
    definitions: dict[str, Any] = getattr(info, "name2fixturedefs", {})
    package = __name__.rpartition(".")[0] + "."
    for name in fixturenames:
        defs = definitions.get(name)
        func = defs[-1].func if defs else None
        if not (inspect.isasyncgenfunction(func) or inspect.iscoroutinefunction(func)):
            continue
        if not getattr(func, "__module__", "").startswith(package):
            continue
        if inspect.iscoroutinefunction(getattr(item, "obj", None)):
            return (
                f"{item.name!r} is an async test without the anyio marker, so nothing runs the "
                f"async fixture {name!r}: mark it `@pytest.mark.anyio` (or set "
                "`pytestmark = pytest.mark.anyio` in the module)"
            )
        return (
            f"{item.name!r} is a plain (sync) test but asked for the async fixture {name!r}: "
            f"use {name + '_sync'!r} (the server in a background thread) or make the test "
            "`async def` with `@pytest.mark.anyio`"
        )
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail the test at setup, before any fixture runs, when it misuses an async fixture.

    Checked before fixtures are set up, so every such test in a session gets
    the same one line and the fixtures of the other tests are untouched.
    """
    message = _async_fixture_misuse(item)
    if message is not None:
        pytest.fail(message, pytrace=False)
