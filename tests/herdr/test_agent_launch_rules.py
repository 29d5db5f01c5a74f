"""herdr's readiness rule for started agents and its shell-initialising test, in the core."""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.herdr import (
    ManagedLaunch,
    begin_launch,
    detected_without_screen,
    is_pane_shell_name,
    reconcile_launch,
    shell_is_initializing,
)


def test_begin_launch_is_pending_with_settle_and_deadline() -> None:
    launch = begin_launch("pi", 100.0, None)
    assert (launch.phase, launch.ready_after, launch.deadline) == ("pending", 103.0, 130.0)
    assert launch.launch_pending
    assert not launch.interactive_ready
    assert launch.next_deadline() == 103.0
    assert begin_launch("pi", 0.0, 5000, settle=0.5).deadline == 5.0


def test_readiness_tracks_detection_state() -> None:
    # herdr's managed_agent_readiness_tracks_detection_state, step by step
    launch: ManagedLaunch | None = begin_launch("pi", 0.0, 1000, settle=0.1)
    assert launch is not None
    launch = reconcile_launch(launch, 0.1, "pi", "unknown")
    assert launch is not None
    assert (launch.phase, launch.ready_after) == ("pending", None)
    assert launch.launch_pending
    assert reconcile_launch(launch, 0.101, "pi", "working") == launch
    launch = reconcile_launch(launch, 0.102, "pi", "blocked")
    assert launch is not None
    assert launch.phase == "blocked"
    assert launch.launch_pending
    assert not launch.interactive_ready
    assert launch.next_deadline() is None
    assert reconcile_launch(launch, 2.0, "pi", "blocked") == launch  # no deadline while blocked
    launch = reconcile_launch(launch, 2.0, "pi", "idle")
    assert launch is not None
    assert launch.interactive_ready
    assert not launch.launch_pending
    assert reconcile_launch(launch, 2.0, None, "unknown") == launch  # detection lost: still ready
    assert reconcile_launch(launch, 2.0, None, "unknown", process_exited=True) is None


def test_idle_before_the_settle_delay_is_not_ready() -> None:
    launch = begin_launch("pi", 0.0, 30_000)
    early = reconcile_launch(launch, 1.0, "pi", "idle")
    assert early is not None
    assert early.phase == "pending"
    assert early.observed_expected
    ready = reconcile_launch(early, 3.0, "pi", "idle")
    assert ready is not None
    assert ready.interactive_ready


@pytest.mark.parametrize(
    ("why", "now", "known", "state"),
    [
        ("another agent detected", 0.0, "codex", "idle"),
        ("deadline passed", 1.0, None, "unknown"),
        ("deadline passed while working", 1.0, "pi", "working"),
    ],
)
def test_mismatch_and_timeout_release_the_name(
    why: str, now: float, known: str | None, state: str
) -> None:
    launch = begin_launch("pi", 0.0, 1000, settle=0.01)
    assert reconcile_launch(launch, now, known, state) is None, why


def test_expected_agent_seen_then_gone_while_pending_is_released() -> None:
    launch = reconcile_launch(begin_launch("pi", 0.0, 30_000), 0.5, "pi", "working")
    assert launch is not None
    assert launch.observed_expected
    assert reconcile_launch(launch, 0.6, None, "unknown") is None


def test_never_seen_agent_stays_pending_until_the_deadline() -> None:
    launch = reconcile_launch(begin_launch("pi", 0.0, 30_000), 10.0, None, "unknown")
    assert launch is not None
    assert launch.phase == "pending"
    assert launch.next_deadline() == 30.0


def test_detection_without_a_screen() -> None:
    pending = begin_launch("pi", 0.0, None)
    active = ManagedLaunch(kind="pi", phase="active", deadline=30.0)
    # a hook's report wins, whatever runs
    assert detected_without_screen(pending, "codex", "working", hooked=True, running=False) == (
        "codex", "working")  # fmt: skip
    # the started program holds the terminal: detected, and idle while pending and unknown
    assert detected_without_screen(pending, "pi", "unknown", hooked=False, running=True) == (
        "pi", "idle")  # fmt: skip
    assert detected_without_screen(active, "pi", "unknown", hooked=False, running=True) == (
        "pi", "unknown")  # fmt: skip
    assert detected_without_screen(pending, "pi", "done", hooked=False, running=True) == (
        "pi", "done")  # fmt: skip
    # the shell is back in front: nothing detected
    assert detected_without_screen(pending, "pi", "idle", hooked=False, running=False) == (
        None, "idle")  # fmt: skip


def shell_info(**fields: Any) -> dict[str, Any]:
    info: dict[str, Any] = {
        "shell_pid": 10,
        "foreground_process_group_id": 10,
        "foreground_processes": [{"pid": 10, "name": "bash", "argv": ["/bin/bash"]}],
    }
    info.update(fields)
    return info


@pytest.mark.parametrize(
    ("why", "info", "expected"),
    [
        ("shell in front", shell_info(), True),
        ("shell named only by argv[0]", shell_info(foreground_processes=[
            {"pid": 10, "name": "weird", "argv": ["-zsh"]}]), True),
        ("program in front", shell_info(foreground_process_group_id=11), False),
        ("shell pid not listed", shell_info(foreground_processes=[
            {"pid": 11, "name": "bash"}]), False),
        ("not a shell", shell_info(foreground_processes=[
            {"pid": 10, "name": "python3", "argv": ["python3"]}]), False),
        ("no shell pid", shell_info(shell_pid=None), False),
        ("negative pid", shell_info(shell_pid=-1, foreground_process_group_id=-1), False),
        ("boolean pid", shell_info(shell_pid=True, foreground_process_group_id=True), False),
        ("garbage processes", shell_info(foreground_processes="bash"), False),
        ("empty answer", {}, False),
    ],
)  # fmt: skip
def test_shell_is_initializing(why: str, info: dict[str, Any], expected: bool) -> None:
    assert shell_is_initializing(info) is expected, why


@pytest.mark.parametrize(
    ("name", "expected"),
    [("bash", True), ("/usr/bin/zsh", True), ("-fish", True), ("PWSH.exe", True),
     ("C:\\Windows\\cmd.exe", True), ("bashful", False), ("pi", False), ("", False)],
)  # fmt: skip
def test_pane_shell_names(name: str, expected: bool) -> None:
    assert is_pane_shell_name(name) is expected
