"""Output conventions shared by every CLI command.

Reports go to stdout, as text or (with ``--json``) as one JSON document;
errors go to stderr. Exit codes: 0 success, 1 failure, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from shedproto import ErrorReport

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "PREFIX", "emit", "fail", "json_flag"]

PREFIX = "shedproto: error: "
"""The one prefix of every error line this CLI writes (mirrored real programs keep theirs)."""

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def json_flag() -> argparse.ArgumentParser:
    """Return a parent parser contributing ``--json``; every reporting command uses it."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    return parent


def emit(args: argparse.Namespace, text: str, data: Any) -> None:
    """Print ``data`` as JSON with ``--json``, else ``text``; never raises for msgspec types."""
    if getattr(args, "json", False):
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def fail(
    args: argparse.Namespace, code: str, message: str, *, exit_code: int = EXIT_FAILURE
) -> int:
    """Report an error on stderr (JSON with ``--json``) and return ``exit_code``."""
    if getattr(args, "json", False):
        report = msgspec.json.encode({"error": ErrorReport(code=code, message=message)})
        sys.stderr.write(report.decode() + "\n")
    else:
        sys.stderr.write(f"{PREFIX}{message}\n")
    return exit_code
