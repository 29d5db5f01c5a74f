"""``craze.create``: parameter rules, idempotency, the attempt and the id lifecycle.

The hub's replay window, the app's send/retry attempt and the client's
request-id lifecycle. All pure: time is ``now``, randomness is ``entropy``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._codes import DesktopCode
from ._errors import DesktopError
from ._rules import HostId, HostIdError, parse_host_id, rust_debug
from ._state import (
    ATTEMPT_TRANSITIONS,
    TICKET_TRANSITIONS,
    AttemptInput,
    AttemptState,
    TicketInput,
    TicketState,
    transition,
)
from .types import CrazeCreateParams

__all__ = [
    "IDEMPOTENCY_WINDOW",
    "REQUEST_ID_PATTERN",
    "CrazeAttempt",
    "CrazeCreateRequest",
    "CreateTicket",
    "IdempotencyLedger",
    "CRAZE_TOO_OLD",
    "check_craze_host_id",
    "craze_host",
    "craze_not_installed",
    "craze_refusals",
    "mint_request_id",
    "validate_craze_create",
    "valid_request_id",
]

IDEMPOTENCY_WINDOW = 600.0
"""Seconds (10 minutes) during which craze replays a request id's first answer."""
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")
"""The form of a caller-given ``request_id``."""
MINT_PREFIX = "shed-"


def valid_request_id(value: object) -> bool:
    """Return whether ``value`` is a string in craze's request-id form. Never raises."""
    return isinstance(value, str) and REQUEST_ID_PATTERN.match(value) is not None


def mint_request_id(entropy: bytes) -> str:
    """Mint a request id ``shed-<hex>`` from ``entropy`` (pass ``os.urandom(8)``).

    Raises:
        ValueError: ``entropy`` is empty or longer than 29 bytes (the id must fit 64 chars).

    """
    if not entropy or len(entropy) > 29:
        raise ValueError("entropy must be 1..29 bytes")
    return MINT_PREFIX + entropy.hex()


def craze_host(machine: str) -> HostId:
    """Parse a craze op's ``machine``; on the craze ops a bad target is the caller's fault.

    Raises:
        DesktopError: ``bad_request`` with the grammar's message.

    """
    try:
        return parse_host_id(machine)
    except HostIdError as exc:
        raise DesktopError(DesktopCode.BAD_REQUEST, str(exc)) from None


_HOST_ID = re.compile(r"[0-9a-f]{12}\Z")


def check_craze_host_id(session_id: str) -> str:
    """Return ``session_id`` if it is a craze host id: twelve lowercase hex digits.

    ``craze.open_terminal`` checks it before anything is looked up, because it is
    spliced into the command the tab runs (charliek/shed
    crates/shed-core/src/craze.rs:212-224,193-195@9a84ddf ``attach_argv``, ``BadHostId``).

    Raises:
        DesktopError: ``bad_request``
            ``not a craze host id (twelve lowercase hex digits): "<id>"``.

    """
    if not _HOST_ID.match(session_id):
        raise DesktopError(
            DesktopCode.BAD_REQUEST,
            f"not a craze host id (twelve lowercase hex digits): {rust_debug(session_id)}",
        )
    return session_id


CRAZE_TOO_OLD = "craze on this machine is too old for shed; update it"
"""The refusal for a host whose craze the probe read as too old (``CRAZE_TOO_OLD``)."""


def craze_refusals(token: str) -> dict[str, DesktopError]:
    """Return the create sheet's source refusals for host ``token`` (roost_hosts.rs ``craze_ask``).

    Keys: ``no_craze``, ``too_old``, ``cannot_list`` and ``cannot_create`` (a live
    hub whose ``hello`` lacks the capability); ``not_installed`` is
    :func:`craze_not_installed` (it carries the probe's reason).
    """
    needs = "update craze on this machine: its hub cannot "
    return {
        "no_craze": DesktopError(DesktopCode.NO_CRAZE, f"{token} has no craze source"),
        "too_old": DesktopError(DesktopCode.TOO_OLD, CRAZE_TOO_OLD),
        "cannot_list": DesktopError(DesktopCode.TOO_OLD, needs + "list what a create can start"),
        "cannot_create": DesktopError(DesktopCode.TOO_OLD, needs + "create sessions"),
    }


def craze_not_installed(token: str, why: str) -> DesktopError:
    """Return ``not_installed`` ``craze is not installed on <token>: <why>`` (``craze_ask``)."""
    return DesktopError(DesktopCode.NOT_INSTALLED, f"craze is not installed on {token}: {why}")


@dataclass(frozen=True)
class CrazeCreateRequest:
    """A validated create: the host, an absolute cwd, optional provider/prompt, the id.

    ``request_id`` is ``None`` when the caller sent none (the server mints one).
    """

    host: HostId
    cwd: str
    provider: str | None
    prompt: str | None
    request_id: str | None


def validate_craze_create(params: CrazeCreateParams) -> CrazeCreateRequest:
    """Apply ``craze.create``'s parameter rules to decoded params.

    Strict string typing is the params decoder's job (``'<key>' must be a
    string``); the rest is craze.rs ``create_request`` (charliek/shed
    desktop/tauri/src-tauri/src/craze.rs, stored version id 70373335472): ``cwd``
    trimmed and absolute (a missing one reads as ``""``), a present
    ``request_id`` in craze's form (used verbatim, never replaced), a blank
    provider absent and any other trimmed, a blank prompt absent and any other
    sent as typed.

    Raises:
        DesktopError: ``bad_request`` ``the session's directory must be an absolute
            path, got "<cwd>"`` or ``request id "<id>" is not craze's form (1\u201364 of
            [A-Za-z0-9._-])``.

    """
    host = craze_host(params.machine)
    cwd = (params.cwd or "").strip()
    if not cwd.startswith("/"):
        raise DesktopError(
            DesktopCode.BAD_REQUEST,
            f"the session's directory must be an absolute path, got {rust_debug(cwd)}",
        )
    if params.request_id is not None and not valid_request_id(params.request_id):
        raise DesktopError(
            DesktopCode.BAD_REQUEST,
            f"request id {rust_debug(params.request_id)} is not craze's form "
            "(1\u201364 of [A-Za-z0-9._-])",
        )
    provider = params.provider.strip() if params.provider and params.provider.strip() else None
    prompt = params.prompt if params.prompt and params.prompt.strip() else None
    return CrazeCreateRequest(
        host=host, cwd=cwd, provider=provider, prompt=prompt, request_id=params.request_id
    )


