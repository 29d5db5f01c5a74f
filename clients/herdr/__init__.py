r"""Clients for herdr's JSON socket API: async (anyio) and blocking.

::

    from shedproto.clients.herdr import AsyncHerdrClient

    client = AsyncHerdrClient.local()            # the socket herdr itself would use
    status = await client.runtime_status()        # RuntimeStatus: version, protocol, ...
    created = await client.workspace_create(cwd="/tmp", focus=True)
    async with client.subscribe("workspace.created") as events:
        async for event in events:
            ...

A pane's live terminal, as a web client drives it (``herdr terminal session
control``)::

    async with client.terminal_session("w1:p1", cols=80, rows=24) as term:
        await term.send_input("echo hi\r")
        async for record in term:        # TerminalFrame ..., then TerminalClosed
            ...

``BlockingHerdrClient`` has the same methods without ``await`` (it is
generated from the async client by ``tools/unasync.py``). The typed methods
and types come from the development tool ``python tools/herdr_codegen.py
SCHEMA...`` (in the repository, not installed).
"""

from __future__ import annotations

from ._async import AsyncHerdrClient, AsyncSubscription
from ._blocking import BlockingHerdrClient, BlockingSubscription
from ._common import RuntimeStatus, StreamEvent
from ._stream_async import AsyncTerminalSession
from ._stream_blocking import BlockingTerminalSession

__all__ = [
    "AsyncHerdrClient",
    "AsyncSubscription",
    "AsyncTerminalSession",
    "BlockingHerdrClient",
    "BlockingSubscription",
    "BlockingTerminalSession",
    "RuntimeStatus",
    "StreamEvent",
]
