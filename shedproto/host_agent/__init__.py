"""shed-host-agent, sans-IO: the status socket (LiveStatus schema 1) and the approval channel v2.

What is here (all pure: no sockets, clocks, environment or files):

* :func:`socket_dir` and the socket paths, from (env, platform, home);
* :class:`LiveStatus` with exact encoding and lenient decoding, the
  ``status`` text rendering (:func:`render_status`), its argument rules and
  messages;
* the approval-channel frames (both directions) and their codec;
* :class:`AgentConnection` and :class:`ConsumerConnection`, h11-style;
* :class:`ApprovalRegistry` (who the consumer is, what is pending, how each
  approval ends), :class:`EventRing`, the audit records and :class:`EventLines`
  (their ``event`` lines with fresh ids, for fan-out);
* :func:`parse_config`, the approval keys of ``extensions.yaml``;
* :class:`IdSource`, uuid4-format frame ids from caller-supplied entropy.

The decisions taken where the spec is ambiguous or the versions differ are
in the documentation: ``docs/architecture/decisions/host-agent.rst``.
"""

from __future__ import annotations

from ._approvals import (
    ApprovalRegistry,
    AuditRecord,
    Decision,
    EventLines,
    EventRing,
    Outcome,
    PendingApproval,
    Promotion,
    decide_by_policy,
    denial_audit,
    encode_audit_line,
)
from ._config import AgentConfig, ConfigError, SkippedLine, parse_config, parse_go_duration
from ._connection import (
    AGENT_FRAMING,
    MAX_CSR_BYTES,
    AgentConnection,
    AgentConnectionEvent,
    CloseReason,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerConnectionEvent,
    LineSkipped,
    PingDue,
    frame_too_large,
    validate_csr,
)
from ._constants import (
    AGENT_CAPABILITIES,
    APPROVAL_METHOD,
    APPROVAL_SOCKET_NAME,
    DEFAULT_APPROVAL_TIMEOUT,
    GATED_NAMESPACES,
    HELLO_TIMEOUT,
    MAX_LINE_BYTES,
    NAMESPACES,
    NS_AWS,
    NS_DOCKER,
    NS_EGRESS,
    NS_SSH,
    PING_INTERVAL,
    POLICIES,
    POLICY_APPROVE_ALL,
    POLICY_DENY_ALL,
    POLICY_SHED_DESKTOP,
    PROTOCOL_VERSION,
    REPLAY_RING_SIZE,
    STATUS_CONNECT_TIMEOUT,
    STATUS_READ_TIMEOUT,
    STATUS_SCHEMA,
    STATUS_SOCKET_NAME,
    WRITE_TIMEOUT,
)
from ._credentials import (
    CREDENTIAL_LIMITS,
    NO_CREDENTIAL_MINTER,
    NO_TOKEN_MINTER,
    CertificateCredential,
    CredentialRefused,
    MintedCredential,
    TokenCredential,
    classify_credential,
    credential_reply,
    no_minter_error,
    parse_timestamp,
)
from ._ids import IdSource
from ._paths import SOCKET_DIR_ENV, approval_socket_path, socket_dir, status_socket_path
from ._render import (
    StatusArgs,
    StatusUsageError,
    go_quote,
    not_running_message,
    parse_status_args,
    render_status,
    tabwrite,
)
from ._state import (
    AGENT_TABLE,
    AGENT_TRANSITIONS,
    CONSUMER_TABLE,
    CONSUMER_TRANSITIONS,
    AgentInput,
    AgentState,
    ConsumerInput,
    ConsumerState,
)
from ._status import (
    ApprovalChannelStatus,
    LiveStatus,
    NamespaceHealth,
    RcHubStatus,
    ServerHealth,
    StatusSchemaError,
    build_live_status,
    decode_live_status,
    effective_policy,
    encode_live_status,
    gate_namespaces,
    has_live_status_fields,
    pretty_live_status,
)
from ._time import format_timestamp
from .types import (
    AgentFrame,
    AgentInfo,
    ApprovalRequest,
    ApprovalResponse,
    ClientInfo,
    ConsumerFrame,
    CredentialGet,
    CredentialResponse,
    Event,
    Hello,
    HelloAck,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
    decode_agent_frame,
    decode_consumer_frame,
    encode_frame,
)

