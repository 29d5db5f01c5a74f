"""The agent handlers of the herdr reference server.

``agent.*``, the ``pane.*`` agent reports and releases, the agent manifests and the
agent view, plus the launch and status rules they share.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

import anyio

from shedproto.herdr import (
    agent_name_error,
    agent_start_error,
    begin_launch,
    detected_without_screen,
    reconcile_launch,
)
from shedproto.herdr import types as t
from shedproto.herdr._detect_state import IDLE_RECHECK_SECONDS
from shedproto.herdr._manifests import detect

from ._detection import Detected, PaneDetector
from ._model import Pane
from ._state import AnswerError, E, ServerState, paste, probe_client

DEFAULT_AGENT_KINDS: tuple[str, ...] = (
    "pi", "omp", "claude", "codex", "copilot", "devin", "droid", "kimi", "opencode",
    "kilo", "hermes", "qodercli", "qwen", "cursor", "mastracode", "antigravity_cli",
    "grok", "command_code", "gemini", "amp",
)  # fmt: skip
"""Agent kinds ``agent.start`` accepts by default; each runs the program of its name."""
PROMPT_ENTER_DELAY = 0.05
PROMPT_STALL_SECONDS = 5.0


HANDLERS: dict[str, str] = {
    "pane.report_agent": "_pane_report_agent",
    "agent.start": "_agent_start",
    "agent.list": "_agent_list",
    "agent.get": "_agent_get",
    "agent.wait": "_agent_wait",
    "agent.prompt": "_agent_prompt",
    "agent.read": "_agent_read",
    "pane.report_agent_session": "_pane_report_agent_session",
    "agent.send_keys": "_agent_send_keys",
    "agent.rename": "_agent_rename",
    "agent.focus": "_agent_focus",
    "agent.explain": "_agent_explain",
    "pane.clear_agent_authority": "_pane_clear_agent_authority",
    "pane.release_agent": "_pane_release_agent",
    "server.agent_manifests": "_agent_manifests",
    "server.reload_agent_manifests": "_reload_agent_manifests",
    "agent.view.set": "_agent_view_set",
    "agent.view.clear": "_agent_view_clear",
}
"""Method -> the name of the coroutine here that answers it."""


class AgentHandlers(ServerState):
    """The ``agent.*`` handlers and the pane's agent reports."""

    async def _pane_report_agent(self, id: str, params: t.PaneReportAgentParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if not params.source:
            raise AnswerError(E.INVALID_METADATA_SOURCE, "source must not be empty")
        newly = pane.agent != params.agent
        pane.agent = params.agent
        pane.agent_source = params.source
        status: t.AgentStatus = params.state
        if status == "idle" and pane.agent_status == "working" and not self._pane_focused(pane):
            status = "done"
        if newly:
            self.hub.emit(
                t.PaneAgentDetectedEventData(
                    pane_id=pane.id, workspace_id=pane.workspace.id, agent=pane.agent
                )
            )
        self._set_agent_status(pane, status)
        self._reconcile_launch(pane)
        pane.notify_output()
        return t.OkReply()

    async def _pane_report_agent_session(
        self, id: str, params: t.PaneReportAgentSessionParams
    ) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if params.agent_session_id is not None:
            ref = t.AgentSessionInfo(
                source=params.source, agent=params.agent, kind="id", value=params.agent_session_id
            )
        elif params.agent_session_path is not None:
            ref = t.AgentSessionInfo(
                source=params.source, agent=params.agent, kind="path",
                value=params.agent_session_path,
            )  # fmt: skip
        else:
            raise AnswerError(
                E.INVALID_METADATA_REQUEST, "agent_session_id or agent_session_path is required"
            )
        pane.agent_session = ref
        self._pane_updated(pane)
        return t.OkReply()

    async def _pane_clear_agent_authority(
        self, id: str, params: t.PaneClearAgentAuthorityParams
    ) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if params.source is None or params.source == pane.agent_source:
            pane.agent_source = None
        return t.OkReply()

    async def _pane_release_agent(self, id: str, params: t.PaneReleaseAgentParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if pane.agent == params.agent:
            final = pane.agent_status
            pane.agent, pane.agent_name, pane.agent_source = None, None, None
            pane.agent_status = "unknown"
            self.hub.emit(
                t.PaneAgentDetectedEventData(
                    pane_id=pane.id, workspace_id=pane.workspace.id, released=True,
                    final_status=final,
                )
            )  # fmt: skip
        return t.OkReply()

    def _set_agent_status(self, pane: Pane, status: t.AgentStatus) -> None:
        if status != pane.agent_status:
            pane.agent_status = status
            pane.state_change_seq += 1
            self.hub.emit(
                t.PaneAgentStatusChangedEventData(
                    pane_id=pane.id,
                    workspace_id=pane.workspace.id,
                    agent_status=status,
                    agent=pane.agent,
                )
            )

    # -- detection (herdr's "every agent at a glance", without hooks) -------------------
    async def _detect_loop(self, interval: float) -> None:
        """Look at every pane every ``interval`` seconds (sooner while an idle is confirmed)."""
        while True:
            holding = any(d.tracker.holding for d in self.detectors.values())
            await anyio.sleep(min(interval, IDLE_RECHECK_SECONDS) if holding else interval)
            self._detect_once(anyio.current_time())

    def _detect_once(self, now: float) -> None:
        live = [p for ws in self.workspaces for p in ws.panes()]
        for gone in set(self.detectors) - set(live):
            del self.detectors[gone]
        for pane in live:
            detector = self.detectors.setdefault(pane, PaneDetector())
            detected = detector.tick(pane, self.manifests, now)
            if detected is not None:
                self._apply_detection(pane, detected)

    def _apply_detection(self, pane: Pane, detected: Detected) -> None:
        """Publish what detection saw: the agent arriving or leaving, a new screen state.

        A hook's report (``pane.report_agent``) keeps authority over the state
        while the agent it named is in front; it ends when that agent leaves
        or another is found (herdr's hook-authority rule, simplified).
        """
        if detected.agent_changed:
            if pane.agent_source is not None and detected.agent != pane.agent:
                pane.agent_source = None
            if detected.agent is None:
                if pane.agent is not None:  # herdr: the agent's process exited
                    pane.launch = None
                    self._release_detected(pane)
            elif pane.agent != detected.agent:
                pane.agent = detected.agent
                self.hub.emit(
                    t.PaneAgentDetectedEventData(
                        pane_id=pane.id, workspace_id=pane.workspace.id, agent=pane.agent
                    )
                )
        if detected.state is not None and pane.agent_source is None and pane.agent is not None:
            status: t.AgentStatus = detected.state
            if status == "idle" and pane.agent_status == "done":
                status = "done"  # idle and not yet seen stays done
            elif status == "idle" and pane.agent_status == "working":
                status = "idle" if self._pane_focused(pane) else "done"
            self._set_agent_status(pane, status)
        self._reconcile_launch(pane)
        pane.wake()

    def _release_detected(self, pane: Pane) -> None:
        pane.agent, pane.agent_name = None, None
        self.hub.emit(t.PaneAgentDetectedEventData(pane_id=pane.id, workspace_id=pane.workspace.id))
        self._set_agent_status(pane, "unknown")

    def _detected_agent(self, pane: Pane) -> str | None:
        detector = self.detectors.get(pane)
        return None if detector is None else detector.agent

    def _agent_panes(self) -> list[Pane]:
        panes = [p for ws in self.workspaces for p in ws.panes()]
        for pane in panes:
            self._reconcile_launch(pane)
        return [p for p in panes if p.agent is not None]

    def _reconcile_launch(self, pane: Pane) -> None:
        """Bring a started agent's readiness up to date (herdr's managed-agent rule).

        The agent detection found in front, with its screen state, decides.
        Where detection identifies nothing (``agent_commands`` mapped a kind
        to a program that is no agent, such as ``cat``), an agent no hook
        reported on counts as detected, and idle, while that program holds
        the terminal's foreground, and as exited when it is gone. When the
        rule releases the name, such an agent leaves the pane too.
        """
        launch = pane.launch
        if launch is None:
            return
        hooked = pane.agent_source is not None
        detected = self._detected_agent(pane)
        known: str | None
        if detected is not None and not hooked:
            known, status = detected, pane.agent_status
        else:
            running = not pane.closed and not pane.process.foreground_is_shell()
            known, status = detected_without_screen(
                launch, pane.agent, pane.agent_status, hooked=hooked, running=running
            )
        self._set_agent_status(pane, status)
        exited = pane.closed or pane.exited
        now = anyio.current_time()
        pane.launch = reconcile_launch(launch, now, known, status, process_exited=exited)
        if pane.launch is None:
            pane.agent_name = None
            if not hooked:
                pane.agent = None
                self._set_agent_status(pane, "unknown")

    def _find_agent(self, target: str) -> Pane:
        by_name = [p for p in self._agent_panes() if p.agent_name == target]
        by_pane = [p for p in self._agent_panes() if p.id == target]
        found = {id(p): p for p in by_name + by_pane}
        if len(found) > 1:
            raise AnswerError(E.AGENT_TARGET_AMBIGUOUS, f"agent target {target} is ambiguous")
        if not found:
            raise AnswerError(E.AGENT_NOT_FOUND, f"agent {target} not found")
        return next(iter(found.values()))

    def _agent_reply(self, pane: Pane) -> t.AgentInfo:
        return pane.agent_info(self._pane_focused(pane))

    async def _agent_list(self, id: str, params: Any) -> t.AgentListReply:
        return t.AgentListReply(agents=[self._agent_reply(p) for p in self._agent_panes()])

    async def _agent_get(self, id: str, params: t.AgentTarget) -> t.AgentInfoReply:
        return t.AgentInfoReply(agent=self._agent_reply(self._find_agent(params.target)))

    async def _agent_start(self, id: str, params: t.AgentStartParams) -> t.AgentStartedReply:
        failure = agent_start_error(
            params.name, params.kind, self.agent_commands, params.timeout_ms, params.args
        )
        if failure is not None:
            raise AnswerError(*failure)
        command = self.agent_commands[params.kind]
        try:
            pane = self._find_pane(params.pane_id)
        except AnswerError:
            raise AnswerError(E.AGENT_PANE_NOT_FOUND, f"pane {params.pane_id} not found") from None
        if any(p.agent_name == params.name for p in self._agent_panes()):
            raise AnswerError(E.AGENT_NAME_TAKEN, f"agent name {params.name} is already taken")
        if pane.agent is not None or not await self._shell_ready(pane):
            raise AnswerError(E.AGENT_PANE_BUSY, f"pane {pane.id} is busy")
        argv = [params.kind, *params.args]
        line = shlex.join([command, *params.args])
        try:
            await pane.process.write(paste(pane, line))
            await anyio.sleep(PROMPT_ENTER_DELAY)
            await pane.process.write(b"\r")
        except OSError as exc:
            raise AnswerError(E.AGENT_START_INPUT_FAILED, f"pane {pane.id}: {exc}") from exc
        pane.agent = params.kind
        pane.agent_name = params.name
        pane.launch = begin_launch(
            params.kind, anyio.current_time(), params.timeout_ms, self.agent_settle_delay
        )
        self.hub.emit(
            t.PaneAgentDetectedEventData(
                pane_id=pane.id, workspace_id=pane.workspace.id, agent=pane.agent
            )
        )
        return t.AgentStartedReply(agent=self._agent_reply(pane), argv=argv)

    async def _shell_ready(self, pane: Pane) -> bool:
        """Return whether the pane's own program owns its terminal (a fresh pane gets 2 s)."""
        patience = max(0.0, pane.created_at + 2.0 - anyio.current_time())
        with anyio.move_on_after(patience):
            while not pane.process.foreground_is_shell():
                if pane.closed:
                    return False
                await anyio.sleep(0.02)
            return True
        return False

    async def _wait_status(
        self,
        pane: Pane,
        until: Sequence[str],
        deadline: float | None,
        *,
        after_seq: int | None = None,
    ) -> None:
        wanted = set(until or ("idle", "done", "blocked"))
        while True:
            if pane.closed or pane.agent is None:
                raise AnswerError(
                    E.AGENT_NOT_RUNNING, f"agent in pane {pane.id} is no longer running"
                )
            moved = after_seq is None or pane.state_change_seq > after_seq
            if moved and pane.agent_status in wanted:
                return
            probe_client()
            remaining = None if deadline is None else deadline - anyio.current_time()
            if remaining is not None and remaining <= 0:
                raise AnswerError(E.TIMEOUT, "timed out waiting for agent status")
            with anyio.move_on_after(remaining if remaining is not None else float("inf")):
                await pane.output.wait()

    async def _agent_wait(self, id: str, params: t.AgentWaitParams) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        await self._wait_status(pane, params.until, deadline)
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_prompt(self, id: str, params: t.AgentPromptParams) -> t.AgentPromptedReply:
        pane = self._find_agent(params.target)
        if not params.text.strip():
            raise AnswerError(E.EMPTY_AGENT_PROMPT, "prompt text is empty")
        if pane.launch is not None and pane.launch.launch_pending:
            raise AnswerError(
                E.AGENT_NOT_READY, f"agent {params.target} is not an active named agent"
            )
        seq = pane.state_change_seq
        try:
            await pane.process.write(paste(pane, params.text))
            await anyio.sleep(PROMPT_ENTER_DELAY)
            await pane.process.write(b"\r")
        except OSError as exc:
            raise AnswerError(E.AGENT_PROMPT_FAILED, f"pane {pane.id}: {exc}") from exc
        if params.wait is not None:
            probe_client()
            timeout = params.wait.timeout_ms
            deadline = None if timeout is None else anyio.current_time() + timeout / 1000
            with anyio.move_on_after(PROMPT_STALL_SECONDS):
                while pane.state_change_seq == seq and not pane.closed:
                    await pane.output.wait()
            if pane.state_change_seq == seq and not pane.closed:
                raise AnswerError(
                    E.AGENT_PROMPT_STALLED,
                    "agent prompt produced no observed state change within "
                    f"{int(PROMPT_STALL_SECONDS * 1000)} ms; status is {pane.agent_status} "
                    f"and state_change_seq remained {seq}",
                )
            await self._wait_status(pane, params.wait.until, deadline, after_seq=seq)
        return t.AgentPromptedReply(agent=self._agent_reply(pane))

    async def _agent_read(self, id: str, params: t.AgentReadParams) -> t.PaneReadReply:
        pane = self._find_agent(params.target)
        return t.PaneReadReply(read=self._read(pane, params.source, params.lines, params.format))

    async def _agent_send_keys(self, id: str, params: t.AgentSendKeysParams) -> t.OkReply:
        pane = self._find_agent(params.target)
        await self._write_pane(pane, self._keys(params.keys))
        return t.OkReply()

    async def _agent_rename(self, id: str, params: t.AgentRenameParams) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        if pane.launch is not None and pane.launch.launch_pending:
            raise AnswerError(
                E.AGENT_LAUNCH_PENDING, "agent name cannot change while startup is pending"
            )
        if params.name is not None:
            failure = agent_name_error(params.name)
            if failure is not None:
                raise AnswerError(*failure)
            if any(p.agent_name == params.name and p is not pane for p in self._agent_panes()):
                raise AnswerError(E.AGENT_NAME_TAKEN, f"agent name {params.name} is taken")
        pane.agent_name = params.name
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_focus(self, id: str, params: t.AgentTarget) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        self._focus_pane(pane)
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_explain(self, id: str, params: t.AgentTarget) -> t.AgentExplainReply:
        pane = self._find_agent(params.target)
        explain = {
            "pane_id": pane.id,
            "agent": pane.agent,
            "agent_status": pane.agent_status,
            "status_source": pane.agent_source or "none",
            "detected_agent": self._detected_agent(pane),
            "screen_detection": self._explain_screen(pane),
        }
        return t.AgentExplainReply(explain=explain)

    def _explain_screen(self, pane: Pane) -> dict[str, Any] | None:
        manifest = None if pane.agent is None else self.manifests.get(pane.agent)
        if manifest is None:
            return None
        found = detect(manifest, pane.screen.read("detection").text, pane.screen.title or "")
        return {
            "state": found.state,
            "matched_rule": found.matched_rule,
            "fallback_reason": found.fallback_reason,
            "skip_state_update": found.skip_state_update,
            "visible_idle": found.visible_idle,
            "visible_blocker": found.visible_blocker,
            "visible_working": found.visible_working,
        }

    async def _agent_manifests(self, id: str, params: Any) -> t.AgentManifestStatusReply:
        return t.AgentManifestStatusReply(manifests=self.manifests.infos())

    async def _reload_agent_manifests(self, id: str, params: Any) -> t.AgentManifestReloadReply:
        return t.AgentManifestReloadReply(manifests=self.manifests.reload())

    async def _agent_view_set(self, id: str, params: t.AgentViewSetParams) -> t.AgentViewReply:
        self.agent_view = params
        return t.AgentViewReply(active=True, source=params.source, label=params.label)

    async def _agent_view_clear(self, id: str, params: t.AgentViewClearParams) -> t.AgentViewReply:
        view = self.agent_view
        if view is not None and params.source in (None, view.source):
            self.agent_view = None
        return t.AgentViewReply(active=self.agent_view is not None)
