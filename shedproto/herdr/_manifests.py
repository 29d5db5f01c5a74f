# ruff: noqa: RUF001 - agents print these glyphs; the rules match them exactly
r"""herdr's agent manifests: per-agent screen rules that turn a pane's text into a state.

A manifest (herdr's ``agent-detection/<label>.toml``) has an ``id``, an
optional ``version``/``min_engine_version``/``updated_at``, ``aliases`` and
``rules``. Each rule names a ``state`` (idle, working, blocked, unknown), a
``priority`` (default 0), a ``region`` of the screen (default
``whole_recent``), the ``visible_*`` evidence flags, ``skip_state_update``
and a gate: ``contains`` (case-insensitive substrings, all present),
``regex`` (all match the region), ``line_regex`` (each matches some line),
``all``/``any`` nested gates and ``not`` gates (none may match). The
matching rule with the highest priority wins, the first of equal ones; no
match means a known agent is ``idle`` (fallback
``default_known_agent_idle_fallback``). Unknown fields, an empty rule list,
more than 128 rules, gates nested deeper than 8, more than 512 gates, 32
matchers in one gate or 1024 in all, a matcher over 512 characters, a bad
region or regex: :class:`ManifestError` with herdr's message
(herdrdev/herdr src/detect/manifest.rs:137-221,800-1020,1131-1250@1c76079f).

Regexes are herdr's (Rust ``regex`` syntax); :func:`rust_regex` turns the
forms the manifests use (``\\x{HHHH}``, ``\\u{HHHH}``, ``\\p{Alphabetic}``,
``\\z``) into Python's and rejects what Python cannot express.

Parsing a manifest's TOML uses the standard library's ``tomllib`` (Python
3.11+) or, on 3.10, ``tomli`` when it is installed; without either, a user
manifest is ignored with a warning and the built-in rules stay active.

:func:`load_agent_manifest` applies herdr's override rule to text the caller
read: ``<config_dir>/agent-detection/<label>.toml`` replaces the bundled
manifest when it parses, compiles and names that agent; otherwise the
bundled one stays, with herdr's warning (src/detect/manifest.rs:576-690@1c76079f).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._detect import parse_agent_label

__all__ = [
    "DEFAULT_KNOWN_AGENT_IDLE_FALLBACK",
    "Detection",
    "Gate",
    "LoadedManifest",
    "Manifest",
    "ManifestError",
    "ManifestState",
    "Rule",
    "detect",
    "load_agent_manifest",
    "manifest_from_mapping",
    "override_path",
    "parse_manifest",
    "region_text",
    "rust_regex",
]

ManifestState = Literal["idle", "working", "blocked", "unknown"]
DEFAULT_KNOWN_AGENT_IDLE_FALLBACK = "default_known_agent_idle_fallback"

MAX_RULES_PER_MANIFEST = 128
MAX_GATE_DEPTH = 8
MAX_TOTAL_GATES = 512
MAX_MATCHERS_PER_GATE = 32
MAX_TOTAL_MATCHERS = 1024
MAX_MATCHER_CHARS = 512
TOP_NON_EMPTY_LINES_ENGINE_VERSION = 3
_STATES = ("idle", "working", "blocked", "unknown")
_FIXED_REGIONS = frozenset(
    ("whole_recent", "after_last_prompt_marker", "before_current_prompt_marker",
     "whole_recent_without_current_prompt_marker", "current_prompt_block_marker",
     "after_current_prompt_block_marker", "prompt_box_body", "above_prompt_box",
     "last_non_empty_above_prompt_box", "after_last_horizontal_rule", "osc_title",
     "osc_progress")
)  # fmt: skip
_MANIFEST_FIELDS = ("id", "version", "min_engine_version", "updated_at", "aliases", "rules")
_GATE_FIELDS = ("all", "any", "not", "contains", "regex", "line_regex")
_RULE_FIELDS = (
    "id", "state", "priority", "region", "visible_idle", "visible_blocker", "visible_working",
    "skip_state_update", *_GATE_FIELDS,
)  # fmt: skip


class ManifestError(ValueError):
    """A manifest herdr would refuse; the message is herdr's."""


