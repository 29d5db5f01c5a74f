r"""desktop-control: shed-desktop's control socket, in both dialects, sans-IO.

Two real servers speak "the" protocol and disagree on the envelope:
:attr:`Dialect.MAC` (the Swift app: strict, int64 string ids, hyphenated
codes, 16 MiB cap, silent close past it) and :attr:`Dialect.TAURI` (the Rust
app: lenient, any id echoed, snake_case codes, 1 MiB cap, one id-less
``frame_too_large`` line past it). :class:`ServerConnection` and
:class:`ClientConnection` are the h11-style cores; :data:`CATALOGUE` is every
op as typed data; the pure rules (launch, argv, craze, gating, paths) are
plain functions.

Decisions where the digest is ambiguous or the versions differ:

* **Launch extras.** Tauri launch doors follow the current Tauri code
  (2cd01ef): ``display_name``/``permission_mode``/``initial_prompt`` are read
  as optional strings and ignored; :attr:`LaunchPolicy.REFUSE_EXTRAS` (the
  newest ipc.md text, with its exact refusal messages) is available. The mac
  dialect keeps the mac app's rules: ``kind`` defaults to ``claude``,
  ``permission_mode`` is ``unknown-field``, ``initial_prompt`` is trimmed and
  refused (``invalid-param``) with a control character, over 2000 UTF-8 bytes
  or for ``claude-broker``. The mac messages were not recovered upstream;
  ours are our own.
* **Messages.** mac envelope failures are ``envelope decode failed: `` plus
  the Swift ``DecodingError`` description in its classic Foundation form
  (newer Foundation words some differently; invalid JSON carries no
  underlying NSError text); a bad id is ``id: not a valid int64: <raw>``
  exactly. mac ``invalid-param`` messages are the same descriptions for the
  params struct (fields checked in declaration order; nested shapes fall back
  to msgspec's wording). Tauri's bad-JSON text is msgspec's, not serde's
  (the code and the missing ``id`` are exact); serde-typed Tauri params
  use serde's phrasing (``missing field `id```, ``unknown variant ...``).
  Tauri's blank ``command`` message contains ``'command'``. Branch on codes.
* **mac nested key order** is a Swift ``Dictionary``'s (unspecified, it varies
  between runs); ours is declaration order. The envelope's own order
  (``id, ok, result|error``) is exact.
* **mac key order and escaping.** mac answers write ``id, ok, result|error``
  and escape ``/`` as ``\/`` (Swift ``JSONEncoder``); Tauri answers sort
  every object's keys (``serde_json`` without ``preserve_order``).
* **Tauri ids** are re-encoded from the parsed value (as serde does), so
  ``1e2`` echoes ``100.0``; integers beyond 64 bits stay exact (serde would
  round them to a float).
* **Tauri lines** are decoded lossily, trimmed as Rust's ``str::trim``
  does (Unicode White_Space) and skipped when nothing is left, as upstream.
* **JSON nesting too deep to decode** is a bad-JSON answer in both dialects
  (serde stops at depth 128, msgspec at Python's recursion limit).
* **Tauri ``terminal.open``** checks its ``machine`` refusal before its
  refused-in-test-mode gate; every other gate precedes params (mac too).
* **craze.create ``cwd``** is required (the doc treats it so) and must be
  absolute. A caller's ``request_id`` is used verbatim; none mints
  ``shed-<hex>`` from caller-supplied entropy.
* **The target grammar** follows ``HostId::parse`` as read upstream: any
  bare word (colons and spaces included) is a machine name, verbatim; the
  messages quote the trimmed input as Rust's ``{:?}`` does.
* **Client socket resolution** without a dialect: ``SHED_DESKTOP_SOCKET``,
  then ``SHED_TAURI_SOCKET``, then the mac default on ``darwin`` and the
  Tauri order elsewhere.
* **Client framing** accepts response lines up to 256 MiB (screenshots are
  multi-MB base64); a reply with no ``id`` belongs to the oldest request.
* **One-pass requests.** :class:`ServerConnection` decodes a well-formed
  request to an ungated op in one msgspec pass (a tagged union on ``op`` whose
  members carry the op's params Struct); everything else takes the general
  path, which words every refusal. A differential test pins that both answer
  alike. Such a request carries ``raw_params=None`` (nothing was dropped);
  the launch doors, whose rules read the raw params, always take the general
  path (:attr:`OpShape.reads_raw`).
* **Typed results** follow the digest where it gives a shape and the Tauri
  code where the digest says "various": ``prefs.get`` is ``{terminal_preset,
  terminal_template}``, ``prefs.provider_modes`` the bare ``{namespace:
  decision}`` map, ``prefs.dump`` ``{visible, title, prefs}`` (``prefs`` the
  frontend's own snapshot, left open), launch doors answer a
  :class:`~._ops.SessionRow`, ``roost.bootstrap`` a
  :class:`~._ops.RoostBootstrapResult`, ``updater.check`` ``{}``. Only
  ``broker.status`` and ``updater.status`` stay open objects: neither the
  digest nor the code we read fixes their fields.
* **roost.bootstrap** (:class:`BootstrapLedger`): one run per host (origin)
  at a time, a second is ``action_failed`` "… is already running (started N s
  ago)"; a run past the 600 s budget is ``action_failed`` "… did not finish
  within 600 s". The codes follow the digest; the words are ours (the real
  messages were not recovered). The budget counts from the start of the
  install, after the consent and target checks.
* **Agent lanes** (:func:`lane_verb_wait`, :func:`lane_answer_lost`): a
  verb on a reconnecting lane waits up to 10 s, then is ``unavailable``
  (never sent); a verb whose answer is lost (a drop, or no answer within
  30 s) is ``outcome_unknown`` (it may have run, never resent). Codes per the
  contract, words ours. The ``lane-event`` stream is a webview event, not
  socket traffic (the socket has no push), so socket clients see a lane only
  through ``lane.messages``: ``stale`` (the reason it is not live),
  ``ended``, ``generation``, ``capabilities``/``settings`` (``null`` until
  seeded).
* **Mock-only environment.** ``SHED_*_MOCK_UNREACHABLE_HOSTS`` is read only in
  test mode (:func:`mock_unreachable_hosts`), comma-separated, trimmed. The
  other seams the digest lists (``SHED_DESKTOP_MOCK_CREDENTIAL_HOSTS``,
  ``SHED_TAURI_CRAZE_PATH``, ``SHED_TAURI_MACHINE_HUB_PORTS``,
  ``SHED_TAURI_SSH_BIN``) are not modelled: the digest names them without
  saying what a socket client would observe.
"""

