r"""The Common Fabric agents-host connector core: config, CLI options, commands, receipts, ledger.

Everything here is pure: values and bytes in, typed results and exact bytes
out. The file-level parts (durable ledger writes, process locks) live in
:mod:`shedproto.servers.connector` and use the decisions made here.

* **Configuration** -- :func:`load_agents_host_config_text` (JSONC) and
  :func:`parse_agents_host_config` return an :class:`AgentsHostConfig` or
  raise :class:`ConfigError` with the real program's message.
* **Command line** -- :func:`parse_agents_host_cli_options`.
* **Commands** -- :func:`decode_command` turns a queue element (object or JSON
  string) into a :class:`Command` or an :class:`InvalidCommand`;
  :func:`parse_command_payload` checks the payload after the claim.
* **Receipts** -- :class:`Receipt`, :func:`parse_command_receipt`, the worker's
  receipt builders and the bounded receipt index.
* **Health**, **session index** shapes, the **target identity** and its
  directories, and the **command ledger** state (:class:`LedgerState`).

Decisions where the spec is ambiguous or versions differ
--------------------------------------------------------

* Newest behaviour wins: unversioned schema strings, ``ownerDid`` on the
  config, commands and receipts, ``commandProducers``, the ``start`` command.
* ``ownerDid`` (config) must be W3C DID syntax, untrimmed; any failure reads
  ``configuration.ownerDid must be a DID`` (the only message seen upstream).
* ``commandProducers`` messages were not seen upstream and follow the file's
  style: ``configuration.commandProducers must be an array``,
  ``configuration.commandProducers[<i>] must be an object``, ``... has an
  unknown field: <key>``, ``...[<i>].id must be a lowercase token``
  (``[a-z0-9][a-z0-9._-]*``, at most 128 characters, so ``_owner`` can never
  clash), ``...[<i>].piece must be a non-empty string`` and
  ``configuration has duplicate command producer id: <id>``. They are
  checked after ``checkoutRoots`` and before duplicate source ids.
* Source ids must already be trimmed and lowercase (README): ``" codex "``
  fails with ``sources[0].id must already be normalized as "codex"``. An id
  that is empty or not a string gives ``sources[<i>].id must be a non-empty
  string``; a control character gives the shared helper's message
  ``sourceId must not contain control characters``.
* Within a source the checks run in field-table order, the ACP ``command``
  requirement right after ``command``. ``checkoutRoots`` entries must start
  with ``/`` (POSIX absolute). Output field order is the spec's table order.
* JSONC: trailing commas are accepted (``@std/jsonc`` does), a leading BOM is
  ignored, invalid UTF-8 is replaced (Deno's ``readTextFile``). Escaped lone
  surrogates, which msgspec refuses, are accepted as ``JSON.parse`` does.
* Numbers follow JavaScript: ``1e3`` and ``5.0`` are integers.
* Commands: ``ownerDid`` must be a non-empty string (checked last, after
  ``createdAt``: ``ownerDid must be a non-empty string``); equality with the
  host's owner is the separate :func:`check_command_owner`, reason
  ``command belongs to another owner: <id>``. ``command JSON is invalid:``
  carries msgspec's text after ``SyntaxError:`` (V8's wording cannot be
  reproduced). A JSON string that decodes to another string is decoded again,
  as the real recursive parser does. A lone surrogate in an id reports
  ``URI malformed`` (``encodeURIComponent`` throws).
* ``start`` payload labels (not seen upstream): ``start text`` (<= 128 KiB),
  ``start cwd``, ``start title`` (<= 512), ``start mode`` (<= 128) and
  ``start surface is not supported``. A null optional field counts as
  absent. ``set-config-option`` without ``value`` passes ``None``.
* Lengths are JavaScript lengths (UTF-16 code units); trimming is
  JavaScript's ``trim``; lowercasing is :meth:`str.lower` (equal to
  ``toLowerCase`` except for a few context-sensitive letters).
* Receipts carry ``ownerDid`` (required, ``<context> ownerDid must be a
  string: <id>``) and ``producer`` (optional, must be a producer token,
  ``<context> producer is invalid: <id>``). A wrong owner reads
  ``<context> belongs to another owner: <id>``. As in the real code the
  timestamp and ``providerOperationId`` messages carry no ``: <id>`` suffix.
  ``result: {}`` is kept (an empty object is truthy in JavaScript).
* Command identity: the ledger keys receipts by ``command_identity`` --
  the command id for the owner's queue, ``producer + "\x00" + id`` for a
  producer's queue -- so two queues may reuse an id. ``result`` is stored as
  a plain JSON object, not an ``fvj1:`` string; integral floats are written
  as integers, as JavaScript prints them.
* Key order uses ``localeCompare`` (ICU root collation): exact for printable
  ASCII, approximate beyond; JavaScript's array-index keys come first.
* The receipt index link is ``{id, space, path}``; a local store may put its
  relative path in ``id``. Its validation messages were not seen upstream and
  are this library's.
* Session index rows, sources and checkouts are sorted in ``localeCompare``
  order too.
* The API URL origin follows WHATWG for special schemes, IPv4/IPv6 and
  non-special authorities; non-ASCII hosts use Python's IDNA 2003 codec, not
  UTS 46 (they differ only for exotic labels).
* Lock directory on Windows: ``LOCALAPPDATA ?? TEMP ?? TMP``, the first one
  set is used even if blank (then the error), exactly as upstream.
"""