@dataclass(frozen=True)
class Gate:
    """One matcher gate: every direct matcher, every ``all``, one ``any`` and no ``not``."""

    contains: tuple[str, ...] = ()
    regex: tuple[re.Pattern[str], ...] = ()
    line_regex: tuple[re.Pattern[str], ...] = ()
    all: tuple[Gate, ...] = ()
    any: tuple[Gate, ...] = ()
    not_: tuple[Gate, ...] = ()

    def matches(self, text: str, lower: str, lines: Sequence[str]) -> bool:
        """Return whether ``text`` (``lower`` lower-cased, split into ``lines``) passes."""
        return (
            all(needle in lower for needle in self.contains)
            and all(pattern.search(text) for pattern in self.regex)
            and all(any(p.search(line) for line in lines) for p in self.line_regex)
            and all(gate.matches(text, lower, lines) for gate in self.all)
            and (not self.any or any(gate.matches(text, lower, lines) for gate in self.any))
            and not any(gate.matches(text, lower, lines) for gate in self.not_)
        )


@dataclass(frozen=True)
class Rule:
    """One manifest rule: a gate over a screen region and the state it means."""

    id: str
    state: ManifestState | None
    gate: Gate
    priority: int = 0
    region: str = "whole_recent"
    visible_idle: bool = False
    visible_blocker: bool = False
    visible_working: bool = False
    skip_state_update: bool = False


@dataclass(frozen=True)
class Manifest:
    """An agent's rules, bundled or loaded from a user's override."""

    id: str
    rules: tuple[Rule, ...]
    version: str | None = None
    min_engine_version: int | None = None
    aliases: tuple[str, ...] = ()

    def names_agent(self, label: str) -> bool:
        """Return whether this manifest's id or an alias names the agent ``label``."""
        names = (self.id, *self.aliases)
        return label in names or any(parse_agent_label(name) == label for name in names)


@dataclass(frozen=True)
class Detection:
    """What a manifest reads from a screen (herdr's ``AgentDetection`` plus the why)."""

    state: ManifestState
    skip_state_update: bool = False
    visible_idle: bool = False
    visible_blocker: bool = False
    visible_working: bool = False
    matched_rule: str | None = None
    fallback_reason: str | None = None


@dataclass(frozen=True)
class LoadedManifest:
    """The manifest in force for one agent and where it came from."""

    agent: str
    manifest: Manifest
    source: str = "bundled"
    source_kind: str = "bundled"
    warning: str | None = None


# -- regex dialect --------------------------------------------------------------------

_RUST_ESCAPES = re.compile(
    r"\\(?:x\{([0-9A-Fa-f]{1,6})\}|u\{([0-9A-Fa-f]{1,6})\}|p\{(\w+)\}|(z)|(.))"
)
_CLASSES = {"Alphabetic": "[^\\W\\d_]", "L": "[^\\W\\d_]", "Letter": "[^\\W\\d_]"}


