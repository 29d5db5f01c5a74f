from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from shedproto.servers import max_socket_path_bytes


def test_short_socket_dir_is_private_short_and_fresh(short_socket_dir: Path) -> None:
    assert short_socket_dir.is_dir()
    assert list(short_socket_dir.iterdir()) == []
    assert stat.S_IMODE(os.stat(short_socket_dir).st_mode) == 0o700
    assert (
        len(os.fsencode(short_socket_dir / "a-reasonable-name.sock")) < max_socket_path_bytes() // 2
    )


def test_plugin_is_loaded_through_the_entry_point(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("shedproto")
    assert plugin is not None
    assert plugin.__name__ == "shedproto.testing"
