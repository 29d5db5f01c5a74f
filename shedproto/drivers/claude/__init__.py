"""Claude Code, sans-IO: transcript paths and records, the stream-json CLI protocol, driver rules.

* Paths: :func:`claude_config_dir`, :func:`encode_project_name` (with the
  long-name hash rule), :func:`transcript_path`, :func:`match_project_dir`.
* Records: :func:`parse_records`, :func:`session_info`,
  :func:`conversation_chain`, :func:`session_messages`, and the connector's
  views :func:`session_summary`, :func:`session_read`, :func:`inventory_page`.
* The CLI: :func:`build_argv`, :func:`build_env`, :class:`ClaudeStreamConnection`,
  :func:`result_outcome`.
* Rules: :func:`claude_capabilities`, :func:`plan_start`,
  :func:`desktop_start_problem`, :func:`desktop_url`, :class:`DesktopPairing`.
"""

from __future__ import annotations

from ._paths import (
    MAX_PROJECT_NAME,
    SESSION_ID,
    claude_config_dir,
    encode_project_name,
    is_session_id,
    java_string_hash,
    project_dir,
    projects_dir,
    transcript_path,
)
from ._rules import (
    BASE_MODES,
    DANGER_MODE,
    DESKTOP_APP,
    DESKTOP_PROMPT_LIMIT,
    PAIRING_EXPIRY_MS,
    PAIRING_SKEW_MS,
    DesktopPairing,
    DesktopStart,
    StartPlan,
    claude_capabilities,
    claude_modes,
    claude_surfaces,
    desktop_start_problem,
    desktop_url,
    plan_start,
    replace_summary,
    resolve_path,
)
from ._stream import (
    CLAUDE_FRAMING,
    ClaudeStreamConnection,
    ControlRequest,
    ControlResponse,
    StreamClosed,
    StreamEvent,
    StreamMalformedLine,
    StreamMessage,
    build_argv,
    build_env,
    result_outcome,
)
from ._transcript import (
    FIRST_PROMPT_LIMIT,
    INVENTORY_PAGE_SIZE,
    ClaudeSessionInfo,
    conversation_chain,
    custom_title_record,
    first_prompt,
    inventory_page,
    match_project_dir,
    match_worktree_dirs,
    parse_offset_cursor,
    parse_records,
    parse_timestamp_ms,
    parse_worktree_list,
    session_info,
    session_messages,
    session_read,
    session_summary,
)

__all__ = [
    # paths
    "MAX_PROJECT_NAME",
    "SESSION_ID",
    "is_session_id",
    "claude_config_dir",
    "projects_dir",
    "java_string_hash",
    "encode_project_name",
    "project_dir",
    "transcript_path",
    "match_project_dir",
    "parse_worktree_list",
    "match_worktree_dirs",
    # transcripts
    "ClaudeSessionInfo",
    "INVENTORY_PAGE_SIZE",
    "FIRST_PROMPT_LIMIT",
    "parse_records",
    "first_prompt",
    "parse_timestamp_ms",
    "session_info",
    "conversation_chain",
    "session_messages",
    "session_summary",
    "session_read",
    "inventory_page",
    "parse_offset_cursor",
    "custom_title_record",
    # the CLI
    "CLAUDE_FRAMING",
    "build_argv",
    "build_env",
    "result_outcome",
    "ClaudeStreamConnection",
    "StreamEvent",
    "StreamMessage",
    "ControlResponse",
    "ControlRequest",
    "StreamMalformedLine",
    "StreamClosed",
    # rules
    "BASE_MODES",
    "DANGER_MODE",
    "DESKTOP_APP",
    "DESKTOP_PROMPT_LIMIT",
    "PAIRING_SKEW_MS",
    "PAIRING_EXPIRY_MS",
    "claude_modes",
    "claude_surfaces",
    "claude_capabilities",
    "resolve_path",
    "StartPlan",
    "plan_start",
    "desktop_url",
    "desktop_start_problem",
    "DesktopStart",
    "DesktopPairing",
    "replace_summary",
]
