"""One way to run a reference server's event loop: asyncio, on uvloop when it is installed.

The CLI servers and the threaded test fixtures start their loops here, so
installing the ``fast`` extra (uvloop) speeds them all up at once, through
anyio's ``use_uvloop`` backend option. ``SHEDPROTO_LOOP=asyncio`` forces the
stock loop (to compare, or to rule uvloop out); ``SHEDPROTO_LOOP=uvloop`` makes a
missing uvloop an error instead of a silent fallback.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
from typing_extensions import TypeVarTuple, Unpack

__all__ = ["LOOP_ENV", "LoopChoiceError", "loop_options", "run", "running_asyncio_loop"]

LOOP_ENV = "SHEDPROTO_LOOP"
"""The environment variable that chooses the loop: ``auto`` (default), ``asyncio`` or ``uvloop``."""

T = TypeVar("T")
PosArgsT = TypeVarTuple("PosArgsT")


class LoopChoiceError(ValueError):
    """``SHEDPROTO_LOOP`` names an unknown loop, or ``uvloop`` when it is not installed."""


def loop_options(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Anyio's asyncio backend options for the chosen loop (``{"use_uvloop": True}`` or ``{}``).

    Raises:
        LoopChoiceError: an unknown ``SHEDPROTO_LOOP`` value, or ``uvloop`` while it is absent.

    """
    choice = (os.environ if env is None else env).get(LOOP_ENV, "auto") or "auto"
    if choice not in ("auto", "asyncio", "uvloop"):
        raise LoopChoiceError(f"{LOOP_ENV}={choice} is not one of auto, asyncio, uvloop")
    available = importlib.util.find_spec("uvloop") is not None
    if choice == "uvloop" and not available:
        raise LoopChoiceError(
            f"{LOOP_ENV}=uvloop but uvloop is not installed: pip install 'shedproto[fast]'"
        )
    return {"use_uvloop": True} if available and choice != "asyncio" else {}


def run(func: Callable[[Unpack[PosArgsT]], Awaitable[T]], *args: Unpack[PosArgsT]) -> T:
    """``anyio.run(func, *args)`` on asyncio with :func:`loop_options` (uvloop when installed)."""
    return anyio.run(func, *args, backend="asyncio", backend_options=loop_options())


def running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """Return the running asyncio loop (uvloop included), or None under trio or outside one.

    ``asyncio._get_running_loop`` is asyncio's own exception-free form of
    ``get_running_loop`` (public in ``asyncio.events.__all__`` since 3.7).
    """
    return asyncio._get_running_loop()
