"""``shedproto host-agent``: ``status`` (as the real CLI does it), ``watch`` and ``serve``.

``status [--json|-json]`` copies the real CLI byte for byte: the text
layout, pretty ``--json`` re-encoded from the decoded report, exit 1 with the
real three stderr lines when the agent is not running, exit 1 on schema
skew, exit 2 with the real messages for ``--live`` and unknown arguments.
The socket directory comes from the environment exactly as the real CLI
finds it (``SHED_HOST_AGENT_SOCKET_DIR`` first). Errors keep the real
program's text even with ``--json`` (the real CLI has no JSON errors);
``-h``/``--help`` print help, a shedproto addition.

``watch [--socket-dir DIR] [--approve|--deny] [--replay N] [--count N] [--json]``
connects as the approval consumer (superseding shed-desktop, if it runs),
says on stderr that it is connected and waiting, prints every event and
request, and optionally answers requests; SIGTERM ends it (exit 0), Ctrl-C
too (exit 130), being superseded exits 1.

``serve [--socket-dir DIR] [--config FILE] [--json]`` runs the reference
agent until SIGINT or SIGTERM, then exits 0 with both socket files removed.
It prints one readiness line (JSON with ``--json``) once both sockets
listen. The config is the approval subset of the real ``extensions.yaml``
(see :mod:`shedproto.host_agent` ``parse_config``); a config error or a
refused socket exits 1 before anything is served.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from shedproto import RemoteProtocolError

from ._convention import EXIT_INTERRUPTED
from ._demo import DemoStep
from ._output import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, fail

__all__ = ["register", "serve_step"]

STATUS_HELP = """\
usage: shedproto host-agent status [--json]

Query the running shed-host-agent over its status socket and print its
self-report (the socket directory is $SHED_HOST_AGENT_SOCKET_DIR, else the
platform default).

options:
  --json, -json  print the report as indented JSON

examples:
  shedproto host-agent status
  SHED_HOST_AGENT_SOCKET_DIR=/tmp/agent shedproto host-agent status --json
