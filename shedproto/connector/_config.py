"""The agents-host configuration file: strict validation with the real messages.

:func:`parse_agents_host_config` takes an already-decoded JSON value and
returns an :class:`AgentsHostConfig`; :func:`load_agents_host_config_text`
parses JSONC text first. Checks run in the real program's order (object,
unknown fields, ``schema``, ``ownerDid``, ``sources`` shape,
``collectionIntervalMs``, each source in order, ``checkoutRoots``,
``commandProducers``, duplicate source ids, at least one enabled source) and
the first failure raises :class:`ConfigError` with the exact message.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

import msgspec

from shedproto import ErrorCode

from ._errors import ConfigError, ConfigFileError
from ._jsonc import JsoncSyntaxError, parse_jsonc
from ._text import has_control_character, js_trim

__all__ = [
    "AGENTS_HOST_CONFIG_SCHEMA",
    "CODEX_TRANSPORTS",
    "DEFAULT_COLLECTION_INTERVAL_MS",
    "DRIVERS",
    "MAX_COLLECTION_INTERVAL_MS",
    "AgentSourceConfig",
    "AgentsHostConfig",
    "CommandProducerConfig",
    "CodexTransport",
    "DriverName",
    "is_did",
    "is_producer_id",
    "load_agents_host_config_text",
    "parse_agents_host_config",
]

AGENTS_HOST_CONFIG_SCHEMA = "commonfabric.agents-host.config"
"""The configuration's one, unversioned schema string."""
DEFAULT_COLLECTION_INTERVAL_MS = 900_000
"""Fifteen minutes: the collection interval when the file does not name one."""
MAX_COLLECTION_INTERVAL_MS = 2_147_483_647
"""The largest accepted ``collectionIntervalMs`` (a 32-bit signed timer delay)."""

DriverName = Literal["claude-agent-sdk", "codex-app-server", "acp"]
"""The three supported source drivers."""
CodexTransport = Literal["stdio", "managed", "proxy"]
"""How a ``codex-app-server`` source reaches Codex."""
DRIVERS: tuple[DriverName, ...] = ("claude-agent-sdk", "codex-app-server", "acp")
"""Accepted ``driver`` values."""
CODEX_TRANSPORTS: tuple[CodexTransport, ...] = ("stdio", "managed", "proxy")
"""Accepted ``codexTransport`` values."""

_MAX_SAFE_INTEGER = 2**53 - 1
_DID = re.compile(r"did:[a-z0-9]+:(?:[A-Za-z0-9._%-]|:)*[A-Za-z0-9._%-]\Z")
_PRODUCER_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}\Z")

_TOP_FIELDS = frozenset(
    ("schema", "ownerDid", "collectionIntervalMs", "checkoutRoots", "commandProducers", "sources")
)
_SOURCE_FIELDS = frozenset(
    (
        "id",
        "driver",
        "enabled",
        "command",
        "cwd",
        "env",
        "configDir",
        "codexBin",
        "codexHome",
        "codexTransport",
        "codexSocket",
        "allowDangerFullAccess",
        "authMethod",
        "promptTimeoutMs",
    )
)
_PRODUCER_FIELDS = frozenset(("id", "piece"))