def rust_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Rust ``regex`` pattern from a manifest with Python's ``re``.

    Raises:
        ManifestError: the pattern is invalid or uses a form Python lacks.

    """
    out: list[str] = []
    position = 0
    depth = 0
    for match in _RUST_ESCAPES.finditer(pattern):
        chunk = pattern[position : match.start()]
        depth = _class_depth(chunk, depth)
        out.append(chunk)
        code, ucode, prop, end, other = match.groups()
        if code or ucode:
            value = int(code or ucode, 16)
            out.append(f"\\U{value:08x}" if value > 0xFFFF else f"\\u{value:04x}")
        elif prop:
            if depth or prop not in _CLASSES:
                raise ManifestError(f"unsupported Unicode class \\p{{{prop}}}")
            out.append(_CLASSES[prop])
        elif end:
            out.append("\\Z")
        else:
            out.append("\\" + other)
        position = match.end()
    out.append(pattern[position:])
    try:
        return re.compile("".join(out))
    except re.error as exc:
        raise ManifestError(str(exc)) from None


def _class_depth(chunk: str, depth: int) -> int:
    for char in chunk:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
    return depth


# -- parsing and validation -----------------------------------------------------------


def _toml_loads() -> Callable[[str], dict[str, Any]] | None:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads
    try:  # Python 3.10: tomli when installed (tomllib's origin, same API)
        import tomli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    loads: Callable[[str], dict[str, Any]] = tomli.loads
    return loads


def parse_manifest(text: str) -> Manifest:
    """Parse and validate a manifest's TOML text.

    Raises:
        ManifestError: bad TOML, a field herdr does not know, or a rule herdr refuses.

    """
    loads = _toml_loads()
    if loads is None:
        raise ManifestError("reading TOML needs Python 3.11+ or the tomli package")
    try:
        data = loads(text)
    except ValueError as exc:
        raise ManifestError(str(exc)) from None
    return manifest_from_mapping(data)


def _check_fields(data: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in data:
        if key not in allowed:
            expected = ", ".join(f"`{name}`" for name in allowed)
            raise ManifestError(f"unknown field `{key}`, expected one of {expected}")


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ManifestError(f"invalid type: `{key}` must be an array of strings")
    return tuple(value)


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ManifestError(f"invalid type: `{key}` must be a boolean")
    return value


class _Budget:
    def __init__(self) -> None:
        self.gates = 0
        self.matchers = 0


def _gate(
    data: Mapping[str, Any], context: str, depth: int, budget: _Budget, *, negated: bool
) -> Gate:
    if depth > MAX_GATE_DEPTH:
        kind = "not gate" if negated and context == "not gate" else context
        raise ManifestError(f"{kind} exceeds max gate depth {MAX_GATE_DEPTH}")
    budget.gates += 1
    if budget.gates > MAX_TOTAL_GATES:
        raise ManifestError(f"manifest exceeds max gate count {MAX_TOTAL_GATES}")
    contains, regex, line_regex = (_strings(data, k) for k in ("contains", "regex", "line_regex"))
    count = len(contains) + len(regex) + len(line_regex)
    if count > MAX_MATCHERS_PER_GATE:
        raise ManifestError(
            f"{context} has {count} direct matchers, max is {MAX_MATCHERS_PER_GATE}"
        )
    budget.matchers += count
    if budget.matchers > MAX_TOTAL_MATCHERS:
        raise ManifestError(f"manifest exceeds max matcher count {MAX_TOTAL_MATCHERS}")
    if any(len(value) > MAX_MATCHER_CHARS for value in (*contains, *regex, *line_regex)):
        raise ManifestError(f"{context} matcher exceeds max length {MAX_MATCHER_CHARS}")
    nested = {key: data.get(key, []) for key in ("all", "any", "not")}
    for key, value in nested.items():
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise ManifestError(f"invalid type: `{key}` must be an array of tables")
        for item in value:
            _check_fields(item, _GATE_FIELDS)
    positive = bool(contains or regex or line_regex or nested["all"] or nested["any"])
    if not positive and not (negated and nested["not"]):
        message = "not gate must contain a matcher" if negated else ""
        raise ManifestError(message or f"{context} must contain a positive matcher")
    compiled = []
    for field_name, patterns in (("regex", regex), ("line_regex", line_regex)):
        items = []
        for pattern in patterns:
            try:
                items.append(rust_regex(pattern))
            except ManifestError as exc:
                raise ManifestError(
                    f"{context} contains invalid {field_name} pattern {pattern!r}: {exc}"
                ) from None
        compiled.append(tuple(items))
    prefix = "not " if negated else ""
    all_gates = tuple(
        _gate(g, f"{prefix}all gate", depth + 1, budget, negated=False) for g in nested["all"]
    )
    any_gates = tuple(
        _gate(g, f"{prefix}any gate", depth + 1, budget, negated=False) for g in nested["any"]
    )
    not_gates = []
    for item in nested["not"]:
        if not any(item.get(k) for k in _GATE_FIELDS):
            raise ManifestError(f"{context} contains an empty not gate")
        not_gates.append(_gate(item, "not gate", depth + 1, budget, negated=True))
    return Gate(
        contains=tuple(needle.lower() for needle in contains),
        regex=compiled[0],
        line_regex=compiled[1],
        all=all_gates,
        any=any_gates,
        not_=tuple(not_gates),
    )


def _region_ok(spec: str) -> bool:
    spec = spec.strip()
    if spec in _FIXED_REGIONS or _counted(spec, "bottom_lines") is not None:
        return True
    if _counted(spec, "bottom_non_empty_lines") is not None:
        return True
    return _top_count(spec) is not None


def manifest_from_mapping(data: Mapping[str, Any]) -> Manifest:
    """Build and validate a manifest from parsed TOML (a mapping).

    Raises:
        ManifestError: as :func:`parse_manifest`.

    """
    _check_fields(data, _MANIFEST_FIELDS)
    ident = data.get("id")
    if not isinstance(ident, str):
        raise ManifestError("missing field `id`")
    version = data.get("version")
    min_engine = data.get("min_engine_version")
    if min_engine is not None and (not isinstance(min_engine, int) or min_engine < 0):
        raise ManifestError("invalid type: `min_engine_version` must be an unsigned integer")
    raw_rules = data.get("rules", [])
    if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
        raise ManifestError("invalid type: `rules` must be an array of tables")
    if not raw_rules:
        raise ManifestError("manifest must contain at least one rule")
    if len(raw_rules) > MAX_RULES_PER_MANIFEST:
        raise ManifestError(
            f"manifest contains {len(raw_rules)} rules, max is {MAX_RULES_PER_MANIFEST}"
        )
    budget = _Budget()
    rules = [_rule(raw, min_engine, budget) for raw in raw_rules]
    return Manifest(
        id=ident,
        rules=tuple(rules),
        version=None if version is None else str(version),
        min_engine_version=min_engine,
        aliases=_strings(data, "aliases"),
    )


def _rule(raw: Mapping[str, Any], min_engine: int | None, budget: _Budget) -> Rule:
    _check_fields(raw, _RULE_FIELDS)
    rule_id = raw.get("id")
    if not isinstance(rule_id, str):
        raise ManifestError("missing field `id`")
    if not rule_id.strip():
        raise ManifestError("manifest rule id must not be empty")
    state = raw.get("state")
    if state is not None and state not in _STATES:
        raise ManifestError(f"unknown variant `{state}`, expected one of {', '.join(_STATES)}")
    priority = raw.get("priority", 0)
    region = raw.get("region", "whole_recent")
    if not isinstance(priority, int) or isinstance(priority, bool) or not isinstance(region, str):
        raise ManifestError(f"rule {rule_id} has a field of the wrong type")
    flags = {k: _flag(raw, k) for k in ("visible_idle", "visible_blocker", "visible_working")}
    skip = _flag(raw, "skip_state_update")
    if skip and state != "unknown":
        raise ManifestError(f'rule {rule_id} uses skip_state_update without state = "unknown"')
    if skip and any(flags.values()):
        raise ManifestError(f"rule {rule_id} uses skip_state_update with visible state evidence")
    if not _region_ok(region):
        raise ManifestError(f"rule {rule_id} uses invalid region: {region.strip()}")
    if (
        region.strip().startswith("top_non_empty_lines(")
        and min_engine is not None
        and min_engine < TOP_NON_EMPTY_LINES_ENGINE_VERSION
    ):
        raise ManifestError(
            f"rule {rule_id} uses top_non_empty_lines but min_engine_version is below "
            f"{TOP_NON_EMPTY_LINES_ENGINE_VERSION}"
        )
    try:
        gate = _gate(raw, "rule", 0, budget, negated=False)
    except ManifestError as exc:
        raise ManifestError(f"rule {rule_id} has invalid matcher gates: {exc}") from None
    return Rule(
        id=rule_id, state=state, gate=gate, priority=priority, region=region,
        skip_state_update=skip, **flags,
    )  # fmt: skip


# -- regions --------------------------------------------------------------------------


def _counted(spec: str, name: str) -> int | None:
    if not (spec.startswith(name + "(") and spec.endswith(")")):
        return None
    digits = spec[len(name) + 1 : -1]
    return int(digits) if digits.isdigit() and digits.isascii() else None


def _top_count(spec: str) -> int | None:
    count = _counted(spec, "top_non_empty_lines")
    digits = spec[len("top_non_empty_lines(") : -1]
    if count is None or digits.startswith("0") or count > 0xFFFF:
        return None
    return count


def _lines(text: str) -> list[str]:
    """Split as Rust's ``str::lines``: on LF, dropping one CR, no empty last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _offset(text: str, lines: Sequence[str], index: int) -> int:
    return min(sum(len(line) + 1 for line in lines[:index]), len(text))


