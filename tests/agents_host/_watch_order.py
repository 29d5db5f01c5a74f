"""Records, per API connection, when its socket's watch ends and when its stream closes.

The API server reads through :class:`~shedproto.servers._receive.WatchedReads`
(one reader registration per connection, issue 16); the watch must end
before the socket closes, or the next connection given the same descriptor
number can go unwatched on asyncio's selector loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.abc
import pytest

from shedproto.servers._receive import WatchedReads
from shedproto.servers.agents_host import AgentsHost, api


def record_unwatch_and_close(monkeypatch: pytest.MonkeyPatch, order: list[tuple[str, int]]) -> None:
    """Record ``("unwatch", id(stream))`` and ``("close", id(stream))`` for every API connection."""
    close_reads = WatchedReads.close
    serve = api.serve_api_connection

    def unwatch(reads: WatchedReads) -> None:
        order.append(("unwatch", id(reads._pump.stream)))
        close_reads(reads)

    async def recorded(stream: anyio.abc.ByteStream, host: AgentsHost) -> None:
        aclose: Callable[[], Awaitable[None]] = stream.aclose

        async def closing() -> None:
            order.append(("close", id(stream)))
            await aclose()

        stream.aclose = closing  # type: ignore[method-assign]
        await serve(stream, host)

    monkeypatch.setattr(WatchedReads, "close", unwatch)
    monkeypatch.setattr(api, "serve_api_connection", recorded)


def unwatched_before_closed(order: list[tuple[str, int]]) -> bool:
    closed = [key for what, key in order if what == "close"]
    return bool(closed) and all(
        ("unwatch", key) in order[: order.index(("close", key))] for key in closed
    )
