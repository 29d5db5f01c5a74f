"""herdr's JSON socket API (protocols 20 and 21), sans-IO.

herdr serves newline-delimited JSON on ``<config_dir>/herdr.sock``, one request
per connection: the client writes ``{"id", "method", "params"}``, reads one
answer line, and the server closes. ``events.subscribe`` answers with an
acknowledgement and then streams event lines until the client closes or
writes anything.

* :mod:`shedproto.herdr.types` holds a type for every schema ``$def``,
  generated from herdr's published schemas
  (``python tools/herdr_codegen.py SCHEMA...``, a repository tool).
* :class:`ClientConnection` / :class:`ServerConnection` are the two sides of
  one connection; :func:`make_request` builds typed requests.
* :func:`api_socket_path`, :func:`config_dir` and friends resolve socket
  paths exactly as herdr does, from an environment mapping you pass in.
* :func:`check_exact` is herdr's exact-equality version rule and
  :func:`check_methods` the looser per-method check.
* :class:`TerminalFrame`, :class:`TerminalClosed` and the ``Terminal*`` commands are
  the JSON lines of ``herdr terminal session control|observe``; :class:`FrameEncoder`
  paints screens into frames.

The decisions taken where the digest leaves room or the versions differ are
in the documentation: ``docs/architecture/decisions/herdr.rst``.
"""

from __future__ import annotations

from . import types
from ._agents import (
    AGENT_NAME_PATTERN,
    AGENT_START_DEFAULT_TIMEOUT_MS,
    AGENT_START_SETTLE_SECONDS,
    AGENT_TIMEOUT_MAX_MS,
    AGENT_TIMEOUT_MIN_MS,
    ManagedLaunch,
    agent_name_error,
    agent_start_error,
    begin_launch,
    detected_without_screen,
    is_pane_shell_name,
    reconcile_launch,
    shell_is_initializing,
)
from ._codes import CLI_ONLY_CODES, NOT_MODELLED, HerdrApiError, HerdrErrorCode
from ._connection import (
    HOLDING_METHODS,
    MAX_REQUEST_BYTES,
    RAW_STREAM_METHODS,
    REQUEST_TIMEOUT,
    ClientConnection,
    ClientGone,
    ConnectionClosed,
    RawRequest,
    ServerConnection,
    make_request,
)
from ._copymode import (
    MAX_MATCHES,
    clamp_point,
    copy_motion,
    current_match,
    links,
    search,
    select_text,
)
from ._envelope import (
    ErrorResponse,
    LifecycleEvent,
    Response,
    SubscriptionEvent,
    SuccessResponse,
    decode_request,
    decode_response,
    decode_stream_line,
    encode_request,
    invalid_request_reply,
    request_id_of,
)
from ._graphics import (
    GRAPHICS_FILE_FORMATS,
    MAX_FRAME_BYTES,
    MAX_FRAME_HEADER_BYTES,
    GraphicsFrame,
    GraphicsFrameFile,
    GraphicsFrameHeader,
    GraphicsStreamReader,
    encode_frame,
)
from ._ids import (
    decode_public_number,
    encode_public_number,
    pane_id,
    parse_pane_ref,
    parse_tab_ref,
    parse_workspace_ref,
    tab_id,
    workspace_id,
)
from ._keys import UnsupportedKeyError, encode_keys, parse_key
from ._paths import (
    active_session_name,
    api_socket_path,
    client_socket_path,
    config_dir,
    data_dir,
    derive_client_socket_path,
    normalize_session_name,
    validate_session_name,
)
from ._releases import (
    DEFAULT_RELEASES,
    HIDDEN_METHODS,
    RELEASES,
    RETIRED_GRAPHICS,
    HerdrRelease,
    hidden_request_type,
    release_for,
)
from ._screen import DEFAULT_RECENT_LINES, MAX_READ_LINES, split_lines, strip_ansi
from ._state import CLIENT_TABLE, SERVER_TABLE, State
from ._subscriptions import (
    EVENTS_LOST,
    EVENTS_LOST_MESSAGE,
    HUB_SIZE,
    LIFECYCLE_SUBSCRIPTIONS,
    PARAMETERIZED_SUBSCRIPTIONS,
    ReplayRule,
    event_kind,
    is_parameterized,
    probe_id,
    replay_rule,
    subscription_type,
)
from ._terminal import (
    CloseReason,
    FrameEncoder,
    InvalidCommandError,
    SessionMode,
    TerminalClosed,
    TerminalCommand,
    TerminalFrame,
    TerminalInput,
    TerminalOpen,
    TerminalRecord,
    TerminalRelease,
    TerminalResize,
    TerminalScroll,
)
from ._versions import (
    DEFAULT_PROTOCOL,
    HERDR_VERSIONS,
    SUPPORTED_PROTOCOLS,
    Compatibility,
    VersionMismatchError,
    check_exact,
    check_methods,
    differing_methods,
)
from ._worktrees import (
    GROUP_CLOSE_REQUIRED_MESSAGE,
    GitWorktree,
    branch_exists_args,
    branch_slug,
    checkout_path,
    close_group_members,
    default_checkout_path,
    generated_branch,
    is_dirty_remove_error,
    option_shaped,
    parent_membership,
    parse_worktree_list,
    removed_worktree,
    worktree_add_args,
    worktree_info,
    worktree_remove_args,
    worktree_source,
)

