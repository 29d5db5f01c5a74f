"""A real ACP agent built with the public ``agent-client-protocol`` SDK: it echoes prompts.

Run as a script (``python sdk_echo_agent.py``); it speaks ACP over stdio.
Behaviour, chosen by the prompt text:

* any text: ``agent_message_chunk`` s ``"echo: "`` and the text, stop reason
  ``end_turn``; like the real agents, the user's text is streamed only when
  ``session/load`` replays the session, never live;
* ``permission ...``: first asks ``session/request_permission`` and reports
  the outcome in an ``agent_message_chunk`` (``outcome=<...>``);
* ``wait ...``: streams one chunk, then waits for ``session/cancel`` and
  ends with ``cancelled``;
* ``fail ...``: answers the prompt with a JSON-RPC error.

``ECHO_AGENT_NO_LIST=1`` hides ``session/list``; ``ECHO_AGENT_VERSION=<n>``
answers ``initialize`` with protocol version ``n``.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

import acp
from acp import schema


class EchoAgent:
    """The echo agent; see the module docstring."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        version = int(os.environ.get("ECHO_AGENT_VERSION", acp.PROTOCOL_VERSION))
        session_caps = schema.SessionCapabilities(
            list=None if os.environ.get("ECHO_AGENT_NO_LIST") else schema.SessionListCapabilities()
        )
        return schema.InitializeResponse(
            protocol_version=version,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True, session_capabilities=session_caps
            ),
            agent_info=schema.Implementation(name="sdk-echo-agent", version="1.0"),
        )

    def _modes(self) -> schema.SessionModeState:
        return schema.SessionModeState(
            current_mode_id="default",
            available_modes=[
                schema.SessionMode(id="default", name="Default"),
                schema.SessionMode(id="plan", name="Plan"),
            ],
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        session_id = f"sess-{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = {"cwd": cwd, "history": [], "title": None, "n": 0}
        return schema.NewSessionResponse(session_id=session_id, modes=self._modes())

    async def load_session(
        self, cwd: str, session_id: str, **kwargs: Any
    ) -> schema.LoadSessionResponse | None:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        for update in session["history"]:
            await self.conn.session_update(session_id=session_id, update=update)
        return schema.LoadSessionResponse(modes=self._modes())

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> schema.ListSessionsResponse:
        return schema.ListSessionsResponse(
            sessions=[
                schema.SessionInfo(
                    session_id=key,
                    cwd=value["cwd"],
                    title=value["title"],
                    updated_at=f"2026-01-01T00:00:{value['n']:02d}.000Z",
                )
                for key, value in self.sessions.items()
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        return None

    async def _say(self, session_id: str, update: Any) -> None:
        self.sessions[session_id]["history"].append(update)
        await self.conn.session_update(session_id=session_id, update=update)

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> schema.PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        text = "".join(getattr(block, "text", "") for block in prompt)
        cancelled = self.cancelled[session_id] = asyncio.Event()
        session["n"] += 1
        if session["title"] is None:
            session["title"] = text[:40]
        if text.startswith("fail"):
            raise acp.RequestError.internal_error({"reason": "asked to fail"})
        # Like real agents: the user's text is replayed by session/load, never streamed live.
        session["history"].append(acp.update_user_message_text(text))
        if text.startswith("permission"):
            response = await self.conn.request_permission(
                session_id=session_id,
                tool_call=schema.ToolCallUpdate(tool_call_id="call-1", title="write file"),
                options=[
                    schema.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                    schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )
            outcome = response.outcome
            label = getattr(outcome, "option_id", None) or outcome.outcome
            await self._say(session_id, acp.update_agent_message_text(f"outcome={label}"))
            return schema.PromptResponse(stop_reason="end_turn")
        await self._say(session_id, acp.update_agent_message_text("echo: "))
        if text.startswith("wait"):
            await cancelled.wait()
            return schema.PromptResponse(stop_reason="cancelled")
        await self._say(session_id, acp.update_agent_message_text(text))
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


if __name__ == "__main__":
    asyncio.run(acp.run_agent(EchoAgent()))  # type: ignore[arg-type]
