r"""herdr's JSON socket API (protocols 20 and 21), sans-IO.

herdr serves newline-delimited JSON on ``<config_dir>/herdr.sock``, one request
per connection: the client writes ``{"id", "method", "params"}``, reads one
answer line, and the server closes. ``events.subscribe`` answers with an
acknowledgement and then streams event lines until the client closes or
writes anything.

* :mod:`shedproto.herdr.types` holds a type for every schema ``$def``,
  generated from herdr's published schemas
  (``python -m shedproto.clients.herdr.codegen SCHEMA...``).
* :class:`ClientConnection` / :class:`ServerConnection` are the two sides of
  one connection; :func:`make_request` builds typed requests.
* :func:`api_socket_path`, :func:`config_dir` and friends resolve socket
  paths exactly as herdr does, from an environment mapping you pass in.
* :func:`check_exact` is herdr's exact-equality version rule and
  :func:`check_methods` the looser per-method check.

Decisions where the digest leaves room or the versions differ:

1. **Names.** Wire names are the dotted ones (``workspace.create``); the Rust
   identifiers of the seed article (``WorkspaceCreate``, ``RuntimeStatus``) are
   not methods. ``RuntimeStatus`` is :class:`~shedproto.herdr.types.PongReply`.
   Generated Struct names: ``<Method>Request``, ``<Tag>Reply`` for result
   members (``PongReply``; ``Result`` is taken by schema defs such as
   ``PaneReadResult``), ``<Kind>EventData``, ``<Kind>Subscription``,
   ``<Kind>EventMatch``.
2. **Versions.** Protocol 21 types have plain names; where protocol 20
   differs (``workspace.close`` params, graphics params, integration targets,
   ``pane_graphics_info``) the 20 twin is suffixed ``P20``. Both protocols
   have all 91 methods; protocol numbers outside 20/21 raise
   :class:`VersionMismatchError` rather than guessing shapes.
3. **Omission.** Optional fields without a schema default are omitted when
   empty; fields with a schema default are always written (serde with
   ``#[serde(default)]`` and no ``skip_serializing_if``), so ``pong`` carries
   ``"capabilities": null`` when absent, as herdr writes it. Field order is
   herdr's Rust declaration order for the types herdr writes.
4. **Parse failures** answer ``invalid_request`` with id ``""`` and the
   message ``invalid request: <reason>``; the reason is msgspec's text, not
   serde's (byte-identical serde messages are not reproducible). An unknown
   method is :data:`~shedproto.ErrorCode.UNKNOWN_TYPE` locally, still
   ``invalid_request`` on the wire (herdr has no ``method_not_found``).
5. **Silent closes.** A line over 1 MiB, invalid UTF-8, a blank line, or no
   complete line within 5 s close the connection without an answer;
   :class:`ServerConnection` raises with no ``reply_hint`` for them. End of
   stream before the newline is :class:`ConnectionClosed` (herdr drops such
   a request), not an error.
6. **Holding methods.** Bytes after the request line (even in the same
   packet) or a half-close end an ``events.subscribe`` stream and drop the
   answer of ``events.wait``/``agent.wait``/``agent.prompt``/
   ``pane.wait_for_output`` (:class:`ClientGone`); for every other method
   herdr never reads them and the core ignores them. herdr only notices them
   when it probes the socket (before every stream round and event line, and
   before every wait poll), so what it writes before its first probe still
   goes out: a subscription's probe error or its ``subscription_started``
   acknowledgement (then the stream ends with no event), a wait's
   validation error (``invalid_regex``, ``agent_not_found``, ...) or a status
   that already matches. The server state ``LEAVING`` allows exactly that
   one answer.
7. **Validation depth.** Integer ranges and string patterns (``PopupSize``'s
   ``"80%"``) of the schema are enforced while decoding, as serde rejects
   them while parsing; token-map key patterns and sizes are not, because
   herdr checks those in its app layer with their own error codes.
8. **Paths.** An empty ``HERDR_SOCKET_PATH`` counts as set (as in herdr); an
   explicit session ``default`` means the default session; invalid
   ``HERDR_SESSION`` values are ignored (``active_name()``).
9. **Keys** are encoded with herdr's legacy (non-Kitty) keyboard encoding:
   what a shell pane receives.
10. **Pane reads** follow herdr's terminal reads (libghostty there, pyte in
    the reference server; see :mod:`shedproto.servers.herdr._screen`). Rows
    lose trailing whitespace, trailing blank rows are dropped, and every row
    ends with ``\n`` (an empty read is ``""``). ``visible`` is the screen;
    with ``lines`` it keeps the last ``lines`` lines (``truncated`` when some
    were left out). ``recent`` reads ``lines`` rows (default 80) ending at the
    lower of the cursor row and the last non-blank row, reaching into
    scrollback; on the alternate screen it reads that screen only.
    ``recent_unwrapped`` reads the same rows but joins soft-wrapped ones into
    logical lines (the same trailing ``\n`` rule; upstream's unwrapped text
    formatter was not visible, so this is the chosen reading). ``recent*``
    are ``truncated`` whenever the terminal holds more rows than ``lines``
    (herdr compares row counts, blank rows included). ``detection`` is
    ``recent`` over one screen of rows and is always text, also for
    ``format: "ansi"``. ``strip_ansi`` has no effect.
11. **Bracketed paste.** ``pane.send_input`` wraps non-empty ``text`` in
    ``ESC[200~`` … ``ESC[201~`` when the pane's program enabled DECSET 2004,
    then sends the keys (validated before anything is written);
    ``agent.start`` and ``agent.prompt`` type their text the same way and
    send Enter separately after a short delay; ``pane.send_text`` is always
    verbatim.
"""

from __future__ import annotations

from . import types
from ._agents import (
    AGENT_NAME_PATTERN,
    AGENT_TIMEOUT_MAX_MS,
    AGENT_TIMEOUT_MIN_MS,
    agent_name_error,
    agent_start_error,
)
from ._codes import NOT_MODELLED, HerdrApiError, HerdrErrorCode
from ._connection import (
    HOLDING_METHODS,
    MAX_REQUEST_BYTES,
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
from ._screen import DEFAULT_RECENT_LINES, MAX_READ_LINES, split_lines, strip_ansi
from ._state import TRANSITIONS, Role, State
from ._subscriptions import (
    EVENTS_LOST,
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
    GitWorktree,
    branch_slug,
    default_checkout_path,
    generated_branch,
    is_dirty_remove_error,
    parse_worktree_list,
)

__all__ = [
    "types",
    # connections
    "ClientConnection",
    "ServerConnection",
    "ClientGone",
    "ConnectionClosed",
    "RawRequest",
    "make_request",
    "HOLDING_METHODS",
    "MAX_REQUEST_BYTES",
    "REQUEST_TIMEOUT",
    "State",
    "Role",
    "TRANSITIONS",
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
    "agent_name_error",
    "agent_start_error",
    # worktrees
    "GitWorktree",
    "branch_slug",
    "default_checkout_path",
    "generated_branch",
    "is_dirty_remove_error",
    "parse_worktree_list",
    # pane reads
    "MAX_READ_LINES",
    "DEFAULT_RECENT_LINES",
    "split_lines",
    "strip_ansi",
]
