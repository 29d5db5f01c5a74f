"""desktop-control: shed-desktop's control socket, in both dialects, sans-IO.

Two real servers speak "the" protocol and disagree on the envelope:
:attr:`Dialect.MAC` (the Swift app: strict, int64 string ids, hyphenated
codes, 16 MiB cap, silent close past it) and :attr:`Dialect.TAURI` (the Rust
app: lenient, any id echoed, snake_case codes, 1 MiB cap, one id-less
``frame_too_large`` line past it). :class:`ServerConnection` and
:class:`ClientConnection` are the h11-style cores; :data:`CATALOGUE` is every
op as typed data; the pure rules (launch, argv, craze, gating, paths) are
plain functions.

The decisions taken where the digest is ambiguous or the versions differ are
in the documentation: ``docs/architecture/decisions/desktop.rst``.
"""

from __future__ import annotations

from ._bootstrap import BOOTSTRAP_BUDGET, BootstrapLedger, fingerprint_changed, require_consent
from ._catalogue import (
    CATALOGUE,
    Gate,
    OpShape,
    OpSpec,
    TauriTyping,
    catalogue_schemas,
    lookup,
    ops_for,
)
from ._codes import CodeFamily, DesktopCode, code_family, codes_match, normalize_code
from ._connection import (
    MAX_RESPONSE_BYTES,
    Answer,
    ClientConnection,
    ConnectionEnded,
    Failure,
    Reply,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    ServerEvent,
)
from ._craze import (
    CRAZE_TOO_OLD,
    IDEMPOTENCY_WINDOW,
    REQUEST_ID_PATTERN,
    CrazeAttempt,
    CrazeCreateRequest,
    CreateTicket,
    IdempotencyLedger,
    check_craze_host_id,
    craze_host,
    craze_not_installed,
    craze_refusals,
    mint_request_id,
    valid_request_id,
    validate_craze_create,
)
from ._dialect import MAC_FRAME_CAP, TAURI_FRAME_CAP, Dialect, encode_response
from ._envelope import (
    ANSWER_WITHOUT_ID,
    EnvelopeRejection,
    Request,
    Response,
    canonical_mac_id,
    parse_request,
    parse_response,
    render_error,
    render_ok,
    request_line,
)
from ._errors import DesktopError
from ._hooks import HOOK_NOT_INSTALLED, ROOST_WIRED_AGENTS, agent_hooks_reply, hooks_result
from ._inject import (
    INJECT_DEFAULT_KIND,
    LAUNCH_RECIPE_KINDS,
    ROOST_LIFECYCLES,
    ROOST_SOURCES,
    TAURI_RC_KINDS,
    inject_kind,
    parse_i64,
    rc_tab_id,
)
from ._lanes import (
    CRAZE_LANE,
    LANE_KINDS,
    LANE_RECONNECT_WAIT,
    LANE_VERB_DEADLINE,
    LANE_VERBS,
    lane_answer_lost,
    lane_error,
    lane_verb_wait,
    no_lane_stamp,
    no_open_lane,
    parse_lane_answer,
    parse_lane_setting,
    parse_send_mode,
    unsupported_lane,
)
from ._machines import RESERVED_MACHINE, NewMachine, read_machine_add
from ._opencode import (
    OPENCODE_LANE,
    OPENCODE_URL,
    opencode_segment,
    opencode_unreachable,
    opencode_verb_path,
)
from ._params import check_gate, decode_params, resolve_op, validate_request
from ._paths import (
    MOCK_UNREACHABLE_URL,
    audit_log_path,
    env_test_mode,
    mac_socket_path,
    mock_base_url_from_env,
    mock_unreachable_hosts,
    resolve_client_socket,
    server_socket_path,
    tauri_socket_path,
)
from ._rc import (
    MAC_RC_KINDS,
    MAC_TYPED_INPUT_KINDS,
    RC_KINDS,
    RC_STATES,
    classify_pane,
    is_safe_rc_value,
    normalize_rc_prompt,
)
from ._release import REMOVED_OPS, V0_0_14_OPS, Release, release_has_op
from ._roost_rows import (
    ROOST_CAPABILITY_KINDS,
    RoostTab,
    rfc3339_z,
    roost_activity,
    roost_capabilities,
    roost_row,
)
from ._rules import (
    DEFAULT_MAC_KIND,
    HostId,
    HostIdError,
    LaunchFields,
    LaunchPolicy,
    launch_fields,
    launch_target,
    parse_host_id,
    run_command,
    rust_debug,
    split_argv,
)
from ._state import AttemptState, ConnState, TicketState
from ._swift import swift_bad_enum, swift_index, swift_mismatch, swift_missing

