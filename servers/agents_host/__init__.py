"""The agents-host reference host: lifecycle, local SQLite target, socket API.

* :func:`run_host` / :class:`HostRun` -- what ``shedproto agents-host run`` does.
* :class:`AgentsHost` -- the lifecycle (start, collections, refresh, stop, health).
* :class:`CommandWorker` -- the command sequence of spec 3.5.
* :class:`SqliteTarget` -- the local target (:class:`AgentsHostTarget`);
  ``target_postgres.PostgresTarget`` -- the PostgreSQL target a fleet of hosts
  shares (the ``postgres`` extra; import that submodule).
* :func:`api_server` -- the Unix-socket API.
"""

from __future__ import annotations

from .api import EVENT_BUFFER, IDLE_TIMEOUT, SOCKET_NAME, api_server, serve_api_connection
from .driver import (
    AgentDriver,
    DriverFactory,
    LifecycleListener,
    OperationOptions,
    SupervisedDriver,
)
from .git import CheckoutDiscoveryError, find_checkouts, make_checkout_finder
from .host import AgentsHost, CollectOutcome, HostStartError
from .runner import HostRun, default_driver_factory, default_socket_path, run_host
from .target import (
    AgentsHostTarget,
    ChangeListener,
    SqliteTarget,
    TargetStoreError,
    TargetUnavailableError,
    receipt_link,
    target_file_name,
)
from .worker import CommandTaskError, CommandWorker, CommandWorkerError, WorkerHooks

__all__ = [
    "CheckoutDiscoveryError",
    "find_checkouts",
    "make_checkout_finder",
    "EVENT_BUFFER",
    "IDLE_TIMEOUT",
    "SOCKET_NAME",
    "api_server",
    "serve_api_connection",
    "AgentsHost",
    "CollectOutcome",
    "HostStartError",
    "HostRun",
    "default_driver_factory",
    "default_socket_path",
    "run_host",
    "AgentDriver",
    "AgentsHostTarget",
    "ChangeListener",
    "CommandTaskError",
    "CommandWorker",
    "CommandWorkerError",
    "SqliteTarget",
    "TargetStoreError",
    "TargetUnavailableError",
    "WorkerHooks",
    "receipt_link",
    "target_file_name",
    "DriverFactory",
    "LifecycleListener",
    "OperationOptions",
    "SupervisedDriver",
]
