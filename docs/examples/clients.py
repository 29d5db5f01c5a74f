"""Every blocking client, made and closed the documented way, on reference servers."""

import tempfile
from pathlib import Path

from shedproto import LocalProtocolError
from shedproto.clients import BlockingLineTransport
from shedproto.clients.agents_host import BlockingAgentsHostClient
from shedproto.clients.desktop import BlockingDesktopClient
from shedproto.clients.herdr import BlockingHerdrClient
from shedproto.clients.host_agent import BlockingApprovalConsumer, read_status
from shedproto.testing import (
    running_agents_host,
    running_desktop_server,
    running_herdr_server,
    running_host_agent,
    serve_in_thread,
)


def main() -> None:
    """Open and close one of each client; the servers run in background threads."""
    with (
        tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp,
        serve_in_thread(running_host_agent) as agent,
        serve_in_thread(running_herdr_server) as herdr,
        serve_in_thread(running_agents_host) as host,
        running_desktop_server(Path(tmp) / "desktop.sock") as desktop,
    ):
        socket_dir = agent.server.socket_dir

        # Per-request clients hold no connection: nothing to close.
        status = read_status(socket_dir)  # one connection, read to its end, closed
        print(status.approval_channel.consumer_connected)  # False: no consumer yet
        client = BlockingHerdrClient.for_socket(herdr.server.path)
        print(client.runtime_status().protocol)  # every call opens and closes its own

        # Connection-holding clients: connect(), then `with` closes them.
        consumer = BlockingApprovalConsumer.connect(socket_dir, client_name="my-app")
        with consumer:
            print(consumer.ack is not None)  # True: the agent accepted the hello
        with BlockingDesktopClient.connect(desktop.path) as shed_desktop:
            print(shed_desktop.detect_dialect().value)  # tauri
        with BlockingAgentsHostClient.connect(host.server.socket) as agents:
            print(agents.health().health is not None)  # True

        # A herdr event stream is a connection: `with` opens it and closes it.
        with client.subscribe("workspace.created") as events:
            client.workspace_create(cwd=tmp)
            event = next(iter(events))
            print(event.event)  # workspace_created
            assert event.event == "workspace_created"

        # Used any other way, a client says so in one line: never silence, never a hang.
        try:
            list(client.subscribe("workspace.created"))  # iterated without `with`
        except LocalProtocolError as exc:
            print(exc)  # the subscription is not open: use it inside `with ...`
            assert "with client.subscribe" in exc.message
        try:
            shed_desktop.call("identify")  # its `with` block above closed it
        except LocalProtocolError as exc:
            print(exc)  # the desktop client is closed: make a new one with connect()

        # The raw line transport, for a protocol of your own.
        with BlockingLineTransport.connect(herdr.server.path) as transport:
            transport.send(b'{"id":"1","method":"ping","params":{}}\n')
            answer = transport.receive_frame()
            print(answer[:8])  # b'{"id":"1'
            assert answer.startswith(b'{"id":"1"')


main()
