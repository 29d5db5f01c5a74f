"""herdr's wire error codes and the exception a client raises for an error answer."""

from __future__ import annotations

from enum import Enum

__all__ = ["CLI_ONLY_CODES", "HerdrApiError", "HerdrErrorCode", "NOT_MODELLED"]


class HerdrErrorCode(str, Enum):
    """Every ``error.code`` the herdr server sends (from the protocol digest).

    The values are the wire strings. herdr adds codes over time, so a client
    must accept codes that are not listed here; :class:`HerdrApiError` keeps
    the raw string.
    """

    # server / transport layer
    INVALID_REQUEST = "invalid_request"
    SERVER_UNAVAILABLE = "server_unavailable"
    INTERNAL_ERROR = "internal_error"
    TIMEOUT = "timeout"
    INVALID_REGEX = "invalid_regex"
    UNSUPPORTED_EVENT_WAIT_MATCH = "unsupported_event_wait_match"
    AGENT_NOT_RUNNING = "agent_not_running"
    AGENT_PROMPT_STALLED = "agent_prompt_stalled"
    PANE_NOT_FOUND = "pane_not_found"
    STREAM_TRANSPORT_REQUIRED = "stream_transport_required"
    STREAM_CONFLICT = "stream_conflict"
    STREAM_CLOSED = "stream_closed"
    INVALID_STREAM = "invalid_stream"
    INVALID_FRAME = "invalid_frame"
    STREAM_TIMEOUT = "stream_timeout"
    FEATURE_DISABLED = "feature_disabled"
    IMAGE_TOO_LARGE = "image_too_large"
    INVALID_IMAGE = "invalid_image"
    CELL_SIZE_UNAVAILABLE = "cell_size_unavailable"
    HANDOFF_FAILED = "handoff_failed"
    UNSUPPORTED_IN_APP_MODE = "unsupported_in_app_mode"
    # client_shell.surface.set over the API socket: herdrdev/herdr
    # src/api/server.rs:575-581@3f32b738 (handle_request; and every stored 0.9.x copy)
    CONNECTION_LOCAL_ONLY = "connection_local_only"
    # a retired pane.graphics.* method (0.9.2 on): herdrdev/herdr
    # src/api/server.rs:272-294@3f32b738 (retired_pane_graphics_method_error)
    UNKNOWN_METHOD = "unknown_method"
    # server.ssh_agent.register: herdrdev/herdr
    # src/api/server.rs:387-407@3f32b738 (an InvalidInput error, else unavailable)
    INVALID_SSH_AGENT = "invalid_ssh_agent"
    SSH_AGENT_UNAVAILABLE = "ssh_agent_unavailable"
    # app layer: workspaces, tabs, panes
    WORKSPACE_NOT_FOUND = "workspace_not_found"
    TAB_NOT_FOUND = "tab_not_found"
    NO_ACTIVE_WORKSPACE = "no_active_workspace"
    NO_ACTIVE_PANE = "no_active_pane"
    WORKSPACE_CREATE_FAILED = "workspace_create_failed"
    TAB_CREATE_FAILED = "tab_create_failed"
    PANE_SPLIT_FAILED = "pane_split_failed"
    PANE_SEND_FAILED = "pane_send_failed"
    INVALID_KEY = "invalid_key"
    INVALID_ENV = "invalid_env"
    INVALID_PARAMS = "invalid_params"
    INVALID_RATIO = "invalid_ratio"
    TAB_CLOSE_FAILED = "tab_close_failed"
    WORKSPACE_MOVE_FAILED = "workspace_move_failed"
    TAB_MOVE_FAILED = "tab_move_failed"
    PANE_LAYOUT_UNAVAILABLE = "pane_layout_unavailable"
    # agents
    AGENT_NOT_FOUND = "agent_not_found"
    AGENT_TARGET_AMBIGUOUS = "agent_target_ambiguous"
    AGENT_NOT_READY = "agent_not_ready"
    AGENT_NOT_IDLE = "agent_not_idle"
    EMPTY_AGENT_PROMPT = "empty_agent_prompt"
    AGENT_PROMPT_FAILED = "agent_prompt_failed"
    AGENT_SEND_KEYS_FAILED = "agent_send_keys_failed"
    AGENT_EXPLAIN_UNAVAILABLE = "agent_explain_unavailable"
    INVALID_AGENT = "invalid_agent"
    INVALID_AGENT_NAME = "invalid_agent_name"
    UNSUPPORTED_AGENT_KIND = "unsupported_agent_kind"
    INVALID_AGENT_ARGUMENT = "invalid_agent_argument"
    INVALID_AGENT_TIMEOUT = "invalid_agent_timeout"
    AGENT_PANE_NOT_FOUND = "agent_pane_not_found"
    AGENT_PANE_BUSY = "agent_pane_busy"
    AGENT_PANE_UNAVAILABLE = "agent_pane_unavailable"
    AGENT_START_INPUT_FAILED = "agent_start_input_failed"
    AGENT_NAME_TAKEN = "agent_name_taken"
    AGENT_LAUNCH_PENDING = "agent_launch_pending"
    INVALID_AGENT_VIEW = "invalid_agent_view"
    # metadata
    INVALID_METADATA_SOURCE = "invalid_metadata_source"
    INVALID_METADATA_TTL = "invalid_metadata_ttl"
    INVALID_METADATA_TOKEN = "invalid_metadata_token"
    INVALID_METADATA_REQUEST = "invalid_metadata_request"
    METADATA_TOKEN_LIMIT = "metadata_token_limit"
    METADATA_SEQUENCE_SOURCE_LIMIT = "metadata_sequence_source_limit"
    INVALID_STATE_LABEL = "invalid_state_label"
    # layouts, popups, integrations, misc
    LAYOUT_NOT_FOUND = "layout_not_found"
    LAYOUT_APPLY_FAILED = "layout_apply_failed"
    INVALID_LAYOUT = "invalid_layout"
    SPLIT_NOT_FOUND = "split_not_found"
    INVALID_TARGET = "invalid_target"
    INVALID_PANE_SWAP = "invalid_pane_swap"
    PANE_MOVE_FAILED = "pane_move_failed"
    TARGET_PANE_NOT_FOUND = "target_pane_not_found"
    POPUP_NOT_OPEN = "popup_not_open"
    INTEGRATION_INSTALL_FAILED = "integration_install_failed"
    INTEGRATION_UNINSTALL_FAILED = "integration_uninstall_failed"
    UI_BUSY = "ui_busy"
    CONFIRMATION_REQUIRED = "confirmation_required"
    SERIALIZATION_ERROR = "serialization_error"
    NOT_IMPLEMENTED = "not_implemented"
    PLATFORM_UNSUPPORTED = "platform_unsupported"
    INVALID_PLUGIN_ID = "invalid_plugin_id"
    INVALID_PLUGIN_ENTRYPOINT = "invalid_plugin_entrypoint"
    NOT_LINKED_WORKTREE = "not_linked_worktree"
    DIRTY_WORKTREE_REQUIRES_FORCE = "dirty_worktree_requires_force"
    STALE_WORKTREE_OPERATION = "stale_worktree_operation"
    # the codes below were read from herdrdev/herdr at tag v0.8.2 (9eb5214); the
    # protocol-22 releases keep them (issue 26). file:line of the first sender:
    # agents: src/app/api/agents.rs:85 (agent.prompt on an agent at a dialog)
    AGENT_BLOCKED = "agent_blocked"
    # pane graphics: src/app/api/pane_graphics.rs:110, 243, 341, 346
    INVALID_LAYER_ID = "invalid_layer_id"
    LAYER_LIMIT = "layer_limit"
    INVALID_FRAME_FILE = "invalid_frame_file"
    GRAPHICS_BUDGET_EXCEEDED = "graphics_budget_exceeded"
    # plugins: src/app/api/agent_view.rs:24, 27; src/app/api/plugins/mod.rs:80, 85, 96,
    # 353, 375; src/app/api/plugins/panes.rs:33
    PLUGIN_NOT_FOUND = "plugin_not_found"
    PLUGIN_DISABLED = "plugin_disabled"
    PLUGIN_USER_DIR_CREATE_FAILED = "plugin_user_dir_create_failed"
    PLUGIN_REGISTRY_SAVE_FAILED = "plugin_registry_save_failed"
    PLUGIN_REGISTRY_LOAD_FAILED = "plugin_registry_load_failed"
    PLUGIN_MANIFEST_UNAVAILABLE = "plugin_manifest_unavailable"
    PLUGIN_PANE_NOT_FOUND = "plugin_pane_not_found"
    PLUGIN_PANE_OPEN_FAILED = "plugin_pane_open_failed"
    # worktrees: src/app/api/worktrees.rs:59, 96, 124, 1140, 1153;
    # src/app/api/worktrees/deferred.rs:510
    WORKTREE_LIST_FAILED = "worktree_list_failed"
    WORKTREE_NOT_FOUND = "worktree_not_found"
    WORKTREE_OPEN_FAILED = "worktree_open_failed"
    WORKTREE_CREATE_FAILED = "worktree_create_failed"
    WORKTREE_OPERATION_IN_PROGRESS = "worktree_operation_in_progress"
    WORKTREE_REMOVE_FAILED = "worktree_remove_failed"
    # src/app/api/worktrees.rs:206, 292, 318@v0.8.2: create/open from a linked worktree
    LINKED_WORKTREE_SOURCE = "linked_worktree_source"
    # workspace moves: src/app/api/workspaces.rs:166
    WORKSPACE_MOVE_BLOCK_FAILED = "workspace_move_block_failed"
    # worktree groups (0.9.0-preview and later): workspace.close of a group's primary
    # without close_group; CHANGELOG.md:27@16996f3 (0.9.0, #2874)
    WORKSPACE_GROUP_CLOSE_REQUIRED = "workspace_group_close_required"
    # server: src/api/server.rs:980 (a socket-thread method reached the app)
    UNEXPECTED_DISPATCH = "unexpected_dispatch"
    # custom commands (protocol 22): src/app/commands.rs handle_command_invoke,
    # focus_client_shell_command_target (herdr 0.9.x, the search index's stored version)
    COMMAND_NOT_FOUND = "command_not_found"
    COMMAND_FAILED = "command_failed"
    COMMAND_TARGET_MISMATCH = "command_target_mismatch"
    # CLI only (printed by the herdr CLI, never sent on the socket; see CLI_ONLY_CODES):
    # src/cli.rs:479, 496, 522, 1122; src/cli/protocol_guard.rs:39;
    # src/cli/agent.rs:395, 587, 679
    INVALID_SESSION_NAME = "invalid_session_name"
    SESSION_STOP_FAILED = "session_stop_failed"
    SESSION_DELETE_FAILED = "session_delete_failed"
    SERVER_NOT_RUNNING = "server_not_running"
    PROTOCOL_MISMATCH = "protocol_mismatch"
    AGENT_START_FAILED = "agent_start_failed"
    AGENT_KIND_MISMATCH = "agent_kind_mismatch"
    AGENT_NAME_NOT_FOUND = "agent_name_not_found"


