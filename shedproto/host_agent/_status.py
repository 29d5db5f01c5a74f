"""LiveStatus (schema 1): the status socket's one JSON object, built, encoded and decoded.

Encoding is exact: key order as the real struct, ``policies`` keys sorted,
``gate_namespaces`` omitted when empty, ``client_name``/``client_version``/
``rc_hub.addr``/``last_error`` omitted when empty, ``servers`` always a list,
``since`` always present. Decoding is lenient: unknown keys are ignored and a
missing block gets its zero value (a missing ``rc_hub`` decodes as
``{"state": ""}``, the mark of an older daemon). ``schema`` other than 1 is a
:class:`StatusSchemaError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from shedproto import ErrorCode, LenientFrame, RemoteProtocolError, decode_frame, decoder_for

from ._constants import GATED_NAMESPACES, POLICY_DENY_ALL, POLICY_SHED_DESKTOP, STATUS_SCHEMA
from .types import _always

__all__ = [
    "ApprovalChannelStatus",
    "LiveStatus",
    "NamespaceHealth",
    "RcHubStatus",
    "ServerHealth",
    "StatusSchemaError",
    "build_live_status",
    "decode_live_status",
    "effective_policy",
    "encode_live_status",
    "gate_namespaces",
    "has_live_status_fields",
    "pretty_live_status",
]


def _no_policies() -> dict[str, str]:
    return {}


class _Status(LenientFrame, frozen=True, kw_only=True, omit_defaults=True):
    pass


class ApprovalChannelStatus(_Status, frozen=True, kw_only=True):
    """The approval socket and its current consumer (name/version omitted when empty)."""

    socket_path: str = _always("")
    consumer_connected: bool = _always(False)
    client_name: str = ""
    client_version: str = ""


class RcHubStatus(_Status, frozen=True, kw_only=True):
    """The RC hub role: ``state`` ``listening``, ``deferred``, ``disabled`` (``""``: unknown)."""

    state: str = _always("")
    addr: str = ""


class NamespaceHealth(_Status, frozen=True, kw_only=True):
    """One namespace subscription on a watched server; ``since`` is written even when empty."""

    namespace: str = _always("")
    state: str = _always("")
    last_error: str = ""
    since: str = _always("")


class ServerHealth(_Status, frozen=True, kw_only=True):
    """One watched server (``name`` ``""`` for the single unnamed server)."""

    name: str = _always("")
    url: str = _always("")
    namespaces: tuple[NamespaceHealth, ...] = _always(())


class LiveStatus(_Status, frozen=True, kw_only=True):
    """The daemon's self-report, field for field as the status socket writes it."""

    schema: int = _always(0)
    version: str = _always("")
    pid: int = _always(0)
    started_at: str = _always("")
    written_at: str = _always("")
    config_path: str = _always("")
    policies: dict[str, str] = msgspec.field(default_factory=_no_policies)
    gate_namespaces: tuple[str, ...] = ()
    approval_channel: ApprovalChannelStatus = _always(ApprovalChannelStatus())
    rc_hub: RcHubStatus = _always(RcHubStatus())
    servers: tuple[ServerHealth, ...] = _always(())


class StatusSchemaError(RemoteProtocolError):
    """The agent speaks another LiveStatus schema; ``schema`` holds the number it sent.

    ``code`` is ``VERSION_UNSUPPORTED``; the message is the real CLI's text
    (without its ``status:`` prefix).
    """

    schema: int

    def __init__(self, schema: int) -> None:
        super().__init__(
            ErrorCode.VERSION_UNSUPPORTED,
            f"agent status schema is {schema}, this CLI expects {STATUS_SCHEMA} "
            "(version skew \u2014 match the shed-host-agent binary and CLI versions)",
            path="$.schema",
        )
        self.schema = schema


def effective_policy(raw: str) -> str:
    """Return the effective policy: empty means ``deny-all``, anything else is kept."""
    return raw if raw else POLICY_DENY_ALL


