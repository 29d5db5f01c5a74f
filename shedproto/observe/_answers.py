"""The protocol's own error answer to a request a replayed cassette does not hold (sans-IO).

A replay server that meets a request it has no recording for answers it the
way the real server answers a request it cannot serve, so the client reports
an error from the server instead of a hang-up (which clients read as "the
server there speaks another protocol"), then closes the connection:

========================  ==================  =========================================
protocol                  code                why this code
========================  ==================  =========================================
herdr                     ``internal_error``  herdr's answer to a failure of its own
desktop, mac dialect      ``internal``        shed-desktop's answer to any other thrown error
desktop, Tauri dialect    ``action_failed``   the Tauri app's answer to an op that failed
agents-host               ``unavailable``     the API's answer when it cannot serve now
host-agent (both)         none                the agent answers nothing: it closes
========================  ==================  =========================================

The answer echoes the request's ``id`` (herdr: ``""`` when it has none, as
herdr's ``invalid_request``; desktop: no ``id`` key; agents-host ``null``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from shedproto._codec import encode_line
from shedproto.agents_host import encode_error
from shedproto.desktop import ANSWER_WITHOUT_ID, Dialect, render_error

__all__ = ["REPLAY_ERROR_CODES", "not_in_cassette_answer"]

REPLAY_ERROR_CODES: dict[tuple[str, str | None], str] = {
    ("herdr", None): "internal_error",
    ("desktop", "mac"): "internal",
    ("desktop", "tauri"): "action_failed",
    ("agents-host", None): "unavailable",
}
"""(protocol, dialect) -> the error code a replay answers an unrecorded request with."""


def not_in_cassette_answer(
    protocol: str, dialect: str | None, request: bytes, message: str
) -> bytes | None:
    """Return the error answer line to ``request`` (one client line), or ``None``: no answer.

    Never raises: a request that is not JSON is answered without its id.
    """
    code = REPLAY_ERROR_CODES.get((protocol, dialect if protocol == "desktop" else None))
    if code is None:
        return None
    request_id = _id_of(request)
    if protocol == "herdr":
        herdr_id = request_id if isinstance(request_id, str) else ""
        return encode_line({"id": herdr_id, "error": {"code": code, "message": message}})
    if protocol == "desktop":
        answer_id = ANSWER_WITHOUT_ID if request_id is None else request_id
        return render_error(Dialect(dialect), answer_id, code, message)
    agents_id = request_id if isinstance(request_id, (int, str)) else None
    return encode_error(agents_id, "unavailable", message)


def _id_of(request: bytes) -> Any:
    try:
        value = msgspec.json.decode(request)
    except msgspec.DecodeError:
        return None
    return value.get("id") if isinstance(value, dict) else None
