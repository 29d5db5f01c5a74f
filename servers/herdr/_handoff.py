"""``server.live_handoff``: hand the panes to a new server process that takes over the socket.

herdr's handoff (herdrdev/herdr src/server/headless.rs:1235-1441 (the source),
5178-5260 (the successor), 3636-3658 (the answer) and src/server/handoff.rs@1c76079f),
step by step, as this server does it:

1. The source binds a private handoff socket beside its API socket
   (``herdr-handoff-<pid>.sock``; herdr's is in its data directory), refuses
   more than 64 panes, pauses every pane's reader and captures the manifest
   (:mod:`._handoff_manifest`).
2. It starts ``IMPORT_EXE server --handoff-import SOCKET TOKEN`` with
   stdin/stdout/stderr on ``/dev/null`` in a new session. Without
   ``import_exe`` herdr starts its own binary; here that is the ``herdr`` shim
   when the server runs under it (``HerdrServer.handoff_command``), else
   ``python -m shedproto.clients.cli herdr serve --handoff-import SOCKET TOKEN``.
3. The successor connects and sends the token; the source answers the
   manifest line; the successor validates it (format, ``expected_protocol``,
   ``expected_version``: herdr's checks and messages) and says ``validated``.
   A refusing successor just exits, so the source's error is herdr's
   ``handoff stream closed while reading line``.
4. The source sends every pane's PTY master in one ``SCM_RIGHTS`` message
   (one byte ``F``); the successor rebuilds the session and says ``restored``.
5. The source removes its API and client socket files; the successor waits
   until nothing answers on them, binds both and says ``ready``.
6. The source writes ``committed``: from here the successor owns the panes. It
   says ``owned`` (waited for 0.5 s), starts reading the panes and serves.
7. The source answers ``ok`` on the request's connection and exits without
   touching the pane processes. A failure before ``committed`` kills the
   successor, puts the sockets back if they were removed, resumes the readers
   and answers ``handoff_failed`` with herdr's message for the step.

Requests arriving while a handoff runs wait for it (herdr's app loop is busy
with it); after a successful one their connections close unanswered and the
client retries on the successor, as herdr's do when the old server exits.
What is not carried (herdr neither): open subscriptions, waits, streams and
in-flight ``agent.start`` launches; clients reconnect.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import anyio
import anyio.abc
import msgspec

from shedproto.herdr._handoff import (
    HANDOFF_MAX_LINE,
    HANDOFF_MAX_PANES,
    HANDOFF_OLD_SOCKETS_TIMEOUT,
    HANDOFF_OWNED_ACK_TIMEOUT,
    HANDOFF_STEP_TIMEOUT,
    too_many_panes_message,
)
from shedproto.servers._unix import UnixServer

from ._handoff_manifest import (
    HandoffManifest,
    capture,
    decode_manifest,
    live_panes,
    restore,
    validate_manifest,
)

if TYPE_CHECKING:
    from ._model import Pane
    from ._server import HerdrServer

__all__ = [
    "HandoffFailed",
    "MAX_FDS_PER_HANDOFF",
    "SUPPORTED",
    "live_handoff",
    "run_handoff_import",
]

log = logging.getLogger("shedproto.servers.herdr")

SUPPORTED = hasattr(socket, "send_fds") and sys.platform != "win32"
"""Whether this platform can pass descriptors.

herdr: ``cfg!(unix)`` (src/platform/mod.rs:66@1c76079f).
"""
MAX_FDS_PER_HANDOFF = HANDOFF_MAX_PANES
"""herdr's cap on panes in one handoff (tests lower it)."""
PAUSE_TIMEOUT = 2.0
"""How long a pane's reader may take to stop (herdr's ``pause_handoff_reader(2 s)``)."""


class HandoffFailed(Exception):  # noqa: N818 - herdr's code is handoff_failed
    """A live handoff did not happen; ``str()`` is herdr's message (the answer's)."""


def rust_error(exc: OSError) -> str:
    """Render ``exc`` as Rust's ``io::Error`` displays an OS error: ``WHY (os error N)``."""
    if exc.errno is None:
        return str(exc)
    return f"{os.strerror(exc.errno)} (os error {exc.errno})"


