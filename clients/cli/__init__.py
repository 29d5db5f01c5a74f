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
from collections.abc import Sequence

from shedproto import __version__

from . import _completion, _demo, _proxy, _schemas
from ._convention import CliParser, invoke
from ._groups import add_groups
from ._output import EXIT_USAGE

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the full argument parser (every group and command)."""
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
    add_groups(subparsers)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return invoke(func, args)