def _is_rule_line(line: str) -> bool:
    trimmed = line.strip()
    if not trimmed:
        return False
    count = len(trimmed) - len(trimmed.lstrip("─"))
    if count == 0:
        return False
    return trimmed[count:].lstrip() == "" or count >= 3


def _prompt_line(line: str) -> bool:
    return line == "›" or line.startswith("› ")


def _block_marker(line: str) -> bool:
    return line[:1] in ("•", "■", "✗", "✓")


def _current_prompt(lines: Sequence[str]) -> int | None:
    found = [i for i, line in enumerate(lines) if _prompt_line(line)]
    if not found:
        return None
    index = found[-1]
    return None if any(_block_marker(line) for line in lines[index + 1 :]) else index


def _box_top(lines: Sequence[str]) -> int | None:
    seen = 0
    for index in range(len(lines) - 1, -1, -1):
        if _is_rule_line(lines[index]):
            seen += 1
            if seen == 2:
                return index
    return None


def _above_box(text: str, lines: Sequence[str]) -> str:
    top = _box_top(lines)
    return text if top is None else text[: _offset(text, lines, top)]


def region_text(spec: str, screen: str, osc_title: str = "", osc_progress: str = "") -> str:
    """Return the part of ``screen`` (or an OSC string) a rule's ``region`` names."""
    spec = spec.strip()
    if spec == "osc_title":
        return osc_title
    if spec == "osc_progress":
        return osc_progress
    lines = _lines(screen)
    if spec == "whole_recent":
        return screen
    if spec == "after_last_prompt_marker":
        found = [i for i, line in enumerate(lines) if _prompt_line(line)]
        return screen[_offset(screen, lines, found[-1] + 1) :] if found else screen
    prompt = _current_prompt(lines)
    if spec == "before_current_prompt_marker":
        return screen if prompt is None else screen[: _offset(screen, lines, prompt)]
    if spec == "whole_recent_without_current_prompt_marker":
        return screen if prompt is None else ""
    if spec in ("current_prompt_block_marker", "after_current_prompt_block_marker"):
        if prompt is None:
            return ""
        blocks = [i for i in range(prompt) if _block_marker(lines[i])]
        if not blocks:
            return ""
        if spec == "current_prompt_block_marker":
            return lines[blocks[-1]]
        return screen[_offset(screen, lines, blocks[-1]) :]
    if spec == "prompt_box_body":
        top = _box_top(lines)
        if top is None:
            return ""
        end = next((i for i in range(top + 1, len(lines)) if _is_rule_line(lines[i])), len(lines))
        return screen[_offset(screen, lines, top + 1) : _offset(screen, lines, end)]
    if spec == "above_prompt_box":
        return _above_box(screen, lines)
    if spec == "last_non_empty_above_prompt_box":
        above = _lines(_above_box(screen, lines))
        return next((line for line in reversed(above) if line.strip()), "")
    if spec == "after_last_horizontal_rule":
        end = 0
        for index, line in enumerate(lines):
            if _is_rule_line(line):
                end = _offset(screen, lines, index + 1)
        return screen[end:]
    count = _counted(spec, "bottom_lines")
    if count is not None:
        return screen[_offset(screen, lines, max(0, len(lines) - count)) :]
    count = _counted(spec, "bottom_non_empty_lines")
    if count is not None:
        filled = [i for i, line in enumerate(lines) if line.strip()]
        if not filled or count == 0:
            return ""
        return screen[_offset(screen, lines, filled[-min(count, len(filled))]) :]
    count = _top_count(spec)
    if count is not None:
        filled = [i for i, line in enumerate(lines) if line.strip()][:count]
        return screen[: _offset(screen, lines, filled[-1] + 1)] if filled else ""
    return ""


