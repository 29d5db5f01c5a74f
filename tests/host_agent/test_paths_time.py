from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from shedproto.host_agent import (
    approval_socket_path,
    format_timestamp,
    socket_dir,
    status_socket_path,
)

HOME = "/home/u"


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"SHED_HOST_AGENT_SOCKET_DIR": "/tmp/x"}, "darwin", "/tmp/x"),
        ({"SHED_HOST_AGENT_SOCKET_DIR": "/tmp/x", "XDG_RUNTIME_DIR": "/run/1"}, "linux", "/tmp/x"),
        ({}, "darwin", "/home/u/Library/Application Support/shed"),
        ({"XDG_RUNTIME_DIR": "/run/1"}, "darwin", "/home/u/Library/Application Support/shed"),
        ({"XDG_RUNTIME_DIR": "/run/1"}, "linux", "/run/1/shed"),
        ({}, "linux", "/home/u/.local/share/shed"),
        # empty values count as unset
        (
            {"SHED_HOST_AGENT_SOCKET_DIR": "", "XDG_RUNTIME_DIR": ""},
            "linux",
            "/home/u/.local/share/shed",
        ),
        ({"SHED_HOST_AGENT_SOCKET_DIR": "", "XDG_RUNTIME_DIR": "/run/1"}, "linux", "/run/1/shed"),
    ],
)
def test_socket_dir_resolution_order(env: dict[str, str], platform: str, expected: str) -> None:
    assert socket_dir(env, platform, HOME) == PurePosixPath(expected)


def test_socket_names() -> None:
    assert str(status_socket_path("/d")) == "/d/host-agent-status.sock"
    assert str(approval_socket_path(PurePosixPath("/d"))) == "/d/host-agent.sock"


@pytest.mark.parametrize(
    ("epoch", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (1_000_000_000, "2001-09-09T01:46:40Z"),
        (1_700_000_000.999, "2023-11-14T22:13:20Z"),  # truncated, never rounded
        (4071049445, "2099-01-02T15:04:05Z"),
    ],
)
def test_format_timestamp(epoch: float, text: str) -> None:
    assert format_timestamp(epoch) == text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1e20])
def test_format_timestamp_rejects_out_of_range(bad: float) -> None:
    with pytest.raises(ValueError, match="time"):
        format_timestamp(bad)
