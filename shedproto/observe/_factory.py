"""Choosing the observer for a protocol name, dialect and version."""

from __future__ import annotations

from collections.abc import Callable

from shedproto.desktop import Dialect
from shedproto.herdr import DEFAULT_PROTOCOL, SUPPORTED_PROTOCOLS

from ._agents_host import AgentsHostObserver
from ._base import Observer
from ._desktop import DesktopObserver
from ._herdr import HerdrObserver
from ._host_agent import ApprovalObserver, StatusObserver

__all__ = ["PROTOCOLS", "ObserverFactory", "observer_factory", "resolve_options"]

PROTOCOLS: tuple[str, ...] = ("host-agent", "host-agent-status", "desktop", "herdr", "agents-host")
"""Protocol names the observers (and the proxy, replay and check commands) accept."""

ObserverFactory = Callable[[int], Observer]
"""Builds the observer of one connection from its connection id."""


def resolve_options(
    protocol: str, *, dialect: str | None = None, version: int | None = None
) -> tuple[str | None, int | None]:
    """Check ``protocol``'s options and fill in defaults: ``(dialect, version)``.

    ``dialect`` (``mac``/``tauri``, default ``tauri``) applies to desktop only,
    ``version`` (herdr's supported protocol numbers, default the newest) to herdr only.

    Raises:
        ValueError: an unknown protocol, dialect or version, or an option the
            protocol does not take; the message names the accepted values.

    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {', '.join(PROTOCOLS)}")
    if dialect is not None and protocol != "desktop":
        raise ValueError("--dialect applies to the desktop protocol only")
    if version is not None and protocol != "herdr":
        raise ValueError("--version applies to the herdr protocol only")
    if protocol == "desktop":
        try:
            return Dialect(dialect or "tauri").value, None
        except ValueError:
            raise ValueError(f"unknown dialect {dialect!r}; choose mac or tauri") from None
    if protocol == "herdr":
        number = DEFAULT_PROTOCOL if version is None else version
        if number not in SUPPORTED_PROTOCOLS:
            supported = ", ".join(map(str, SUPPORTED_PROTOCOLS))
            raise ValueError(f"herdr protocol {number} is not supported; supported: {supported}")
        return None, number
    return None, None


def observer_factory(
    protocol: str, *, dialect: str | None = None, version: int | None = None
) -> ObserverFactory:
    """Return a factory of observers for ``protocol`` (options as :func:`resolve_options`).

    Raises:
        ValueError: as :func:`resolve_options`.

    """
    dialect, version = resolve_options(protocol, dialect=dialect, version=version)
    if protocol == "desktop":
        chosen = Dialect(dialect)
        return lambda connection: DesktopObserver(connection, dialect=chosen)
    if protocol == "herdr":
        number = DEFAULT_PROTOCOL if version is None else version
        return lambda connection: HerdrObserver(connection, version=number)
    if protocol == "host-agent":
        return ApprovalObserver
    if protocol == "host-agent-status":
        return StatusObserver
    return AgentsHostObserver
