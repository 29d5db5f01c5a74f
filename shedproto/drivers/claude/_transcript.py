"""Claude Code transcripts: records, session info, the conversation chain, pages and reads.

Everything works on bytes the shell read and on the file's ``mtime`` and size
it observed. The rules follow what the agent SDKs report (``listSessions``,
``getSessionInfo``, ``getSessionMessages``), with one difference recorded in
the package docstring: the whole file is parsed, where the SDKs scan only the
first and last 64 KiB as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Literal

import msgspec

from shedproto._codec import decoder_for, encode_line
from shedproto._errors import ErrorCode, LocalProtocolError
from shedproto.agents_host import SessionPage, SessionSnapshot, SessionSummary
from shedproto.connector import NormalizedMessage, iso_from_epoch_ms
from shedproto.drivers._results import text_preview

from ._paths import MAX_PROJECT_NAME, encode_project_name, is_session_id

__all__ = [
    "ClaudeSessionInfo",
    "INVENTORY_PAGE_SIZE",
    "FIRST_PROMPT_LIMIT",
    "parse_records",
    "first_prompt",
    "session_info",
    "conversation_chain",
    "session_messages",
    "session_summary",
    "session_read",
    "inventory_page",
    "parse_offset_cursor",
    "custom_title_record",
    "match_project_dir",
    "parse_worktree_list",
    "match_worktree_dirs",
    "parse_timestamp_ms",
]

INVENTORY_PAGE_SIZE = 100
"""Sessions per inventory page (the connector asks the SDK for 100)."""
FIRST_PROMPT_LIMIT = 200
"""``firstPrompt`` keeps at most this many characters, then ``…``."""

_ANY = decoder_for(Any)
_CHAIN_TYPES = ("user", "assistant", "progress", "system", "attachment")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>"
    r"|\[Request interrupted by user[^\]]*\]"
    r"|\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$"
    r"|\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,15}")


class ClaudeSessionInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``SDKSessionInfo``: times in epoch milliseconds; absent fields are omitted."""

    sessionId: str  # noqa: N815 - wire name
    summary: str
    lastModified: int  # noqa: N815 - wire name
    fileSize: int | None = None  # noqa: N815 - wire name
    customTitle: str | None = None  # noqa: N815 - wire name
    firstPrompt: str | None = None  # noqa: N815 - wire name
    gitBranch: str | None = None  # noqa: N815 - wire name
    cwd: str | None = None
    tag: str | None = None
    createdAt: int | None = None  # noqa: N815 - wire name


def parse_records(data: bytes) -> list[dict[str, Any]]:
    """Return the transcript's JSON objects in file order.

    Blank lines, malformed JSON, invalid UTF-8 and non-object lines are
    skipped: a transcript being appended to may end mid-line. Never raises.
    """
    records: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = _ANY.decode(line)
        except msgspec.DecodeError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            block["text"]
            for block in content
            if isinstance(block, Mapping)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
    return []


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(block, Mapping) and block.get("type") == "tool_result" for block in content
    )


def first_prompt(records: Iterable[Mapping[str, Any]]) -> str | None:
    """Return the first meaningful user prompt, at most 200 characters plus ``…``.

    User records that are meta, compact summaries or tool results are skipped,
    and so are texts that are hook or IDE noise. A slash command counts only
    as a fallback (its ``<command-name>``). Newlines become spaces.
    """
    fallback = ""
    for record in records:
        if record.get("type") != "user" or record.get("isMeta") is True:
            continue
        if record.get("isCompactSummary") is True:
            continue
        message = record.get("message")
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if _has_tool_result(content):
            continue
        for raw in _texts(content):
            text = raw.replace("\n", " ").strip()
            if not text:
                continue
            command = _COMMAND_NAME.search(text)
            if command:
                fallback = fallback or command.group(1)
                continue
            if _NOT_A_PROMPT.match(text):
                continue
            if len(text) > FIRST_PROMPT_LIMIT:
                text = text[:FIRST_PROMPT_LIMIT].rstrip() + "\u2026"
            return text
    return fallback or None


