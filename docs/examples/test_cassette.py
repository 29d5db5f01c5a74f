"""Record a herdr session once, replay it in every later run (``cassette_server``)."""

import pytest

from shedproto.clients.herdr import AsyncHerdrClient


@pytest.mark.anyio
async def test_a_new_workspace_is_listed(cassette_server, herdr_server):
    """Recording talks to ``upstream``; replay serves the cassette beside this file."""
    upstream = herdr_server.path  # on your machine: the real herdr's socket
    async with cassette_server("herdr", upstream=upstream, name="workspaces") as path:
        client = AsyncHerdrClient.for_socket(path)
        created = await client.workspace_create(cwd="/tmp", label="docs")
        listed = await client.workspace_list()
        assert [w.workspace_id for w in listed.workspaces] == [
            created.workspace.workspace_id
        ]