from __future__ import annotations

from ._cli_options import USAGE, AgentsHostCliOptions, HelpRequested, parse_agents_host_cli_options
from ._collation import locale_sort_key, locale_sorted
from ._commands import (
    COMMAND_SCHEMA,
    COMMAND_TYPES,
    MAX_PROMPT_TEXT,
    CancelPayload,
    Command,
    CommandPayload,
    CommandType,
    InvalidCommand,
    InvalidCommandReason,
    PayloadError,
    PromptPayload,
    RenamePayload,
    SetConfigOptionPayload,
    SetModePayload,
    StartPayload,
    StartSurface,
    check_command_owner,
    decode_command,
    parse_command_payload,
)
from ._config import (
    AGENTS_HOST_CONFIG_SCHEMA,
    CODEX_TRANSPORTS,
    DEFAULT_COLLECTION_INTERVAL_MS,
    DRIVERS,
    MAX_COLLECTION_INTERVAL_MS,
    AgentsHostConfig,
    AgentSourceConfig,
    CodexTransport,
    CommandProducerConfig,
    DriverName,
    is_did,
    is_producer_id,
    load_agents_host_config_text,
    parse_agents_host_config,
)
from ._errors import (
    CliOptionsError,
    ConfigError,
    ConfigFileError,
    LedgerError,
    LedgerExhaustedError,
    ReceiptError,
    ReceiptIndexError,
    TargetError,
)
from ._health import (
    ACTIVITY_LIMIT,
    HEALTH_SCHEMA,
    NO_CAPABILITIES,
    ActivityEntry,
    ActivityLog,
    Capabilities,
    CommandProcessingHealth,
    Health,
    HealthTarget,
    HostStatus,
    ProducerTarget,
    SourceError,
    SourceHealth,
    SourceStatus,
    SyncHealth,
    SyncStatus,
    TargetCells,
    host_status_after_collection,
    receipt_activity_details,
    source_health,
)
from ._identity import (
    IdentityError,
    command_identity,
    normalize_command_id,
    normalize_native_session_id,
    normalize_source_id,
    session_key,
    split_command_identity,
)
from ._jsonc import JsoncSyntaxError, jsonc_to_json, parse_jsonc
from ._ledger import LEDGER_SCHEMA, MAX_SAFE_INTEGER, LedgerState, parse_ledger, parse_ledger_value
from ._private import PathKind, private_path_problem
from ._receipts import (
    RECEIPT_INDEX_LIMIT,
    RECEIPT_INDEX_SCHEMA,
    RECEIPT_SCHEMA,
    RECEIPT_STATUSES,
    TERMINAL_STATUSES,
    LinkFor,
    Receipt,
    ReceiptErrorInfo,
    ReceiptIndex,
    ReceiptIndexRow,
    ReceiptLink,
    ReceiptStatus,
    claim_publish_failed,
    extend_receipt_index,
    in_flight_receipt,
    js_number_values,
    orphaned_in_flight,
    orphaned_shared_claim,
    parse_command_receipt,
    parse_receipt_index,
    provider_call_failed,
    receipt_index_tail_valid,
    source_unavailable,
    terminal_receipt,
    update_receipt_index,
)
from ._schemas import connector_schemas
from ._session_index import (
    SESSION_INDEX_SCHEMA,
    Checkout,
    GitRemote,
    IndexBucket,
    IndexEntry,
    IndexSource,
    MessageRole,
    NormalizedMessage,
    SessionIndex,
    SyncState,
    build_session_index,
    check_index_entry,
)
from ._target import (
    TargetIdentity,
    ledger_lock_path,
    ledger_path,
    lock_directory,
    parse_api_url,
    state_directory,
    target_key,
    target_lock_path,
)
from ._text import encode_uri_component, has_control_character, js_length, js_trim
from ._timestamps import is_iso_timestamp, iso_from_epoch_ms, iso_from_seconds
from ._url import InvalidUrlError, origin_href

