"""herdr's wire error codes and the exception a client raises for an error answer."""

from __future__ import annotations

from enum import Enum

__all__ = ["HerdrApiError", "HerdrErrorCode", "NOT_MODELLED"]


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