# ---------------------------------------------------------------- the handoff stream
def _read_line(sock: socket.socket, timeout: float) -> str:
    """Read one line, never past its newline (descriptors may follow on the socket).

    Raises:
        HandoffFailed: the stream ended, timed out or sent more than ``HANDOFF_MAX_LINE``.

    """
    sock.settimeout(timeout)
    data = bytearray()
    while True:
        try:
            peeked = sock.recv(65536, socket.MSG_PEEK)
        except TimeoutError:
            raise HandoffFailed(rust_error(OSError(errno.EAGAIN, ""))) from None
        except OSError as exc:
            raise HandoffFailed(rust_error(exc)) from None
        if not peeked:
            raise HandoffFailed("handoff stream closed while reading line")
        end = peeked.find(b"\n")
        take = len(peeked) if end < 0 else end + 1
        data += sock.recv(take)
        if end >= 0:
            return data.decode("utf-8", "replace")
        if len(data) > HANDOFF_MAX_LINE:
            raise HandoffFailed("handoff line exceeded maximum size")


def _write(sock: socket.socket, data: bytes) -> None:
    sock.settimeout(HANDOFF_STEP_TIMEOUT)
    try:
        sock.sendall(data)
    except OSError as exc:
        raise HandoffFailed(rust_error(exc)) from None


def _expect(
    sock: socket.socket, word: str, failure: str, timeout: float = HANDOFF_STEP_TIMEOUT
) -> None:
    if _read_line(sock, timeout).rstrip("\r\n") != word:
        raise HandoffFailed(failure)


# ---------------------------------------------------------------- the source
async def live_handoff(
    server: HerdrServer,
    import_exe: str | None,
    expected_protocol: int | None,
    expected_version: str | None,
) -> None:
    """Hand ``server``'s session to a successor process (module docstring).

    On return the successor owns the panes and serves the sockets; ``server``
    holds no pane any more and is to shut down once it has answered.

    Raises:
        HandoffFailed: herdr's message; ``server`` serves on as before.

    """
    if not SUPPORTED:
        raise HandoffFailed("live handoff is only supported on Unix")
    handoff_path = server.path.parent / f"herdr-handoff-{os.getpid()}.sock"
    listener = _bind_handoff(handoff_path)
    try:
        panes = live_panes(server)
        if len(panes) > MAX_FDS_PER_HANDOFF:
            raise HandoffFailed(too_many_panes_message(MAX_FDS_PER_HANDOFF))
        await _handoff(
            server,
            listener,
            handoff_path,
            panes,
            import_exe=import_exe,
            expected_protocol=expected_protocol,
            expected_version=expected_version,
        )
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(handoff_path)


