"""Clients for shed-host-agent: ``read_status`` (blocking and async) and the approval consumer.

The blocking forms are generated from the async ones (``tools/unasync.py``).

::

    status = read_status()                      # the real agent, wherever it lives
    print(status.approval_channel.consumer_connected)

    async with await AsyncApprovalConsumer.connect(client_name="my-app") as consumer:
        async for item in consumer:
            if isinstance(item, ApprovalRequest):
                await consumer.approve(item, decided_by="user", scope="per-request")

    with BlockingApprovalConsumer.connect(client_name="my-app") as consumer:  # no event loop
        for item in consumer:
            if isinstance(item, ApprovalRequest):
                consumer.deny(item)
"""

from __future__ import annotations

from ._async import AsyncApprovalConsumer, read_status_async
from ._blocking import BlockingApprovalConsumer, read_status
from ._common import (
    MAX_STATUS_BYTES,
    AgentNotRunningError,
    ConsumerItem,
    StatusTimeoutError,
    SupersededError,
    default_socket_dir,
)

__all__ = [
    "AgentNotRunningError",
    "AsyncApprovalConsumer",
    "BlockingApprovalConsumer",
    "ConsumerItem",
    "MAX_STATUS_BYTES",
    "StatusTimeoutError",
    "SupersededError",
    "default_socket_dir",
    "read_status",
    "read_status_async",
]
