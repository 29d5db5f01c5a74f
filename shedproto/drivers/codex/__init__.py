"""The codex app-server dialect, sans-IO: connection, inventory, reads, prompts, launch.

* :class:`CodexClientConnection` speaks JSON-RPC without the ``jsonrpc``
  member, one object per line, rising integer ids, and answers every server
  request (approvals declined unless an :class:`ApprovalPolicy` approves).
* :func:`parse_inventory_cursor`, :func:`thread_list_params` and
  :func:`inventory_page` implement the two-phase (active, then archived)
  inventory with the connector cursors ``active:<c>``, ``archived:``,
  ``archived:<c>``.
* :func:`thread_summary` and :func:`thread_messages` map threads and items.
* :func:`turn_start_params` and :func:`turn_outcome` make and judge a prompt.
* :func:`launch_plan` derives the child's argv, env and cwd.
"""

from __future__ import annotations

from ._connection import (
    CODEX_FRAMING,
    JSONRPC_INVALID_REQUEST,
    JSONRPC_METHOD_NOT_FOUND,
    NOTIFICATION_MEMORY,
    ApprovalPolicy,
    CodexClientConnection,
    CodexEvent,
    ConnectionClosed,
    ErrorResponse,
    HandshakeComplete,
    MalformedLine,
    Notification,
    Response,
    ServerRequest,
    parse_user_agent_version,
    server_request_answer,
)
from ._operations import (
    CODEX_CAPABILITIES,
    RETRYABLE_CODEX_ERRORS,
    TOOL_ITEM_TYPES,
    CodexConfigError,
    InventoryCursor,
    LaunchPlan,
    PageWalk,
    full_turn,
    inventory_page,
    item_of_entry,
    launch_plan,
    parse_inventory_cursor,
    thread_list_params,
    thread_messages,
    thread_of,
    thread_summary,
    turn_id_of,
    turn_outcome,
    turn_start_params,
)
from ._state import TABLE, TRANSITIONS, CodexInput, CodexState, transition

__all__ = [
    "CodexClientConnection",
    "CodexState",
    "CodexInput",
    "TRANSITIONS",
    "transition",
    "TABLE",
    "ApprovalPolicy",
    "server_request_answer",
    "parse_user_agent_version",
    "CodexEvent",
    "HandshakeComplete",
    "Response",
    "ErrorResponse",
    "Notification",
    "ServerRequest",
    "MalformedLine",
    "ConnectionClosed",
    "CODEX_FRAMING",
    "NOTIFICATION_MEMORY",
    "JSONRPC_INVALID_REQUEST",
    "JSONRPC_METHOD_NOT_FOUND",
    "CODEX_CAPABILITIES",
    "InventoryCursor",
    "PageWalk",
    "item_of_entry",
    "full_turn",
    "thread_of",
    "turn_id_of",
    "parse_inventory_cursor",
    "thread_list_params",
    "inventory_page",
    "thread_summary",
    "thread_messages",
    "TOOL_ITEM_TYPES",
    "turn_start_params",
    "turn_outcome",
    "RETRYABLE_CODEX_ERRORS",
    "CodexConfigError",
    "LaunchPlan",
    "launch_plan",
]