def gate_namespaces(policies: Mapping[str, str]) -> tuple[str, ...]:
    """Namespaces whose effective policy is ``shed-desktop``, in the order ssh, aws, docker.

    ``policies`` maps namespace names to raw policies; missing ones are empty.
    """
    # From a list, not a generator: msgspec's omit_defaults compares an empty
    # tuple with the `()` default by identity, and Python 3.10 builds a distinct
    # empty tuple from an exhausted generator.
    return tuple(
        [
            ns
            for ns in GATED_NAMESPACES
            if effective_policy(policies.get(ns, "")) == POLICY_SHED_DESKTOP
        ]
    )


def build_live_status(
    *,
    version: str,
    pid: int,
    started_at: str,
    written_at: str,
    config_path: str,
    policies: Mapping[str, str],
    socket_path: str,
    consumer_name: str | None = None,
    consumer_version: str = "",
    rc_hub: RcHubStatus | None = None,
    servers: Iterable[ServerHealth] = (),
) -> LiveStatus:
    """Assemble a snapshot the way the daemon does.

    ``policies`` holds raw policies (missing or empty become ``deny-all``);
    the three gated namespaces always appear, sorted. ``consumer_name`` is
    ``None`` when no consumer is connected. ``servers`` are sorted by name and
    each server's namespaces by namespace. ``rc_hub`` defaults to ``disabled``.
    Never raises.
    """
    effective = {ns: effective_policy(policies.get(ns, "")) for ns in sorted(GATED_NAMESPACES)}
    channel = ApprovalChannelStatus(
        socket_path=socket_path,
        consumer_connected=consumer_name is not None,
        client_name=consumer_name or "",
        client_version=consumer_version if consumer_name is not None else "",
    )
    ordered = tuple(
        msgspec.structs.replace(
            server, namespaces=tuple(sorted(server.namespaces, key=lambda n: n.namespace))
        )
        for server in sorted(servers, key=lambda s: s.name)
    )
    return LiveStatus(
        schema=STATUS_SCHEMA,
        version=version,
        pid=pid,
        started_at=started_at,
        written_at=written_at,
        config_path=config_path,
        policies=effective,
        gate_namespaces=gate_namespaces(policies),
        approval_channel=channel,
        rc_hub=rc_hub if rc_hub is not None else RcHubStatus(state="disabled"),
        servers=ordered,
    )


_ENCODER = msgspec.json.Encoder(order="deterministic")


def encode_live_status(status: LiveStatus) -> bytes:
    """Encode ``status`` as the status socket does: compact JSON plus a newline.

    ``policies`` keys come out sorted whatever the mapping's order. Never raises.
    """
    return _ENCODER.encode(status) + b"\n"


def pretty_live_status(status: LiveStatus) -> bytes:
    """Encode ``status`` as ``status --json`` prints it: 2-space indented JSON, newline."""
    return msgspec.json.format(_ENCODER.encode(status), indent=2) + b"\n"


def decode_live_status(data: bytes) -> LiveStatus:
    """Decode what the status socket sent (surrounding whitespace allowed), checking the schema.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` or ``SCHEMA_VIOLATION`` when
            the bytes are not a LiveStatus object.
        StatusSchemaError: ``schema`` is not 1 (a missing one counts as 0).

    """
    status: LiveStatus = decode_frame(decoder_for(LiveStatus), data)
    if status.schema != STATUS_SCHEMA:
        raise StatusSchemaError(status.schema)
    return status


def has_live_status_fields(data: bytes) -> bool:
    """Whether ``data`` is a JSON object with at least one LiveStatus field.

    Tells a skewed agent's report (``schema`` missing or another number, other
    fields present) from another protocol's answer (no LiveStatus field at all).
    Bytes that are not JSON count as having fields: the decode error says more.
    """
    try:
        fields = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return True
    return not isinstance(fields, dict) or bool(fields.keys() & LiveStatus.__struct_fields__)

