"""The memory benchmark measures what a server holds, not a constant (no timing involved)."""

from __future__ import annotations

from benchmarks.memory import TARGETS, Target, cases, measure_hostile, measure_idle


def _target(name: str) -> Target:
    return next(target for target in TARGETS if target.name == name)


def test_hostile_peer_at_the_cap_is_seen_buffered_and_bounded_beyond_it() -> None:
    echo = _target("echo")
    held = measure_hostile(echo, 2)
    # A peer one byte short of the cap pins about one cap of buffer per connection ...
    assert echo.cap // 2 < held.at_cap < 2 * echo.cap
    # ... and sending four caps' worth gets the connection dropped, not a 4-cap buffer.
    assert held.beyond_cap < echo.cap // 2


def test_idle_connection_costs_bytes_not_megabytes() -> None:
    held = measure_idle(_target("echo"), 10)
    assert 0 < held < 1 << 20


def test_every_reference_server_has_an_idle_and_a_hostile_case() -> None:
    names = [case.name for case in cases(quick=True)]
    for target in TARGETS:
        assert sum(name.startswith(f"memory: {target.name} ") for name in names) == 2
    assert {t.name for t in TARGETS} >= {
        "echo",
        "desktop tauri",
        "desktop mac",
        "host-agent status",
        "host-agent approval",
        "herdr",
        "agents-host api",
    }


def test_more_idle_connections_than_the_listen_backlog_are_all_taken() -> None:
    # Regression: 200 idle clients overflowed the servers' 128-connection backlog and a
    # Unix socket with a timeout failed its connect with EAGAIN instead of waiting.
    held = measure_idle(_target("echo"), 200)
    assert 0 < held < 1 << 20
