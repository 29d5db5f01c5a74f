"""herdr's agent rules: names, ``agent.start`` params, readiness, the shell test.

A name matches ``^[a-z][a-z0-9_-]{0,31}$``; ``agent.start``'s ``timeout_ms``
is above 3000 and at most 300000 (default 30000); an argument may not hold
NUL, CR or LF. Each check returns herdr's error as ``(code, message)``, or
None when the value is fine. A started agent's ``launch_pending`` and
``interactive_ready`` follow :func:`reconcile_launch`; herdr's CLI retries a
busy pane while :func:`shell_is_initializing`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ._codes import HerdrErrorCode
from .types import AgentStatus

__all__ = [
    "AGENT_NAME_PATTERN",
    "AGENT_START_DEFAULT_TIMEOUT_MS",
    "AGENT_START_SETTLE_SECONDS",
    "AGENT_TIMEOUT_MAX_MS",
    "AGENT_TIMEOUT_MIN_MS",
    "PANE_SHELL_NAMES",
    "LaunchPhase",
    "ManagedLaunch",
    "agent_name_error",
    "agent_start_error",
    "begin_launch",
    "detected_without_screen",
    "is_pane_shell_name",
    "reconcile_launch",
    "shell_is_initializing",
]

AGENT_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
"""herdr's agent name rule: ``^[a-z][a-z0-9_-]{0,31}$``."""
AGENT_TIMEOUT_MIN_MS = 3000
AGENT_TIMEOUT_MAX_MS = 300_000

Failure = tuple[HerdrErrorCode, str]


def agent_name_error(name: str) -> Failure | None:
    """Return herdr's ``invalid_agent_name`` error for ``name``, or None."""
    if AGENT_NAME_PATTERN.fullmatch(name) is None:
        return (
            HerdrErrorCode.INVALID_AGENT_NAME,
            f"invalid agent name {name}; use ^[a-z][a-z0-9_-]{{0,31}}$",
        )
    return None


def agent_start_error(
    name: str, kind: str, kinds: Collection[str], timeout_ms: int | None, args: Sequence[str]
) -> Failure | None:
    """Return the first error herdr answers for these ``agent.start`` params, or None."""
    failure = agent_name_error(name)
    if failure is not None:
        return failure
    if kind not in kinds:
        return HerdrErrorCode.UNSUPPORTED_AGENT_KIND, f"unsupported agent kind {kind}"
    if timeout_ms is not None and not AGENT_TIMEOUT_MIN_MS < timeout_ms <= AGENT_TIMEOUT_MAX_MS:
        return (
            HerdrErrorCode.INVALID_AGENT_TIMEOUT,
            f"timeout_ms must be greater than {AGENT_TIMEOUT_MIN_MS} "
            f"and at most {AGENT_TIMEOUT_MAX_MS}",
        )
    for arg in args:
        if "\0" in arg or "\n" in arg or "\r" in arg:
            return HerdrErrorCode.INVALID_AGENT_ARGUMENT, f"invalid agent argument {arg!r}"
    return None


# -- a started agent's readiness (herdr's "managed agent") ------------------------------

AGENT_START_DEFAULT_TIMEOUT_MS = 30_000
"""``agent.start``'s ``timeout_ms`` when none is given."""
AGENT_START_SETTLE_SECONDS = 3.0
"""How long after ``agent.start`` herdr waits before an idle agent counts as ready."""

LaunchPhase = Literal["pending", "blocked", "active"]


@dataclass(frozen=True)
class ManagedLaunch:
    """What herdr tracks about an agent ``agent.start`` launched, until it is ready or gone.

    ``pending`` until the agent is seen idle after ``ready_after`` (then
    ``active``: ``interactive_ready``) or seen blocked (``blocked``: still
    ``launch_pending``, no deadline). ``deadline`` and ``ready_after`` are on
    the caller's clock.
    """

    kind: str
    phase: LaunchPhase
    deadline: float
    ready_after: float | None = None
    observed_expected: bool = False

    @property
    def launch_pending(self) -> bool:
        """Return herdr's ``AgentInfo.launch_pending``: started, not yet interactive."""
        return self.phase != "active"

    @property
    def interactive_ready(self) -> bool:
        """Return herdr's ``AgentInfo.interactive_ready``: seen idle after the settle delay."""
        return self.phase == "active"

    def next_deadline(self) -> float | None:
        """Return when reconciling next can change the phase on its own (None: never)."""
        if self.phase != "pending":
            return None
        return self.deadline if self.ready_after is None else min(self.ready_after, self.deadline)


