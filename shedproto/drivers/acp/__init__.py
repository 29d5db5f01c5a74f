"""The Agent Client Protocol driver's pure core: the client side of ACP, sans-IO.

* :class:`AcpConnection` -- JSON-RPC 2.0, one JSON object per line over the
  agent's stdio; its transition table :data:`TRANSITIONS`.
* :func:`normalize_updates` / :class:`SessionTranscript` -- recorded
  ``session/update`` events and their normalised messages.
* :func:`decode_message` -- one JSON-RPC message, typed.

:mod:`shedproto.servers.drivers` runs a real agent with it (``AcpDriver``).
The decisions taken where the spec is silent are in
``docs/architecture/decisions/agents-host.rst``.
"""

from __future__ import annotations

from ._connection import (
    ACP_FRAMING,
    CLIENT_NAME,
    CLOSED_CODE,
    MAX_ERROR_DETAIL,
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpConnection,
    AcpEvent,
    AgentFeatures,
    AuthMethod,
    ConnectionClosed,
    PeerRequestRefused,
    PermissionAnswered,
    PermissionPolicy,
    PromptAbandoned,
    PromptDeadlinePassed,
    RequestFailed,
    RequestSucceeded,
    SessionControls,
    SessionUpdated,
    choose_auth_method,
    describe_rpc_error,
    is_standard_rpc_code,
)
from ._jsonrpc import RpcError, RpcMessage, decode_message
from ._rules import (
    AUTH_REQUIRED,
    advertised_controls,
    check_config_option,
    check_mode,
    parse_session_page,
    prompt_receipt,
    rpc_failure,
)
from ._state import TABLE, TRANSITIONS, AcpInput, AcpState
from ._transcript import SessionTranscript, normalize_updates

__all__ = [
    "AUTH_REQUIRED",
    "advertised_controls",
    "check_config_option",
    "check_mode",
    "parse_session_page",
    "prompt_receipt",
    "rpc_failure",
    "ACP_FRAMING",
    "CLIENT_NAME",
    "CLOSED_CODE",
    "MAX_ERROR_DETAIL",
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "TABLE",
    "TRANSITIONS",
    "AcpConnection",
    "AcpEvent",
    "AcpInput",
    "AcpState",
    "AgentFeatures",
    "AuthMethod",
    "ConnectionClosed",
    "PeerRequestRefused",
    "PermissionAnswered",
    "PermissionPolicy",
    "PromptAbandoned",
    "PromptDeadlinePassed",
    "RequestFailed",
    "RequestSucceeded",
    "RpcError",
    "RpcMessage",
    "SessionControls",
    "SessionTranscript",
    "SessionUpdated",
    "choose_auth_method",
    "decode_message",
    "describe_rpc_error",
    "is_standard_rpc_code",
    "normalize_updates",
]
