"""Wire constants of shed-host-agent: namespaces, policies, socket names, timings."""

from __future__ import annotations

from typing import Final

__all__ = [
    "AGENT_CAPABILITIES",
    "APPROVAL_METHOD",
    "APPROVAL_SOCKET_NAME",
    "DEFAULT_APPROVAL_TIMEOUT",
    "GATED_NAMESPACES",
    "HELLO_TIMEOUT",
    "MAX_LINE_BYTES",
    "NAMESPACES",
    "NS_AWS",
    "NS_DOCKER",
    "NS_EGRESS",
    "NS_SSH",
    "PING_INTERVAL",
    "POLICIES",
    "POLICY_APPROVE_ALL",
    "POLICY_DENY_ALL",
    "POLICY_SHED_DESKTOP",
    "PROTOCOL_VERSION",
    "REPLAY_RING_SIZE",
    "STATUS_CONNECT_TIMEOUT",
    "STATUS_READ_TIMEOUT",
    "STATUS_SCHEMA",
    "STATUS_SOCKET_NAME",
    "WRITE_TIMEOUT",
]

PROTOCOL_VERSION: Final = 2
"""The ``v`` stamped on every outbound approval-channel frame (never checked inbound)."""

STATUS_SCHEMA: Final = 1
"""The LiveStatus contract version this library speaks."""

STATUS_SOCKET_NAME: Final = "host-agent-status.sock"
APPROVAL_SOCKET_NAME: Final = "host-agent.sock"

NS_SSH: Final = "ssh-agent"
NS_AWS: Final = "aws-credentials"
NS_DOCKER: Final = "docker-credentials"
NS_EGRESS: Final = "egress"

GATED_NAMESPACES: Final = (NS_SSH, NS_AWS, NS_DOCKER)
"""The namespaces with an approval policy, in the fixed status/gate order."""

NAMESPACES: Final = (NS_SSH, NS_AWS, NS_DOCKER, NS_EGRESS)
"""What an accepted ``hello_ack`` advertises in ``namespaces``."""

POLICY_DENY_ALL: Final = "deny-all"
POLICY_APPROVE_ALL: Final = "approve-all"
POLICY_SHED_DESKTOP: Final = "shed-desktop"
POLICIES: Final = (POLICY_DENY_ALL, POLICY_APPROVE_ALL, POLICY_SHED_DESKTOP)
"""The approval policies a gated namespace can be set to."""

APPROVAL_METHOD: Final = "shed-desktop"
"""``hello_ack.agent.approval_method`` on an accepted ack."""

AGENT_CAPABILITIES: Final = ("credential.get",)
"""What the current agent advertises in ``hello_ack.agent_capabilities``."""

HELLO_TIMEOUT: Final = 2.0
"""Seconds from accept to the first complete line."""
PING_INTERVAL: Final = 10.0
"""Seconds between keepalive pings; the first comes one interval after the handshake."""
WRITE_TIMEOUT: Final = 5.0
"""Per-frame write deadline, on both sockets."""
DEFAULT_APPROVAL_TIMEOUT: Final = 25.0
"""The ``approval_timeout`` default, advertised as ``request_timeout_ms`` 25000."""
MAX_LINE_BYTES: Final = 1 << 20
"""The longest inbound line the agent accepts, counting its newline."""
REPLAY_RING_SIZE: Final = 100
"""Serialized ``event`` frames kept for ``hello.replay_events``."""
STATUS_CONNECT_TIMEOUT: Final = 2.0
STATUS_READ_TIMEOUT: Final = 5.0
