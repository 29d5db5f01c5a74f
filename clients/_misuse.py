"""The errors for a client used outside the way it is made and closed (docs/clients.md).

A stream or client used before its ``with`` block opened it, or after the
block closed it, raises one of these instead of yielding nothing or waiting:
:class:`~shedproto.LocalProtocolError` with code ``CONNECTION_CLOSED`` (no
connection is open: the caller's doing, not the peer's) and a message that
shows the one documented way.
"""

from __future__ import annotations

from shedproto import ErrorCode, LocalProtocolError

__all__ = ["entered_twice", "used_after_close", "used_before_open"]


def used_before_open(what: str, how: str) -> LocalProtocolError:
    """Return the error for ``what`` used before its block opened it; ``how`` shows the block."""
    return LocalProtocolError(
        ErrorCode.CONNECTION_CLOSED, f"{what} is not open: use it inside `{how}`"
    )


def used_after_close(what: str, again: str) -> LocalProtocolError:
    """Return the error for ``what`` used after it closed; ``again`` says how to get another."""
    return LocalProtocolError(ErrorCode.CONNECTION_CLOSED, f"{what} is closed: {again}")


def entered_twice(what: str, again: str) -> LocalProtocolError:
    """Return the error for ``what`` entered a second time; ``again`` says how to get another."""
    return LocalProtocolError(
        ErrorCode.CONNECTION_CLOSED, f"{what} opens once and was already opened: {again}"
    )
