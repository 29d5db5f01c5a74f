"""Clients of the agents-host socket API: :class:`AsyncAgentsHostClient` and a blocking twin.

Both send one request at a time and wait for its reply (events that arrive
in between, after ``subscribe``, are kept for :meth:`AsyncAgentsHostClient.next_event`).
A failed request raises :class:`AgentsHostApiError` with the wire ``code``.
The blocking client is generated from the async one (``tools/unasync.py``).
"""

from __future__ import annotations

from ._async import AsyncAgentsHostClient
from ._blocking import BlockingAgentsHostClient
from ._common import DEFAULT_TIMEOUT, AgentsHostApiError

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentsHostApiError",
    "AsyncAgentsHostClient",
    "BlockingAgentsHostClient",
]
