"""Mock-only environment seams: read in test mode only, as both apps do."""

from __future__ import annotations

import msgspec

from shedproto.desktop import Dialect, mock_unreachable_hosts
from shedproto.servers.desktop import DesktopModel, DesktopServer

from .test_results import exchange


def test_unreachable_hosts_parse_in_test_mode_only() -> None:
    env = {"SHED_TAURI_MOCK_UNREACHABLE_HOSTS": " prod, ,staging,", "OTHER": "x"}
    assert mock_unreachable_hosts(Dialect.TAURI, env, test_mode=True) == {"prod", "staging"}
    assert mock_unreachable_hosts(Dialect.TAURI, env, test_mode=False) == frozenset()
    # each dialect reads its own variable
    assert mock_unreachable_hosts(Dialect.MAC, env, test_mode=True) == frozenset()
    mac = {"SHED_DESKTOP_MOCK_UNREACHABLE_HOSTS": "prod"}
    assert mock_unreachable_hosts(Dialect.MAC, mac, test_mode=True) == {"prod"}
    assert mock_unreachable_hosts(Dialect.MAC, {}, test_mode=True) == frozenset()


def test_server_env_makes_hosts_unreachable_before_and_after_seeding() -> None:
    model = DesktopModel()
    model.add_shed("prod", "web")
    env = {"SHED_TAURI_TEST_MODE": "1", "SHED_TAURI_MOCK_UNREACHABLE_HOSTS": "prod,later"}
    DesktopServer("/tmp/unused.sock", dialect=Dialect.TAURI, model=model, env=env)
    model.add_shed("later", "api")  # seeded after the server read its env
    model.add_shed("fine", "db")
    (line,) = exchange(Dialect.TAURI, model, ("sheds.list", {}))
    result = msgspec.json.decode(line)["result"]
    assert [row["name"] for row in result["sheds"]] == ["db"]
    assert result["host_errors"] == [
        {
            "detail": "error sending request for url (http://127.0.0.1:1/)",
            "kind": "other",
            "server": server,
            "summary": f"can't reach {server}",
        }
        for server in ("prod", "later")
    ]


def test_server_ignores_the_seam_outside_test_mode() -> None:
    model = DesktopModel()
    model.add_shed("prod", "web")
    env = {"SHED_DESKTOP_MOCK_UNREACHABLE_HOSTS": "prod"}
    server = DesktopServer("/tmp/unused.sock", dialect=Dialect.MAC, model=model, env=env)
    assert server.test_mode is False
    assert model.hosts["prod"].reachable is True
