"""The ``shedproto`` command line: a thin layer over the clients and servers.

Conventions (every command): ``--json`` on everything that reports; errors on
stderr as one line prefixed ``shedproto: error:``; exit codes 0 success,
1 failure, 2 usage error (after the usage of the command that met it), 130
after Ctrl-C; an example at the end of every ``--help``. Commands that mirror
a real program (``host-agent status``, ``agents-host run``) keep its messages
and exit codes. :mod:`._convention` holds the parser class and the one error
handler.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence

from shedproto import __version__

from . import _completion, _demo, _proxy, _schemas
from ._convention import CliParser, invoke
from ._groups import GROUPS, add_groups
from ._output import EXIT_USAGE

__all__ = ["build_parser", "main"]


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """Build the argument parser: every group's commands, or with ``only`` those groups'.

    ``only`` names protocol groups (see :data:`._groups.GROUPS`) whose
    commands alone are added, so running one of them imports that group's
    modules and no other's; every group stays a choice with its description.
    """
    parser = CliParser(
        prog="shedproto",
        description="Speak the local control protocols of the AI-agent tooling stack.",
        epilog="examples:\n  shedproto demo\n  shedproto desktop ops --dialect tauri",
    )
    parser.add_argument("--version", action="version", version=f"shedproto {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _demo.register(subparsers)
    _schemas.register(subparsers)
    _add_missing_examples(subparsers.choices["schemas"], SCHEMAS_EXAMPLES)
    _proxy.register(subparsers)
    add_groups(subparsers, only)
    _completion.register(subparsers, parser)
    return parser


SCHEMAS_EXAMPLES = {
    "schemas": "examples:\n  shedproto schemas export --check",
    "export": "examples:\n  shedproto schemas export --check\n"
    "  shedproto schemas export --dir build/schemas --json",
}
"""Examples for the ``schemas`` commands (kept here; their module is another owner's)."""


def _add_missing_examples(parser: argparse.ArgumentParser, examples: dict[str, str]) -> None:
    """Give ``parser`` and its commands an examples epilog where they have none."""
    if not parser.epilog:
        parser.epilog = examples.get(parser.prog.rsplit(" ", 1)[-1])
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_missing_examples(sub, examples)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_groups_for(arguments))
    args = parser.parse_args(arguments)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return invoke(func, args)


def _groups_for(arguments: Sequence[str]) -> Collection[str] | None:
    """Return the groups whose commands ``arguments`` need (``None``: every group's).

    Only the first word counts (the top level has no option that takes a
    value): a group's name needs that group; ``completion`` writes a script
    covering every command; anything else (``--help``, ``demo``, a typo)
    needs no group's commands, only the group names.
    """
    first = arguments[0] if arguments else ""
    if first in GROUPS:
        return (first,)
    if first == "completion":
        return None
    return ()
