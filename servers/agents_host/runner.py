"""Run a host the way ``agents-host`` runs: locks, target, ledger, host, socket, signals.

:func:`run_host` is the command line's body (``shedproto agents-host run``).
The real host's connection options identify the *local* target here:

* the target key is the connector's, SHA-256 of the API URL origin, the
  space and the configured owner DID; the space value is used as given
  (there is no Fabric to resolve a space name into a DID);
* the identity file must exist and be a readable regular file (as the real
  host requires one), but it is never parsed: its DID cannot be checked
  against ``ownerDid`` without Common Fabric's key handling;
* the SQLite target sits beside the ledger in the state directory, unless
  ``--target postgresql://...`` names a fleet database
  (:class:`~.target_postgres.PostgresTarget`, the ``postgres`` extra),
  opened after the local locks; the API
  socket is ``<lock directory>/agents-host.sock`` unless ``socket_path`` is
  given (the lock directory is the runtime directory of spec 4.5).

Startup lines are the real host's (``Agent host synchronized <n> sessions in
<space>``, ``Command cell: ...``, ``Receipt cell: ...``, ``Command ledger:
...``, each producer's queue, then the ``Ready; ...`` line); this host adds
``Target database: <url without password>`` (PostgreSQL only) and
``API socket: <path>`` before ``Ready``. Exit status: 0 for ``--once`` and a
clean signal shutdown (also during startup), 1 for any failure
(``Agent host failed: <message>`` on stderr).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import anyio
import anyio.abc

from shedproto.connector import (
    AgentsHostCliOptions,
    AgentsHostConfig,
    AgentSourceConfig,
    TargetCells,
    TargetIdentity,
    ledger_lock_path,
    ledger_path,
    lock_directory,
    state_directory,
    target_lock_path,
)
from shedproto.servers.connector import CommandLedger, acquire_host_locks

from .api import SOCKET_NAME, api_server
from .availability import DEFAULT_TARGET_WAIT
from .driver import AgentDriver, DriverFactory
from .git import make_checkout_finder
from .host import AgentsHost, HostStartError
from .target import AgentsHostTarget, SqliteTarget

__all__ = ["HostRun", "default_driver_factory", "default_socket_path", "run_host"]


def default_driver_factory(source: AgentSourceConfig) -> AgentDriver:
    """Build the driver of an enabled source: ``acp``, ``codex-app-server`` or ``claude-agent-sdk``.

    The native drivers live in :mod:`shedproto.servers.drivers`, which builds
    on this package, hence the import at call time. Children inherit this
    process's environment as their baseline.

    Raises:
        ValueError: the driver name is not one the host knows.

    """
    from shedproto.servers.drivers import driver_factory

    return driver_factory(source)


def default_socket_path(env: Mapping[str, str]) -> str:
    """Return ``<lock directory>/agents-host.sock`` for this user (spec 4.5 rules)."""
    uid = None if sys.platform == "win32" else os.getuid()
    return os.path.join(
        lock_directory(env, platform=sys.platform, uid=uid, cwd=os.getcwd()), SOCKET_NAME
    )


@dataclass
class HostRun:
    """Everything :func:`run_host` needs; ``out`` / ``err`` receive whole lines."""

    cli: AgentsHostCliOptions
    config: AgentsHostConfig
    env: Mapping[str, str]
    socket_path: str | None = None
    state_dir: str | None = None
    """Overrides the state directory derived from ``env`` (the CLI's ``--state-dir``)."""
    driver_factory: DriverFactory = default_driver_factory
    out: Callable[[str], None] = field(default=lambda line: print(line, flush=True))
    err: Callable[[str], None] = field(
        default=lambda line: print(line, file=sys.stderr, flush=True)
    )
    clock_ms: Callable[[], int] = field(default=lambda: time.time_ns() // 1_000_000)
    handle_signals: bool = True
    health_interval: float = 0.05
    """Seconds between coalesced health publications (see ``AgentsHost._health_publisher``)."""
    target_wait: float = DEFAULT_TARGET_WAIT
    heartbeat_interval: float = 5.0
    """Seconds between heartbeats in a PostgreSQL fleet database (``run --heartbeat``)."""
    """Seconds a command waits for an unreachable target before ``claim-publish-failed``."""
    host: AgentsHost | None = None
    ready: anyio.Event = field(default_factory=anyio.Event)
    stop_requested: anyio.Event = field(default_factory=anyio.Event)
    startup_scope: anyio.CancelScope | None = None


def _check_identity(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise OSError(f"could not read identity file {path}: {exc.strerror}") from exc


async def run_host(run: HostRun) -> int:
    """Run until ``--once`` ends, a signal, or ``stop_requested``; return the exit status."""
    try:
        return await _run(run)
    except Exception as exc:
        run.err(f"Agent host failed: {_innermost(exc)}")
        return 1


def _innermost(exc: BaseException) -> BaseException:
    """Unwrap task-group exception groups that hold exactly one error."""
    while True:
        inner = getattr(exc, "exceptions", None)
        if not inner or len(inner) != 1:
            return exc
        exc = inner[0]


async def _run(run: HostRun) -> int:
    cli, config = run.cli, run.config
    _check_identity(cli.identity_path)
    identity = TargetIdentity(cli.api_url, cli.space, config.ownerDid)
    uid = None if sys.platform == "win32" else os.getuid()
    cwd = os.getcwd()
    state_dir = run.state_dir or state_directory(run.env, platform=sys.platform, cwd=cwd)
    lock_dir = lock_directory(run.env, platform=sys.platform, uid=uid, cwd=cwd)
    ledger_file = ledger_path(state_dir, identity.key)
    locks = acquire_host_locks(
        target_lock_path(lock_dir, identity.key), ledger_lock_path(ledger_file)
    )
    try:
        target = _open_target(cli, state_dir, identity.key, config.ownerDid, run.heartbeat_interval)
        try:
            ledger = CommandLedger.open(ledger_file)
            return await _serve(run, target, ledger, ledger_file, lock_dir)
        finally:
            target.close()
    finally:
        locks.release()


def _open_target(
    cli: AgentsHostCliOptions, state_dir: str, key: str, owner_did: str, heartbeat: float
) -> AgentsHostTarget:
    """Open the SQLite target, or the PostgreSQL one ``--target`` names.

    Raises:
        TargetStoreError: the target cannot be opened (another host holds the key, ...).
        RuntimeError: a PostgreSQL target without psycopg installed.

    """
    if cli.target is None:
        return SqliteTarget.open(state_dir, key, owner_did=owner_did, space=cli.space, owner=True)
    try:
        from .target_postgres import PostgresTarget
    except ImportError as exc:
        raise RuntimeError(
            "the PostgreSQL target needs psycopg: pip install 'shedproto[postgres]'"
        ) from exc
    return PostgresTarget.open(
        cli.target, key, owner_did=owner_did, space=cli.space, heartbeat_interval=heartbeat
    )


async def _serve(
    run: HostRun, target: AgentsHostTarget, ledger: CommandLedger, ledger_file: str, lock_dir: str
) -> int:
    cli, config = run.cli, run.config
    host = AgentsHost(
        config=config,
        target=target,
        ledger=ledger,
        driver_factory=run.driver_factory,
        clock_ms=run.clock_ms,
        cells=TargetCells(
            recentIndex="index/recent",
            allIndex="index/all",
            health="health",
            commands="commands/_owner",
            receipts="receipt-index",
        ),
        space_did=cli.space,
        accept_commands=not cli.once,
        defer_health_until_ready=True,
        health_interval=run.health_interval,
        target_wait=run.target_wait,
    )
    host.find_checkouts = make_checkout_finder(host.now)
    run.host = host
    signal_name: list[str] = []
    async with anyio.create_task_group() as tg:
        if run.handle_signals:
            tg.start_soon(_watch_signals, run, host, signal_name)
        failures: list[str]
        with anyio.CancelScope() as startup:
            run.startup_scope = startup
            try:
                await host.start(tg)
            except HostStartError:
                await host.stop("startup-failed")
                raise
        if startup.cancelled_caught:
            failures = await host.stop(
                signal_name[0] if signal_name else "cancelled",
                flush_pending_receipts=False,
                interrupt_in_flight=True,
                publish_health=host.health_owned,
            )
            tg.cancel_scope.cancel()
            return 1 if failures else 0
        _print_startup(run, host, ledger_file, lock_dir)
        if cli.once:
            failures = await host.stop("once")
        else:
            socket_path = run.socket_path or os.path.join(lock_dir, SOCKET_NAME)
            server = api_server(socket_path, host)
            await tg.start(server.serve)
            interval = config.collectionIntervalMs
            run.out(f"API socket: {socket_path}")
            if interval:
                run.out(
                    f"Ready; collecting every {interval}ms, send SIGHUP to collect sooner, "
                    "or SIGINT/SIGTERM to stop"
                )
                tg.start_soon(_periodic, host, interval)
            else:
                run.out("Ready; send SIGHUP to collect again, or SIGINT/SIGTERM to stop")
            beat = getattr(target, "heartbeat", None)
            if beat is not None:
                tg.start_soon(_heartbeat, beat, run.heartbeat_interval)
            run.ready.set()
            await run.stop_requested.wait()
            server.shutdown()
            failures = await host.stop(signal_name[0] if signal_name else "stop")
        tg.cancel_scope.cancel()
    for failure in failures:
        run.err(f"Agent host failed: {failure}")
    return 1 if failures else 0


def _print_startup(run: HostRun, host: AgentsHost, ledger_file: str, lock_dir: str) -> None:
    count = host.sync.sessionCount if host.sync is not None and host.sync.sessionCount else 0
    run.out(f"Agent host synchronized {count} sessions in {run.cli.space}")
    run.out(f"Command cell: {host.cells.commands}")
    run.out(f"Receipt cell: {host.cells.receipts}")
    run.out(f"Command ledger: {ledger_file}")
    if run.cli.target is not None:
        from .target_postgres import describe_database

        run.out(f"Target database: {describe_database(run.cli.target)}")
    for producer in run.config.commandProducers or ():
        run.out(f"Command producer {producer.id} queue: commands/{producer.id}")


async def _heartbeat(beat: Callable[[], None], interval: float) -> None:
    """Beat every ``interval`` seconds from the event loop (so a hung loop stops beating).

    A failed beat is left to the next one (the host's health reports the outage).
    """
    while True:
        with contextlib.suppress(Exception):
            beat()
        await anyio.sleep(interval)


async def _periodic(host: AgentsHost, interval_ms: int) -> None:
    done = anyio.Event()

    def finished() -> None:
        done.set()

    host.on_collection_done = finished
    while True:
        await anyio.sleep(interval_ms / 1000)
        done = anyio.Event()
        if host.request_collection("periodic") == "started":
            await done.wait()


async def _watch_signals(run: HostRun, host: AgentsHost, signal_name: list[str]) -> None:
    with anyio.open_signal_receiver(signal.SIGHUP, signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            if signum == signal.SIGHUP:
                if not run.ready.is_set():
                    run.err("Ignoring SIGHUP while startup is still in progress")
                    continue
                outcome = host.request_collection("SIGHUP")
                if outcome == "pending":
                    run.err("SIGHUP received; one follow-up full collection is pending")
                elif outcome == "covered":
                    run.err("SIGHUP received; the pending full collection already covers it")
                else:
                    run.err("SIGHUP received; collecting")
                continue
            run.err(f"{name} received; shutting down")
            signal_name.append(name)
            if not run.ready.is_set() and run.startup_scope is not None:
                run.startup_scope.cancel()
            run.stop_requested.set()
            return
