"""``shedproto agents-host init [DIR]``: a commented example configuration and what to run next.

It writes ``DIR/agents.jsonc`` (one ACP source on the example agent that ships
with shedproto, ``python -m shedproto.servers.agents_host.example_agent``) and,
unless one exists, a placeholder ``DIR/operator.key`` (this reference host only
checks that the identity file is readable). It never overwrites a file: an
existing ``agents.jsonc`` is an error (exit 1) and nothing is written. Missing
directories up to ``DIR`` are created 0700 (existing ones keep their mode). It
is all or nothing: when a write fails, the files and directories this run
created are removed again (nothing else, and ``DIR`` gets its times back) and
the error is one line (exit 1).
Then it prints the ``run``, ``submit`` and ``receipt`` commands to try, with
state and locks kept inside ``DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from dataclasses import dataclass
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


_PLACEHOLDER_KEY = "placeholder: the shedproto reference host only checks it is readable\n"


@dataclass(frozen=True)
class _NewFile:
    """A file this run created (exclusively), known by its inode so only it is ever removed."""

    path: Path
    identity: tuple[int, int]

    @classmethod
    def create(cls, path: Path, text: str, mode: int) -> _NewFile:
        """Create ``path`` (never an existing one) holding ``text``.

        Raises:
            OSError: it exists or cannot be written; a partly written file is removed.

        """
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        info = os.fstat(fd)
        new_file = cls(path, (info.st_dev, info.st_ino))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        except BaseException:
            new_file.remove()
            raise
        return new_file

    def remove(self) -> None:
        """Unlink the file if it is still the one created here; never raises."""
        with contextlib.suppress(OSError):
            info = os.lstat(self.path)
            if (info.st_dev, info.st_ino) == self.identity:
                os.unlink(self.path)


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
    from shedproto.servers._dirs import create_directories

    root = Path(os.path.abspath(args.directory))
    config = root / "agents.jsonc"
    identity = root / "operator.key"
    if os.path.lexists(config):
        return fail(args, "exists", f"{config} already exists; not overwriting it")
    try:
        directories = create_directories(root, 0o700)
    except NotADirectoryError as exc:
        where = "" if exc.filename == str(root) else f"cannot create {root}: "
        message = f"{where}{exc.filename} exists and is not a directory; choose another DIR"
        return fail(args, "not_a_directory", message)
    wanted = [(config, example_config(str(config)), 0o666)]
    if not os.path.lexists(identity):
        wanted.append((identity, _PLACEHOLDER_KEY, 0o600))
    created: list[_NewFile] = []
    info = os.stat(root)
    try:
        for path, text, mode in wanted:
            try:
                created.append(_NewFile.create(path, text, mode))
            except OSError as exc:
                return fail(args, "io_error", f"cannot write {path}: {exc.strerror or exc}")
    finally:
        if len(created) < len(wanted):  # failed or interrupted: undo this run's work
            for new_file in reversed(created):
                new_file.remove()
            with contextlib.suppress(OSError):  # no trace, not even in DIR's times
                os.utime(root, ns=(info.st_atime_ns, info.st_mtime_ns))
            directories.undo()
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
    lines = [f"wrote {new_file.path}" for new_file in created]
    lines += ["", "try next (run in one terminal, the others in a second):", *steps]
    if len(os.fsencode(socket)) > max_socket_path_bytes():
        lines.append(f"note: {socket} is too long for a Unix socket; choose a shorter DIR")
    emit(args, "\n".join(lines), {"created": [str(f.path) for f in created], "next": steps})
    return EXIT_OK