def begin_launch(
    kind: str, now: float, timeout_ms: int | None, settle: float = AGENT_START_SETTLE_SECONDS
) -> ManagedLaunch:
    """Return the pending launch ``agent.start`` records at ``now``."""
    timeout = (AGENT_START_DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms) / 1000
    return ManagedLaunch(
        kind=kind, phase="pending", deadline=now + timeout, ready_after=now + settle
    )


def reconcile_launch(
    launch: ManagedLaunch,
    now: float,
    known_agent: str | None,
    state: str,
    *,
    process_exited: bool = False,
) -> ManagedLaunch | None:
    """Apply herdr's readiness rule at ``now`` and return the new launch.

    ``known_agent`` is the agent kind detected in the pane (None: none),
    ``state`` its status. None means herdr releases the agent's name: the
    process exited, a different agent was detected, the expected agent was
    seen and then vanished while pending, or the deadline passed while
    pending. Otherwise the (possibly unchanged) launch comes back.
    """
    expected = known_agent == launch.kind
    observed = launch.phase == "pending" and (launch.observed_expected or expected)
    if (
        process_exited
        or (known_agent is not None and not expected)
        or (launch.phase == "pending" and observed and known_agent is None)
    ):
        return None
    if launch.phase == "blocked":
        return replace(launch, phase="active") if expected and state == "idle" else launch
    if launch.phase == "active":
        return launch
    if expected and state == "blocked":
        return ManagedLaunch(kind=launch.kind, phase="blocked", deadline=launch.deadline)
    if now >= launch.deadline:
        return None
    if launch.ready_after is None or now >= launch.ready_after:
        if expected and state == "idle":
            return ManagedLaunch(kind=launch.kind, phase="active", deadline=launch.deadline)
        if launch.ready_after is not None:
            return replace(launch, ready_after=None, observed_expected=observed)
    return replace(launch, observed_expected=observed)


def detected_without_screen(
    launch: ManagedLaunch, agent: str | None, status: AgentStatus, *, hooked: bool, running: bool
) -> tuple[str | None, AgentStatus]:
    """Return ``(known agent, status)`` for a started agent where no screen detection exists.

    A hook's report (``hooked``: ``agent`` and ``status`` came from
    ``pane.report_agent``) wins. Otherwise the agent counts as detected while
    its program holds the terminal (``running``), and an ``unknown`` status of
    a pending launch reads as ``idle`` (an agent waiting at its prompt); when
    the program is not running, no agent is detected.
    """
    if hooked:
        return agent, status
    if not running:
        return None, status
    if launch.phase == "pending" and status == "unknown":
        return agent, "idle"
    return agent, status


# -- what herdr's CLI reads from ``pane.process_info`` ----------------------------------

PANE_SHELL_NAMES = frozenset(
    ("sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "csh", "tcsh", "elvish", "xonsh",
     "nu", "pwsh", "powershell", "cmd")
)  # fmt: skip
"""Program names herdr treats as a pane's shell."""


def is_pane_shell_name(name: str) -> bool:
    """Return whether ``name`` (a path, a login shell's ``-zsh``, ``x.exe``) names a shell."""
    base = re.split(r"[/\\]", name)[-1].lstrip("-").removesuffix(".exe").lower()
    return base in PANE_SHELL_NAMES


def shell_is_initializing(process_info: Mapping[str, Any]) -> bool:
    """Return whether a ``pane.process_info`` answer shows the pane's shell still in front.

    herdr's CLI retries ``agent_pane_busy`` while this holds: the shell's
    pid leads the foreground process group and is listed there under a shell
    name (its ``name`` or ``argv[0]``). Anything missing or malformed: False.
    """
    shell_pid = _u64(process_info.get("shell_pid"))
    if shell_pid is None or _u64(process_info.get("foreground_process_group_id")) != shell_pid:
        return False
    processes = process_info.get("foreground_processes")
    if not isinstance(processes, list):
        return False
    for process in processes:
        if not isinstance(process, dict) or _u64(process.get("pid")) != shell_pid:
            continue
        name, argv = process.get("name"), process.get("argv")
        first = argv[0] if isinstance(argv, list) and argv else None
        if any(isinstance(value, str) and is_pane_shell_name(value) for value in (name, first)):
            return True
    return False


def _u64(value: object) -> int | None:
    """Return ``value`` when JSON holds an unsigned integer there (as serde's ``as_u64``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
