"""``shedproto agents-host fleet``, and the client commands acting through a fleet database.

* ``fleet --target URL [--stale-after S] [--json]`` -- every host registered
  in the PostgreSQL database: key, space, liveness (``live`` / ``stale`` /
  ``gone``, from the host's heartbeat and whether the database sees its
  advisory lock held), the heartbeat's age, health status, sources and
  session counts in one table, then each host's sessions.
* ``submit`` / ``receipt`` / ``sessions`` / ``health`` with ``--target URL
  --host KEY`` act on that host through the database instead of its socket
  (``KEY``: a unique prefix of the target key ``fleet`` lists). A submitted
  command is appended to the host's queue (the host is woken by ``NOTIFY``);
  ``--wait`` then reads its receipt until it is terminal.

Needs the ``postgres`` extra (psycopg). Errors are the socket client's: an
unreachable database is ``connection_failed``; an unknown host, an invalid
command or an unknown producer are API errors with the socket API's codes.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import msgspec

from ._output import EXIT_OK, emit, fail, json_flag

__all__ = ["DatabaseClient", "database_client", "register_fleet"]


def register_fleet(commands: Any) -> None:
    """Add ``fleet`` to the agents-host group."""
    fleet = commands.add_parser(
        "fleet",
        parents=[json_flag()],
        help="show every host of a PostgreSQL fleet database",
        description="List every agents-host publishing to a PostgreSQL target: health, "
        "sources and sessions in one table.",
        epilog="examples:\n"
        "  shedproto agents-host fleet --target 'postgresql://agents@db.example/fleet'\n"
        "  shedproto agents-host fleet --target 'postgresql:///fleet?host=/run/pg' --json\n"
        "  shedproto agents-host fleet --target 'postgresql:///fleet' --stale-after 60\n",
    )
    fleet.add_argument(
        "--target", required=True, metavar="URL", help="the fleet's postgresql:// URL"
    )
    fleet.add_argument(
        "--stale-after",
        type=_positive_seconds,
        metavar="SECONDS",
        help="seconds without a heartbeat after which a host is stale "
        "(default: 3 of the host's own heartbeat intervals)",
    )
    fleet.set_defaults(func=_fleet)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--target URL`` and ``--host KEY`` (act through a fleet database)."""
    parser.add_argument(
        "--target",
        metavar="URL",
        help="act through this postgresql:// fleet database instead of the socket",
    )
    parser.add_argument(
        "--host",
        metavar="KEY",
        default="",
        help="with --target: the host's target key or a unique prefix (see fleet)",
    )


def _errors() -> tuple[type[Exception], type[Exception]]:
    from shedproto.clients.agents_host import AgentsHostApiError
    from shedproto.servers.agents_host import TargetStoreError

    return AgentsHostApiError, TargetStoreError


class DatabaseUnavailableError(OSError):
    """The fleet database cannot be reached (the CLI reports ``connection_failed``)."""