class AgentSourceConfig(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One normalised source: absent optional fields are ``None`` and omitted when encoded.

    Optional strings keep their untrimmed value; ``command`` elements too.
    """

    id: str
    driver: DriverName
    enabled: bool
    command: tuple[str, ...] | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    configDir: str | None = None  # noqa: N815 - wire name
    codexBin: str | None = None  # noqa: N815 - wire name
    codexHome: str | None = None  # noqa: N815 - wire name
    codexTransport: CodexTransport | None = None  # noqa: N815 - wire name
    codexSocket: str | None = None  # noqa: N815 - wire name
    allowDangerFullAccess: bool | None = None  # noqa: N815 - wire name
    # Reference-host extensions (ACP sources; the real parser rejects them):
    authMethod: str | None = None  # noqa: N815 - wire name
    promptTimeoutMs: int | None = None  # noqa: N815 - wire name


class CommandProducerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A deployed piece whose own queue the host reads commands from."""

    id: str
    piece: str


class AgentsHostConfig(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A validated configuration with defaults filled in.

    ``checkoutRoots`` and ``commandProducers`` are ``None`` (and omitted when
    encoded) when the file gave none or an empty array, as the real parser does.
    """

    schema: str
    ownerDid: str  # noqa: N815 - wire name
    collectionIntervalMs: int  # noqa: N815 - wire name
    checkoutRoots: tuple[str, ...] | None = None  # noqa: N815 - wire name
    commandProducers: tuple[CommandProducerConfig, ...] | None = None  # noqa: N815 - wire name
    sources: tuple[AgentSourceConfig, ...]

    @property
    def enabled_sources(self) -> tuple[AgentSourceConfig, ...]:
        """The sources the host starts, in file order."""
        return tuple(source for source in self.sources if source.enabled)


def is_did(value: object) -> bool:
    """Return whether ``value`` is a string in W3C DID syntax (``did:<method>:<id>``)."""
    return isinstance(value, str) and _DID.match(value) is not None


def is_producer_id(value: object) -> bool:
    """Return whether ``value`` is a command producer id: a lowercase token.

    A token starts with ``[a-z0-9]``, continues with ``[a-z0-9._-]`` and is at
    most 128 characters long (it names a queue file in a local store).
    """
    return isinstance(value, str) and _PRODUCER_ID.match(value) is not None


def _is_non_empty_string(value: object) -> bool:
    return isinstance(value, str) and js_trim(value) != ""


def _safe_integer(value: object) -> int | None:
    """Return ``value`` as an int if JavaScript's ``Number.isSafeInteger`` accepts it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        as_int = int(value)
        return as_int if -_MAX_SAFE_INTEGER <= as_int <= _MAX_SAFE_INTEGER else None
    return None


def _parse_source(index: int, value: object) -> AgentSourceConfig:  # noqa: PLR0915
    label = f"sources[{index}]"
    path = f"$.sources[{index}]"
    if not isinstance(value, dict):
        raise ConfigError(f"{label} must be an object", path=path)
    for key in value:
        if key not in _SOURCE_FIELDS:
            raise ConfigError(f"{label} has an unknown field: {key}", path=f"{path}.{key}")
    raw_id = value.get("id")
    if not _is_non_empty_string(raw_id):
        raise ConfigError(f"{label}.id must be a non-empty string", path=f"{path}.id")
    assert isinstance(raw_id, str)
    trimmed = js_trim(raw_id)
    if has_control_character(trimmed):
        raise ConfigError("sourceId must not contain control characters", path=f"{path}.id")
    normalized = trimmed.lower()
    if normalized != raw_id:
        raise ConfigError(
            f'{label}.id must already be normalized as "{normalized}"', path=f"{path}.id"
        )
    driver = value.get("driver")
    if driver not in DRIVERS:
        raise ConfigError(f"{label}.driver is not supported", path=f"{path}.driver")
    enabled = value.get("enabled")
    if not isinstance(enabled, bool):
        raise ConfigError(f"{label}.enabled must be a boolean", path=f"{path}.enabled")
    command: tuple[str, ...] | None = None
    if "command" in value:
        raw_command = value["command"]
        if not isinstance(raw_command, list) or not raw_command:
            raise ConfigError(
                f"{label}.command must be a non-empty string array", path=f"{path}.command"
            )
        for j, part in enumerate(raw_command):
            if not _is_non_empty_string(part):
                raise ConfigError(
                    f"{label}.command[{j}] must be a non-empty string", path=f"{path}.command[{j}]"
                )
        command = tuple(raw_command)
    if driver == "acp" and enabled and command is None:
        raise ConfigError(
            f"{label}.command is required for an enabled ACP source", path=f"{path}.command"
        )
    strings: dict[str, str] = {}
    for key in ("cwd", "configDir", "codexBin", "codexHome", "codexSocket", "authMethod"):
        if key in value:
            text = value[key]
            if not _is_non_empty_string(text):
                raise ConfigError(f"{label}.{key} must be a non-empty string", path=f"{path}.{key}")
            strings[key] = text
    env: dict[str, str] | None = None
    if "env" in value:
        raw_env = value["env"]
        if not isinstance(raw_env, dict):
            raise ConfigError(f"{label}.env must be an object", path=f"{path}.env")
        for name, setting in raw_env.items():
            if not isinstance(setting, str):
                raise ConfigError(f"{label}.env.{name} must be a string", path=f"{path}.env.{name}")
        env = dict(raw_env)
    transport = value.get("codexTransport")
    if "codexTransport" in value and transport not in CODEX_TRANSPORTS:
        raise ConfigError(f"{label}.codexTransport is not supported", path=f"{path}.codexTransport")
    danger = value.get("allowDangerFullAccess")
    if "allowDangerFullAccess" in value and not isinstance(danger, bool):
        raise ConfigError(
            f"{label}.allowDangerFullAccess must be a boolean",
            path=f"{path}.allowDangerFullAccess",
        )
    timeout: int | None = None
    if "promptTimeoutMs" in value:
        timeout = _safe_integer(value["promptTimeoutMs"])
        if timeout is None or not 0 < timeout <= MAX_COLLECTION_INTERVAL_MS:
            raise ConfigError(
                f"{label}.promptTimeoutMs must be a positive integer of milliseconds",
                path=f"{path}.promptTimeoutMs",
            )
    return AgentSourceConfig(
        id=raw_id,
        driver=driver,
        enabled=enabled,
        command=command,
        cwd=strings.get("cwd"),
        env=env,
        configDir=strings.get("configDir"),
        codexBin=strings.get("codexBin"),
        codexHome=strings.get("codexHome"),
        codexTransport=transport,
        codexSocket=strings.get("codexSocket"),
        allowDangerFullAccess=danger,
        authMethod=strings.get("authMethod"),
        promptTimeoutMs=timeout,
    )


def _parse_checkout_roots(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        raise ConfigError(
            "configuration.checkoutRoots must be a string array", path="$.checkoutRoots"
        )
    for i, root in enumerate(value):
        if not _is_non_empty_string(root):
            raise ConfigError(
                f"configuration.checkoutRoots[{i}] must be a non-empty string",
                path=f"$.checkoutRoots[{i}]",
            )
        assert isinstance(root, str)
        if not root.startswith("/"):
            raise ConfigError(
                f"configuration.checkoutRoots[{i}] must be an absolute path",
                path=f"$.checkoutRoots[{i}]",
            )
    if len(set(value)) != len(value):
        raise ConfigError(
            "configuration.checkoutRoots contains a duplicate path", path="$.checkoutRoots"
        )
    return tuple(value) or None


def _parse_command_producers(value: object) -> tuple[CommandProducerConfig, ...] | None:
    if not isinstance(value, list):
        raise ConfigError(
            "configuration.commandProducers must be an array", path="$.commandProducers"
        )
    producers: list[CommandProducerConfig] = []
    seen: set[str] = set()
    for i, entry in enumerate(value):
        label = f"configuration.commandProducers[{i}]"
        path = f"$.commandProducers[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{label} must be an object", path=path)
        for key in entry:
            if key not in _PRODUCER_FIELDS:
                raise ConfigError(f"{label} has an unknown field: {key}", path=f"{path}.{key}")
        producer_id = entry.get("id")
        if not is_producer_id(producer_id):
            raise ConfigError(f"{label}.id must be a lowercase token", path=f"{path}.id")
        assert isinstance(producer_id, str)
        piece = entry.get("piece")
        if not _is_non_empty_string(piece):
            raise ConfigError(f"{label}.piece must be a non-empty string", path=f"{path}.piece")
        assert isinstance(piece, str)
        if producer_id in seen:
            raise ConfigError(
                f"configuration has duplicate command producer id: {producer_id}", path=f"{path}.id"
            )
        seen.add(producer_id)
        producers.append(CommandProducerConfig(id=producer_id, piece=piece))
    return tuple(producers) or None


def parse_agents_host_config(value: Any) -> AgentsHostConfig:
    """Validate a decoded configuration value and return it normalised.

    Raises:
        ConfigError: the first failed check, with the real program's message
            and the JSON path of the offending value. Nothing is returned in
            part.

    """
    if not isinstance(value, dict):
        raise ConfigError("configuration must be an object", path="$")
    for key in value:
        if key not in _TOP_FIELDS:
            raise ConfigError(f"configuration has an unknown field: {key}", path=f"$.{key}")
    if value.get("schema") != AGENTS_HOST_CONFIG_SCHEMA:
        raise ConfigError(
            f'configuration.schema must be "{AGENTS_HOST_CONFIG_SCHEMA}"', path="$.schema"
        )
    owner = value.get("ownerDid")
    if not is_did(owner):
        raise ConfigError("configuration.ownerDid must be a DID", path="$.ownerDid")
    assert isinstance(owner, str)
    raw_sources = value.get("sources")
    if not isinstance(raw_sources, list) or not raw_sources:
        raise ConfigError("configuration.sources must be a non-empty array", path="$.sources")
    interval = DEFAULT_COLLECTION_INTERVAL_MS
    if "collectionIntervalMs" in value:
        parsed = _safe_integer(value["collectionIntervalMs"])
        if parsed is None or not 0 <= parsed <= MAX_COLLECTION_INTERVAL_MS:
            raise ConfigError(
                "configuration.collectionIntervalMs must be an integer from 0 through "
                f"{MAX_COLLECTION_INTERVAL_MS}",
                path="$.collectionIntervalMs",
            )
        interval = parsed
    sources = tuple(_parse_source(i, source) for i, source in enumerate(raw_sources))
    roots = _parse_checkout_roots(value["checkoutRoots"]) if "checkoutRoots" in value else None
    producers = (
        _parse_command_producers(value["commandProducers"]) if "commandProducers" in value else None
    )
    seen: set[str] = set()
    for i, source in enumerate(sources):
        if source.id in seen:
            raise ConfigError(
                f"configuration has duplicate source id: {source.id}", path=f"$.sources[{i}].id"
            )
        seen.add(source.id)
    if not any(source.enabled for source in sources):
        raise ConfigError("configuration must enable at least one source", path="$.sources")
    return AgentsHostConfig(
        schema=AGENTS_HOST_CONFIG_SCHEMA,
        ownerDid=owner,
        collectionIntervalMs=interval,
        checkoutRoots=roots,
        commandProducers=producers,
        sources=sources,
    )


def load_agents_host_config_text(data: bytes | str, path: str) -> AgentsHostConfig:
    """Parse JSONC ``data`` read from ``path`` and validate it.

    Bytes are decoded as UTF-8 with replacement characters, as Deno's
    ``readTextFile`` does; ``path`` only appears in the syntax-error message.

    Raises:
        ConfigFileError: ``configuration file is not valid JSONC: <path>``
            (``MALFORMED_FRAME``), the spec's exact line, then a second line
            ``line L, column C: <what>``.
        ConfigError: the value failed validation.

    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        value = parse_jsonc(text)
    except JsoncSyntaxError as exc:
        raise ConfigFileError(
            ErrorCode.MALFORMED_FRAME, f"configuration file is not valid JSONC: {path}\n{exc}"
        ) from None
    return parse_agents_host_config(value)
