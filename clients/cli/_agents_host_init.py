"""``shedproto agents-host init [DIR]``: a commented example configuration and what to run next.

It writes ``DIR/agents.jsonc`` (one ACP source on the example agent that ships
with shedproto, ``python -m shedproto.servers.agents_host.example_agent``) and,
unless one exists, a placeholder ``DIR/operator.key`` (this reference host only
checks that the identity file is readable). It never overwrites a file: an
existing ``agents.jsonc`` is an error (exit 1) and nothing is written. Then it
prints the ``run``, ``submit`` and ``receipt`` commands to try, with state and
locks kept inside ``DIR``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from ._output import EXIT_OK, emit, fail, json_flag

__all__ = ["EXAMPLE_AGENT_MODULE", "example_config", "register_init"]

EXAMPLE_AGENT_MODULE = "shedproto.servers.agents_host.example_agent"
"""The runnable example ACP agent the written configuration starts."""

OWNER = "did:key:z6MkExampleOwner"
SPACE = "did:key:z6MkExampleSpace"
API_URL = "http://localhost:8000"

_TEMPLATE = """\
// agents-host configuration, written by `shedproto agents-host init`.
// JSONC: comments and trailing commas are allowed. Check it with
//   shedproto agents-host check-config {path}
{{
  "schema": "commonfabric.agents-host.config",

  // The DID of the person whose sessions this host publishes. The real host
  // requires it to match the DID of the --identity key.
  "ownerDid": {owner},

  // Collect sessions every 15 minutes; 0 collects only at start and on SIGHUP.
  "collectionIntervalMs": 900000,

  "sources": [
    {{
      // A stable lowercase id: part of every session key and command route.
      "id": "example",
      // acp: an Agent Client Protocol agent speaking JSON-RPC on its stdio.
      "driver": "acp",
      "enabled": true,
      // The example agent that ships with shedproto. For a
      // real agent use its ACP command, e.g. ["gemini", "--experimental-acp"].
      "command": {command},
    }},
  ],
}}
"""


def example_config(path: str, python: str = sys.executable) -> str:
    """Return the commented example configuration text (``path`` is named in its header)."""

    def js(value: str) -> str:
        return msgspec.json.encode(value).decode()

    argv = ", ".join(js(arg) for arg in (python, "-m", EXAMPLE_AGENT_MODULE))
    return _TEMPLATE.format(path=path, owner=js(OWNER), command=f"[{argv}]")


def register_init(subparsers: Any) -> None:
    """Add ``init [DIR]`` to the agents-host group."""
    init = subparsers.add_parser(
        "init",
        parents=[json_flag()],
        help="write a commented example configuration and print what to run next",
        description="Write DIR/agents.jsonc (one ACP source on shedproto's example agent) and "
        "a placeholder DIR/operator.key, then print the run, submit and receipt commands to "
        "try. An existing agents.jsonc is never overwritten (exit 1).",
        epilog="examples:\n  shedproto agents-host init\n"
        "  shedproto agents-host init ~/agents-demo",
    )
    init.add_argument(
        "directory", metavar="DIR", nargs="?", default=".", help="where to write (default: .)"
    )
    init.set_defaults(func=_init)


def _init(args: argparse.Namespace) -> int:
    from shedproto.connector import iso_from_seconds
    from shedproto.servers import max_socket_path_bytes

    root = Path(os.path.abspath(args.directory))
    config = root / "agents.jsonc"
    identity = root / "operator.key"
    if os.path.lexists(config):
        return fail(args, "exists", f"{config} already exists; not overwriting it")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    created = []
    with open(config, "x", encoding="utf-8") as handle:
        handle.write(example_config(str(config)))
    created.append(str(config))
    if not os.path.lexists(identity):
        fd = os.open(identity, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("placeholder: the shedproto reference host only checks it is readable\n")
        created.append(str(identity))
    socket = root / "run" / "agents-host.sock"
    command = {
        "schema": "commonfabric.agent-connector.command",
        "ownerDid": OWNER,
        "id": "try-1",
        "createdAt": iso_from_seconds(time.time()),
        "sourceId": "example",
        "nativeSessionId": "new",
        "type": "start",
        "payload": {"text": "hello"},
    }
    q = shlex.quote
    run = (
        f"shedproto agents-host run --config {q(str(config))} --api-url {API_URL} "
        f"--identity {q(str(identity))} --space {SPACE} "
        f"--state-dir {q(str(root / 'state'))} --lock-dir {q(str(root / 'run'))}"
    )
    client = f"--socket {q(str(socket))}"
    submit = (
        f"shedproto agents-host submit {client} --wait {q(msgspec.json.encode(command).decode())}"
    )
    receipt = f"shedproto agents-host receipt {client} --list"
    steps = [run, submit, receipt]
    lines = [f"wrote {path}" for path in created]
    lines += ["", "try next (run in one terminal, the others in a second):", *steps]
    if len(os.fsencode(socket)) > max_socket_path_bytes():
        lines.append(f"note: {socket} is too long for a Unix socket; choose a shorter DIR")
    emit(args, "\n".join(lines), {"created": created, "next": steps})
    return EXIT_OK
