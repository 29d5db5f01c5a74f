"""Where Claude Code keeps its transcripts: ``<config dir>/projects/<encoded cwd>/<uuid>.jsonl``.

The environment and the home directory are parameters; nothing here touches
the file system. Paths are joined with ``/`` (Claude Code's transcripts are a
POSIX layout; the desktop surface is macOS only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "MAX_PROJECT_NAME",
    "SESSION_ID",
    "is_session_id",
    "claude_config_dir",
    "projects_dir",
    "java_string_hash",
    "encode_project_name",
    "project_dir",
    "transcript_path",
]

MAX_PROJECT_NAME = 200
"""An encoded cwd longer than this is cut and given a hash suffix."""

SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
"""A session id: a UUID in its 8-4-4-4-12 hexadecimal form, any case."""

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def is_session_id(value: object) -> bool:
    """Return whether ``value`` is a string in UUID form; never raises."""
    return isinstance(value, str) and SESSION_ID.fullmatch(value) is not None


def claude_config_dir(env: Mapping[str, str], home: str) -> str:
    """Return ``CLAUDE_CONFIG_DIR`` when set and not blank, else ``<home>/.claude``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured is not None and configured.strip():
        return configured
    return f"{home.rstrip('/')}/.claude"


def projects_dir(env: Mapping[str, str], home: str) -> str:
    """Return the directory that holds one subdirectory per project."""
    return f"{claude_config_dir(env, home).rstrip('/')}/projects"


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def java_string_hash(text: str) -> str:
    """Return ``abs(h)`` in base 36, where ``h = h*31 + unit`` over UTF-16 units in 32 bits."""
    value = 0
    for unit in _utf16_units(text):
        value = (value * 31 + unit) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    if value == 0:
        return "0"
    digits: list[str] = []
    while value:
        value, rest = divmod(value, 36)
        digits.append(_DIGITS[rest])
    return "".join(reversed(digits))


def encode_project_name(cwd: str) -> str:
    """Encode a cwd as Claude Code names its project directory.

    Every UTF-16 unit outside ``[A-Za-z0-9]`` becomes ``-`` (so a character
    outside the BMP gives two), as JavaScript's regex replace does. A result
    longer than :data:`MAX_PROJECT_NAME` keeps its first 200 characters plus
    ``-`` and :func:`java_string_hash` of the cwd. The mapping is lossy.
    """
    encoded = "".join(
        chr(unit) if unit < 128 and chr(unit).isalnum() else "-" for unit in _utf16_units(cwd)
    )
    if len(encoded) <= MAX_PROJECT_NAME:
        return encoded
    return f"{encoded[:MAX_PROJECT_NAME]}-{java_string_hash(cwd)}"


def project_dir(cwd: str, env: Mapping[str, str], home: str) -> str:
    """Return the project directory for ``cwd`` (which the caller has already resolved)."""
    return f"{projects_dir(env, home)}/{encode_project_name(cwd)}"


def transcript_path(cwd: str, session_id: str, env: Mapping[str, str], home: str) -> str:
    """Return the transcript file of ``session_id`` started in ``cwd``."""
    return f"{project_dir(cwd, env, home)}/{session_id}.jsonl"
