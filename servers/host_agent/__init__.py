"""A reference shed-host-agent: the status socket and the approval channel v2.

Embed it in another tool's tests as a stand-in for the real agent::

    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(socket_dir).serve)
        agent.set_policy("ssh-agent", "shed-desktop")
        decision = await agent.request_approval("ssh-agent", "sign", "web")
        agent.shutdown()

Where it knowingly differs from the real agent, and why:
``docs/architecture/decisions/host-agent.rst`` (*The reference agent*).
"""

from __future__ import annotations

from ._server import (
    DEFAULT_DETAILS,
    POLICIES,
    CredentialMinter,
    HostAgentServer,
    MintedCredential,
    MintError,
)

__all__ = [
    "DEFAULT_DETAILS",
    "POLICIES",
    "CredentialMinter",
    "HostAgentServer",
    "MintError",
    "MintedCredential",
]
