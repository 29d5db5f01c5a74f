"""Clients for shed-host-agent: ``read_status`` (blocking and async) and the approval consumer.

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

from ._blocking import BlockingApprovalConsumer
from ._consumer import AsyncApprovalConsumer, ConsumerItem, SupersededError
from ._status import (
    MAX_STATUS_BYTES,
    AgentNotRunningError,
    StatusTimeoutError,
    default_socket_dir,
    read_status,
    read_status_async,
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