def parse_timestamp_ms(value: Any) -> int | None:
    """Return an ISO-8601 timestamp as epoch milliseconds (UTC when no offset), else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _last_string(records: Sequence[Mapping[str, Any]], key: str) -> str | None:
    for record in reversed(records):
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _first_string(records: Sequence[Mapping[str, Any]], key: str) -> str | None:
    for record in records:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def session_info(
    session_id: str,
    records: Sequence[Mapping[str, Any]],
    *,
    last_modified_ms: int,
    file_size: int | None = None,
    project_path: str | None = None,
) -> ClaudeSessionInfo | None:
    """Return the session's info, or ``None`` where the SDK reports none.

    ``None`` for a sidechain transcript (its first record says so) and for a
    transcript with no title, prompt or summary. The title is the last
    ``customTitle``, else the last ``aiTitle``; ``summary`` is that title, else
    the last ``lastPrompt``, else the last ``summary``, else the first prompt.
    ``cwd`` is the first recorded cwd, else ``project_path``; ``createdAt`` is
    the first record timestamp; ``lastModified`` is the file's mtime.
    """
    if records and records[0].get("isSidechain") is True:
        return None
    custom = _last_string(records, "customTitle") or _last_string(records, "aiTitle")
    prompt = first_prompt(records)
    summary = (
        custom or _last_string(records, "lastPrompt") or _last_string(records, "summary") or prompt
    )
    if not summary:
        return None
    tag = next((r.get("tag") for r in reversed(records) if r.get("type") == "tag"), None)
    return ClaudeSessionInfo(
        sessionId=session_id,
        summary=summary,
        lastModified=last_modified_ms,
        fileSize=file_size,
        customTitle=custom,
        firstPrompt=prompt,
        gitBranch=_last_string(records, "gitBranch"),
        cwd=_first_string(records, "cwd") or project_path,
        tag=tag if isinstance(tag, str) and tag else None,
        createdAt=parse_timestamp_ms(_first_string(records, "timestamp")),
    )


def conversation_chain(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Return the main conversation, root first, by walking ``parentUuid`` from the newest leaf.

    Only conversation entries with a string ``uuid`` take part. Leaves are the
    entries no other entry names as parent, each walked back to its nearest
    user or assistant entry; the newest (in file order) that is not a
    sidechain, team or meta entry wins, else the newest of any. Cycles stop
    the walk; a missing parent ends it.
    """
    entries = [
        r for r in records if r.get("type") in _CHAIN_TYPES and isinstance(r.get("uuid"), str)
    ]
    if not entries:
        return []
    by_uuid = {entry["uuid"]: entry for entry in entries}
    position = {entry["uuid"]: index for index, entry in enumerate(entries)}
    parents = {p for p in (entry.get("parentUuid") for entry in entries) if isinstance(p, str)}
    leaves: list[Mapping[str, Any]] = []
    for terminal in (e for e in entries if e["uuid"] not in parents):
        seen: set[str] = set()
        current: Mapping[str, Any] | None = terminal
        while current is not None and current["uuid"] not in seen:
            seen.add(current["uuid"])
            if current.get("type") in ("user", "assistant"):
                leaves.append(current)
                break
            parent = current.get("parentUuid")
            current = by_uuid.get(parent) if isinstance(parent, str) else None
    if not leaves:
        return []
    main = [
        leaf
        for leaf in leaves
        if not leaf.get("isSidechain") and not leaf.get("teamName") and not leaf.get("isMeta")
    ]
    leaf = max(main or leaves, key=lambda entry: position[entry["uuid"]])
    chain: list[Mapping[str, Any]] = []
    walked: set[str] = set()
    node: Mapping[str, Any] | None = leaf
    while node is not None and node["uuid"] not in walked:
        walked.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        node = by_uuid.get(parent) if isinstance(parent, str) else None
    chain.reverse()
    return chain


def session_messages(
    records: Sequence[Mapping[str, Any]], *, include_system: bool = True
) -> list[dict[str, Any]]:
    """Return the visible messages in the SDK's ``SessionMessage`` shape.

    User and assistant entries of the main chain (and system entries when
    ``include_system``, as the connector asks), minus meta, sidechain and team
    entries: ``{type, uuid, session_id, message, parent_tool_use_id}``.
    """
    kinds = ("user", "assistant", "system") if include_system else ("user", "assistant")
    return [
        {
            "type": entry.get("type"),
            "uuid": entry.get("uuid"),
            "session_id": entry.get("sessionId", ""),
            "message": entry.get("message"),
            "parent_tool_use_id": None,
        }
        for entry in conversation_chain(records)
        if entry.get("type") in kinds
        and not entry.get("isMeta")
        and not entry.get("isSidechain")
        and not entry.get("teamName")
    ]


def _iso_ms(value: int | None) -> str | None:
    if value is None:
        return None
    try:
        return iso_from_epoch_ms(value)
    except ValueError:
        return None


def session_summary(info: ClaudeSessionInfo, *, active: bool | None = None) -> SessionSummary:
    """Map session info to a summary: title ``customTitle || summary || firstPrompt``.

    ``archived`` is ``None`` (the connector does not use the SDK's archive flag);
    ``active`` is ``True`` only while this process runs a query for it.
    """
    return SessionSummary(
        nativeSessionId=info.sessionId,
        title=info.customTitle or info.summary or info.firstPrompt or None,
        cwd=info.cwd,
        createdAt=_iso_ms(info.createdAt),
        updatedAt=_iso_ms(info.lastModified),
        archived=None,
        active=active,
        raw=msgspec.to_builtins(info),
    )


