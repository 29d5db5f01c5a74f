"""The Common Fabric agents-host connector core: config, CLI options, commands, receipts, ledger.

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

The decisions taken where the spec is ambiguous or versions differ are in the
documentation: ``docs/architecture/decisions/connector.rst``.
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
