"""Shared helpers of the proxy tests: run a proxy in front of a server, collect diagnostics."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from shedproto.clients.proxy import Proxy, Recorder
from shedproto.observe import CassetteHeader, Diagnostic, observer_factory
from shedproto.testing._cassette import serving


@dataclass
class Running:
    """A running proxy, the path clients use, and every diagnostic it reported."""

    proxy: Proxy
    path: Path
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@asynccontextmanager
async def proxied(
    listen: Path,
    upstream: Path,
    protocol: str,
    *,
    dialect: str | None = None,
    version: int | None = None,
    record: Path | None = None,
    strict: bool = False,
) -> AsyncIterator[Running]:
    """Run a :class:`Proxy` from ``listen`` to ``upstream``; stop it on exit.

    After the ``async with`` block every relayed byte has been observed (and
    recorded): the proxy drains its observer queue before it returns.
    """
    recorder = None
    if record is not None:
        header = CassetteHeader(protocol=protocol, dialect=dialect, version=version)
        recorder = Recorder(record, header, overwrite=False)
    found: list[Diagnostic] = []
    errors: list[str] = []
    proxy = Proxy(
        listen,
        upstream,
        observer_factory(protocol, dialect=dialect, version=version),
        on_diagnostic=found.append,
        on_error=errors.append,
        recorder=recorder,
        strict=strict,
    )
    async with serving(proxy) as path:
        yield Running(proxy, path, found, errors)