"""


def register(subparsers: Any) -> None:
    """Add ``status`` and ``serve`` to the ``host-agent`` group."""
    status = subparsers.add_parser(
        "status",
        help="print the running agent's self-report (like shed-host-agent status)",
        prefix_chars="+",  # every token is ours to judge, as the real CLI does
        add_help=False,
        epilog=STATUS_HELP[STATUS_HELP.index("examples:") :],
    )
    status.add_argument("tokens", nargs="*", metavar="--json")
    status.set_defaults(func=_status)
    watch = subparsers.add_parser(
        "watch",
        help="act as the approval consumer: print events and requests, optionally decide",
        description=(
            "Connect to host-agent.sock as the approval consumer and print what arrives. "
            "This supersedes the current consumer (shed-desktop, if it runs). Without "
            "--approve/--deny, requests are left unanswered and fail closed at the timeout. "
            "SIGTERM stops it (exit 0), Ctrl-C too (exit 130)."
        ),
        epilog="examples:\n  shedproto host-agent watch\n"
        "  shedproto host-agent watch --socket-dir /tmp/agent --approve --count 1 --json",
    )
    watch.add_argument(
        "--socket-dir",
        type=Path,
        default=None,
        help="where the agent's sockets live (default: as the real agent)",
    )
    decide = watch.add_mutually_exclusive_group()
    decide.add_argument("--approve", action="store_true", help="approve every request")
    decide.add_argument("--deny", action="store_true", help="deny every request")
    watch.add_argument("--replay", type=int, default=0, metavar="N", help="replay up to N events")
    watch.add_argument("--count", type=int, default=0, metavar="N", help="stop after N items")
    watch.add_argument("--client-name", default="shedproto-watch", help="hello.client.name")
    watch.add_argument("--json", action="store_true", help="print each frame as a JSON line")
    watch.set_defaults(func=_watch)
    serve = subparsers.add_parser(
        "serve",
        help="run the reference agent until SIGINT/SIGTERM",
        description="Run the reference shed-host-agent. Like the real agent, SIGINT and SIGTERM "
        "stop it with exit 0 and both socket files removed; a config error exits 1 before "
        "anything is bound.",
        epilog="examples:\n  shedproto host-agent serve --socket-dir /tmp/agent\n"
        "  shedproto host-agent serve --config ~/.config/shed/extensions.yaml --json",
    )
    serve.add_argument(
        "--socket-dir",
        type=Path,
        default=None,
        help="where both sockets live (default: as the real agent)",
    )
    serve.add_argument(
        "--config", type=Path, default=None, help="extensions.yaml (approval keys) or JSON"
    )
    serve.add_argument("--json", action="store_true", help="print the readiness line as JSON")
    serve.set_defaults(func=_serve)


def _status(args: argparse.Namespace) -> int:
    from shedproto.clients.host_agent import AgentNotRunningError, default_socket_dir, read_status
    from shedproto.host_agent import (
        StatusSchemaError,
        StatusUsageError,
        not_running_message,
        parse_status_args,
        pretty_live_status,
        render_status,
        status_socket_path,
    )

    tokens: list[str] = args.tokens
    if any(token in ("-h", "--help") for token in tokens):
        sys.stdout.write(STATUS_HELP)
        return EXIT_OK
    try:
        options = parse_status_args(tokens)
    except StatusUsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_USAGE
    directory = default_socket_dir()
    try:
        status = read_status(directory)
    except AgentNotRunningError:
        sys.stderr.write(not_running_message(str(status_socket_path(os.fspath(directory)))))
        return EXIT_FAILURE
    except StatusSchemaError as exc:
        sys.stderr.write(f"status: {exc}\n")
        return EXIT_FAILURE
    except (RemoteProtocolError, TimeoutError, OSError) as exc:
        sys.stderr.write(f"status: reading from the agent: {exc}\n")
        return EXIT_FAILURE
    if options.json:
        sys.stdout.buffer.write(pretty_live_status(status))
    else:
        sys.stdout.write(render_status(status))
    sys.stdout.flush()
    return EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    return anyio.run(_watch_async, args)


def _describe(item: Any) -> str:
    from shedproto.host_agent import ApprovalRequest, Event, TokenResponse

    if isinstance(item, ApprovalRequest):
        where = f" server={item.server}" if item.server else ""
        return (
            f"request {item.id} {item.namespace} {item.op} shed={item.shed}{where} "
            f"expires={item.expires_at} ({item.detail})"
        )
    if isinstance(item, Event):
        extras = [
            f"{name}={value}"
            for name in ("server", "shed", "detail", "code", "reason", "approval", "decided_by")
            if (value := getattr(item, name))
        ]
        return " ".join(["event", item.ts, item.ns or "-", item.op or "-", item.result, *extras])
    kind = "token.response" if isinstance(item, TokenResponse) else "credential.response"
    return f"{kind} in_reply_to={item.in_reply_to} error={item.error or '-'}"


async def _watch_async(args: argparse.Namespace) -> int:
    from shedproto.clients import ConnectError
    from shedproto.clients.host_agent import (
        AsyncApprovalConsumer,
        SupersededError,
        default_socket_dir,
    )
    from shedproto.host_agent import ApprovalRequest, approval_socket_path, encode_frame

    directory = args.socket_dir if args.socket_dir is not None else default_socket_dir()
    path = approval_socket_path(os.fspath(directory))
    try:
        consumer = await AsyncApprovalConsumer.connect(
            directory, client_name=args.client_name, replay_events=args.replay
        )
    except ConnectError:
        raise  # the CLI's one handler prints its one-line message
    except (TimeoutError, RemoteProtocolError) as exc:
        return fail(args, "no_hello_ack", f"no hello_ack from the agent: {exc}")
    seen = 0
    stopped_by: list[int] = []
    async with consumer:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            decide = " (approving every request)" if args.approve else ""
            decide = " (denying every request)" if args.deny else decide
            sys.stderr.write(
                f"shedproto: connected to {path} as the approval consumer{decide}; "
                "waiting for events and requests (Ctrl-C stops)\n"
            )
            sys.stderr.flush()
            async with anyio.create_task_group() as tg:

                async def stop_on_signal() -> None:
                    async for signum in signals:
                        stopped_by.append(signum)
                        await consumer.aclose()  # ends the iteration below
                        return

                tg.start_soon(stop_on_signal)
                try:
                    async for item in consumer:
                        line = encode_frame(item).decode()[:-1] if args.json else _describe(item)
                        sys.stdout.write(line + "\n")
                        sys.stdout.flush()
                        if isinstance(item, ApprovalRequest) and (args.approve or args.deny):
                            await consumer.respond(item, "approve" if args.approve else "deny")
                        seen += 1
                        if args.count and seen >= args.count:
                            break
                except SupersededError:
                    tg.cancel_scope.cancel()
                    return fail(args, "superseded", "superseded by another approval consumer")
                tg.cancel_scope.cancel()
    return EXIT_INTERRUPTED if stopped_by == [signal.SIGINT] else EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    from shedproto.clients.host_agent import default_socket_dir
    from shedproto.host_agent import AgentConfig, ConfigError, parse_config

    config = AgentConfig()
    config_path = ""
    if args.config is not None:
        config_path = os.path.abspath(args.config)
        try:
            config = parse_config(Path(config_path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ConfigError) as exc:
            return fail(args, "config_error", f"config {config_path}: {exc}")
        for line in config.skipped:  # tolerated like the real agent does, but never silently
            sys.stderr.write(
                f"shedproto: warning: config {config_path} line {line.line}: "
                f"skipped, not understood: {line.text}\n"
            )
    directory = args.socket_dir if args.socket_dir is not None else default_socket_dir()
    audit_log = None
    if config.logging_enabled and config.logging_path:
        audit_log = os.path.expanduser(config.logging_path)
    from shedproto.servers._loop import run as run_server_loop
    run_server_loop(_run_agent, Path(directory), config, config_path, audit_log, bool(args.json))
    return EXIT_OK


async def _run_agent(
    directory: Path, config: Any, config_path: str, audit_log: str | None, as_json: bool
) -> None:
    from shedproto.servers.host_agent import HostAgentServer

    server = HostAgentServer(directory, config=config, config_path=config_path, audit_log=audit_log)
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            ready = {
                "pid": os.getpid(),
                "status_socket": os.fspath(server.status_path),
                "approval_socket": os.fspath(server.approval_path),
            }
            if as_json:
                sys.stdout.write(msgspec.json.encode(ready).decode() + "\n")
            else:
                sys.stdout.write(
                    f"shed-host-agent (shedproto reference) pid {ready['pid']}\n"
                    f"status socket:   {ready['status_socket']}\n"
                    f"approval socket: {ready['approval_socket']}\n"
                )
            sys.stdout.flush()
            async for _ in signals:
                server.shutdown()
                break


async def serve_step(socket_dir: Path) -> DemoStep:
    """Run the ``shedproto demo`` step: serve, read status, approve, deny, fail closed."""
    from shedproto.clients.host_agent import AsyncApprovalConsumer, read_status_async
    from shedproto.host_agent import AgentConfig, ApprovalRequest
    from shedproto.servers.host_agent import HostAgentServer

    config = AgentConfig(
        policies={
            "ssh-agent": "shed-desktop",
            "aws-credentials": "shed-desktop",
            "docker-credentials": "deny-all",
        }
    )
    lines: list[str] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            agent = await tg.start(HostAgentServer(socket_dir, config=config).serve)
            lines.append(f"reference agent listening in {socket_dir} (dir 0700, sockets 0600)")
            status = await read_status_async(socket_dir)
            lines.append(
                f"status: schema {status.schema}, gated {', '.join(status.gate_namespaces)}, "
                f"consumer connected: {status.approval_channel.consumer_connected}"
            )
            async with await AsyncApprovalConsumer.connect(
                socket_dir, client_name="shedproto-demo"
            ) as consumer:

                async def answer() -> None:
                    async for item in consumer:
                        if isinstance(item, ApprovalRequest):
                            if item.namespace == "ssh-agent":
                                await consumer.approve(item, scope="per-request")
                            else:
                                await consumer.deny(item)

                tg.start_soon(answer)
                yes = await agent.request_approval("ssh-agent", "sign", "web")
                lines.append(
                    f"ssh-agent sign for shed web: approved={yes.approved} "
                    f"(decided_by {yes.decided_by}, scope {yes.scope})"
                )
                no = await agent.request_approval("aws-credentials", "get_credentials", "web")
                lines.append(
                    f"aws-credentials for shed web: approved={no.approved} ({no.outcome.value})"
                )
            closed = await agent.request_approval("ssh-agent", "sign", "web")
            lines.append(
                f"consumer gone, ssh-agent sign: approved={closed.approved} "
                f"({closed.outcome.value}: fails closed at once)"
            )
            agent.shutdown()
            tg.cancel_scope.cancel()
    gone = not agent.status_path.exists() and not agent.approval_path.exists()
    lines.append(f"agent shut down; both socket files removed: {gone}")
    ok = yes.approved and not no.approved and not closed.approved and gone
    return DemoStep(name="host-agent", ok=ok, lines=lines)
