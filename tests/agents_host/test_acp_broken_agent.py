"""The ACP shell when the agent breaks the protocol: good output first, then a prompt failure."""

from __future__ import annotations

import sys

import anyio
import pytest

from shedproto.servers.drivers import AcpDriverError, AcpProcess

BREAKS_AFTER_AN_UPDATE = r"""
import sys, time
sys.stdin.readline()  # initialize
sys.stdout.write(
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    '{"sessionUpdate":"plan","entries":[]}}}\n'
    'garbage\n'
)
sys.stdout.flush()
time.sleep(60)
"""


async def test_a_bad_line_after_good_ones_fails_the_handshake_at_once() -> None:
    # Regression (issue 13, the push model): the good lines before the bad one are
    # delivered (and answered) and the bad one ends the agent without waiting for more
    # output; the handshake must not sit out its timeout.
    process = AcpProcess(
        [sys.executable, "-c", BREAKS_AFTER_AN_UPDATE], handshake_timeout=30, stop_grace=0.2
    )
    with anyio.fail_after(20):  # far below the handshake timeout
        async with anyio.create_task_group() as tasks:
            with pytest.raises(AcpDriverError, match="broke the ACP protocol"):
                await tasks.start(process.run)
    error = process.connection.error
    assert error is not None
    assert process.failure == f"the agent broke the ACP protocol: {error.message}"
