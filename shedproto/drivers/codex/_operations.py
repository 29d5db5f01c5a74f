"""What the codex driver sends and how it reads the answers: pure functions only.

Inventory cursors, cursor-safe paging of list methods, thread and item
mapping, ``turn/start`` parameters with the ``allowDangerFullAccess`` rule,
turn outcomes, and the launch plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.agents_host import CommandExecutionResult, SessionPage, SessionSummary
from shedproto.connector import AgentSourceConfig, NormalizedMessage, iso_from_seconds
from shedproto.drivers._results import failed, succeeded, text_preview

__all__ = [
    "CODEX_CAPABILITIES",
    "InventoryCursor",
    "PageWalk",
    "item_of_entry",
    "full_turn",
    "thread_of",
    "turn_id_of",
    "parse_inventory_cursor",
    "thread_list_params",
    "inventory_page",
    "thread_summary",
    "thread_messages",
    "turn_start_params",
    "turn_outcome",
    "RETRYABLE_CODEX_ERRORS",
    "LaunchPlan",
    "CodexConfigError",
    "launch_plan",
    "TOOL_ITEM_TYPES",
]

TOOL_ITEM_TYPES = frozenset(
    (
        "commandExecution",
        "fileChange",
        "mcpToolCall",
        "dynamicToolCall",
        "collabAgentToolCall",
        "webSearch",
        "imageView",
        "imageGeneration",
    )
)
"""Item types normalised with role ``tool``; every other unknown type gets ``unknown``."""

CODEX_CAPABILITIES: dict[str, Any] = {
    "inventory": True,
    "read": True,
    "prompt": True,
    "cancel": True,
    "rename": True,
    "setMode": False,
    "setConfigOption": False,
}
"""The codex source's capabilities (no startSession, modes or config options)."""


# --- inventory ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InventoryCursor:
    """Where an inventory page starts: the phase and codex's own cursor in it."""

    archived: bool
    cursor: str | None


def parse_inventory_cursor(cursor: str | None) -> InventoryCursor:
    """Parse the connector cursor: ``None``, ``active:<c>``, ``archived:`` or ``archived:<c>``.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` (``invalid Codex cursor``) for
            anything else, ``active:`` with an empty codex cursor included.

    """
    if cursor is None:
        return InventoryCursor(archived=False, cursor=None)
    phase, colon, inner = cursor.partition(":")
    if colon and phase == "active" and inner:
        return InventoryCursor(archived=False, cursor=inner)
    if colon and phase == "archived":
        return InventoryCursor(archived=True, cursor=inner or None)
    raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"invalid Codex cursor: {cursor}")


class PageWalk:
    """Collect every page of a cursor-paged list method (``thread/turns/list``, ...).

    Send :meth:`query` until :meth:`add` returns ``False``; :attr:`items`
    holds the ``data`` of every page in order. The walk stops at a missing or
    empty ``nextCursor`` and at a cursor it has already followed, so a server
    that repeats itself cannot loop it.
    """

    __slots__ = ("_cursor", "_params", "_seen", "items")

    def __init__(self, params: Mapping[str, Any]) -> None:
        self._params = dict(params)
        self._cursor: str | None = None
        self._seen: set[str] = set()
        self.items: list[Any] = []

    def query(self) -> dict[str, Any]:
        """Return the params of the next request (the first one has no ``cursor``)."""
        if self._cursor is None:
            return dict(self._params)
        return {**self._params, "cursor": self._cursor}

    def add(self, result: Any) -> bool:
        """Take one page's result; return whether another page must be fetched. Never raises."""
        data = result.get("data") if isinstance(result, dict) else None
        self.items.extend(data if isinstance(data, list) else [])
        following = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(following, str) or not following or following in self._seen:
            return False
        self._seen.add(following)
        self._cursor = following
        return True