# -- detection ------------------------------------------------------------------------


def detect(
    manifest: Manifest | None, screen: str, osc_title: str = "", osc_progress: str = ""
) -> Detection:
    """Return the state ``manifest`` reads from ``screen``; no manifest: a known agent's idle."""
    if manifest is None:
        return Detection(state="idle", fallback_reason=DEFAULT_KNOWN_AGENT_IDLE_FALLBACK)
    best: Rule | None = None
    cache: dict[str, tuple[str, str, list[str]]] = {}
    for rule in manifest.rules:
        if best is not None and best.priority >= rule.priority:
            continue
        prepared = cache.get(rule.region)
        if prepared is None:
            text = region_text(rule.region, screen, osc_title, osc_progress)
            prepared = cache[rule.region] = (text, text.lower(), _lines(text))
        if rule.gate.matches(*prepared):
            best = rule
    if best is None:
        return Detection(state="idle", fallback_reason=DEFAULT_KNOWN_AGENT_IDLE_FALLBACK)
    state: ManifestState = best.state or "unknown"
    return Detection(
        state=state,
        skip_state_update=best.skip_state_update,
        visible_idle=best.visible_idle and state == "idle",
        visible_blocker=best.visible_blocker and state == "blocked",
        visible_working=best.visible_working and state == "working",
        matched_rule=best.id,
    )


