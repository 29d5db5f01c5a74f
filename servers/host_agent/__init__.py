"""A reference shed-host-agent: the status socket and the approval channel v2.

Embed it in another tool's tests as a stand-in for the real agent::

    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(socket_dir).serve)
        agent.set_policy("ssh-agent", "shed-desktop")
        decision = await agent.request_approval("ssh-agent", "sign", "web")
        agent.shutdown()

Decisions (see also :mod:`shedproto.host_agent`):

* a refused bind (live agent, non-socket file) raises from ``serve`` instead
  of running without that socket as the real daemon does: a test harness
  wants to know;
* ``request_approval`` audits denials itself (the operation never runs), and
  leaves the audit of an approved operation to the caller, who knows its
  result (``audit(..., decision=...)``);
* ``token.get``/``credential.get`` are answered with the real "minting is not
  available" errors unless a ``minter`` is given.
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