def _role(kind: Any) -> Literal["user", "assistant", "system", "unknown"]:
    if kind == "user":
        return "user"
    if kind == "assistant":
        return "assistant"
    if kind == "system":
        return "system"
    return "unknown"


def session_read(
    info: ClaudeSessionInfo, messages: Sequence[Mapping[str, Any]], *, active: bool | None = None
) -> SessionSnapshot:
    """Return the read: the messages as events, each normalised; revision is ``lastModified``."""
    normalized = []
    for index, event in enumerate(messages):
        message = event.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        normalized.append(
            NormalizedMessage(
                id=str(event.get("uuid")),
                role=_role(event.get("type")),
                kind=str(event.get("type")),
                createdAt=None,
                textPreview=text_preview("\n".join(_texts(content)) or None),
                rawIndex=index,
            )
        )
    return SessionSnapshot(
        summary=session_summary(info, active=active),
        events=tuple(messages),
        normalizedMessages=tuple(normalized),
        complete=True,
        revision=str(info.lastModified),
    )


def parse_offset_cursor(cursor: str | None) -> int:
    """Return the offset a cursor names (``None`` is 0).

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` (``invalid Claude cursor``)
            unless the cursor is a canonical non-negative decimal integer.

    """
    if cursor is None:
        return 0
    if not _DECIMAL.fullmatch(cursor):
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"invalid Claude cursor: {cursor}")
    return int(cursor)


def inventory_page(
    infos: Iterable[ClaudeSessionInfo],
    cursor: str | None,
    *,
    active: frozenset[str] = frozenset(),
    limit: int = INVENTORY_PAGE_SIZE,
) -> SessionPage:
    """Return one page, newest ``lastModified`` first; duplicates keep the newest copy.

    Ties sort by session id so pages are stable. ``nextCursor`` (the next
    offset) is set whenever the page is full, as the connector does.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` for an invalid cursor.

    """
    offset = parse_offset_cursor(cursor)
    newest: dict[str, ClaudeSessionInfo] = {}
    for info in infos:
        kept = newest.get(info.sessionId)
        if kept is None or info.lastModified > kept.lastModified:
            newest[info.sessionId] = info
    ordered = sorted(newest.values(), key=lambda i: (-i.lastModified, i.sessionId))
    page = ordered[offset : offset + limit]
    sessions = tuple(
        session_summary(info, active=True if info.sessionId in active else None) for info in page
    )
    following = str(offset + len(page)) if len(page) == limit else None
    return SessionPage(sessions=sessions, nextCursor=following)


def custom_title_record(session_id: str, title: str) -> bytes:
    """Return the line a rename appends: ``{"type":"custom-title","customTitle","sessionId"}``.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` when the id is not a UUID or
            the title is blank.

    """
    if not is_session_id(session_id):
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"invalid session id: {session_id}")
    if not title.strip():
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "title must not be empty")
    return encode_line({"type": "custom-title", "customTitle": title, "sessionId": session_id})


def match_project_dir(cwd: str, names: Iterable[str]) -> str | None:
    """Pick the project directory for ``cwd`` among the existing directory ``names``.

    The exact encoded name wins. For an encoded name over 200 characters the
    hash suffix may differ (the CLI and the SDKs hash differently), so any
    name starting with the 200-character prefix plus ``-`` matches.
    """
    exact = encode_project_name(cwd)
    candidates = list(names)
    if exact in candidates:
        return exact
    if len(exact) <= MAX_PROJECT_NAME:
        return None
    prefix = exact[:MAX_PROJECT_NAME] + "-"
    return next((name for name in sorted(candidates) if name.startswith(prefix)), None)


def parse_worktree_list(porcelain: str) -> list[str]:
    """Return the worktree paths of ``git worktree list --porcelain`` output, in order."""
    return [
        line[len("worktree ") :] for line in porcelain.splitlines() if line.startswith("worktree ")
    ]


def match_worktree_dirs(worktrees: Iterable[str], names: Iterable[str]) -> list[tuple[str, str]]:
    """Return ``(directory name, worktree path)`` for each project directory of a worktree.

    A short encoded name must match exactly (so ``/repo`` never claims
    ``/repo-other``); a long one (with a hash suffix) matches by its
    200-character prefix. Longer worktree names are tried first, and each
    directory is claimed once.
    """
    encoded = sorted(
        ((encode_project_name(path), path) for path in worktrees), key=lambda p: -len(p[0])
    )
    found: list[tuple[str, str]] = []
    for name in sorted(names):
        for prefix, path in encoded:
            if name == prefix or (
                len(prefix) > MAX_PROJECT_NAME and name.startswith(prefix[:MAX_PROJECT_NAME] + "-")
            ):
                found.append((name, path))
                break
    return found
