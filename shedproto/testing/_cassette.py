"""The ``cassette_server`` fixture and ``--record-mode``: record real traffic once, replay in CI.

``cassette_server(protocol, upstream=..., dialect=..., version=...)`` is an
async context manager yielding the socket path a client should use. The
cassette lives next to the test module, ``cassettes/<module>/<test>.ndjson``
(or ``name=``). What happens depends on ``--record-mode`` (pytest-recording's
names and meanings):

* ``none`` (default): replay only; a missing cassette fails the test.
* ``once``: replay an existing cassette, else record one through a proxy to ``upstream``.
* ``new_episodes``: record through the proxy and append the connections whose
  first client frame the cassette does not have yet.
* ``all``: record through the proxy, replacing the cassette.

Recording needs ``upstream`` (the real program's socket or a reference
server's). Replay fails the test at the end when the client sent a frame the
cassette did not expect; recording fails it when the proxy reported a
deviation. Servers are imported lazily, when the fixture is used.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import msgspec
import pytest

__all__ = [
    "RECORD_MODES",
    "CassetteServer",
    "cassette_server",
    "pytest_addoption",
    "serving",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")
"""The record modes, as pytest-recording names them."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--record-mode`` (left alone when pytest-recording already added it)."""
    group = parser.getgroup("shedproto")
    with contextlib.suppress(ValueError):  # pytest-recording registered the same option
        group.addoption(
            "--record-mode",
            action="store",
            dest="record_mode",
            default="none",
            choices=RECORD_MODES,
            help="shedproto cassettes: none (replay only), once, new_episodes, all",
        )


class CassetteServer:
    """Calling it gives the async context manager described in the module docstring."""

    def __init__(self, mode: str, directory: Path, default_name: str) -> None:
        self.mode = mode
        self.directory = directory
        self.default_name = default_name

    def path_for(self, name: str | None = None) -> Path:
        """Return the cassette file for ``name`` (default: the test's name)."""
        return self.directory / f"{name or self.default_name}.ndjson"

    @asynccontextmanager
    async def __call__(
        self,
        protocol: str,
        *,
        upstream: str | Path | None = None,
        dialect: str | None = None,
        version: int | None = None,
        name: str | None = None,
        socket_name: str = "cassette.sock",
    ) -> AsyncIterator[Path]:
        """Yield the socket path to use (``socket_name`` inside a fresh private directory)."""
        cassette = self.path_for(name)
        record = self.mode in {"all", "new_episodes"}
        if self.mode == "once" and not cassette.exists():
            record = True
        if not record and not cassette.exists():
            pytest.fail(f"no cassette {cassette}; record it with --record-mode=once", pytrace=False)
        if record and upstream is None:
            pytest.fail(f"recording {cassette} needs upstream= (mode {self.mode})", pytrace=False)
        socket_dir = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp"))
        try:
            if record:
                assert upstream is not None
                async with _recording(
                    cassette, socket_dir / socket_name, Path(upstream), protocol,
                    dialect=dialect, version=version, merge=self.mode == "new_episodes",
                ) as path:  # fmt: skip
                    yield path
            else:
                async with _replaying(cassette, socket_dir / socket_name) as path:
                    yield path
        finally:
            shutil.rmtree(socket_dir, ignore_errors=True)


class _Serving(Protocol):
    async def serve(self, *, task_status: Any = ...) -> None: ...

    def shutdown(self) -> None: ...


@asynccontextmanager
async def serving(server: _Serving) -> AsyncIterator[Path]:
    """Run ``server`` (a proxy, replay or reference server) for the block; yield its path.

    On exit the server is shut down and everything it started has ended.
    """
    import anyio

    async with anyio.create_task_group() as tasks:
        path: Path = await tasks.start(server.serve)
        try:
            yield path
        finally:
            server.shutdown()


@asynccontextmanager
async def _replaying(cassette: Path, listen: Path) -> AsyncIterator[Path]:
    from shedproto.clients.proxy import ReplayServer

    replay = ReplayServer(cassette, listen)
    async with serving(replay) as path:
        yield path
    if replay.mismatches:
        pytest.fail(replay.mismatches[0].human(), pytrace=False)


@asynccontextmanager
async def _recording(
    cassette: Path,
    listen: Path,
    upstream: Path,
    protocol: str,
    *,
    dialect: str | None,
    version: int | None,
    merge: bool,
) -> AsyncIterator[Path]:
    from shedproto.clients.proxy import Proxy, Recorder
    from shedproto.observe import CassetteHeader, Diagnostic, observer_factory, resolve_options

    dialect, version = resolve_options(protocol, dialect=dialect, version=version)
    header = CassetteHeader(protocol=protocol, dialect=dialect, version=version)
    cassette.parent.mkdir(parents=True, exist_ok=True)
    merging = merge and cassette.exists()  # noqa: ASYNC240 - before serving
    target = cassette.with_suffix(".new") if merging else cassette
    found: list[Diagnostic] = []
    proxy = Proxy(
        listen,
        upstream,
        observer_factory(protocol, dialect=dialect, version=version),
        on_diagnostic=found.append,
        recorder=Recorder(target, header, overwrite=True),
    )
    async with serving(proxy) as path:
        yield path
    if target != cassette:
        _merge(cassette, target)
    if found:
        pytest.fail("; ".join(d.human() for d in found), pytrace=False)


def _merge(cassette: Path, new: Path) -> None:
    """Append the episodes of ``new`` whose first client frame ``cassette`` lacks."""
    from shedproto.clients.proxy import episodes_of, frame_key
    from shedproto.observe import decode_cassette, encode_header, encode_record

    header, records = decode_cassette(cassette.read_bytes())
    _, fresh = decode_cassette(new.read_bytes())
    new.unlink()
    known = [episode.first_client_line() for episode in episodes_of(records)]
    keys = [frame_key(header.protocol, line) for line in known if line is not None]
    start = records[-1].t if records else 0.0
    next_conn = max((record.conn for record in records), default=0)
    out = [encode_header(header), *map(encode_record, records)]
    for episode in episodes_of(fresh):
        line = episode.first_client_line()
        if line is not None and frame_key(header.protocol, line) in keys:
            continue
        next_conn += 1
        for record in episode.records:
            moved = msgspec.structs.replace(record, t=start + record.t, conn=next_conn)
            out.append(encode_record(moved))
    cassette.write_bytes(b"".join(out))


@pytest.fixture
def cassette_server(request: pytest.FixtureRequest) -> CassetteServer:
    """Return the :class:`CassetteServer` of this test (mode from ``--record-mode``)."""
    mode = request.config.getoption("record_mode", default="none")
    module = Path(str(request.node.path))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_")
    return CassetteServer(str(mode), module.parent / "cassettes" / module.stem, name)
