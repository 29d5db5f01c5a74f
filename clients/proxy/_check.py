"""``check``: run the conformance probe cases against a live server, one connection each."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import msgspec

from shedproto import FramingError, FramingPolicy, LineBuffer, RemoteProtocolError
from shedproto.observe import (
    Diagnostic,
    Observer,
    Outcome,
    ProbeCase,
    judge,
    observer_factory,
    outcome_of,
    probe_cases,
    resolve_options,
)
from shedproto.servers._receive import SocketPump

from ._relay import RECEIVE_CHUNK

__all__ = ["CASE_TIMEOUT", "CheckResult", "run_check"]

CASE_TIMEOUT = 3.0
"""Seconds a case waits for the server's answers (or its close)."""
QUIET_TIME = 0.5
"""Seconds a case that expects no answer listens before it passes."""

_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class CheckResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One case's verdict: ``status`` ``pass``, ``fail`` or ``skip`` (a mutation not allowed)."""

    case: str
    status: str
    detail: str | None = None


async def run_check(
    protocol: str,
    socket: str | os.PathLike[str],
    *,
    dialect: str | None = None,
    version: int | None = None,
    allow_mutations: bool = False,
    timeout: float = CASE_TIMEOUT,
) -> list[CheckResult]:
    """Run every case of ``protocol`` against the server at ``socket``.

    Raises:
        ValueError: bad protocol options (see ``resolve_options()``).
        OSError: the socket cannot be reached at all (the first case's connect).

    """
    dialect, version = resolve_options(protocol, dialect=dialect, version=version)
    observers = observer_factory(protocol, dialect=dialect, version=version)
    results = []
    for number, case in enumerate(probe_cases(protocol, dialect=dialect, version=version), 1):
        if case.mutation and not allow_mutations:
            results.append(CheckResult(case=case.name, status="skip", detail="--allow-mutations"))
            continue
        observer = observers(number)
        got, found = await _run_case(Path(socket), case, observer, version=version, timeout=timeout)
        verdict = judge(case, got, found)
        status = "pass" if verdict is None else "fail"
        results.append(CheckResult(case=case.name, status=status, detail=verdict))
    return results


async def _run_case(
    socket: Path,
    case: ProbeCase,
    observer: Observer,
    *,
    version: int | None,
    timeout: float,
) -> tuple[list[Outcome], list[Diagnostic]]:
    protocol = observer.protocol
    found: list[Diagnostic] = []
    got: list[Outcome] = []
    lines = LineBuffer(FramingPolicy(max_frame_bytes=256 << 20))
    wanted = len([e for e in case.expected if e.kind != "close"])
    async with await anyio.connect_unix(socket) as stream:
        # guarded waits (never the stream's own send/receive: see servers._receive.send_all),
        # so the deadline landing in the pass that reports the socket ready logs no loop error
        pump = SocketPump(stream)
        if case.payload:
            with contextlib.suppress(*_GONE):  # a server may hang up while a long line arrives
                await pump.send(case.payload)
            found += observer.feed("c2s", case.payload)
        with anyio.move_on_after(timeout if case.expected else QUIET_TIME):
            while True:
                data = await pump.receive(RECEIVE_CHUNK)  # b"": the end, or the peer is gone
                found += observer.feed("s2c", data)
                if not data:
                    if protocol == "host-agent-status" and observer.frames["s2c"]:
                        got.append(Outcome("ok"))
                    got.append(Outcome("close"))
                    break
                if protocol == "host-agent-status":
                    continue
                try:
                    complete = lines.feed(data)
                except FramingError:
                    break
                for line in complete:
                    try:
                        got.append(outcome_of(protocol, line, version=version))
                    except RemoteProtocolError:
                        continue  # the observer reported it
                if case.expected and len(got) >= wanted and case.expected[-1].kind != "close":
                    break
    return got, found
