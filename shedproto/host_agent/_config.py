"""The reference agent's configuration: the approval keys of the real ``extensions.yaml``.

No YAML library is a dependency, so this reads the same deliberately small
subset the real Rust agent reads with its own ``yaml_lite``: nested block
mappings of scalars (plain, ``'single'`` or ``"double"`` quoted), ``#``
comments, and everything else (sequences, flow collections, block scalars)
tolerated and ignored. A document whose first character is ``{`` is read as
JSON instead. The keys used:

======================  ==========================================================
``ssh.approval.policy``     ``deny-all`` (also when empty or absent), ``approve-all``,
``aws.approval.policy``     ``shed-desktop`` or ``biometrics`` (which a reference
``docker.approval.policy``  server cannot show, so it denies)
``approval_timeout``        a Go duration (``25s``, ``1m30s``, ``1.5s``); default 25 s
``logging.enabled``         ``false`` turns the JSONL audit log off (default on)
``logging.path``            the audit log file; ``~/`` is expanded by the caller
======================  ==========================================================

Unknown keys are ignored, as the real agent ignores them. Lines the reader
skips (a sequence item, a flow collection such as ``ssh: [1, 2``, a block
scalar, an anchor, alias or tag, anything that is not ``key: value``) are
tolerated like the real agent tolerates them, but reported in
:attr:`AgentConfig.skipped` (line number and text) so a caller can warn about
each one; the lines nested under a skipped item are part of it and not
reported again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ._constants import DEFAULT_APPROVAL_TIMEOUT, NS_AWS, NS_DOCKER, NS_SSH

__all__ = ["AgentConfig", "ConfigError", "SkippedLine", "parse_config", "parse_go_duration"]

KNOWN_POLICIES = frozenset({"", "deny-all", "approve-all", "shed-desktop", "biometrics"})


class ConfigError(ValueError):
    """The configuration text is invalid; the message names the key and the problem."""


@dataclass(frozen=True)
class SkippedLine:
    """A config line the tolerant reader ignored: its 1-based number and its text."""

    line: int
    text: str


@dataclass(frozen=True)
class AgentConfig:
    """What the reference agent reads from its config file.

    ``policies`` maps namespace -> raw policy (``""`` means deny-all);
    ``approval_timeout`` is in seconds.
    """

    policies: dict[str, str] = field(
        default_factory=lambda: {NS_SSH: "", NS_AWS: "", NS_DOCKER: ""}
    )
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    logging_enabled: bool = True
    logging_path: str = ""
    skipped: tuple[SkippedLine, ...] = ()
    """Lines of the YAML text that were skipped, in order (never any for JSON)."""


_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+\.?\d*|\.\d+)([a-z\u00b5\u03bc]+)")


def parse_go_duration(text: str) -> float:
    """Parse a Go ``time.ParseDuration`` string into seconds (``"0"`` alone needs no unit).

    Raises:
        ConfigError: empty, unknown unit, or malformed.

    """
    raw = text.strip()
    body = raw[1:] if raw[:1] in "+-" else raw
    sign = -1.0 if raw.startswith("-") else 1.0
    if body == "0":
        return 0.0
    if not body:
        raise ConfigError(f"invalid duration {text!r}")
    total = 0.0
    position = 0
    while position < len(body):
        match = _PART.match(body, position)
        if match is None or match.group(2) not in _UNITS:
            raise ConfigError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    return sign * total


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded: str = msgspec.json.decode(value.encode(), type=str)
        except msgspec.DecodeError:
            return value[1:-1]
        return decoded
    return value


def _strip_comment(line: str) -> str:
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index]
    return line


def _read_yaml_lite(text: str) -> tuple[dict[tuple[str, ...], str], list[SkippedLine]]:
    """Map each scalar's key path to its string value; also return the skipped lines."""
    scalars: dict[tuple[str, ...], str] = {}
    skipped: list[SkippedLine] = []
    stack: list[tuple[int, tuple[str, ...]]] = []  # (indent, path) of open mappings
    skip_deeper_than: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).rstrip()
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if skip_deeper_than is not None:
            if indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        content = line.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ()
        if content.startswith("-") and (len(content) == 1 or content[1] == " "):
            skip_deeper_than = indent  # a sequence item and everything nested in it
            skipped.append(SkippedLine(number, raw.strip()))
            continue
        key, colon, value = content.partition(":")
        if not colon or (value and not value.startswith(" ")):
            skipped.append(SkippedLine(number, raw.strip()))
            continue  # not a mapping entry this reader understands
        path = (*parent, _unquote(key.strip()))
        value = value.strip()
        if not value:
            stack.append((indent, path))
        elif value[0] in "|>":
            skip_deeper_than = indent
            skipped.append(SkippedLine(number, raw.strip()))
        elif value[0] not in "[{&*!":
            scalars[path] = _unquote(value)
        else:
            skipped.append(SkippedLine(number, raw.strip()))
    return scalars, skipped


def _flatten(node: Any, path: tuple[str, ...], out: dict[tuple[str, ...], str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _flatten(value, (*path, str(key)), out)
    elif isinstance(node, bool):
        out[path] = "true" if node else "false"
    elif isinstance(node, (str, int, float)):
        out[path] = str(node)


def parse_config(text: str) -> AgentConfig:
    """Parse configuration text (the ``extensions.yaml`` subset above, or JSON).

    Lines the YAML reader skipped are in the result's ``skipped``.

    Raises:
        ConfigError: invalid JSON, an unknown policy, or an invalid or
            non-positive ``approval_timeout`` (the real agent's validation
            rejects those at startup, before binding anything).

    """
    scalars: dict[tuple[str, ...], str] = {}
    skipped: list[SkippedLine] = []
    if text.lstrip().startswith("{"):
        try:
            _flatten(msgspec.json.decode(text.encode()), (), scalars)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"invalid JSON config: {exc}") from None
    else:
        scalars, skipped = _read_yaml_lite(text)
    policies = {}
    for key, ns in (("ssh", NS_SSH), ("aws", NS_AWS), ("docker", NS_DOCKER)):
        policy = scalars.get((key, "approval", "policy"), "")
        if policy not in KNOWN_POLICIES:
            raise ConfigError(f"{key}.approval.policy: unknown policy {policy!r}")
        policies[ns] = policy
    timeout = DEFAULT_APPROVAL_TIMEOUT
    raw_timeout = scalars.get(("approval_timeout",), "")
    if raw_timeout:
        timeout = parse_go_duration(raw_timeout)
        if timeout <= 0:
            raise ConfigError(f"approval_timeout must be positive, got {raw_timeout!r}")
    return AgentConfig(
        policies=policies,
        approval_timeout=timeout,
        logging_enabled=scalars.get(("logging", "enabled"), "true") != "false",
        logging_path=scalars.get(("logging", "path"), ""),
        skipped=tuple(skipped),
    )