def _bind_handoff(path: Path) -> socket.socket:
    """Bind the handoff socket 0600 (a stale one of this pid is replaced, as herdr does)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            if path.is_socket():
                os.unlink(path)
        listener.bind(os.fspath(path))
        os.chmod(path, 0o600)
        listener.listen(1)
    except OSError as exc:
        listener.close()
        raise HandoffFailed(rust_error(exc)) from None
    return listener


async def _handoff(
    server: HerdrServer,
    listener: socket.socket,
    handoff_path: Path,
    panes: list[Pane],
    *,
    import_exe: str | None,
    expected_protocol: int | None,
    expected_version: str | None,
) -> None:
    token = f"{os.getpid()}-{time.time_ns()}"
    await _pause(server, panes)
    child: subprocess.Popen[bytes] | None = None
    sockets_removed = False
    try:
        manifest = capture(server, panes, expected_protocol=expected_protocol,
                           expected_version=expected_version)  # fmt: skip
        child = _spawn(server, import_exe, handoff_path, token)
        stream = await anyio.to_thread.run_sync(
            _accept_and_validate, listener, child, token, manifest, handoff_path
        )
        with stream:
            await anyio.to_thread.run_sync(_send_fds, stream, [p.process.master for p in panes])
            sockets_removed = True
            _remove_public_sockets(server)
            try:
                await anyio.to_thread.run_sync(
                    _expect, stream, "ready", "handoff import did not report ready"
                )
            except HandoffFailed as exc:
                raise HandoffFailed(
                    f"handoff replacement server did not become ready: {exc}"
                ) from None
            await anyio.to_thread.run_sync(_write, stream, b"committed\n")
            # committed: the panes are the successor's from here, whatever happens next
            _release(server, panes)
            server.successor = child
            child = None
            try:
                await anyio.to_thread.run_sync(
                    _expect, stream, "owned", "unexpected ownership ack", HANDOFF_OWNED_ACK_TIMEOUT
                )
            except HandoffFailed as exc:
                log.warning("handoff import ownership ack was not received after commit: %s", exc)
    except BaseException as failure:
        if child is None:  # not started, or committed (then the panes are not ours)
            if not server.handed_off:
                _resume(server, panes)
            raise
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(_kill, child)
            try:
                if sockets_removed:
                    await _restore_public_sockets(server)
            except (HandoffFailed, OSError) as lost:
                # src/server/headless.rs:1403-1408@1c76079f: both reasons, in one message
                _resume(server, panes)
                raise HandoffFailed(
                    f"{failure}; old server could not restore public sockets: {lost}"
                ) from None
        _resume(server, panes)
        raise


async def _pause(server: HerdrServer, panes: Sequence[Pane]) -> None:
    """Stop every pane's reader at a read boundary (the successor reads on from there).

    Raises:
        HandoffFailed: a reader did not stop within :data:`PAUSE_TIMEOUT` (all resume).

    """
    for pane in panes:
        pane.paused = True
        if pane.reader is not None:
            pane.reader.cancel()
    with anyio.move_on_after(PAUSE_TIMEOUT):
        for pane in panes:
            while pane.reader is not None:
                await pane.output.wait()  # the reader wakes it as it stops
        return
    _resume(server, panes)
    raise HandoffFailed("timed out pausing a pane's output reader for handoff")


def _resume(server: HerdrServer, panes: Sequence[Pane]) -> None:
    """Restart the readers of ``panes`` after a handoff that did not happen."""
    for pane in panes:
        if not pane.paused:
            continue
        pane.paused = False
        if server._tasks is not None and not pane.closed:
            server._tasks.start_soon(server._pump, pane)


def _release(server: HerdrServer, panes: Sequence[Pane]) -> None:
    """Let go of ``panes`` without signalling their programs: the successor owns them."""
    for pane in panes:
        pane.closed = True
        server._live.discard(pane.process)
        pane.process.close_fd()  # the successor holds its own descriptor of the same PTY
    server.workspaces.clear()
    server.active = None
    server.handed_off = True


def default_import_command(server: HerdrServer) -> list[str]:
    """Return the program a handoff without ``import_exe`` starts (before its arguments)."""
    if server.handoff_command is not None:
        return list(server.handoff_command)
    return [sys.executable, "-m", "shedproto.clients.cli", "herdr", "serve"]


def _spawn(
    server: HerdrServer, import_exe: str | None, handoff_path: Path, token: str
) -> subprocess.Popen[bytes]:
    """Start the successor (herdr's ``spawn_handoff_import``).

    src/server/handoff.rs:62-104@1c76079f.
    """
    if import_exe is not None:
        argv = [import_exe, "server", "--handoff-import", os.fspath(handoff_path), token]
    elif server.handoff_command is not None:
        argv = [
            *server.handoff_command,
            "server",
            "--handoff-import",
            os.fspath(handoff_path),
            token,
        ]
    else:
        argv = [*default_import_command(server), "--handoff-import", os.fspath(handoff_path), token]
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise HandoffFailed(
            f"failed to spawn handoff import server at {argv[0]}: {rust_error(exc)}"
        ) from None


def _accept_and_validate(
    listener: socket.socket,
    child: subprocess.Popen[bytes],
    token: str,
    manifest: HandoffManifest,
    handoff_path: Path,
) -> socket.socket:
    """Accept the successor, check its token, send the manifest, wait for ``validated``.

    Waits up to ``HANDOFF_STEP_TIMEOUT`` for the connection, less when the
    successor exits first (herdr waits the whole time; the message is the same).
    """
    listener.settimeout(0.05)
    deadline = time.monotonic() + HANDOFF_STEP_TIMEOUT
    while True:
        try:
            stream, _ = listener.accept()
            break
        except TimeoutError:
            if time.monotonic() >= deadline or child.poll() is not None:
                raise HandoffFailed("timed out waiting for handoff import connection") from None
        except InterruptedError:
            continue
    try:
        stream.setblocking(True)
        if _read_line(stream, HANDOFF_STEP_TIMEOUT).rstrip("\r\n") != token:
            raise HandoffFailed("handoff import token mismatch")
        _write(stream, msgspec.json.encode(manifest) + b"\n")
        _expect(stream, "validated", "handoff import did not validate manifest")
    except BaseException:
        stream.close()
        raise
    with contextlib.suppress(OSError):
        os.unlink(handoff_path)
    return stream


def _send_fds(stream: socket.socket, fds: list[int]) -> None:
    """Send the PTY masters in one ``SCM_RIGHTS`` message, then wait for ``restored``."""
    if fds:
        stream.settimeout(HANDOFF_STEP_TIMEOUT)
        try:
            socket.send_fds(stream, [b"F"], fds)
        except OSError as exc:
            raise HandoffFailed(rust_error(exc)) from None
    _expect(stream, "restored", "handoff import did not report restored runtimes")


def _kill(child: subprocess.Popen[bytes]) -> None:
    """Kill and reap the successor (herdr's ``cleanup_failed_import_child``)."""
    if child.poll() is None:
        with contextlib.suppress(OSError):
            child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(5.0)


def _remove_public_sockets(server: HerdrServer) -> None:
    """Remove the API and client socket files so the successor can bind them."""
    for path in (server.path, server.streams.path):
        with contextlib.suppress(OSError):
            if path.is_socket():
                os.unlink(path)


async def _restore_public_sockets(server: HerdrServer) -> None:
    """Serve the API and client sockets again from fresh listeners (a failed handoff).

    The old listeners, their files gone, stay open until shutdown (open
    connections on them are kept); herdr restarts its listeners the same way.
    """
    await anyio.to_thread.run_sync(_wait_sockets_closed, [server.path, server.streams.path],
                                   HANDOFF_STEP_TIMEOUT + 2.0)  # fmt: skip
    if server._tasks is None:
        return
    for owner in (server, server.streams):
        server.retired_listeners.append(owner._unix)
        owner._unix = UnixServer(owner.path, owner._handle, grace=1.0)
        await server._tasks.start(owner._unix.serve)


def _wait_sockets_closed(paths: Sequence[Path], timeout: float) -> None:
    """Wait until nothing answers on ``paths``.

    Raises:
        HandoffFailed: one still answers after ``timeout`` seconds (herdr's message).

    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(_answers(path) for path in paths):
            return
        time.sleep(0.05)
    raise HandoffFailed("old server sockets did not close before handoff import bind")


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(0.5)
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


# ---------------------------------------------------------------- the successor
class ImportIdentity(msgspec.Struct, frozen=True, kw_only=True):
    """Who the successor is: the protocol, reported version and herdr release it serves as.

    ``None`` fields are taken from the source (the default successor is the same program).
    """

    protocol: int | None = None
    version: str | None = None
    herdr_version: str | None = None


def run_handoff_import(
    handoff_socket: str,
    token: str,
    identity: ImportIdentity,
    *,
    handoff_command: Sequence[str] | None = None,
    err: TextIO = sys.stderr,
) -> int:
    """Run ``server --handoff-import SOCKET TOKEN``: take the session over and serve it.

    ``handoff_command`` becomes the new server's ``handoff_command``.
    Returns the exit status: 0 after serving (stopped by ``server.stop`` or a
    signal), 1 when the handoff was refused or failed (one line on ``err``;
    the source then keeps its panes).
    """
    from shedproto.servers._loop import run as run_server_loop

    try:
        stream, manifest = _receive(handoff_socket, token, identity)
    except HandoffFailed as exc:
        err.write(f"herdr: handoff import failed: {exc}\n")
        return 1
    failure: list[str] = []
    with stream:
        command = None if handoff_command is None else list(handoff_command)
        run_server_loop(_serve_imported, stream, manifest, identity, command, failure)
    if failure:
        err.write(f"herdr: handoff import failed: {failure[0]}\n")
        return 1
    return 0


def _identity(manifest: HandoffManifest, identity: ImportIdentity) -> tuple[int, str, str | None]:
    protocol = manifest.source_protocol if identity.protocol is None else identity.protocol
    settings = manifest.settings
    inherit = identity.protocol is None and identity.herdr_version is None
    herdr_version = identity.herdr_version
    if herdr_version is None and inherit and settings is not None:
        herdr_version = settings.herdr_version
    version = identity.version
    if version is None:
        version = manifest.source_version if inherit else _release_version(protocol, herdr_version)
    return protocol, version, herdr_version


def _release_version(protocol: int, herdr_version: str | None) -> str:
    from shedproto.herdr import release_for

    return release_for(protocol, herdr_version).version


def _receive(
    handoff_socket: str, token: str, identity: ImportIdentity
) -> tuple[socket.socket, tuple[HandoffManifest, dict[str, int]]]:
    """Connect, send the token, check the manifest, take the PTY masters.

    Raises:
        HandoffFailed: the source is unreachable, the manifest unreadable or
            refused (herdr's messages); nothing was taken.

    """
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        stream.settimeout(HANDOFF_STEP_TIMEOUT)
        try:
            stream.connect(handoff_socket)
        except OSError as exc:
            raise HandoffFailed(rust_error(exc)) from None
        _write(stream, token.encode() + b"\n")
        line = _read_line(stream, HANDOFF_STEP_TIMEOUT)
        try:
            manifest = decode_manifest(line.encode())
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise HandoffFailed(str(exc)) from None
        protocol, version, _ = _identity(manifest, identity)
        refusal = validate_manifest(manifest, protocol, version)
        if refusal is not None:
            raise HandoffFailed(refusal)
        if manifest.settings is None:
            raise HandoffFailed("handoff manifest carries no reference server settings")
        _write(stream, b"validated\n")
        masters = _receive_fds(stream, [runtime.pane_id for runtime in manifest.panes])
    except BaseException:
        stream.close()
        raise
    return stream, (manifest, masters)


def _receive_fds(stream: socket.socket, pane_ids: list[str]) -> dict[str, int]:
    if not pane_ids:
        return {}
    stream.settimeout(HANDOFF_STEP_TIMEOUT)
    try:
        _, fds, flags, _ = socket.recv_fds(stream, 1, len(pane_ids))
    except OSError as exc:
        raise HandoffFailed(rust_error(exc)) from None
    if flags & getattr(socket, "MSG_CTRUNC", 0):
        for fd in fds:
            os.close(fd)
        raise HandoffFailed("handoff fd control message was truncated")
    if len(fds) != len(pane_ids):
        for fd in fds:
            os.close(fd)
        raise HandoffFailed(f"expected {len(pane_ids)} handoff fds, received fewer")
    return dict(zip(pane_ids, fds, strict=True))


async def _serve_imported(
    stream: socket.socket,
    received: tuple[HandoffManifest, dict[str, int]],
    identity: ImportIdentity,
    handoff_command: list[str] | None,
    failure: list[str],
) -> None:
    """Rebuild, take over the sockets, commit, then serve until stopped."""
    from ._server import HerdrServer

    manifest, masters = received
    settings = manifest.settings
    assert settings is not None  # checked by _receive
    protocol, version, herdr_version = _identity(manifest, identity)
    server = HerdrServer(
        settings.path,
        protocol=protocol,
        version=version,
        herdr_version=herdr_version,
        shell=settings.shell,
        agent_commands=settings.agent_commands,
        environ=settings.environ,
        cwd=settings.cwd,
        size=(settings.cols, settings.rows),
        poll_interval=settings.poll_interval,
        request_timeout=settings.request_timeout,
        input_timeout=settings.input_timeout,
        worktrees_dir=settings.worktrees_dir,
        agent_settle_delay=settings.agent_settle_delay,
        client_socket=settings.client_socket,
        detect_interval=settings.detect_interval,
        config_dir=settings.config_dir,
        state_dir=settings.state_dir,
        home=settings.home,
    )
    server.handoff_command = handoff_command
    panes = restore(server, manifest, masters)
    owned = False
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:
                await anyio.to_thread.run_sync(_write, stream, b"restored\n")
                paths = [Path(settings.path), Path(settings.client_socket)]
                await anyio.to_thread.run_sync(
                    _wait_sockets_closed, paths, HANDOFF_OLD_SOCKETS_TIMEOUT
                )

                async def serve(*, task_status: anyio.abc.TaskStatus[object]) -> None:
                    await server.serve(task_status=task_status)
                    tg.cancel_scope.cancel()

                await tg.start(serve)
                await anyio.to_thread.run_sync(_write, stream, b"ready\n")
                await anyio.to_thread.run_sync(
                    _expect, stream, "committed", "handoff source did not commit"
                )
                owned = True
                _own(server, panes)
                with contextlib.suppress(HandoffFailed):
                    await anyio.to_thread.run_sync(_write, stream, b"owned\n")
                stream.close()
                async for _ in signals:
                    server.shutdown()
                    break
    except Exception as exc:
        from shedproto.servers import BindError

        reason = _single(exc, (HandoffFailed, BindError))
        if reason is None:
            raise
        failure.append(str(reason))
    finally:
        if not owned:
            for pane in panes:  # never ours: let go without signalling the programs
                pane.process.close_fd()


def _own(server: HerdrServer, panes: Sequence[Pane]) -> None:
    """Become the panes' owner: they close with the server, their readers start."""
    for pane in panes:
        server._live.add(pane.process)
        if server._tasks is not None:
            server._tasks.start_soon(server._pump, pane)


def _single(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """Return the exception of ``kinds`` that ``exc`` is or holds alone (groups walked)."""
    if isinstance(exc, kinds):
        return exc
    members = getattr(exc, "exceptions", None)
    if isinstance(members, tuple) and len(members) == 1 and isinstance(members[0], BaseException):
        return _single(members[0], kinds)
    return None