A = TypeVar("A")


@dataclass(frozen=True)
class _Entry(Generic[A]):
    answer: A
    at: float


class IdempotencyLedger(Generic[A]):
    """craze's replay rule: a repeat of an id within the window gets the first answer.

    Failures are replayed too. After the window the id is forgotten and a
    repeat creates anew. Answers are whatever the caller stores (a result or
    a :class:`DesktopError`). Memory is bounded by expiring old entries.
    """

    def __init__(self, window: float = IDEMPOTENCY_WINDOW) -> None:
        self.window = window
        self._entries: OrderedDict[str, _Entry[A]] = OrderedDict()

    def _expire(self, now: float) -> None:
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if now - entry.at < self.window:
                break
            del self._entries[key]

    def replay(self, request_id: str, now: float) -> A | None:
        """Return the first answer for ``request_id`` if it is within the window, else ``None``."""
        self._expire(now)
        entry = self._entries.get(request_id)
        return None if entry is None else entry.answer

    def record(self, request_id: str, answer: A, now: float) -> None:
        """Remember ``answer`` as the first answer for ``request_id`` (a no-op if one is held)."""
        self._expire(now)
        if request_id not in self._entries:
            self._entries[request_id] = _Entry(answer, now)

    def __len__(self) -> int:
        return len(self._entries)


class CrazeAttempt:
    """The app's side of one create: send, resend once under the same id, then give up.

    Feed it what the hub did with :meth:`on_session`, :meth:`on_refusal` and
    :meth:`on_lost`; its ``state`` says what to do next (``RETRY``: send again
    with the same id; ``OUTCOME_UNKNOWN``: answer ``outcome_unknown``).
    """

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.state = AttemptState.SEND

    def _step(self, event: AttemptInput) -> AttemptState:
        self.state = transition(ATTEMPT_TRANSITIONS, self.state, event)
        return self.state

    def on_session(self) -> AttemptState:
        """Record that the hub answered with a session (maybe a replay).

        Raises:
            LocalProtocolError: the attempt already ended.

        """
        return self._step(AttemptInput.SESSION)

    def on_refusal(self) -> AttemptState:
        """Record that the hub answered with a refusal (maybe a replay).

        Raises:
            LocalProtocolError: the attempt already ended.

        """
        return self._step(AttemptInput.REFUSAL)

    def on_lost(self) -> AttemptState:
        """Record that the answer was lost (dropped connection or 120 s deadline).

        Raises:
            LocalProtocolError: the attempt already ended.

        """
        return self._step(AttemptInput.LOST)

    @property
    def done(self) -> bool:
        """True once the attempt has a final outcome."""
        return self.state in (AttemptState.OK, AttemptState.REFUSED, AttemptState.OUTCOME_UNKNOWN)


class CreateTicket:
    """The client's request-id lifecycle for one create form (the desktop sheet's rule).

    Keep the id only while the outcome is unknown: :meth:`submit` returns the
    id to send (minting one from ``entropy`` when none is kept, or using the
    caller's); any definite answer or any form edit discards it.
    """

    def __init__(self) -> None:
        self.state = TicketState.FORM_CLEAN
        self.request_id: str | None = None

    @property
    def held(self) -> bool:
        """True when the next submit is a retry under a kept id."""
        return self.state is TicketState.UNKNOWN

    def submit(self, entropy: bytes, *, request_id: str | None = None) -> str:
        """Start a create and return the id to send with it.

        A kept id (after ``outcome_unknown``) is reused; otherwise
        ``request_id`` or a freshly minted one.

        Raises:
            LocalProtocolError: a create is already in flight.
            ValueError: ``request_id`` is not in craze's form.

        """
        if request_id is not None and not valid_request_id(request_id):
            raise ValueError(f"request_id {request_id!r} is not in craze's form")
        keep = self.request_id if self.state is TicketState.UNKNOWN else None
        self.state = transition(TICKET_TRANSITIONS, self.state, TicketInput.SUBMIT)
        self.request_id = keep or request_id or mint_request_id(entropy)
        return self.request_id

    def answered(self, error: DesktopError | None) -> TicketState:
        """Record the answer: ``None`` for a session, else the error.

        Raises:
            LocalProtocolError: no create is in flight.

        """
        if error is None:
            event = TicketInput.OK
        elif error.matches(DesktopCode.OUTCOME_UNKNOWN):
            event = TicketInput.OUTCOME_UNKNOWN
        else:
            event = TicketInput.REFUSED
        self.state = transition(TICKET_TRANSITIONS, self.state, event)
        if self.state is not TicketState.UNKNOWN:
            self.request_id = None
        return self.state

    def edit(self) -> None:
        """Record a form edit: forget any kept id.

        Raises:
            LocalProtocolError: a create is in flight.

        """
        self.state = transition(TICKET_TRANSITIONS, self.state, TicketInput.EDIT)
        self.request_id = None
