"""The small parsing rules herdr's hand-written subcommand parsers share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._runtime import CliError, Usage

__all__ = [
    "AGENT_STATUSES",
    "Options",
    "env_pair",
    "expand_equals",
    "parse_options",
    "read_format",
    "read_source",
    "take_value",
    "token_pair",
    "u64",
]

AGENT_STATUSES = ("idle", "working", "blocked", "done", "unknown")


@dataclass
class Options:
    """What :func:`parse_options` found: values (last wins or all), flags, positionals."""

    values: dict[str, list[str]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)

    def last(self, flag: str) -> str | None:
        """Return the last value given for ``flag``, or None."""
        found = self.values.get(flag)
        return found[-1] if found else None

    def all(self, flag: str) -> list[str]:
        """Every value given for ``flag``, in order."""
        return self.values.get(flag, [])

    def has(self, flag: str) -> bool:
        """Return True when the boolean ``flag`` was given."""
        return flag in self.flags


def parse_options(
    args: Sequence[str],
    *,
    values: Sequence[str] = (),
    flags: Sequence[str] = (),
    positionals: int = 0,
    extra: str = "unexpected argument: {}",
) -> Options:
    """Walk ``args`` as herdr's ``while index < args.len()`` loops do.

    A value option without its value is ``missing value for FLAG``; an
    unknown ``-`` token is ``unknown option: X``; a positional beyond
    ``positionals`` is ``extra`` (or ``unknown option`` when none are taken).

    Raises:
        Usage: any of the above (exit 2).

    """
    found = Options()
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in values:
            if index + 1 >= len(args):
                raise Usage(f"missing value for {arg}")
            found.values.setdefault(arg, []).append(args[index + 1])
            index += 2
        elif arg in flags:
            found.flags.append(arg)
            index += 1
        elif positionals and not arg.startswith("-"):
            if len(found.positionals) >= positionals:
                raise Usage(extra.format(arg))
            found.positionals.append(arg)
            index += 1
        else:
            raise Usage(f"unknown option: {arg}")
    return found


def take_value(args: Sequence[str], index: int, allowed: Sequence[str]) -> str:
    """Return the value after the option ``args[index]``, which must be one of ``allowed``.

    Raises:
        Usage: ``unknown option`` or ``missing value for FLAG`` (exit 2).

    """
    flag = args[index]
    if flag not in allowed:
        raise Usage(f"unknown option: {flag}")
    if index + 1 >= len(args):
        raise Usage(f"missing value for {flag}")
    return args[index + 1]


def expand_equals(args: Sequence[str], value_options: Sequence[str]) -> list[str]:
    """Split ``--flag=value`` into two tokens, only for ``value_options`` (herdr's rule)."""
    expanded: list[str] = []
    for arg in args:
        flag, sep, value = arg.partition("=")
        if sep and flag in value_options:
            expanded.extend((flag, value))
        else:
            expanded.append(arg)
    return expanded


def env_pair(raw: str) -> tuple[str, str]:
    """``KEY=VALUE`` for ``--env``.

    Raises:
        Usage: no ``=``, an empty key, or a NUL byte.

    """
    key, sep, value = raw.partition("=")
    if not sep:
        raise Usage("env must use KEY=VALUE")
    if not key:
        raise Usage("env key must not be empty")
    if "\0" in key or "\0" in value:
        raise Usage("env must not contain NUL bytes")
    return key, value


def token_pair(raw: str) -> tuple[str, str]:
    """``NAME=VALUE`` for ``--token``.

    Raises:
        Usage: no ``=`` or an empty name.

    """
    key, sep, value = raw.partition("=")
    if not sep:
        raise Usage("token must use NAME=VALUE")
    if not key:
        raise Usage("token name must not be empty")
    return key, value


def timeout_flag(value: str) -> int:
    """Parse ``--timeout MS`` as herdr's agent commands do.

    Raises:
        Usage: not a non-negative integer (exit 2).

    """
    if not value.isascii() or not value.isdigit():
        raise Usage(f"invalid value for --timeout: {value}")
    return int(value)


def u64(flag: str, value: str) -> int:
    """Parse an unsigned integer flag value.

    Raises:
        CliError: not a non-negative integer (herdr fails late, exit 1).

    """
    if not value.isascii() or not value.isdigit():
        raise CliError(f"invalid value for {flag}: {value}")
    return int(value)


def read_source(value: str) -> str:
    """Parse a read source; ``recent-unwrapped`` is accepted for ``recent_unwrapped``.

    Raises:
        CliError: an unknown source.

    """
    if value in ("visible", "recent", "detection"):
        return value
    if value in ("recent-unwrapped", "recent_unwrapped"):
        return "recent_unwrapped"
    raise CliError(f"invalid read source: {value}")


def read_format(value: str) -> str:
    """Parse a read format: ``text`` or ``ansi``.

    Raises:
        CliError: anything else.

    """
    if value in ("text", "ansi"):
        return value
    raise CliError(f"invalid read format: {value}")


def finite_float(value: str, what: str) -> float:
    """Parse a finite float option (``--ratio``, ``--amount``).

    Raises:
        Usage: not a finite number.

    """
    try:
        parsed = float(value)
    except ValueError:
        raise Usage(f"invalid {what}: {value}") from None
    if not math.isfinite(parsed):
        raise Usage(f"invalid {what}: {value}")
    return parsed