# -- the set in force -----------------------------------------------------------------


def override_path(config_dir: str, agent: str) -> str:
    """Return where herdr reads a user's manifest for ``agent``."""
    return f"{config_dir.rstrip('/')}/agent-detection/{agent}.toml"


def load_agent_manifest(
    agent: str,
    bundled: Manifest,
    path: str,
    text: str | None,
    read_error: str | None = None,
) -> LoadedManifest:
    """Return the manifest in force for ``agent`` given its override file's contents.

    ``text`` is the file's text (None: no file); ``read_error`` why it could
    not be read. A bad or foreign override leaves the bundled manifest with
    herdr's warning.
    """
    if text is None and read_error is None:
        return LoadedManifest(agent=agent, manifest=bundled)
    if read_error is not None:
        return LoadedManifest(
            agent=agent,
            manifest=bundled,
            warning=f"ignored override {path} because it could not be loaded: {read_error}",
        )
    assert text is not None
    try:
        manifest = parse_manifest(text)
    except ManifestError as exc:
        return LoadedManifest(
            agent=agent,
            manifest=bundled,
            warning=f"ignored override {path} because it could not be loaded: {exc}",
        )
    if not manifest.names_agent(agent):
        return LoadedManifest(
            agent=agent,
            manifest=bundled,
            warning=(
                f"ignored override {path} because manifest id {manifest.id} "
                f"does not match {agent}"
            ),
        )
    return LoadedManifest(agent=agent, manifest=manifest, source=path, source_kind="local override")
