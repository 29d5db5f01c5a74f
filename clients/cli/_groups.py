"""The per-protocol command groups: ``host-agent``, ``desktop``, ``herdr``, ``agents-host``.

Each group names the ``"module:function"`` that adds its commands (resolved
when the parser is built); ``None`` means the group has no commands yet. A
group invoked without a command prints its help and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Collection
from typing import Any

from ._output import EXIT_USAGE

__all__ = ["GROUPS", "add_groups", "group_examples"]

GROUPS: dict[str, tuple[str, str | None]] = {
    "host-agent": (
        "shed-host-agent: status socket and approval channel",
        "shedproto.clients.cli._host_agent:register",
    ),
    "desktop": (
        "shed-desktop: the control socket (mac and Tauri dialects)",
        "shedproto.clients.cli._desktop:register",
    ),
    "herdr": (
        "herdr: the terminal-workspace manager's JSON socket API",
        "shedproto.clients.cli._herdr:register",
    ),
    "agents-host": (
        "Common Fabric agents-host: config, commands, ledger, health",
        "shedproto.clients.cli._agents_host:register",
    ),
}
"""Group name -> (description, ``"module:register"`` or ``None``), in ``--help`` order.

A register function takes the group's sub-parsers action and adds commands
whose ``func(args) -> int`` default runs them.
"""


def add_groups(subparsers: Any, only: Collection[str] | None = None) -> None:
    """Add every protocol group to ``subparsers`` (an argparse sub-parsers action).

    With ``only`` (group names), only those groups' commands are added (their
    modules imported); the others keep their name and description, enough for
    the top level's ``--help`` and for parsing a command of ``only``.
    """
    for name, (description, reference) in GROUPS.items():
        group = subparsers.add_parser(name, help=description, description=description)
        group.set_defaults(func=_print_help(group))
        if only is not None and name not in only:
            continue
        commands = group.add_subparsers(title="commands", metavar="COMMAND")
        if reference is not None:
            module_name, _, function_name = reference.partition(":")
            getattr(importlib.import_module(module_name), function_name)(commands)
        group.epilog = group_examples(commands)


def group_examples(commands: Any) -> str:
    """Return an ``examples:`` epilog: the first example of each command in ``commands``."""
    lines = ["examples:"]
    for command in commands.choices.values():
        examples = (command.epilog or "").partition("examples:\n")[2].splitlines()
        lines += examples[:1]
    return "\n".join(lines)


def _print_help(parser: argparse.ArgumentParser) -> Any:
    def show(args: argparse.Namespace) -> int:
        del args
        parser.print_help()
        return EXIT_USAGE

    return show
