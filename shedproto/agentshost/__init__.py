"""The agents-host reference host's pure core: the ACP client connection and its helpers.

* :class:`AcpConnection` -- the client side of the Agent Client Protocol
  (JSON-RPC 2.0, one JSON object per line over the agent's stdio), sans-IO.
* :func:`normalize_updates` / :class:`SessionTranscript` -- recorded
  ``session/update`` events and their normalised messages.
* The socket API's frames (:mod:`shedproto.agentshost._api`): requests
  :data:`ApiRequest`, replies and events :class:`ApiReply`, their schemas.
* Driver results: :class:`CommandExecutionResult`, :class:`SessionSummary`,
  :class:`SessionSnapshot`, :class:`SessionPage`.

Decisions where the spec is silent or ambiguous
-----------------------------------------------

ACP driver

* The client offers protocol version 1 (the SDKs' ``PROTOCOL_VERSION``) and
  accepts only 1 back; another answer closes the connection with
  ``VERSION_UNSUPPORTED``. ``initialize`` advertises no ``fs`` or
  ``terminal`` capability, so ``fs/*`` and ``terminal/*`` requests are
  refused with ``-32601``.
* Permission requests select the agent's ``reject_once`` option (the
  connector answers ``cancelled``, which ACP v1 reserves for a cancelled
  turn); a source with ``allowDangerFullAccess: true`` selects
  ``allow_once``. ``cancelled`` only when no option of the kind is offered.
* ``authenticate`` follows ``initialize`` when the source names
  ``authMethod`` or exactly one of the agent's ``env_var`` methods has its
  variables set (the agent's own environment: the host's plus the source's
  ``env``); ``auth_required`` (-32000) answers become ``acp-auth-required``.
* Reference-host error codes (driver codes, like the connector's Claude
  ``claude-*`` codes): see :mod:`shedproto.agentshost._driver`.
* ``session/list`` and ``session/load`` are optional (the issue says "where
  the agent supports it"; the real driver refuses to start without them):
  without ``list`` the inventory is the sessions this driver created; without
  ``load`` the source cannot ``read``.
* ACP agents mint session ids, so ``start`` runs ``session/new`` and the
  receipt's ``result`` carries ``nativeSessionId`` (the agent's) and
  ``requestedSessionId`` (the command's); the refresh targets the agent's id.
* A session created or loaded on this connection is not loaded again before
  a prompt (its transcript is complete); otherwise ``session/resume`` when
  advertised, else ``session/load``. Loads are serialised.
* ``stopReason: cancelled`` is a ``failed`` receipt with code ``cancelled``;
  a JSON-RPC error answer is ``failed`` / ``acp-prompt-failed``; other stop
  reasons are ``succeeded`` with ``result.stopReason``.
* ``initialize`` must be answered within 60 s (the only deadline: a silent
  agent must not hang startup, which otherwise uses no timeouts).
* Normalised messages: see :mod:`shedproto.agentshost._transcript`.

Local target and socket API

* Manifests carry their events inline in one chunk; hashes are ``sha256:``
  of canonical JSON (sorted keys) and cannot equal Fabric's.
* The socket refuses a command that fails validation (``invalid-command``)
  instead of queueing it for the worker to skip; valid commands always go
  through the queue.
"""

from __future__ import annotations

