"""``running_desktop_server``: the reference shed-desktop server for a ``with`` block.

The server runs on its own event loop in a background thread (an anyio
blocking portal), so it (and the fixtures built on it) works in plain and
async code on any backend. Seed and inspect ``handle.model`` between calls: the server thread
only touches it while answering a request. The server and anyio are imported
when a server starts, not when the plugin loads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shedproto.desktop import Dialect, LaunchPolicy
    from shedproto.servers.desktop import DesktopModel, DesktopServer

__all__ = ["DesktopServerFactory", "RunningDesktopServer", "running_desktop_server"]


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
