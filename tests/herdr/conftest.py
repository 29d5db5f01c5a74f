"""herdr tests never read or write the user's real herdr directories."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def _private_xdg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xdg")


@pytest.fixture(autouse=True)
def _no_real_herdr_dirs(_private_xdg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point herdr's config and state locations at a private directory for every test.

    A server built without ``config_dir`` otherwise reads the user's own agent
    manifests (so results would depend on them) and ``plugin.link`` creates
    folders beside the user's herdr.
    """
    monkeypatch.setenv("XDG_CONFIG_HOME", str(_private_xdg / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(_private_xdg / "state"))
