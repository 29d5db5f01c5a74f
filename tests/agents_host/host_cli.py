"""Run ``shedproto agents-host`` with this issue's commands registered."""

from __future__ import annotations

import argparse
import sys

from shedproto.clients.cli._agents_host_run import register_host_commands
from shedproto.clients.cli._convention import CliParser, invoke


def build_parser() -> argparse.ArgumentParser:
    """Return a parser with the ``agents-host`` commands of this issue."""
    parser = CliParser(prog="shedproto agents-host")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    register_host_commands(commands)
    return parser


def main(argv: list[str]) -> int:
    """Parse ``argv`` and run the command."""
    args = build_parser().parse_args(argv)
    return invoke(args.func, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
