"""``herdr agent start``: start a named agent, then wait until it takes prompts.

As herdr's CLI (``src/cli/agent.rs``): it pins the pane's ``terminal_id``
(``pane.get``), sends ``agent.start`` and, while the answer is
``agent_pane_busy`` and the pane's shell is still initialising
(``pane.process_info``), retries every 100 ms for up to 2 s. Then it polls
``agent.get`` (by name, else by pane) every 100 ms until the agent is
``idle``/``done`` with ``interactive_ready`` and prints the ``agent.start``
answer carrying that agent (exit 0). Every failure is one JSON error line on
stderr and exit 1: the server's own answer, or ``agent_name_not_found``,
``agent_kind_mismatch``, ``agent_not_ready``, ``agent_start_failed``,
``timeout`` (after ``--timeout`` ms, default 30000) or
``agent_start_transport_failed``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from ._args import take_value, timeout_flag
from ._runtime import CliError, Context, Reported, Usage

__all__ = ["agent_start"]

POLL_INTERVAL = 0.1
"""Seconds between two polls (herdr's ``AGENT_START_POLL_INTERVAL``)."""
BUSY_RETRY_SECONDS = 2.0
"""How long a busy pane whose shell is initialising is retried."""
REQUEST_ID = "cli:agent:start"
USAGE = "usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]"


def _error(code: str, message: str, request_id: str = REQUEST_ID) -> dict[str, Any]:
    return {"id": request_id, "error": {"code": code, "message": message}}


def _name_lost(name: str) -> dict[str, Any]:
    return _error("agent_name_not_found", f"named agent {name} no longer owns the target terminal")


def _parse(args: Sequence[str]) -> tuple[dict[str, Any], int | None]:
    """Return ``agent.start``'s params and ``--timeout`` (ms) from herdr's arguments.

    Raises:
        Usage: a missing name, value or required flag, or an unknown option (exit 2).

    """
    if not args:
        raise Usage(USAGE)
    separator = args.index("--") if "--" in args else len(args)
    found: dict[str, str] = {}
    timeout_ms = None
    index = 1
    while index < separator:
        flag = args[index]
        value = take_value(args[:separator], index, ("--kind", "--pane", "--timeout"))
        if flag == "--timeout":
            timeout_ms = timeout_flag(value)
        else:
            found[flag] = value
        index += 2
    if "--kind" not in found:
        raise Usage("missing required --kind")
    if "--pane" not in found:
        raise Usage("missing required --pane")
    params: dict[str, Any] = {"name": args[0], "kind": found["--kind"], "pane_id": found["--pane"]}
    if separator + 1 < len(args):  # herdr omits empty args
        params["args"] = list(args[separator + 1 :])
    params["timeout_ms"] = timeout_ms
    return params, timeout_ms


def agent_start(ctx: Context, args: Sequence[str]) -> int:
    """``agent start NAME --kind KIND --pane ID [--timeout MS] [-- ARGS...]``."""
    from shedproto.herdr import AGENT_START_SETTLE_SECONDS, AGENT_TIMEOUT_MAX_MS

    params, timeout_ms = _parse(args)
    name, pane = params["name"], params["pane_id"]
    timeout = (30_000 if timeout_ms is None else timeout_ms) / 1000
    retryable = AGENT_START_SETTLE_SECONDS < timeout <= AGENT_TIMEOUT_MAX_MS / 1000
    pinned = _terminal_id(ctx, pane)
    retry_deadline: float | None = None
    busy: dict[str, Any] | None = None
    while True:
        if busy is not None:
            expired = retry_deadline is not None and ctx.monotonic() >= retry_deadline
            if expired or _terminal_id(ctx, pane) != pinned or not _initializing(ctx, pane):
                return ctx.print_response(busy)
        response = ctx.request(REQUEST_ID, "agent.start", params)
        if "error" not in response:
            break
        if (
            response["error"].get("code") != "agent_pane_busy"
            or not retryable
            or pinned is None
            or _terminal_id(ctx, pane) != pinned
            or not _initializing(ctx, pane)
        ):
            return ctx.print_response(response)
        if retry_deadline is None:
            retry_deadline = ctx.monotonic() + BUSY_RETRY_SECONDS
        busy = response
        remaining = max(0.0, retry_deadline - ctx.monotonic())
        if remaining == 0:
            return ctx.print_response(busy)
        ctx.sleep(min(POLL_INTERVAL, remaining))

    started = _field(response, "result", "agent")
    terminal_id = started.get("terminal_id") if isinstance(started, dict) else None
    if not isinstance(terminal_id, str):
        return ctx.print_response(
            _error("agent_start_failed", "agent start response did not include terminal_id")
        )
    if pinned is not None and pinned != terminal_id:
        return ctx.print_response(_name_lost(name))
    kind = started.get("agent") if isinstance(started, dict) else None
    if not isinstance(kind, str):
        return ctx.print_response(
            _error(
                "agent_start_failed", "agent start response did not include canonical agent kind"
            )
        )
    try:
        outcome = _wait_for_named_agent(
            ctx, name, pane, timeout=timeout, kind=kind, terminal_id=terminal_id
        )
    except CliError as exc:
        return ctx.print_response(_error("agent_start_transport_failed", str(exc)))
    if "error" in outcome:
        return ctx.print_response(outcome)
    response["result"]["agent"] = outcome
    return ctx.print_response(response)


def _wait_for_named_agent(
    ctx: Context, name: str, pane: str, *, timeout: float, kind: str, terminal_id: str
) -> dict[str, Any]:
    """Poll until the started agent is ready; return its ``AgentInfo`` or herdr's error answer.

    Raises:
        Reported: the server stopped or speaks another protocol.
        CliError: any other transport failure.

    """
    deadline = ctx.monotonic() + timeout
    first = True
    while True:
        if ctx.monotonic() >= deadline:
            # herdr asks once more so the server reconciles its own startup deadline
            with contextlib.suppress(Reported, CliError):
                ctx.request("cli:agent:start:timeout", "agent.get", {"target": name}, checked=False)
            return _error("timeout", "timed out waiting for agent startup")
        response = ctx.request(REQUEST_ID, "agent.get", {"target": name}, checked=first)
        first = False
        if "error" in response:
            response = ctx.request(REQUEST_ID, "agent.get", {"target": pane}, checked=False)
            if "error" in response:
                ctx.sleep(POLL_INTERVAL)
                continue
        agent = _field(response, "result", "agent")
        outcome = _outcome(agent if isinstance(agent, dict) else {}, name, kind, terminal_id)
        if outcome is not None:
            return outcome
        ctx.sleep(POLL_INTERVAL)


def _outcome(
    agent: dict[str, Any], name: str, kind: str, terminal_id: str
) -> dict[str, Any] | None:
    """Return the agent when it is ready, herdr's error when it cannot become so, else None."""
    detected = agent.get("agent")
    if agent.get("terminal_id") != terminal_id:
        return _name_lost(name)
    if isinstance(detected, str) and detected != kind:
        return _error("agent_kind_mismatch", f"expected {kind}, detected {detected}")
    if agent.get("name") != name:
        return _name_lost(name)
    status = agent.get("agent_status")
    if status == "blocked":
        return _error(
            "agent_not_ready",
            f"agent {name} is blocked during startup and is not ready for prompts",
        )
    if status in ("idle", "done"):
        if agent.get("interactive_ready") is True:
            return agent
        if agent.get("launch_pending") is not True:
            return _error("agent_start_failed", "agent process exited before becoming interactive")
    return None


def _field(response: dict[str, Any], *path: str) -> Any:
    value: Any = response
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _terminal_id(ctx: Context, pane: str) -> str | None:
    """``pane.get``'s ``terminal_id`` for ``pane`` (None when the answer has none)."""
    response = ctx.request("cli:agent:start:pane", "pane.get", {"pane_id": pane})
    terminal_id = _field(response, "result", "pane", "terminal_id")
    return terminal_id if isinstance(terminal_id, str) else None


def _initializing(ctx: Context, pane: str) -> bool:
    """Whether ``pane.process_info`` shows the pane's shell still in front."""
    from shedproto.herdr import shell_is_initializing

    params = {"pane_id": pane}
    response = ctx.request("cli:agent:start:process_info", "pane.process_info", params)
    info = _field(response, "result", "process_info")
    return shell_is_initializing(info if isinstance(info, dict) else {})