class DatabaseClient:
    """The socket client's read and submit calls, answered from a fleet database.

    Raises ``AgentsHostApiError`` for what the socket API would refuse and
    :class:`DatabaseUnavailableError` when the database is unreachable.
    """

    def __init__(self, url: str, host: str) -> None:
        api_error, store_error = _errors()
        try:
            from shedproto.servers.agents_host.target_postgres import PostgresTarget
        except ImportError:
            raise api_error(
                "unavailable", "--target needs psycopg: pip install 'shedproto[postgres]'"
            ) from None
        try:
            self.target = PostgresTarget.attach(url, host)
        except store_error as exc:
            if "unavailable" in str(exc):
                raise DatabaseUnavailableError(str(exc)) from exc
            raise api_error("not_found", str(exc)) from exc

    def __enter__(self) -> DatabaseClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.target.close()

    def _read(self, action: Any) -> Any:
        _, store_error = _errors()
        try:
            return action()
        except store_error as exc:
            raise DatabaseUnavailableError(str(exc)) from exc

    def submit(
        self, command: Any, *, producer: str | None = None, wait: bool = False, timeout: float = 30
    ) -> Any:
        """Validate ``command`` and append it to the host's queue (``wait``: until terminal)."""
        from shedproto.agents_host import SubmitResult
        from shedproto.connector import (
            TERMINAL_STATUSES,
            Command,
            check_command_owner,
            decode_command,
        )
        from shedproto.servers.agents_host import receipt_link

        api_error, _ = _errors()
        decoded = decode_command(command)
        if isinstance(decoded, Command):
            wrong_owner = check_command_owner(decoded, self.target.owner_did)
            decoded = decoded if wrong_owner is None else wrong_owner
        if not isinstance(decoded, Command):
            raise api_error("invalid-command", decoded.message)
        if producer is not None:
            health = self._read(self.target.read_health)
            producers = () if health is None else health.target.commandProducers or ()
            known = {p.id for p in producers}
            if producer not in known:
                raise api_error(
                    "unknown-producer", f"command producer is not configured: {producer}"
                )
        self._read(lambda: self.target.append_command(command, producer))
        link = receipt_link(decoded.id, producer, self.target.space)
        receipt = None
        if wait:
            deadline = time.monotonic() + timeout
            while True:
                receipt = self._read(lambda: self.target.read_receipt(decoded.id, producer))
                if receipt is not None and receipt.status in TERMINAL_STATUSES:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no terminal receipt for {decoded.id} within {timeout}s")
                time.sleep(0.1)
        return SubmitResult(
            commandId=decoded.id,
            producer=producer,
            queued=True,
            receiptPath=link.id,
            receipt=receipt,
        )

    def receipt(self, command_id: str, *, producer: str | None = None) -> Any:
        """Return the command's receipt (``ReceiptResult``)."""
        from shedproto.agents_host import ReceiptResult

        return ReceiptResult(self._read(lambda: self.target.read_receipt(command_id, producer)))

    def receipts(self, *, producer: str | None = None) -> Any:
        """Return recent receipts (``ReceiptsResult``)."""
        from shedproto.agents_host import ReceiptsResult

        rows = self._read(lambda: self.target.list_receipts(limit=50, producer=producer))
        return ReceiptsResult(tuple(rows))

    def health(self) -> Any:
        """Return the host's published health (``HealthResult``)."""
        from shedproto.agents_host import HealthResult

        return HealthResult(self._read(self.target.read_health))

    def sessions(self, bucket: str) -> Any:
        """Return the ``recent`` or ``all`` index (``SessionsResult``)."""
        from shedproto.agents_host import SessionsResult

        return SessionsResult(self._read(lambda: self.target.read_index(bucket)))

    def session(self, key: str) -> Any:
        """Return one session row and its manifest (``SessionResult``)."""
        from shedproto.agents_host import SessionResult

        row = self._read(self.target.published_sessions).get(key)
        manifest = self._read(lambda: self.target.read_manifest(key))
        return SessionResult(
            session=row, manifest=None if manifest is None else msgspec.json.decode(manifest)
        )


def database_client(args: argparse.Namespace) -> DatabaseClient:
    """Return the fleet-database client ``--target`` / ``--host`` select."""
    return DatabaseClient(args.target, args.host)


def _fleet(args: argparse.Namespace) -> int:
    try:
        from shedproto.servers.agents_host.target_postgres import PostgresTarget, list_fleet
    except ImportError:
        return fail(args, "unavailable", "fleet needs psycopg: pip install 'shedproto[postgres]'")
    _, store_error = _errors()
    try:
        hosts = list_fleet(args.target, stale_after=args.stale_after)
        report = []
        for host in hosts:
            target = PostgresTarget.attach(args.target, host.key)
            try:
                health = target.read_health()
                index = target.read_index("all")
            finally:
                target.close()
            report.append((host, health, index))
    except store_error as exc:
        return fail(args, "connection_failed", str(exc))
    lines = [
        f"{'HOST':<12} {'SPACE':<24} {'LIVENESS':<8} {'BEAT':>6} {'STATUS':<10} {'PENDING':>7}"
        f" {'SESSIONS':>8}  SOURCES"
    ]
    data = []
    for host, health, index in report:
        rows = [] if index is None else [r for r in index.sessions if r.syncStatus != "deleted"]
        status = "-" if health is None else health.status
        pending = (
            "-" if health is None else str(health.commandProcessing.pendingReceiptPublications)
        )
        sources = "-" if health is None else " ".join(f"{s.id}:{s.status}" for s in health.sources)
        beat = "-" if host.heartbeat_age is None else f"{host.heartbeat_age:.0f}s"
        lines.append(
            f"{host.key[:12]:<12} {host.space[:24]:<24} {host.liveness:<8} {beat:>6} "
            f"{status:<10} {pending:>7} {len(rows):>8}  {sources}"
        )
        data.append(
            {
                "key": host.key,
                "ownerDid": host.owner_did,
                "space": host.space,
                "startedAt": host.started_at,
                "liveness": host.liveness,
                "lockHeld": host.lock_held,
                "heartbeatAt": host.heartbeat_at,
                "heartbeatAgeSeconds": host.heartbeat_age,
                "heartbeatIntervalSeconds": host.heartbeat_interval,
                "health": health,
                "sessions": rows,
            }
        )
    lines += [
        f"  {host.key[:12]} {row.key} {row.syncStatus} {row.updatedAt or '-'} "
        f"{row.title or ''}".rstrip()
        for host, _, index in report
        for row in ([] if index is None else index.sessions)
    ]
    if not report:
        lines = ["no hosts in this fleet database"]
    emit(args, "\n".join(lines), {"hosts": data})
    return EXIT_OK