CLI_ONLY_CODES: frozenset[HerdrErrorCode] = frozenset(
    {
        HerdrErrorCode.INVALID_SESSION_NAME,
        HerdrErrorCode.SESSION_STOP_FAILED,
        HerdrErrorCode.SESSION_DELETE_FAILED,
        HerdrErrorCode.SERVER_NOT_RUNNING,
        HerdrErrorCode.PROTOCOL_MISMATCH,
        HerdrErrorCode.AGENT_START_FAILED,
        HerdrErrorCode.AGENT_KIND_MISMATCH,
        HerdrErrorCode.AGENT_NAME_NOT_FOUND,
    }
)
"""Codes herdr's CLI prints in its JSON error output; a server never answers them."""


NOT_MODELLED = HerdrErrorCode.NOT_IMPLEMENTED
"""The code the reference server answers for a method it does not model.

herdr itself uses ``not_implemented`` for its fallback match arm, so a client
that handles herdr's own "this build cannot do that" answer handles ours.
"""


class HerdrApiError(Exception):
    """The server answered a request with ``{"error": {code, message}}``.

    ``code`` is the raw wire string (compare it with :class:`HerdrErrorCode`
    values), ``message`` the server's text and ``id`` the id the answer
    carried (``""`` for a parse failure, ``<id>:sub:<n>:probe`` for a
    subscription probe failure).
    """

    def __init__(self, code: str, message: str, *, id: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.id = id

    def __repr__(self) -> str:
        return f"HerdrApiError({self.code!r}, {self.message!r}, id={self.id!r})"