from ._acp import (
    ACP_FRAMING,
    CLIENT_NAME,
    CLOSED_CODE,
    MAX_ERROR_DETAIL,
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    AcpConnection,
    AcpEvent,
    AcpProtocolError,
    AgentFeatures,
    AuthMethod,
    ConnectionClosed,
    PeerRequestRefused,
    PermissionAnswered,
    PermissionPolicy,
    RequestFailed,
    RequestSucceeded,
    SessionControls,
    SessionUpdated,
    choose_auth_method,
    describe_rpc_error,
    is_standard_rpc_code,
)
from ._acp_state import TRANSITIONS, AcpInput, AcpState
from ._api import (
    API_FRAMING,
    API_MAX_FRAME_BYTES,
    ApiError,
    ApiErrorCode,
    ApiEvent,
    ApiReply,
    ApiRequest,
    CollectRequest,
    CollectResult,
    HealthRequest,
    HealthResult,
    ReceiptRequest,
    ReceiptResult,
    ReceiptsRequest,
    ReceiptsResult,
    SessionRequest,
    SessionResult,
    SessionsRequest,
    SessionsResult,
    SubmitRequest,
    SubmitResult,
    SubscribeRequest,
    SubscribeResult,
    Topic,
    api_schemas,
    decode_reply,
    decode_request,
    encode_error,
    encode_event,
    encode_result,
)
from ._collection import (
    RECENT_MESSAGES,
    RECENT_WINDOW_MS,
    SESSION_SCHEMA,
    SourceCollection,
    build_indexes,
    merge_full_collection,
    merge_refresh,
    row_for,
    session_manifest,
    should_retain,
)
from ._driver import (
    ACP_AGENT_EXITED,
    ACP_AGENT_UNAVAILABLE,
    ACP_AUTH_REQUIRED,
    ACP_PROMPT_DEADLINE,
    ACP_PROMPT_FAILED,
    ACP_START_FAILED,
    CommandExecutionResult,
    ExecutionStatus,
    SessionPage,
    SessionSnapshot,
    SessionSummary,
    execution_error,
    unsupported,
)
from ._jsonrpc import RpcError, RpcMessage, decode_message
from ._transcript import PREVIEW_LIMIT, SessionTranscript, normalize_updates

__all__ = [
    "ACP_AGENT_EXITED",
    "ACP_AGENT_UNAVAILABLE",
    "ACP_AUTH_REQUIRED",
    "ACP_PROMPT_DEADLINE",
    "ACP_PROMPT_FAILED",
    "ACP_START_FAILED",
    "CLOSED_CODE",
    "MAX_ERROR_DETAIL",
    "AuthMethod",
    "choose_auth_method",
    "describe_rpc_error",
    "is_standard_rpc_code",
    "RECENT_MESSAGES",
    "RECENT_WINDOW_MS",
    "SESSION_SCHEMA",
    "SourceCollection",
    "build_indexes",
    "merge_full_collection",
    "merge_refresh",
    "row_for",
    "session_manifest",
    "should_retain",
    "API_FRAMING",
    "API_MAX_FRAME_BYTES",
    "ApiError",
    "ApiErrorCode",
    "ApiEvent",
    "ApiReply",
    "ApiRequest",
    "CollectRequest",
    "CollectResult",
    "HealthRequest",
    "HealthResult",
    "ReceiptRequest",
    "ReceiptResult",
    "ReceiptsRequest",
    "ReceiptsResult",
    "SessionRequest",
    "SessionResult",
    "SessionsRequest",
    "SessionsResult",
    "SubmitRequest",
    "SubmitResult",
    "SubscribeRequest",
    "SubscribeResult",
    "Topic",
    "api_schemas",
    "decode_reply",
    "decode_request",
    "encode_error",
    "encode_event",
    "encode_result",
    "ACP_FRAMING",
    "CLIENT_NAME",
    "PREVIEW_LIMIT",
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "TRANSITIONS",
    "AcpConnection",
    "AcpEvent",
    "AcpInput",
    "AcpProtocolError",
    "AcpState",
    "AgentFeatures",
    "CommandExecutionResult",
    "ExecutionStatus",
    "SessionPage",
    "SessionSnapshot",
    "SessionSummary",
    "execution_error",
    "unsupported",
    "ConnectionClosed",
    "PeerRequestRefused",
    "PermissionAnswered",
    "PermissionPolicy",
    "RequestFailed",
    "RequestSucceeded",
    "RpcError",
    "RpcMessage",
    "SessionControls",
    "SessionTranscript",
    "SessionUpdated",
    "decode_message",
    "normalize_updates",
]