__all__ = [
    "IdSource",
    # paths
    "SOCKET_DIR_ENV",
    "socket_dir",
    "status_socket_path",
    "approval_socket_path",
    # constants
    "PROTOCOL_VERSION",
    "STATUS_SCHEMA",
    "STATUS_SOCKET_NAME",
    "APPROVAL_SOCKET_NAME",
    "NS_SSH",
    "NS_AWS",
    "NS_DOCKER",
    "NS_EGRESS",
    "NAMESPACES",
    "GATED_NAMESPACES",
    "POLICIES",
    "POLICY_DENY_ALL",
    "POLICY_APPROVE_ALL",
    "POLICY_SHED_DESKTOP",
    "APPROVAL_METHOD",
    "AGENT_CAPABILITIES",
    "HELLO_TIMEOUT",
    "PING_INTERVAL",
    "WRITE_TIMEOUT",
    "DEFAULT_APPROVAL_TIMEOUT",
    "MAX_LINE_BYTES",
    "REPLAY_RING_SIZE",
    "STATUS_CONNECT_TIMEOUT",
    "STATUS_READ_TIMEOUT",
    # status
    "LiveStatus",
    "ApprovalChannelStatus",
    "RcHubStatus",
    "ServerHealth",
    "NamespaceHealth",
    "StatusSchemaError",
    "build_live_status",
    "encode_live_status",
    "pretty_live_status",
    "decode_live_status",
    "has_live_status_fields",
    "effective_policy",
    "gate_namespaces",
    "render_status",
    "tabwrite",
    "not_running_message",
    "go_quote",
    "StatusArgs",
    "StatusUsageError",
    "parse_status_args",
    "format_timestamp",
    # frames
    "Hello",
    "ClientInfo",
    "ApprovalResponse",
    "Pong",
    "TokenGet",
    "CredentialGet",
    "HelloAck",
    "AgentInfo",
    "ApprovalRequest",
    "Event",
    "Ping",
    "TokenResponse",
    "CredentialResponse",
    "ConsumerFrame",
    "AgentFrame",
    "encode_frame",
    "decode_consumer_frame",
    "decode_agent_frame",
    # connections
    "AGENT_FRAMING",
    "AgentConnection",
    "ConsumerConnection",
    "AgentConnectionEvent",
    "ConsumerConnectionEvent",
    "ConnectionClosed",
    "CloseReason",
    "LineSkipped",
    "PingDue",
    "MAX_CSR_BYTES",
    "validate_csr",
    "frame_too_large",
    "AgentState",
    "AgentInput",
    "ConsumerState",
    "ConsumerInput",
    "AGENT_TABLE",
    "AGENT_TRANSITIONS",
    "CONSUMER_TABLE",
    "CONSUMER_TRANSITIONS",
    # approvals
    "ApprovalRegistry",
    "PendingApproval",
    "Promotion",
    "Decision",
    "Outcome",
    "decide_by_policy",
    "EventLines",
    "EventRing",
    "AuditRecord",
    "denial_audit",
    "encode_audit_line",
    # credentials (client side)
    "CREDENTIAL_LIMITS",
    "TokenCredential",
    "CertificateCredential",
    "CredentialRefused",
    "classify_credential",
    "parse_timestamp",
    # credentials (agent side)
    "MintedCredential",
    "NO_CREDENTIAL_MINTER",
    "NO_TOKEN_MINTER",
    "credential_reply",
    "no_minter_error",
    # config
    "AgentConfig",
    "ConfigError",
    "SkippedLine",
    "parse_config",
    "parse_go_duration",
]