__all__ = [
    # dialects and codes
    "Dialect",
    "MAC_FRAME_CAP",
    "TAURI_FRAME_CAP",
    "DesktopCode",
    "CodeFamily",
    "code_family",
    "codes_match",
    "normalize_code",
    "DesktopError",
    # envelope
    "ANSWER_WITHOUT_ID",
    "Request",
    "Response",
    "EnvelopeRejection",
    "canonical_mac_id",
    "encode_response",
    "parse_request",
    "parse_response",
    "render_ok",
    "render_error",
    "request_line",
    # connections
    "ServerConnection",
    "ClientConnection",
    "ServerEvent",
    "RequestReceived",
    "RequestRejected",
    "ConnectionEnded",
    "Answer",
    "Failure",
    "Reply",
    "ConnState",
    "MAX_RESPONSE_BYTES",
    # catalogue and params
    "CATALOGUE",
    "OpSpec",
    "OpShape",
    "Gate",
    "TauriTyping",
    "lookup",
    "ops_for",
    "catalogue_schemas",
    "resolve_op",
    "check_gate",
    "decode_params",
    "validate_request",
    # releases
    "Release",
    "REMOVED_OPS",
    "V0_0_14_OPS",
    "release_has_op",
    # v0.0.14 RC sessions
    "RC_KINDS",
    "RC_STATES",
    "MAC_RC_KINDS",
    "MAC_TYPED_INPUT_KINDS",
    "classify_pane",
    "is_safe_rc_value",
    "normalize_rc_prompt",
    # the newer Tauri app's RC kinds, rc.inject_test
    "TAURI_RC_KINDS",
    "ROOST_SOURCES",
    "INJECT_DEFAULT_KIND",
    "LAUNCH_RECIPE_KINDS",
    "ROOST_LIFECYCLES",
    "inject_kind",
    "parse_i64",
    "rc_tab_id",
    # rules
    "HostId",
    "HostIdError",
    "parse_host_id",
    "split_argv",
    "run_command",
    "rust_debug",
    "swift_bad_enum",
    "swift_index",
    "swift_mismatch",
    "swift_missing",
    "launch_target",
    "launch_fields",
    "LaunchFields",
    "LaunchPolicy",
    "DEFAULT_MAC_KIND",
    # craze
    "LANE_RECONNECT_WAIT",
    "LANE_VERB_DEADLINE",
    "LANE_VERBS",
    "lane_answer_lost",
    "lane_verb_wait",
    "lane_error",
    "CRAZE_LANE",
    "LANE_KINDS",
    "no_lane_stamp",
    "no_open_lane",
    "unsupported_lane",
    "parse_send_mode",
    "parse_lane_answer",
    "parse_lane_setting",
    "OPENCODE_LANE",
    "OPENCODE_URL",
    "opencode_segment",
    "opencode_unreachable",
    "opencode_verb_path",
    "RESERVED_MACHINE",
    "NewMachine",
    "read_machine_add",
    # roost rows (the newer Tauri app)
    "ROOST_CAPABILITY_KINDS",
    "RoostTab",
    "rfc3339_z",
    "roost_activity",
    "roost_capabilities",
    "roost_row",
    "BOOTSTRAP_BUDGET",
    "BootstrapLedger",
    "fingerprint_changed",
    "require_consent",
    "HOOK_NOT_INSTALLED",
    "ROOST_WIRED_AGENTS",
    "agent_hooks_reply",
    "hooks_result",
    "IDEMPOTENCY_WINDOW",
    "REQUEST_ID_PATTERN",
    "CrazeCreateRequest",
    "validate_craze_create",
    "craze_host",
    "check_craze_host_id",
    "craze_refusals",
    "craze_not_installed",
    "CRAZE_TOO_OLD",
    "mint_request_id",
    "valid_request_id",
    "IdempotencyLedger",
    "CrazeAttempt",
    "AttemptState",
    "CreateTicket",
    "TicketState",
    # paths and environment
    "MOCK_UNREACHABLE_URL",
    "mock_unreachable_hosts",
    "mac_socket_path",
    "audit_log_path",
    "tauri_socket_path",
    "server_socket_path",
    "resolve_client_socket",
    "env_test_mode",
    "mock_base_url_from_env",
]