def item_of_entry(entry: Any) -> Any:
    """Unwrap a ``thread/items/list`` entry (``{item, turnId, startedAtMs, completedAtMs}``)."""
    if isinstance(entry, dict) and isinstance(entry.get("item"), dict) and "turnId" in entry:
        return entry["item"]
    return entry


def full_turn(turn: Mapping[str, Any], entries: list[Any]) -> dict[str, Any]:
    """Return ``turn`` with the ``thread/items/list`` ``entries`` as its full item list."""
    return {**turn, "items": [item_of_entry(entry) for entry in entries], "itemsView": "full"}


def thread_of(result: Any) -> dict[str, Any]:
    """Return the thread object of a ``thread/read`` answer.

    Raises:
        RemoteProtocolError: ``SCHEMA_VIOLATION`` when the answer holds no
            thread object with a string ``id``.

    """
    thread = result.get("thread") if isinstance(result, dict) else None
    if not isinstance(thread, dict) or not isinstance(thread.get("id"), str):
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION,
            "thread/read answered without a thread",
            path="$.result.thread",
        )
    return thread


def turn_id_of(holder: Any) -> str | None:
    """Return ``holder["turn"]["id"]`` when it is a string, else ``None``; never raises.

    The holder is a ``turn/start`` answer or a ``turn/started`` /
    ``turn/completed`` notification's params.
    """
    turn = holder.get("turn") if isinstance(holder, dict) else None
    turn_id = turn.get("id") if isinstance(turn, dict) else None
    return turn_id if isinstance(turn_id, str) else None


def thread_list_params(position: InventoryCursor, *, cwd: str | None = None) -> dict[str, Any]:
    """Return ``thread/list`` params: ``archived`` always, ``cursor`` and ``cwd`` when set."""
    params: dict[str, Any] = {}
    if position.cursor is not None:
        params["cursor"] = position.cursor
    params["archived"] = position.archived
    if cwd is not None:
        params["cwd"] = cwd
    return params


def _next_cursor(position: InventoryCursor, result: Mapping[str, Any]) -> str | None:
    raw = result.get("nextCursor")
    following = raw if isinstance(raw, str) and raw else None
    if following is not None and following == position.cursor:
        following = None  # a cursor that repeats would loop forever: the phase is over
    if not position.archived:
        return f"active:{following}" if following is not None else "archived:"
    return f"archived:{following}" if following is not None else None