__all__ = [
    "types",
    # terminal streams (herdr terminal session control|observe)
    "CloseReason",
    "FrameEncoder",
    "InvalidCommandError",
    "SessionMode",
    "TerminalClosed",
    "TerminalCommand",
    "TerminalFrame",
    "TerminalInput",
    "TerminalOpen",
    "TerminalRecord",
    "TerminalRelease",
    "TerminalResize",
    "TerminalScroll",
    # connections
    "ClientConnection",
    "ServerConnection",
    "ClientGone",
    "ConnectionClosed",
    "RawRequest",
    "make_request",
    "HOLDING_METHODS",
    "RAW_STREAM_METHODS",
    "DEFAULT_RELEASES",
    "HIDDEN_METHODS",
    "hidden_request_type",
    "RELEASES",
    "RETIRED_GRAPHICS",
    "HerdrRelease",
    "release_for",
    "request_id_of",
    "GRAPHICS_FILE_FORMATS",
    "MAX_FRAME_BYTES",
    "MAX_FRAME_HEADER_BYTES",
    "GraphicsFrame",
    "GraphicsFrameFile",
    "GraphicsFrameHeader",
    "GraphicsStreamReader",
    "encode_frame",
    "MAX_REQUEST_BYTES",
    "REQUEST_TIMEOUT",
    "State",
    "CLIENT_TABLE",
    "SERVER_TABLE",
    # envelope
    "SuccessResponse",
    "ErrorResponse",
    "Response",
    "LifecycleEvent",
    "SubscriptionEvent",
    "decode_request",
    "decode_response",
    "decode_stream_line",
    "encode_request",
    "invalid_request_reply",
    # errors
    "HerdrApiError",
    "HerdrErrorCode",
    "CLI_ONLY_CODES",
    "NOT_MODELLED",
    # versions
    "DEFAULT_PROTOCOL",
    "HERDR_VERSIONS",
    "SUPPORTED_PROTOCOLS",
    "Compatibility",
    "VersionMismatchError",
    "check_exact",
    "check_methods",
    "differing_methods",
    # paths
    "config_dir",
    "data_dir",
    "api_socket_path",
    "client_socket_path",
    "derive_client_socket_path",
    "active_session_name",
    "normalize_session_name",
    "validate_session_name",
    # subscriptions
    "EVENTS_LOST",
    "EVENTS_LOST_MESSAGE",
    "HUB_SIZE",
    "LIFECYCLE_SUBSCRIPTIONS",
    "PARAMETERIZED_SUBSCRIPTIONS",
    "ReplayRule",
    "event_kind",
    "is_parameterized",
    "probe_id",
    "replay_rule",
    "subscription_type",
    # ids and keys
    "encode_public_number",
    "decode_public_number",
    "workspace_id",
    "tab_id",
    "pane_id",
    "parse_workspace_ref",
    "parse_tab_ref",
    "parse_pane_ref",
    "parse_key",
    "encode_keys",
    "UnsupportedKeyError",
    # copy mode
    "MAX_MATCHES",
    "clamp_point",
    "copy_motion",
    "current_match",
    "links",
    "search",
    "select_text",
    # agents
    "AGENT_NAME_PATTERN",
    "AGENT_TIMEOUT_MAX_MS",
    "AGENT_TIMEOUT_MIN_MS",
    "AGENT_START_DEFAULT_TIMEOUT_MS",
    "AGENT_START_SETTLE_SECONDS",
    "ManagedLaunch",
    "agent_name_error",
    "agent_start_error",
    "begin_launch",
    "detected_without_screen",
    "is_pane_shell_name",
    "reconcile_launch",
    "shell_is_initializing",
    # worktrees
    "GitWorktree",
    "branch_slug",
    "default_checkout_path",
    "generated_branch",
    "is_dirty_remove_error",
    "parse_worktree_list",
    "branch_exists_args",
    "checkout_path",
    "option_shaped",
    "removed_worktree",
    "worktree_add_args",
    "worktree_info",
    "worktree_remove_args",
    "worktree_source",
    "GROUP_CLOSE_REQUIRED_MESSAGE",
    "close_group_members",
    "parent_membership",
    # pane reads
    "MAX_READ_LINES",
    "DEFAULT_RECENT_LINES",
    "split_lines",
    "strip_ansi",
]
