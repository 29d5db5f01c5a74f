"""pytest fixtures and a context manager that run the reference shed-desktop server.

The server runs on its own event loop in a background thread (an anyio
blocking portal), so the fixtures work in plain and async tests on any
backend. Seed and inspect ``handle.model`` between calls: the server thread
only touches it while answering a request. The server and anyio are imported
when a server starts, not when the plugin loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from shedproto.desktop import Dialect, LaunchPolicy
    from shedproto.servers.desktop import DesktopModel, DesktopServer

__all__ = [
    "RunningDesktopServer",
    "desktop_server",
    "desktop_server_factory",
    "running_desktop_server",
]


@dataclass(frozen=True)
class RunningDesktopServer:
    """A live reference server: where it listens, its dialect, and the model behind it."""

    path: Path
    dialect: Dialect
    model: DesktopModel
    server: DesktopServer


@contextmanager
def running_desktop_server(
    path: str | os.PathLike[str],
    *,
    dialect: Dialect | str = "tauri",
    test_mode: bool = True,
    model: DesktopModel | None = None,
    mock_base_url: str | None = None,
    launch_policy: LaunchPolicy | None = None,
    release: str = "latest",
) -> Iterator[RunningDesktopServer]:
    """Run a reference server on ``path`` for the ``with`` block, then shut it down.

    The environment is not read: ``test_mode`` and ``mock_base_url`` are
    taken as given. ``launch_policy`` defaults to ``LaunchPolicy.IGNORE_EXTRAS``;
    ``release`` is ``"latest"`` (the newer app) or ``"0.0.14"``.

    Raises:
        BindError: the socket path was refused (too long, in use, not a socket).

    """
    from anyio.from_thread import start_blocking_portal

    from shedproto.desktop import LaunchPolicy
    from shedproto.servers._loop import loop_options
    from shedproto.servers.desktop import DesktopServer

    server = DesktopServer(
        path,
        dialect=dialect,
        model=model,
        test_mode=test_mode,
        mock_base_url=mock_base_url,
        env={},
        launch_policy=LaunchPolicy.IGNORE_EXTRAS if launch_policy is None else launch_policy,
        release=release,
        grace=0.5,
    )
    with start_blocking_portal("asyncio", loop_options()) as portal:
        future, bound = portal.start_task(server.serve)
        try:
            yield RunningDesktopServer(
                path=Path(bound), dialect=server.dialect, model=server.model, server=server
            )
        finally:
            portal.call(server.shutdown)
            future.result(timeout=10)


DesktopServerFactory = Callable[..., RunningDesktopServer]
"""``start(dialect="tauri", test_mode=True, model=None, mock_base_url=None, launch_policy=...,
release="latest")``."""


@pytest.fixture
def desktop_server_factory(short_socket_dir: Path) -> Iterator[DesktopServerFactory]:
    """Yield ``start(**options)`` -> a running server (options of :func:`running_desktop_server`).

    Every server started through it is shut down after the test.
    """
    with ExitStack() as stack:
        count = 0

        def start(
            *,
            dialect: Dialect | str = "tauri",
            test_mode: bool = True,
            model: DesktopModel | None = None,
            mock_base_url: str | None = None,
            launch_policy: LaunchPolicy | None = None,
            release: str = "latest",
        ) -> RunningDesktopServer:
            from shedproto.desktop import Dialect

            nonlocal count
            count += 1
            path = short_socket_dir / f"desktop-{Dialect(dialect).value}-{count}.sock"
            return stack.enter_context(
                running_desktop_server(
                    path,
                    dialect=dialect,
                    test_mode=test_mode,
                    model=model,
                    mock_base_url=mock_base_url,
                    launch_policy=launch_policy,
                    release=release,
                )
            )

        yield start


@pytest.fixture
def desktop_server(desktop_server_factory: DesktopServerFactory) -> RunningDesktopServer:
    """Return a running Tauri-dialect reference server in test mode, with an empty model."""
    return desktop_server_factory()
