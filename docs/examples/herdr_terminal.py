"""Drive a pane's live terminal the way a web client does (herdr terminal sessions)."""

from shedproto.clients.herdr import BlockingHerdrClient
from shedproto.testing import running_herdr_server, serve_in_thread

with serve_in_thread(running_herdr_server) as herdr:  # or BlockingHerdrClient.local()
    client = BlockingHerdrClient.for_socket(herdr.server.path)
    pane = client.workspace_create(cwd="/tmp").root_pane.pane_id
    with client.terminal_session(pane, cols=80, rows=24) as term:  # pane's controller
        term.send_input("echo $((40 + 2))\r")  # typed keys; \r is Enter
        painted = b""
        for frame in term.frames():  # ANSI frames: a full redraw first, then changes
            painted += frame.data()
            if b"42" in painted:
                break
        term.resize(100, 30)  # the pane's PTY and screen follow the controller
        term.release()  # the stream then ends with terminal.closed, "detached"
        print(list(term)[-1])
