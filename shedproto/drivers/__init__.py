"""Agents-host drivers, sans-IO: the codex app-server dialect and Claude Code's sessions and CLI.

:mod:`shedproto.drivers.codex` and :mod:`shedproto.drivers.claude` hold the
protocol logic; :mod:`shedproto.servers.drivers` runs the real children
(``codex app-server``, ``claude``) with anyio. The shapes every driver returns
(``connector.md`` §7.1) are the host's
(:mod:`shedproto.agentshost`); the helpers that build them live here.

Decisions where the spec is ambiguous or the versions differ
------------------------------------------------------------

Codex:

* ``initialize`` sends ``clientInfo {name: "commonfabric-agents-connector",
  version}``; the version is parsed from ``userAgent``'s first word
  (``<name>/<version>``) and is ``None`` when it has no slash.
* Server requests: approvals are declined (``decline``; the legacy v1 ones
  ``{"denied": {"rejection": ...}}``, the 0.171 schema's form, not the bare
  ``"denied"`` of older builds),
  permissions grant ``{}``, user input answers ``{}``, elicitations
  ``decline``, anything else gets ``-32601``. ``cancel`` is never sent. An
  :class:`~shedproto.drivers.codex.ApprovalPolicy` with ``approve=True``
  accepts instead (``accept``, ``approved``, the requested permissions for
  the turn); no configuration field turns it on.
* Malformed stdout lines are skipped (an event reports them); a line over
  256 MiB ends the conversation; a line cut off by the child's death is dropped.
* Responses to ids we never sent are delivered with ``method=None`` and ignored.
* Inventory: a ``nextCursor`` that is null, absent, empty or equal to the
  cursor just used ends its phase (cursor safety); ``active:`` with an empty
  codex cursor is invalid (``invalid Codex cursor``). The title is ``name``,
  else ``preview``. Inventory is not scoped to the source ``cwd`` (codex
  filters by exact cwd only, which would hide subdirectories).
* Read: ``thread/read {includeTurns: true}``; when that request is refused
  with a JSON-RPC error, ``thread/read`` without turns plus
  ``thread/turns/list`` (ascending) and ``thread/items/list`` per turn. Items
  map ``userMessage`` → user, ``agentMessage``/``reasoning``/``plan`` →
  assistant, tool-like items → tool, anything else → ``unknown`` with the item
  kept whole in ``events``. ``revision`` is ``updatedAt`` as a string.
* Prompt: ``thread/resume {threadId}`` before every prompt (it only rejoins a
  loaded thread), then ``turn/start`` with one text input. The completion is
  the ``turn/completed`` with the same turn id, remembered for 500 turns so it
  may precede the ``turn/start`` response. ``completed`` → succeeded,
  ``interrupted`` → failed/``cancelled``, ``failed`` →
  ``codex-<codexErrorInfo kind>`` (retryable for transient kinds). A child
  that exits mid-turn → ``unknown``/``codex-app-server-exited``.
  ``providerOperationId`` is the turn id.
* ``cancel`` waits (5 s by default) for the turn's ``turn/started`` before
  ``turn/interrupt``: 0.171 answers "no active turn to interrupt" for a turn
  it has accepted but not started. A refused interrupt is
  ``failed``/``codex-interrupt-failed`` (retryable).
* ``thread/items/list`` entries are ``{item, turnId, startedAtMs,
  completedAtMs}`` in 0.171 (its generated schema); the item is unwrapped.
  ``thread/turns/list`` is asked ``sortDirection: "asc"`` (its default is
  descending).
* A thread that has neither a turn nor a name has no rollout yet, and 0.171's
  ``thread/resume`` refuses it ("no rollout found"); such a prompt fails with
  ``codex-resume-failed``. Listed threads always have one.
* ``startSession``, ``setMode`` and ``setConfigOption`` are ``unsupported``:
  threads get server-minted ids, and the stable surface has no mode.
* ``managed`` and ``proxy`` refuse at start with ``codex-transport-unsupported``:
  the control socket speaks WebSocket, not JSON lines (drivers.md §1.8, §5.1).

Claude:

* The whole transcript is parsed (the SDKs read 64 KiB from each end as
  text); for files under 64 KiB the results agree. ``lastPrompt`` and titles
  are therefore the last anywhere in the file.
* The project directory name counts UTF-16 units as JavaScript does; long
  names also match any directory with the same 200-character prefix (the
  CLI and the SDKs hash differently). The inventory of a source with a
  ``cwd`` covers its project directory plus those of the repository's other
  git worktrees (``git worktree list``), never subdirectories, as the SDK's
  ``includeWorktrees`` default does; reads and prompts look in the source's
  own directory and the cached cwd of listed sessions.
* Reads include system entries (the connector's ``includeSystemMessages``)
  and return the SDK's ``SessionMessage`` shape as events.
* The CLI runs as ``claude -p --output-format stream-json --verbose
  --input-format stream-json`` with the prompt on stdin; no ``initialize``
  control request is sent. ``bypassPermissions`` adds
  ``--allow-dangerously-skip-permissions``. The CLI's ``can_use_tool`` is
  answered ``deny``; other CLI control requests get an error response.
* A prompt's ``result`` carries ``{nativeSessionId}`` from the final message.
* ``stop`` interrupts running queries and closes their stdin; a child still
  running after the grace period (5 s) is killed and its prompt ends ``unknown``.
* ``active`` in summaries is ``True`` while this driver runs a query for the
  session, else ``None`` (Claude) or the thread status (codex, ``True`` also
  while this driver runs a turn on it).
* Rename appends a ``custom-title`` record (blank titles refused).
* ``prompt`` on a session the driver cannot find is
  ``failed``/``claude-session-not-found``; a missing ``claude`` binary is
  ``unsupported``/``source-unavailable`` (retryable) while inventory and reads
  keep working.
"""

from __future__ import annotations

from ._results import (
    PREVIEW_LIMIT,
    failed,
    needs_confirmation,
    succeeded,
    text_preview,
    unknown,
    unsupported_result,
)

__all__ = [
    "succeeded",
    "failed",
    "unsupported_result",
    "unknown",
    "needs_confirmation",
    "text_preview",
    "PREVIEW_LIMIT",
]
