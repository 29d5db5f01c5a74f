"""A session's recorded ``session/update`` stream and its normalised messages.

Every ``session/update`` notification is kept verbatim as an event (the
``update`` object, in arrival order). Normalisation folds the stream into
messages: consecutive chunks of the same kind (and the same ``messageId``
when the agent sends one) form one message whose text is the concatenation
of their text blocks.

============================  ===========  ====================
``sessionUpdate``             ``role``     ``kind``
============================  ===========  ====================
``user_message_chunk``        user         ``message``
``agent_message_chunk``       assistant    ``message``
``agent_thought_chunk``       assistant    ``thought``
``tool_call``                 tool         ``tool-call``
``tool_call_update``          tool         ``tool-call-update``
``plan``                      system       ``plan``
============================  ===========  ====================

A live turn is recorded the way the agent will replay it on ``session/load``:
real agents stream only their own output during ``session/prompt``, so the
client records the prompt it sent as a ``user_message_chunk`` (marked
``_meta.shedproto.recordedBy = "client"``) and closes the turn when the
answer arrives, so the next turn's chunks start new messages.

Other kinds (commands, mode and config updates, session info, usage) are
events only. A message's ``id`` is ``<sessionId>#<rawIndex>``, ``rawIndex``
the index of its first event; ``createdAt`` is ``null`` (ACP carries no
per-update time); ``textPreview`` is the first 500 characters or ``null``
when the message holds no text.
"""

from __future__ import annotations

from typing import Any

from shedproto.connector import NormalizedMessage
from shedproto.drivers._results import PREVIEW_LIMIT

__all__ = ["SessionTranscript", "normalize_updates", "prompt_update"]
"""Characters kept in a message's ``textPreview``."""

_MESSAGE_KINDS: dict[str, tuple[str, str]] = {
    "user_message_chunk": ("user", "message"),
    "agent_message_chunk": ("assistant", "message"),
    "agent_thought_chunk": ("assistant", "thought"),
    "tool_call": ("tool", "tool-call"),
    "tool_call_update": ("tool", "tool-call-update"),
    "plan": ("system", "plan"),
}
_CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})


def _text_of(update: dict[str, Any]) -> str | None:
    content = update.get("content")
    if isinstance(content, dict) and content.get("type") == "text":
        text = content.get("text")
        return text if isinstance(text, str) else None
    title = update.get("title")
    if isinstance(title, str):
        return title
    entries = update.get("entries")
    if isinstance(entries, list):
        parts = [
            e["content"]
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("content"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def prompt_update(text: str) -> dict[str, Any]:
    """Return the ``user_message_chunk`` a client records for a prompt it sent."""
    return {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": text},
        "_meta": {"shedproto": {"recordedBy": "client"}},
    }


def normalize_updates(
    session_id: str, events: list[dict[str, Any]], breaks: frozenset[int] = frozenset()
) -> list[NormalizedMessage]:
    """Fold ``events`` (``update`` objects) into normalised messages; never raises.

    No message spans an index in ``breaks`` (where a turn ended).
    """
    messages: list[NormalizedMessage] = []
    texts: list[list[str] | None] = []
    merge_key: tuple[str, Any] | None = None
    for index, update in enumerate(events):
        if index in breaks:
            merge_key = None
        kind_name = update.get("sessionUpdate")
        mapped = _MESSAGE_KINDS.get(kind_name) if isinstance(kind_name, str) else None
        if mapped is None:
            merge_key = None
            continue
        text = _text_of(update)
        key = (str(kind_name), update.get("messageId"))
        if kind_name in _CHUNKS and key == merge_key and messages:
            held = texts[-1]
            if text is not None:
                if held is None:
                    texts[-1] = [text]
                else:
                    held.append(text)
            continue
        merge_key = key if kind_name in _CHUNKS else None
        role, kind = mapped
        messages.append(
            NormalizedMessage(
                id=f"{session_id}#{index}",
                role=role,  # type: ignore[arg-type]
                kind=kind,
                createdAt=None,
                textPreview=None,
                rawIndex=index,
            )
        )
        texts.append(None if text is None else [text])
    return [_with_preview(message, held) for message, held in zip(messages, texts, strict=True)]


def _with_preview(message: NormalizedMessage, texts: list[str] | None) -> NormalizedMessage:
    if texts is None:
        return message
    joined = "".join(texts)
    return NormalizedMessage(
        id=message.id,
        role=message.role,
        kind=message.kind,
        createdAt=None,
        textPreview=joined[:PREVIEW_LIMIT],
        rawIndex=message.rawIndex,
    )


class SessionTranscript:
    """The events of one session as this connection saw them.

    ``events`` grows with every ``session/update``; :meth:`messages` folds
    them on demand. :meth:`mark` and :meth:`since` let a caller take the
    events of one prompt turn; :meth:`record_prompt` and :meth:`close_turn`
    frame a live turn (see the module docstring).
    """

    __slots__ = ("_breaks", "events", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.events: list[dict[str, Any]] = []
        self._breaks: set[int] = set()

    def record(self, update: dict[str, Any]) -> None:
        """Append one ``update`` object."""
        self.events.append(update)

    def record_prompt(self, text: str) -> None:
        """Record the prompt this client sent as the turn's user message."""
        self._breaks.add(len(self.events))
        self.events.append(prompt_update(text))

    def close_turn(self) -> None:
        """End the running turn: later chunks start new messages."""
        self._breaks.add(len(self.events))

    def mark(self) -> int:
        """Return the current event count (a position for :meth:`since`)."""
        return len(self.events)

    def since(self, mark: int) -> list[dict[str, Any]]:
        """Return the events recorded after ``mark``."""
        return self.events[mark:]

    def messages(self) -> list[NormalizedMessage]:
        """Return the normalised messages of every event so far."""
        return normalize_updates(self.session_id, self.events, frozenset(self._breaks))
