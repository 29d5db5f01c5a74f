"""A reference shell and a client over a real Unix socket: the bind ceremony."""

import tempfile
from pathlib import Path

import anyio

from shedproto import encode_line
from shedproto.clients import AsyncLineTransport
from shedproto.servers.echo import echo_server


async def main() -> None:
    """Serve the echo shell on a private socket, send one frame, shut down."""
    with tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp:
        # missing parent directories are created 0700
        socket_path = Path(tmp) / "run" / "echo.sock"
        async with anyio.create_task_group() as tg:
            server = echo_server(socket_path)
            path = await tg.start(server.serve)  # returns once it is listening
            assert oct(path.stat().st_mode & 0o777) == "0o600"
            async with await AsyncLineTransport.connect(path) as transport:
                reply = await transport.request(
                    encode_line({"type": "ping"}), timeout=5
                )
            print(reply)  # b'{"type":"ping"}'
            assert reply == b'{"type":"ping"}'
            server.shutdown()
        assert not path.exists()  # unlinked on shutdown: it was still ours


anyio.run(main)
