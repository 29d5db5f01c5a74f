"""File-level helpers for the agents-host connector: the durable ledger and process locks.

The decisions (file format, validation, private-path rules) are the core's
(:mod:`shedproto.connector`); these modules do the system calls: ``O_EXCL``
temp files, ``fsync``, atomic ``rename``, directory ``fsync``, ``lstat`` /
``fstat`` checks and ``flock``. They are blocking; call them from a worker
thread (``anyio.to_thread.run_sync``) inside an event loop.
"""

from __future__ import annotations

from ._private import PrivatePathError, check_private, current_uid, ensure_private_directory
from .ledger import CommandLedger, LedgerWriteError, remove_stale_temp_files, write_file_durably
from .lock import HostLocks, LockChangedError, LockHeldError, ProcessLock, acquire_host_locks

__all__ = [
    "CommandLedger",
    "HostLocks",
    "LedgerWriteError",
    "LockChangedError",
    "LockHeldError",
    "PrivatePathError",
    "ProcessLock",
    "acquire_host_locks",
    "check_private",
    "current_uid",
    "ensure_private_directory",
    "remove_stale_temp_files",
    "write_file_durably",
]
