"""An opencode lane's verbs as shed-opencode's adapter sends them and words their failures.

The adapter (charliek/shed ``crates/shed-opencode/src/client.rs@15e7aae``) is an
HTTP client of the opencode server a row's ``agent_lane`` names. It keeps no
reconnect wait and no unknown outcome: each verb is one request, and a request
that could not be sent or was not answered is ``unavailable`` ``opencode <path>:
<the HTTP client's error>`` (``dial_error``, 483-485). The route's ids are escaped as
``encode_segment`` (467-478) escapes them. Which words the HTTP client prints, and the
server's address (a remote machine's is an ssh forward's local port), are the
stand-in's: reqwest's ``error sending request for url (<url>)``. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urljoin

from ._codes import DesktopCode
from ._errors import DesktopError

__all__ = [
    "OPENCODE_LANE",
    "OPENCODE_URL",
    "opencode_segment",
    "opencode_unreachable",
    "opencode_verb_path",
]

OPENCODE_LANE = "opencode"
"""The opencode adapter's ``agent_lane`` kind."""
OPENCODE_URL = "http://127.0.0.1:4096/"
"""The address the stand-in names when a stamp carries no ``server_url`` (opencode's port)."""


def opencode_segment(text: str) -> str:
    """Percent-encode ``text`` outside ``A-Za-z0-9-_.~``, byte by byte (``encode_segment``)."""
    return quote(text, safe="")


def opencode_verb_path(
    verb: str, session_id: str, approval_id: str = "", answer: Mapping[str, Any] | None = None
) -> str:
    """Return the route ``verb`` posts to (client.rs:885-897,899-908,996-1050@15e7aae).

    Those are ``send``, ``cancel`` and ``answer_inner``.

    A question's answer and a bare reject go to the question routes, anything
    else to the permission reply route (a ``choice``, which that client version
    does not name, included: the stand-in's choice).

    Raises:
        KeyError: a verb the adapter was not read for (``lane.stop``, ``lane.set``).

    """
    if verb == "lane.send":
        return f"/session/{opencode_segment(session_id)}/prompt_async"
    if verb == "lane.cancel":
        return f"/session/{opencode_segment(session_id)}/abort"
    if verb != "lane.answer":
        raise KeyError(verb)
    form = answer or {}
    route = "question" if "question" in form or "reject" in form else "permission"
    action = "reject" if "reject" in form else "reply"
    return f"/{route}/{opencode_segment(approval_id)}/{action}"


def opencode_unreachable(path: str, server_url: str) -> DesktopError:
    """Return ``dial_error``'s ``unavailable`` for a request to ``path`` that went unanswered."""
    url = urljoin(server_url, path.lstrip("/"))  # the base joined as ``Url::join`` joins it
    return DesktopError(
        DesktopCode.UNAVAILABLE, f"opencode {path}: error sending request for url ({url})"
    )