from __future__ import annotations

from ._bootstrap import BOOTSTRAP_BUDGET, BootstrapLedger, require_consent
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
    IDEMPOTENCY_WINDOW,
    REQUEST_ID_PATTERN,
    CrazeAttempt,
    CrazeCreateRequest,
    CreateTicket,
    IdempotencyLedger,
    craze_host,
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
from ._lanes import (
    LANE_RECONNECT_WAIT,
    LANE_VERB_DEADLINE,
    LANE_VERBS,
    lane_answer_lost,
    lane_verb_wait,
)
from ._params import check_gate, decode_params, resolve_op, validate_request
from ._paths import (
    MOCK_UNREACHABLE_URL,
    env_test_mode,
    mac_socket_path,
    mock_base_url_from_env,
    mock_unreachable_hosts,
    resolve_client_socket,
    server_socket_path,
    tauri_socket_path,
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
    # rules
    "HostId",
    "HostIdError",
    "parse_host_id",
    "split_argv",
    "run_command",
    "rust_debug",
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
    "BOOTSTRAP_BUDGET",
    "BootstrapLedger",
    "require_consent",
    "IDEMPOTENCY_WINDOW",
    "REQUEST_ID_PATTERN",
    "CrazeCreateRequest",
    "validate_craze_create",
    "craze_host",
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
    "tauri_socket_path",
    "server_socket_path",
    "resolve_client_socket",
    "env_test_mode",
    "mock_base_url_from_env",
]
