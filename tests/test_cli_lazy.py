"""A command of one protocol group imports that group's modules and no other group's.

Every test that runs the CLI as a process pays its start-up, so the top
level builds only the group a command names; ``--help``, ``completion`` and
typos still get the full parser.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from shedproto.clients.cli import build_parser
from shedproto.clients.cli._groups import GROUPS

MODULES = {name: ref.partition(":")[0] for name, (_, ref) in GROUPS.items() if ref}

PROBE = r"""
import json, sys
from shedproto.clients.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("shedproto"))), file=sys.stderr)
"""


def _loaded(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    loaded: list[str] = json.loads(done.stderr.splitlines()[-1])
    return set(loaded)


@pytest.mark.parametrize("group", sorted(MODULES))
def test_a_groups_help_imports_no_other_group(group: str) -> None:
    loaded = _loaded(group, "--help")
    assert MODULES[group] in loaded
    assert loaded.isdisjoint(m for g, m in MODULES.items() if g != group), loaded


def test_the_top_level_help_names_every_group_without_importing_one() -> None:
    loaded = _loaded("--help")
    assert loaded.isdisjoint(MODULES.values()), loaded
    assert "shedproto.servers.echo" not in loaded  # the demo's server loads when it runs


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_the_full_parser_still_holds_every_groups_commands() -> None:
    groups = _choices(build_parser())
    for name in MODULES:
        assert _choices(groups[name]), name
    only = _choices(build_parser(["herdr"]))
    assert set(only) == set(groups)  # every group is still a choice (and in --help)
    assert _choices(only["herdr"])
    assert not _choices(only["desktop"])  # but only herdr's commands were added


def test_completion_still_covers_every_group() -> None:
    loaded = _loaded("completion", "bash")
    assert set(MODULES.values()) <= loaded
