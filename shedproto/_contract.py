"""The one connection contract every protocol core is built on (h11's ``_state.py`` shape).

A connection is a :class:`Contract` subclass. It holds:

* a **transition table** (:class:`TransitionTable`) keyed by ``(state, event
  type)``: a frame class (``Hello``, ``ApprovalResponse``) or, for what has no
  frame, a member of the protocol's input enum (EOF, a deadline, ``close()``),
  as h11 keys its table by event classes and a few sentinels. A pair missing
  from the table raises :class:`~shedproto.LocalProtocolError` when this side
  caused it (the state is unchanged) and :class:`~shedproto.RemoteProtocolError`
  when the peer did (the connection reports it as a skipped line or a close).
  In a *quiet* state the peer's illegal input is dropped without an error.
* a **sticky error state**: :meth:`Contract._fail` moves the connection to the
  table's error state and keeps the error in :attr:`Contract.error`; no
  transition leaves it, and a local step the table refuses there names it.
* one **closed event**, :class:`ConnectionClosed` (``reason``, ``error``),
  which protocols subclass to add what they know at close, and one **skip
  event**, :class:`LineSkipped`, for a bad line the protocol survives.
* one **outbox** (:class:`Outbox`) for the bytes the protocol writes by itself
  (a host-agent ``pong``, a desktop error line, a ``-32601`` answer), each
  behind the answers owed before it: the shell writes
  :meth:`Contract.data_to_send` after each event it handles.
* ``next_deadline()`` / ``handle_timeout(now)``: deadlines are inputs.

Good frames before a bad one (push model, nothing lost): ``receive_data``
returns every event completed before a fatal peer error, in order, and the
error comes after them: as the final :class:`ConnectionClosed` of the same
list where the connection reports closes as events, or, where its API raises,
from :meth:`Contract._deliver`, at once when nothing preceded it and otherwise
on the next call. :meth:`Contract._split` hands a connection the frames a
framing error followed together with the error.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from ._errors import (
    ErrorCode,
    FramingError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
)
from ._framing import LineBuffer

__all__ = [
    "ConnectionClosed",
    "Contract",
    "LineSkipped",
    "Outbox",
    "Role",
    "TableEnum",
    "TransitionTable",
    "step",
]

S = TypeVar("S", bound=Enum)
E = TypeVar("E")

_ANY: Any = object()
"""``Outbox.settle`` without a key: whatever slot is oldest."""


class TableEnum(Enum):
    """Base of the state and input enums of transition tables: members hash by identity.

    Members are singletons, so identity hashing is exact, and it keeps the
    ``(state, event)`` lookup on every frame cheap (``Enum`` hashes by name in Python).
    """

    __hash__ = object.__hash__


class Role(Enum):
    """Who caused an input: this side (the caller) or the peer."""

    LOCAL = "local"
    REMOTE = "remote"


def _key_name(key: Hashable) -> str:
    if isinstance(key, type):
        return key.__name__
    if isinstance(key, Enum):
        return str(key.value)
    return repr(key)


def step(
    transitions: Mapping[tuple[S, Any], S],
    state: S,
    key: Hashable,
    role: Role = Role.LOCAL,
    name: str = "",
) -> S:
    """Return ``transitions[state, key]``: the one lookup every state machine uses.

    Raises:
        LocalProtocolError: ``UNEXPECTED_EVENT``; the pair is illegal and ``role`` is local.
        RemoteProtocolError: ``UNEXPECTED_EVENT``; the pair is illegal and ``role`` is remote.

    """
    try:
        return transitions[state, key]
    except KeyError:
        pass
    family = LocalProtocolError if role is Role.LOCAL else RemoteProtocolError
    where = f"{name} state" if name else "state"
    raise family(
        ErrorCode.UNEXPECTED_EVENT, f"{_key_name(key)} is not allowed in {where} {state.value}"
    ) from None


class TransitionTable(Generic[S]):
    """``(state, event type) -> next state`` for one role of one protocol.

    ``error`` is the sticky state a fatal error moves to; ``quiet`` lists the
    states in which the peer's illegal input is dropped without an error (a
    demoted connection that only waits to be closed).

    Raises:
        ValueError: the table has a transition out of ``error``.

    """

    __slots__ = ("error", "name", "quiet", "transitions")

    def __init__(
        self,
        name: str,
        transitions: Mapping[tuple[S, Any], S],
        *,
        error: S,
        quiet: Iterable[S] = (),
    ) -> None:
        if any(state is error and new is not error for (state, _), new in transitions.items()):
            raise ValueError(f"{name}: the error state {error.value} must be sticky")
        self.name = name
        self.transitions: dict[tuple[S, Any], S] = dict(transitions)
        self.error = error
        self.quiet = frozenset(quiet)

    def allows(self, state: S, key: Hashable) -> bool:
        """Return whether ``key`` is legal in ``state``; never raises."""
        return (state, key) in self.transitions

    def next_state(self, state: S, key: Hashable, role: Role) -> S:
        """Return the state after ``key`` in ``state``.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT``; the pair is illegal and ``role`` is local.
            RemoteProtocolError: ``UNEXPECTED_EVENT``; the pair is illegal and ``role`` is remote.

        """
        return step(self.transitions, state, key, role, self.name)


@dataclass(frozen=True)
class ConnectionClosed:
    """The connection is over: ``reason`` says why, ``error`` is the peer's fatal error, if any.

    Protocols subclass it to add what they know at close (``pending`` requests,
    the final ``outcome``, a last reply line); the shell closes after it.
    """

    reason: Any
    error: ProtocolError | None = None


@dataclass(frozen=True)
class LineSkipped:
    """A bad line the protocol survives was ignored; ``error`` says why.

    ``line`` is the raw line where the protocol keeps it (``b""`` otherwise).
    """

    error: RemoteProtocolError
    line: bytes = b""


class _Held:
    """Bytes put while answers were owed, waiting in the slot queue behind them."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Outbox:
    """Bytes the connection owes the peer on its own, in wire order.

    :meth:`put` queues bytes; :meth:`owe` reserves a slot for an answer the
    caller still has to produce (a request being handled). Bytes put while a
    slot is open wait behind it until :meth:`settle` closes that slot, so an
    automatic error line never overtakes an answer owed before it. A slot
    costs no allocation of its own (only its key is queued), so holding many
    pipelined requests stays cheap.
    """

    __slots__ = ("_held", "_queue", "_ready")

    def __init__(self) -> None:
        self._queue: deque[Any] = deque()
        """Owed keys in order, with the held bytes behind them; never a held entry first."""
        self._held = 0
        self._ready: list[bytes] = []

    def __bool__(self) -> bool:
        """Whether :meth:`data_to_send` has bytes now."""
        return bool(self._ready)

    @property
    def owed(self) -> int:
        """How many reserved answers are still open."""
        return len(self._queue) - self._held

    def put(self, data: bytes) -> None:
        """Queue ``data`` behind every answer still owed (or for sending now when none is)."""
        if self._queue:
            self._queue.append(_Held(data))
            self._held += 1
        else:
            self._ready.append(data)

    def owe(self, key: Any) -> None:
        """Reserve the next answer slot for ``key`` (a request id)."""
        self._queue.append(key)

    def oldest(self) -> Any:
        """Return the key of the oldest open slot.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT``; no answer is owed.

        """
        if not self._queue:
            raise LocalProtocolError(ErrorCode.UNEXPECTED_EVENT, "no request is awaiting an answer")
        return self._queue[0]

    def settle(self, key: Any = _ANY) -> None:
        """Close the oldest slot (``key``'s, when given); what waited behind it becomes due.

        Keys match when they are the same object, or equal and of the same type.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT``; no answer is owed, or the
                oldest slot is not ``key``'s (nothing changes).

        """
        queue = self._queue
        if not queue:
            raise LocalProtocolError(ErrorCode.UNEXPECTED_EVENT, "no request is awaiting an answer")
        if key is not _ANY:
            expected = queue[0]
            if key is not expected and (key != expected or type(key) is not type(expected)):
                raise LocalProtocolError(
                    ErrorCode.UNEXPECTED_EVENT,
                    f"answers go in order: the next answer is for id {expected!r}, not {key!r}",
                )
        queue.popleft()
        if self._held:
            while queue and type(queue[0]) is _Held:
                self._ready.append(queue.popleft().data)
                self._held -= 1

    def data_to_send(self) -> bytes:
        """Return and forget the bytes that are due now (``b""`` when none are)."""
        if not self._ready:
            return b""
        data = b"".join(self._ready)
        self._ready.clear()
        return data


