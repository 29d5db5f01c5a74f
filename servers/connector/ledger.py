"""The durable command ledger file: :class:`CommandLedger`.

Every mutation computes the next :class:`~shedproto.connector.LedgerState` in
the core, then writes it durably (``O_EXCL`` temp file, ``fsync``, ``rename``,
directory ``fsync``); a crash leaves the previous or the new generation on
disk, never a torn file. Threads share one ledger through group commit: one
durable write per generation, each caller returns after the write that holds
its change. The write order and the group-commit guarantees are described in
the documentation: ``docs/protocols/connector.md`` (*Writing it durably*).
"""

from __future__ import annotations

import errno
import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from shedproto.connector import (
    LedgerState,
    Receipt,
    command_identity,
    parse_ledger,
)

from ._private import check_private, ensure_private_directory

__all__ = [
    "LABEL",
    "CommandLedger",
    "LedgerWriteError",
    "remove_stale_temp_files",
    "write_file_durably",
]

LABEL = "command ledger"
"""The prefix of every private-path message about ledger paths."""


class LedgerWriteError(OSError):
    """A ledger write failed before the rename; the file and the in-memory state are unchanged."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise LedgerWriteError("command ledger write made no progress")
        view = view[written:]


def _fsync_directory(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file_durably(path: str, data: bytes, commit: Callable[[], None] | None = None) -> None:
    """Replace ``path`` with ``data`` crash-safely (temp file, fsync, rename, directory fsync).

    ``commit``, if given, runs right after the rename and before the
    directory fsync: the moment the new content is the file's.

    Raises:
        PrivatePathError: the directory is not private.
        OSError: the write failed; if before the rename, the temporary file
            was removed and ``path`` is untouched.

    """
    directory = os.path.dirname(path) or "."
    ensure_private_directory(LABEL, directory)
    temp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4()}"
    renamed = False
    try:
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0),
            0o600,
        )
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, path)
        renamed = True
        if commit is not None:
            commit()
        _fsync_directory(directory)
    except BaseException as error:
        if not renamed:
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass
            except OSError as cleanup:
                add_note = getattr(error, "add_note", None)  # Python 3.11+
                if add_note is not None:
                    add_note(f"temporary-file cleanup also failed: {cleanup}")
        raise


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return True


def remove_stale_temp_files(path: str) -> int:
    """Remove ``<path>.tmp-<pid>-<uuid>`` files left by writers that died before the rename.

    Only files whose writer process no longer exists are removed (a live
    writer's temp file is never touched); the ledger itself never is.
    Returns how many were removed; never raises for a file it cannot remove.
    """
    directory = os.path.dirname(path) or "."
    prefix = f"{os.path.basename(path)}.tmp-"
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid_text = entry.name[len(prefix) :].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


_Apply = Callable[[LedgerState], "LedgerState | None"]


class _Change:
    """One caller's queued mutation and, once its write is done, its outcome.

    A ``deferred`` change has no caller waiting for it (see
    :meth:`CommandLedger.mark_published_later`).
    """

    __slots__ = ("apply", "deferred", "done", "error", "result", "wants_result")

    def __init__(
        self, apply: _Apply, *, wants_result: bool = False, deferred: bool = False
    ) -> None:
        self.apply = apply
        self.wants_result = wants_result
        self.deferred = deferred
        self.done = False
        self.error: BaseException | None = None
        self.result: list[Receipt] | None = None


class CommandLedger:
    """One target's durable receipt ledger.

    Open it with :meth:`open`; a missing file is an empty ledger at generation
    0 and nothing is written until the first mutation.
    """

    def __init__(self, path: str, state: LedgerState) -> None:
        self.path = path
        self._state = state
        self._cond = threading.Condition(threading.Lock())
        self._queue: list[_Change] = []  # arrived, not yet taken by a leader
        self._writing = False  # a leader owns the committed state and the file
        self._unwritten = False  # deferred changes were applied that no write holds yet

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> CommandLedger:
        """Open (never create) the ledger at ``path``.

        Temporary files left by writers that died before their rename are
        removed (see :func:`remove_stale_temp_files`).

        Raises:
            PrivatePathError: the directory or the file is not private (a
                symlink, the wrong type, another owner, group/other bits).
            LedgerError: the file is not a valid ledger (the real message).
            OSError: it could not be read.

        """
        text_path = os.fspath(path)
        directory = os.path.dirname(text_path) or "."
        ensure_private_directory(LABEL, directory)
        remove_stale_temp_files(text_path)
        try:
            info = os.lstat(text_path)
        except FileNotFoundError:
            return cls(text_path, LedgerState())
        check_private(LABEL, "file", text_path, info)
        try:
            fd = os.open(text_path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return cls(text_path, LedgerState())
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                check_private(LABEL, "file", text_path, os.lstat(text_path))
            raise
        with os.fdopen(fd, "rb") as file:
            data = file.read()
        return cls(text_path, parse_ledger(data))

    # --- reads -------------------------------------------------------------------------------

    @property
    def state(self) -> LedgerState:
        """The last committed state."""
        return self._state

    @property
    def generation(self) -> int:
        """The last committed generation (0 for a ledger never written)."""
        return self._state.generation

    def get(self, command_id: str, producer: str | None = None) -> Receipt | None:
        """Return the stored receipt for ``(producer, command_id)``, or ``None``."""
        return self._state.get(command_id, producer)

    def pending_publication_count(self) -> int:
        """How many receipts still wait for publication."""
        return self._state.pending_publication_count()

    def pending(self) -> list[Receipt]:
        """Return the receipts waiting for publication, in ``localeCompare`` order."""
        return self._state.pending_receipts()

    # --- writes ------------------------------------------------------------------------------

    def put(self, receipt: Receipt) -> None:
        """Store ``receipt`` (replacing the command's previous one), mark it pending, persist.

        Returns once a durable write holding this change is done; concurrent
        calls share writes (see the module docstring).

        Raises:
            LocalProtocolError: the receipt fails ledger validation (nothing
                is written for it).
            LedgerExhaustedError: the generation cannot grow.
            OSError: the write failed (state unchanged if before the rename).

        """
        self._submit(_Change(lambda state: state.put(receipt)))

    def mark_published(self, command_id: str, producer: str | None = None) -> None:
        """Mark a command's receipt as published; a no-op (no write) if it was not pending.

        "Pending" is judged at this call's place in the arrival order, so a
        ``put`` of the command queued before it counts.

        Raises:
            LedgerExhaustedError: the generation cannot grow.
            OSError: the write failed.

        """
        key = command_identity(command_id, producer)
        self._submit(_Change(lambda state: state.mark_published(key)))

    def mark_published_later(self, command_id: str, producer: str | None = None) -> None:
        """Mark a command's receipt as published without a write of its own; never blocks.

        The change is in :attr:`state` at once (or as soon as the write in
        progress ends) and reaches the disk with the next write: any
        :meth:`put`, :meth:`recover` or :meth:`flush`. This is what the host
        uses after a publication, because the published mark is only a hint:
        a crash before the next write leaves the receipt pending, and it is
        published again at the next start, which is idempotent (the same
        bytes at the same deterministic location). Receipts themselves are
        never deferred: :meth:`put` returns only once its write is durable.
        A mark that does not apply (not pending) is dropped silently.
        """
        key = command_identity(command_id, producer)
        change = _Change(lambda state: state.mark_published(key), deferred=True)
        with self._cond:
            if self._writing or self._queue:
                self._queue.append(change)  # folded, in arrival order, by the next leader
                return
            self._apply_deferred([change])

    def flush(self) -> None:
        """Write the deferred changes now (no write when there are none).

        Raises:
            LedgerExhaustedError: the generation cannot grow.
            OSError: the write failed (the changes stay applied in memory).

        """
        self._submit(_Change(lambda state: state if self._unwritten else None))

    def _apply_deferred(self, changes: list[_Change]) -> None:
        """Apply deferred changes to the committed state in memory (lock held, no leader)."""
        state = self._state
        for change in changes:
            try:
                after = change.apply(state)
            except Exception:  # a deferred change has no caller to tell: it is dropped
                continue
            if after is not None:
                state = after.with_generation(state.generation)
                self._unwritten = True
        self._state = state

    def recover(self, *, now: str) -> list[Receipt]:
        """Make every ``in-flight`` receipt ``unknown``, persist, and return the pending receipts.

        The recovered receipts carry ``orphaned-in-flight``.

        Always writes (the generation rises even when nothing changed), as the
        real ledger does; the result is sorted by identity and is the pending
        set right after this change, in arrival order.

        Raises:
            LedgerExhaustedError: the generation cannot grow.
            OSError: the write failed.

        """
        change = _Change(lambda state: state.recover(now=now), wants_result=True)
        self._submit(change)
        return change.result or []  # set by every recover that did not raise

    def _submit(self, change: _Change) -> None:
        """Queue ``change``, lead writes while none is in flight, return when it is settled.

        Raises the change's own error (validation) or its write's error.
        """
        with self._cond:
            self._queue.append(change)
            while not change.done:
                if not self._writing:
                    break
                self._cond.wait()
            else:
                return self._outcome(change)
            batch, self._queue = self._queue, []  # our change is in it
            self._writing = True
        try:
            self._lead(batch)
        finally:
            with self._cond:
                for settled in batch:
                    settled.done = True
                self._writing = False
                if self._queue and all(queued.deferred for queued in self._queue):
                    deferred, self._queue = self._queue, []  # no waiter will lead these
                    self._apply_deferred(deferred)
                self._cond.notify_all()
        return self._outcome(change)

    @staticmethod
    def _outcome(change: _Change) -> None:
        error = change.error
        if error is not None:
            try:
                raise error
            finally:
                del error, change

    def _lead(self, batch: list[_Change]) -> None:
        """Fold ``batch`` onto the committed state in order, write it once, record each outcome.

        Runs with ``_writing`` set and outside the condition's lock, so new
        changes queue up meanwhile; only the leader reads the committed state
        for writing and assigns it. Never raises: every error lands on the
        changes it belongs to (the caller marks them all done).
        """
        base = self._state
        working = base
        members: list[_Change] = []  # the changes the write holds; they share its outcome
        alone: set[int] = set()  # changes settled without the write (invalid, or a no-op)
        try:
            for index, change in enumerate(batch):
                try:
                    after = change.apply(working)
                except Exception as exc:  # invalid on its own: fails alone, never joins
                    change.error = exc
                    alone.add(index)
                    continue
                if after is None:  # a no-op where it stands in the order
                    if change.apply(base) is None:
                        alone.add(index)  # and on the committed state: nothing depends
                    else:  # a no-op only through an earlier change here: shares its fate
                        members.append(change)
                    continue
                # keep the working generation at the committed one, so exhaustion is judged
                # per write and the written state gets exactly one more generation
                working = after.with_generation(base.generation)
                if change.wants_result:
                    change.result = working.pending_receipts()
                members.append(change)
            if members:
                self._write(working.with_generation(base.generation + 1))
        except BaseException as exc:  # the write failed (or, defensively, the fold did)
            for index, change in enumerate(batch):
                if index not in alone:
                    change.error = exc
                    change.result = None

    def _write(self, next_state: LedgerState) -> None:
        def adopt() -> None:
            self._state = next_state
            self._unwritten = False

        write_file_durably(self.path, next_state.encode(), adopt)

    def __repr__(self) -> str:
        return f"CommandLedger({Path(self.path).name!r}, generation={self.generation})"