__all__ = [
    # configuration
    "AGENTS_HOST_CONFIG_SCHEMA",
    "CODEX_TRANSPORTS",
    "DEFAULT_COLLECTION_INTERVAL_MS",
    "DRIVERS",
    "MAX_COLLECTION_INTERVAL_MS",
    "AgentSourceConfig",
    "AgentsHostConfig",
    "CodexTransport",
    "CommandProducerConfig",
    "DriverName",
    "is_did",
    "is_producer_id",
    "load_agents_host_config_text",
    "parse_agents_host_config",
    "JsoncSyntaxError",
    "jsonc_to_json",
    "parse_jsonc",
    # command line
    "USAGE",
    "AgentsHostCliOptions",
    "HelpRequested",
    "parse_agents_host_cli_options",
    # commands
    "COMMAND_SCHEMA",
    "COMMAND_TYPES",
    "MAX_PROMPT_TEXT",
    "Command",
    "CommandType",
    "InvalidCommand",
    "InvalidCommandReason",
    "decode_command",
    "check_command_owner",
    "CommandPayload",
    "PayloadError",
    "PromptPayload",
    "StartPayload",
    "StartSurface",
    "CancelPayload",
    "RenamePayload",
    "SetModePayload",
    "SetConfigOptionPayload",
    "parse_command_payload",
    # identities
    "IdentityError",
    "command_identity",
    "split_command_identity",
    "normalize_command_id",
    "normalize_native_session_id",
    "normalize_source_id",
    "session_key",
    # receipts
    "RECEIPT_SCHEMA",
    "RECEIPT_STATUSES",
    "TERMINAL_STATUSES",
    "Receipt",
    "ReceiptErrorInfo",
    "ReceiptStatus",
    "parse_command_receipt",
    "in_flight_receipt",
    "terminal_receipt",
    "claim_publish_failed",
    "source_unavailable",
    "provider_call_failed",
    "orphaned_in_flight",
    "orphaned_shared_claim",
    "js_number_values",
    "RECEIPT_INDEX_LIMIT",
    "RECEIPT_INDEX_SCHEMA",
    "ReceiptIndex",
    "ReceiptIndexRow",
    "ReceiptLink",
    "LinkFor",
    "parse_receipt_index",
    "update_receipt_index",
    "extend_receipt_index",
    "receipt_index_tail_valid",
    # health
    "ACTIVITY_LIMIT",
    "HEALTH_SCHEMA",
    "NO_CAPABILITIES",
    "ActivityEntry",
    "ActivityLog",
    "Capabilities",
    "CommandProcessingHealth",
    "Health",
    "HealthTarget",
    "HostStatus",
    "ProducerTarget",
    "SourceError",
    "SourceHealth",
    "SourceStatus",
    "SyncHealth",
    "SyncStatus",
    "TargetCells",
    "host_status_after_collection",
    "receipt_activity_details",
    "source_health",
    # session index
    "SESSION_INDEX_SCHEMA",
    "Checkout",
    "GitRemote",
    "IndexBucket",
    "IndexEntry",
    "IndexSource",
    "MessageRole",
    "NormalizedMessage",
    "SessionIndex",
    "SyncState",
    "build_session_index",
    "check_index_entry",
    # target
    "TargetIdentity",
    "parse_api_url",
    "target_key",
    "state_directory",
    "lock_directory",
    "ledger_path",
    "ledger_lock_path",
    "target_lock_path",
    "InvalidUrlError",
    "origin_href",
    # ledger
    "LEDGER_SCHEMA",
    "MAX_SAFE_INTEGER",
    "LedgerState",
    "parse_ledger",
    "parse_ledger_value",
    "PathKind",
    "private_path_problem",
    # errors
    "CliOptionsError",
    "ConfigError",
    "ConfigFileError",
    "LedgerError",
    "LedgerExhaustedError",
    "ReceiptError",
    "ReceiptIndexError",
    "TargetError",
    # text and time
    "encode_uri_component",
    "has_control_character",
    "js_length",
    "js_trim",
    "is_iso_timestamp",
    "iso_from_epoch_ms",
    "iso_from_seconds",
    "locale_sort_key",
    "locale_sorted",
    # schemas
    "connector_schemas",
]