class Contract(Generic[S]):
    """Base class of every protocol connection: state, table, sticky error, outbox, deadlines.

    Subclasses move through ``_local()`` / ``_remote()``, report fatal
    peer errors with ``_fail()``, and queue automatic replies with
    ``self.outbox.put``. The state is :attr:`state`; :attr:`error` is the
    fatal error once there is one.
    """

    table: TransitionTable[S]
    state: S
    error: ProtocolError | None
    outbox: Outbox

    def __init__(self, table: TransitionTable[S], state: S) -> None:
        self.table = table
        self.state = state
        self.error = None
        self.outbox = Outbox()
        self._deferred: RemoteProtocolError | None = None

    # -- transitions ---------------------------------------------------------------------------

    def _local(self, key: Hashable) -> S:
        """Apply a step this side takes (a send, ``close()``); return the new state.

        Raises:
            LocalProtocolError: the step is illegal now (the state is unchanged),
                or the connection failed earlier (the sticky error).

        """
        self.state = self._check_local(key)
        return self.state

    def _check_local(self, key: Hashable) -> S:
        """Return the state a local step would lead to, changing nothing.

        Raises:
            LocalProtocolError: as :meth:`_local`.

        """
        new = self.table.transitions.get((self.state, key))
        if new is not None:
            return new
        try:
            return self.table.next_state(self.state, key, Role.LOCAL)
        except LocalProtocolError as exc:
            if self.error is None:
                raise
            raise LocalProtocolError(
                exc.code, f"{exc.message}: the connection failed earlier ({self.error.message})"
            ) from None

    def _remote(self, key: Hashable) -> bool:
        """Apply the peer's input; return ``False`` when it is dropped quietly.

        Raises:
            RemoteProtocolError: the input is illegal in this state (unchanged);
                the caller skips the line or reports it with :meth:`_fail`.

        """
        state = self.state
        table = self.table
        new = table.transitions.get((state, key))
        if new is None:
            if state in table.quiet:
                return False
            table.next_state(state, key, Role.REMOTE)
        self.state = new  # type: ignore[assignment]  # found in the table above
        return True

    def _fail(self, error: RemoteProtocolError) -> RemoteProtocolError:
        """Enter the sticky error state with ``error`` and return it."""
        self.state = self.table.error
        if self.error is None:
            self.error = error
        return error

    # -- good before bad -----------------------------------------------------------------------

    @staticmethod
    def _split(lines: LineBuffer, data: bytes) -> tuple[list[bytes], FramingError | None]:
        """Feed ``data`` to ``lines``; return the complete frames and the framing error after them.

        The frames a framing violation followed are returned with it, never lost.
        """
        try:
            return lines.feed(data), None
        except FramingError as exc:
            return list(exc.frames_before), exc

    def _raise_deferred(self) -> None:
        """Raise a fatal error held back by :meth:`_deliver`, once.

        Raises:
            RemoteProtocolError: the error held back.

        """
        error = self._deferred
        if error is not None:
            self._deferred = None
            raise error

    def _deliver(self, events: list[E], error: RemoteProtocolError | None) -> list[E]:
        """Return ``events`` and act on the fatal ``error`` that followed them, if any.

        With no events before it, the error is raised now; otherwise the
        events are returned and the error is raised by the next
        :meth:`_raise_deferred` (the next ``receive_data``). Either way the
        connection is in its sticky error state.

        Raises:
            RemoteProtocolError: ``error``, when ``events`` is empty.

        """
        if error is None:
            return events
        self._fail(error)
        if not events:
            raise error
        self._deferred = error
        return events

    # -- outbox and deadlines ------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        """Return the bytes the protocol writes by itself, due now (``b""`` when none)."""
        return self.outbox.data_to_send()

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` next has something to do; ``None``: nothing scheduled."""
        return None

    def handle_timeout(self, now: float) -> list[Any]:
        """Advance time to ``now`` and return the events that causes (none by default)."""
        return []