def inventory_page(position: InventoryCursor, result: Any) -> SessionPage:
    """Map a ``thread/list`` result to a page; ``archived`` comes from the query phase.

    ``nextCursor`` null, absent, empty or equal to the cursor just used ends the
    phase: the active phase continues with ``archived:``, the archived one ends.
    Threads without a string ``id`` are skipped.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` when ``result`` is not an
            object with a ``data`` array (the caller reports a provider error).

    """
    if not isinstance(result, Mapping) or not isinstance(result.get("data"), list):
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "thread/list result has no data array")
    sessions = tuple(
        thread_summary(thread, archived=position.archived)
        for thread in result["data"]
        if isinstance(thread, Mapping) and isinstance(thread.get("id"), str)
    )
    return SessionPage(sessions=sessions, nextCursor=_next_cursor(position, result))


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _iso(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return iso_from_seconds(value)
        except (ValueError, OverflowError):  # out of JavaScript's Date range, or infinite
            return None
    return None


def thread_summary(thread: Mapping[str, Any], *, archived: bool | None) -> SessionSummary:
    """Map a codex ``Thread`` to a summary; the thread is kept whole as ``raw``.

    The title is ``name``, else ``preview``; times are unix seconds turned into
    ISO strings; status ``active`` means ``active: true``, every other status
    (and a missing one) ``false``.
    """
    status = thread.get("status")
    active = isinstance(status, Mapping) and status.get("type") == "active"
    return SessionSummary(
        nativeSessionId=str(thread.get("id")),
        title=_string(thread.get("name")) or _string(thread.get("preview")),
        cwd=_string(thread.get("cwd")),
        createdAt=_iso(thread.get("createdAt")),
        updatedAt=_iso(thread.get("updatedAt")),
        archived=archived,
        active=active,
        raw=dict(thread),
    )


# --- reading ------------------------------------------------------------------------------------


def _item_text(item: Mapping[str, Any]) -> str | None:
    kind = item.get("type")
    if kind == "userMessage":
        content = item.get("content")
        if isinstance(content, list):
            texts = [
                part["text"]
                for part in content
                if isinstance(part, Mapping) and isinstance(part.get("text"), str)
            ]
            return "\n".join(texts) or None
        return None
    if kind in ("agentMessage", "plan"):
        text = item.get("text")
        return text if isinstance(text, str) else None
    if kind == "reasoning":
        summary = item.get("summary")
        if isinstance(summary, list):
            return "\n".join(part for part in summary if isinstance(part, str)) or None
        return None
    if kind == "commandExecution":
        command = item.get("command")
        return command if isinstance(command, str) else None
    return None


def _role(kind: str) -> Literal["user", "assistant", "tool", "unknown"]:
    if kind == "userMessage":
        return "user"
    if kind in ("agentMessage", "reasoning", "plan"):
        return "assistant"
    if kind in TOOL_ITEM_TYPES:
        return "tool"
    return "unknown"


def thread_messages(
    turns: Any,
) -> tuple[tuple[Any, ...], tuple[NormalizedMessage, ...]]:
    """Return ``(events, messages)`` for a thread's turns, items in turn order.

    ``events`` are the items exactly as codex sent them (unknown item kinds
    included); each message's ``rawIndex`` points at its item. An item without
    a string ``id`` or ``type`` is still an event but gets no message.
    """
    events: list[Any] = []
    messages: list[NormalizedMessage] = []
    for turn in turns if isinstance(turns, list) else ():
        items = turn.get("items") if isinstance(turn, Mapping) else None
        for item in items if isinstance(items, list) else ():
            index = len(events)
            events.append(item)
            if not isinstance(item, Mapping):
                continue
            item_id, kind = item.get("id"), item.get("type")
            if not isinstance(item_id, str) or not isinstance(kind, str):
                continue
            messages.append(
                NormalizedMessage(
                    id=item_id,
                    role=_role(kind),
                    kind=kind,
                    createdAt=None,
                    textPreview=text_preview(_item_text(item)),
                    rawIndex=index,
                )
            )
    return tuple(events), tuple(messages)


# --- prompting ----------------------------------------------------------------------------------


def turn_start_params(
    thread_id: str, text: str, *, allow_danger_full_access: bool
) -> dict[str, Any]:
    """Return ``turn/start`` params: one text input, plus the unrestricted policy when allowed.

    ``allow_danger_full_access`` adds exactly ``approvalPolicy: "never"`` and
    ``sandboxPolicy: {"type": "dangerFullAccess"}``; without it neither is sent
    and the user's ``config.toml`` decides.
    """
    params: dict[str, Any] = {
        "threadId": thread_id,
        "input": [{"type": "text", "text": text, "text_elements": []}],
    }
    if allow_danger_full_access:
        params["approvalPolicy"] = "never"
        params["sandboxPolicy"] = {"type": "dangerFullAccess"}
    return params


RETRYABLE_CODEX_ERRORS = frozenset(
    (
        "serverOverloaded",
        "usageLimitExceeded",
        "internalServerError",
        "httpConnectionFailed",
        "responseStreamConnectionFailed",
        "responseStreamDisconnected",
        "responseTooManyFailedAttempts",
    )
)
"""``codexErrorInfo`` kinds after which a retry may succeed."""


def _error_kind(info: Any) -> str | None:
    if isinstance(info, str):
        return info
    if isinstance(info, Mapping) and len(info) == 1:
        return str(next(iter(info)))
    return None


def turn_outcome(turn: Mapping[str, Any]) -> CommandExecutionResult:
    """Map the final turn of ``turn/completed`` to the prompt's result.

    ``completed`` succeeds; ``interrupted`` fails with ``cancelled``; ``failed``
    fails with ``codex-<codexErrorInfo kind>`` (``codex-turn-failed`` when none)
    and is retryable for the transient kinds; any other status is ``failed``
    with ``codex-turn-status``. ``providerOperationId`` is the turn id.
    """
    turn_id = _string(turn.get("id"))
    status = turn.get("status")
    result = {"turnId": turn_id, "status": status}
    if status == "completed":
        return succeeded(result, provider_operation_id=turn_id)
    if status == "interrupted":
        return failed(
            "cancelled", "the turn was interrupted", provider_operation_id=turn_id, result=result
        )
    if status == "failed":
        error = turn.get("error")
        message = "the turn failed"
        kind = None
        if isinstance(error, Mapping):
            message = _string(error.get("message")) or message
            kind = _error_kind(error.get("codexErrorInfo"))
        return failed(
            f"codex-{kind}" if kind else "codex-turn-failed",
            message,
            retryable=kind in RETRYABLE_CODEX_ERRORS,
            provider_operation_id=turn_id,
            result=result,
        )
    return failed(
        "codex-turn-status",
        f"the turn ended with status {status!r}",
        provider_operation_id=turn_id,
        result=result,
    )


# --- launching ----------------------------------------------------------------------------------


class CodexConfigError(ValueError):
    """The source's launch configuration cannot work; ``code`` is the receipt/health code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class LaunchPlan:
    """How to start the app-server: an optional preparation command, then the child."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    prepare: tuple[str, ...] | None
    transport: str


def launch_plan(
    source: AgentSourceConfig, base_env: Mapping[str, str], *, allow_websocket: bool = False
) -> LaunchPlan:
    """Return the launch plan for a codex source.

    * ``stdio`` (the default): ``<codexBin|codex> app-server --listen stdio://``.
    * ``managed``: prepare with ``<bin> app-server daemon start``, then
      ``<bin> app-server proxy``.
    * ``proxy``: ``<bin> app-server proxy [--sock <codexSocket>]``.

    ``command`` replaces the derived child argv (the preparation step stays).
    The environment is ``base_env`` overlaid with the source's ``env`` and
    ``CODEX_HOME`` from ``codexHome``; the cwd is the source's.

    Raises:
        CodexConfigError: ``codex-transport-unsupported`` for ``managed`` and
            ``proxy`` unless ``allow_websocket``: both reach the daemon's control
            socket, which speaks WebSocket frames, not JSON lines, and this
            driver does not speak WebSocket. It refuses rather than pretend.

    """
    transport = source.codexTransport or "stdio"
    binary = source.codexBin or "codex"
    prepare: tuple[str, ...] | None = None
    if transport == "stdio":
        argv: tuple[str, ...] = (binary, "app-server", "--listen", "stdio://")
    elif transport == "managed":
        prepare = (binary, "app-server", "daemon", "start")
        argv = (binary, "app-server", "proxy")
    else:
        argv = (binary, "app-server", "proxy")
        if source.codexSocket:
            argv = (*argv, "--sock", source.codexSocket)
    if transport != "stdio" and not allow_websocket:
        raise CodexConfigError(
            "codex-transport-unsupported",
            f"codexTransport {transport!r} reaches the app-server control socket, which speaks "
            "WebSocket frames rather than JSON lines; this driver supports only 'stdio'",
        )
    if source.command:
        argv = tuple(source.command)
    env = dict(base_env)
    if source.env:
        env.update(source.env)
    if source.codexHome:
        env["CODEX_HOME"] = source.codexHome
    return LaunchPlan(argv=argv, env=env, cwd=source.cwd, prepare=prepare, transport=transport)
