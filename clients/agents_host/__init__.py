"""Clients of the agents-host socket API: :class:`AsyncAgentsHostClient` and a blocking twin.

Both send one request at a time and wait for its reply (events that arrive
in between, after ``subscribe``, are kept for :meth:`AsyncAgentsHostClient.next_event`).
A failed request raises :class:`AgentsHostApiError` with the wire ``code``.
"""

from __future__ import annotations

from ._client import (
    DEFAULT_TIMEOUT,
    AgentsHostApiError,
    AsyncAgentsHostClient,
    BlockingAgentsHostClient,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentsHostApiError",
    "AsyncAgentsHostClient",
    "BlockingAgentsHostClient",
]
