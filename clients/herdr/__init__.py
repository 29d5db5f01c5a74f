"""Clients for herdr's JSON socket API: async (anyio) and blocking.

::

    from shedproto.clients.herdr import AsyncHerdrClient

    client = AsyncHerdrClient.local()            # the socket herdr itself would use
    status = await client.runtime_status()        # RuntimeStatus: version, protocol, ...
    created = await client.workspace_create(cwd="/tmp", focus=True)
    async with client.subscribe("workspace.created") as events:
        async for event in events:
            ...

``BlockingHerdrClient`` has the same methods without ``await``. The type
generator lives here too: ``python -m shedproto.clients.herdr.codegen SCHEMA...``.
"""

from __future__ import annotations

from ._client import (
    AsyncHerdrClient,
    AsyncSubscription,
    BlockingHerdrClient,
    BlockingSubscription,
    RuntimeStatus,
    StreamEvent,
)

__all__ = [
    "AsyncHerdrClient",
    "AsyncSubscription",
    "BlockingHerdrClient",
    "BlockingSubscription",
    "RuntimeStatus",
    "StreamEvent",
]
