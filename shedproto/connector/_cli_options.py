"""The agents-host command line: ``parseAgentsHostCliOptions(argv, readEnv)``.

Options: ``--config`` (required), ``--api-url`` / ``CF_API_URL``,
``--identity`` / ``CF_IDENTITY``, ``--space`` / ``CF_SPACE`` (all required),
``--once``, ``--debug-view`` / ``--no-debug-view`` (default on) and
``-h`` / ``--help``. String options take ``--name value`` or ``--name=value``;
a repeated option keeps its last value; ``--`` ends the options.

Precedence is ``flag ?? env``: an environment variable is used only when the
flag is absent; an explicitly empty flag value does not fall back and fails
as missing. Errors are reported in this order: unknown options (as met while
parsing), help (returns :class:`HelpRequested` before any other check),
positional arguments, then ``--config``, ``--api-url`` (presence, then URL
syntax), ``--identity``, ``--space``.

:func:`split_extra_options` takes out options a wrapping program adds (the
``shedproto`` CLI's ``--socket``, ``--state-dir``...) with the same syntax, so
that everything else still meets the spec-exact parser and its messages.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence

import msgspec

from ._errors import CliOptionsError, TargetError
from ._target import parse_api_url
from ._text import js_trim

__all__ = [
    "USAGE",
    "AgentsHostCliOptions",
    "HelpRequested",
    "parse_agents_host_cli_options",
    "resolve_target",
    "split_extra_options",
]

USAGE = """\
Usage: agents-host --config <path> [options]

Publish local agent sessions to a Common Fabric space and run owner commands.

Options:
  --config <path>     JSONC configuration file (required)
  --api-url <url>     Common Fabric API URL (default: $CF_API_URL)
  --identity <path>   PKCS#8 identity key file (default: $CF_IDENTITY)
  --space <value>     destination space name or DID (default: $CF_SPACE)
  --once              collect once, publish final health and exit
  --no-debug-view     do not deploy the debug view piece
  -h, --help          show this help
"""
"""The help text printed for ``-h`` / ``--help``."""

_STRINGS = ("config", "api-url", "identity", "space")
_ENV = {
    "api-url": "CF_API_URL",
    "identity": "CF_IDENTITY",
    "space": "CF_SPACE",
}
TARGET_ENV = "SHEDPROTO_AGENTS_HOST_TARGET"
"""The environment fallback of the reference host's ``--target`` (see ``resolve_target()``)."""


class AgentsHostCliOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Executable options: paths absolute, values trimmed, ``api_url`` syntactically valid."""

    config_path: str
    api_url: str
    identity_path: str
    space: str
    once: bool = False
    debug_view: bool = True
    target: str | None = None
    """The reference host's addition: ``None`` for SQLite, else a ``postgresql://`` URL
    (set by ``resolve_target()``, never by the spec-exact parser)."""


class HelpRequested(msgspec.Struct, frozen=True):
    """``-h``/``--help`` was given: print :data:`USAGE` and exit 0."""

    usage: str = USAGE


def _value_follows(args: Sequence[str], i: int) -> bool:
    """Whether ``args[i]`` is the value of the option before it (the spec parser's rule)."""
    return i < len(args) and (args[i] == "-" or not args[i].startswith("-"))


def parse_agents_host_cli_options(  # noqa: PLR0915 - one flat argv loop
    argv: Sequence[str], env: Mapping[str, str], *, cwd: str
) -> AgentsHostCliOptions | HelpRequested:
    """Parse ``argv`` with ``env`` fallbacks; relative paths resolve against ``cwd``.

    Raises:
        CliOptionsError: with the real message: ``unknown option: <arg>``,
            ``unexpected positional argument: <arg>``,
            ``missing required option: --config`` (``--api-url``,
            ``--identity``, ``--space``) or ``--api-url is not a valid URL``.

    """
    strings: dict[str, str] = {}
    once = False
    debug_view = True
    help_requested = False
    positionals: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positionals.extend(args[i:])
            break
        if arg in ("-h", "--help"):
            help_requested = True
            continue
        if arg == "--once":
            once = True
            continue
        if arg == "--debug-view":
            debug_view = True
            continue
        if arg == "--no-debug-view":
            debug_view = False
            continue
        if arg.startswith("--"):
            name, has_value, value = arg[2:].partition("=")
            if name in _STRINGS:
                if not has_value:
                    follows = _value_follows(args, i)
                    value = args[i] if follows else ""
                    i += follows
                strings[name] = value
                continue
            raise CliOptionsError(f"unknown option: {arg}")
        if arg.startswith("-") and arg != "-":
            raise CliOptionsError(f"unknown option: {arg}")
        positionals.append(arg)
    if help_requested:
        return HelpRequested()
    if positionals:
        raise CliOptionsError(f"unexpected positional argument: {positionals[0]}")

    def value_of(name: str) -> str:
        raw = strings.get(name)
        if raw is None and name in _ENV:
            raw = env.get(_ENV[name])
        value = js_trim(raw) if raw is not None else ""
        if not value:
            raise CliOptionsError(f"missing required option: --{name}")
        return value

    config = posixpath.normpath(posixpath.join(cwd, value_of("config")))
    api_url = value_of("api-url")
    try:
        parse_api_url(api_url, "--api-url is not a valid URL")
    except TargetError as exc:
        raise CliOptionsError(exc.message) from None
    identity = posixpath.normpath(posixpath.join(cwd, value_of("identity")))
    space = value_of("space")
    return AgentsHostCliOptions(
        config_path=config,
        api_url=api_url,
        identity_path=identity,
        space=space,
        once=once,
        debug_view=debug_view,
    )


def resolve_target(flag: str | None, env: Mapping[str, str]) -> str | None:
    """Return the reference host's target: ``None`` for SQLite, else a ``postgresql://`` URL.

    ``--target`` is this reference host's addition (the real host publishes to
    a Fabric space), so the spec-exact parser never sees it: a wrapper takes it
    out with :func:`split_extra_options`. ``flag ?? env[TARGET_ENV]``.

    Raises:
        CliOptionsError: ``--target must be sqlite or a postgresql:// URL``.

    """
    raw = flag if flag is not None else env.get(TARGET_ENV)
    target = js_trim(raw) if raw is not None else ""
    if target and target != "sqlite" and not target.startswith(("postgresql://", "postgres://")):
        raise CliOptionsError("--target must be sqlite or a postgresql:// URL")
    return target if target and target != "sqlite" else None


def split_extra_options(
    argv: Sequence[str], *, strings: Collection[str] = (), flags: Collection[str] = ()
) -> tuple[dict[str, str | bool], list[str]]:
    """Take the wrapper's own options out of ``argv``; return them and the rest, in order.

    ``strings`` and ``flags`` are option names without ``--``. A string option
    takes ``--name value`` or ``--name=value`` (the value as the spec parser
    takes it: the next argument unless it starts with ``-``); a repeated one
    keeps its last value. Nothing after ``--`` is taken. Flags map to ``True``.

    Raises:
        CliOptionsError: ``missing value for option: --<name>``.

    """
    args = list(argv)
    end = args.index("--") if "--" in args else len(args)
    taken: dict[str, str | bool] = {}
    rest: list[str] = []
    position = 0
    while position < end:
        arg = args[position]
        position += 1
        name, has_value, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name in flags and not has_value:
            taken[name] = True
        elif name not in strings:
            rest.append(arg)
        else:
            if not has_value:
                follows = _value_follows(args, position)
                value = args[position] if follows else ""
                position += follows
            if not js_trim(value):
                raise CliOptionsError(f"missing value for option: --{name}")
            taken[name] = value
    rest.extend(args[end:])
    return taken, rest
