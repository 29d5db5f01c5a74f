"""The CLI convention in one place: the parser class and the one error handler.

* :class:`CliParser` is every parser's class. A usage error prints the usage
  of the (sub)command that met it and one line ``shedproto: error: ...``, then
  exits 2; unrecognized arguments are reported by the innermost command that
  received them, not by the top level. Help keeps the epilog's layout.
* :func:`invoke` runs a command and turns what a user can cause into one
  stderr line and an exit code: Ctrl-C exits 130 (also when it surfaces as
  the asyncio main task's ``CancelledError``, as on Python 3.10); an
  ``OSError`` (a bind or connect failure, a timeout, a path) or a
  :class:`~shedproto.RemoteProtocolError` exits 1; a
  :class:`~shedproto.LocalProtocolError` (params that do not fit) exits 2.
  A closed stdout (``| head``) ends the command quietly with exit 1.
  Exception groups from anyio task groups are unwrapped first. Any other
  exception is a bug and propagates with its traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ._output import EXIT_FAILURE, EXIT_USAGE, PREFIX, fail

__all__ = [
    "EXIT_INTERRUPTED",
    "CliParser",
    "describe_os_error",
    "innermost",
    "invoke",
    "usage_error",
]

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` with the CLI's usage-error convention (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._parsing = False
        self.set_defaults(command_parser=self)  # the innermost command's parser wins

    def error(self, message: str) -> NoReturn:
        """Print this command's usage and one error line on stderr, then exit 2."""
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{PREFIX}{message}\n")
        raise SystemExit(EXIT_USAGE)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse like argparse, but arguments nobody recognized are this parser's usage error.

        A command without sub-commands parses intermixed, so ``call OP --socket S k=v``
        keeps ``k=v`` after an option.
        """
        if self._parsing:  # argparse's intermixed parse calls back in; let it work
            return super().parse_known_args(args, namespace)
        self._parsing = True
        try:
            if any(a.nargs in (argparse.PARSER, argparse.REMAINDER) for a in self._actions):
                parsed, extras = super().parse_known_args(args, namespace)
            else:
                parsed, extras = super().parse_known_intermixed_args(args, namespace)
        finally:
            self._parsing = False
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def usage_error(args: argparse.Namespace, message: str) -> int:
    """Report a usage error found after parsing like argparse's own; return 2."""
    parser = getattr(args, "command_parser", None)
    if isinstance(parser, argparse.ArgumentParser):
        parser.print_usage(sys.stderr)
    sys.stderr.write(f"{PREFIX}{message}\n")
    return EXIT_USAGE


def innermost(exc: BaseException) -> BaseException:
    """Return the one exception inside nested single-member exception groups.

    A group of several keeps the first ``KeyboardInterrupt``, else the first
    ``OSError``, else the group itself.
    """
    while True:
        members: Sequence[BaseException] | None = getattr(exc, "exceptions", None)
        if not members:
            return exc
        if len(members) == 1:
            exc = members[0]
            continue
        leaves = [innermost(member) for member in members]
        for kind in (KeyboardInterrupt, OSError):
            found = next((leaf for leaf in leaves if isinstance(leaf, kind)), None)
            if found is not None:
                return found
        return exc


def describe_os_error(exc: OSError) -> tuple[str, str]:
    """Return ``(code, one-line message)`` for an ``OSError`` a command let through."""
    from shedproto.clients import ConnectError
    from shedproto.servers import BindError

    if isinstance(exc, TimeoutError):
        return "timeout", str(exc) or "timed out"
    if isinstance(exc, (BindError, ConnectError)):
        code = "bind_failed" if isinstance(exc, BindError) else "connect_failed"
        return code, exc.strerror or str(exc)
    message = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        message = f"{message}: {exc.filename}"
    return "os_error", message


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test's capture): nothing to do
        pass


def invoke(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run ``func(args)``; map what a user can cause to one stderr line and an exit code."""
    try:
        return func(args)
    except BaseException as exc:
        # Imported here: a command that succeeds does not load the servers package.
        from shedproto import LocalProtocolError, ProtocolError
        from shedproto.servers._loop import LoopChoiceError

        inner = innermost(exc)
        # On Python 3.10 asyncio, Ctrl-C outside a signal receiver ends anyio.run
        # with the main task's CancelledError instead of KeyboardInterrupt.
        if isinstance(inner, (KeyboardInterrupt, asyncio.CancelledError)):
            sys.stderr.write(f"{PREFIX}interrupted\n")
            return EXIT_INTERRUPTED
        if isinstance(inner, BrokenPipeError):  # the reader went away (`| head`): stop quietly
            _silence_stdout()
            return EXIT_FAILURE
        if isinstance(inner, OSError):
            code, message = describe_os_error(inner)
            return fail(args, code, message, exit_code=EXIT_FAILURE)
        if isinstance(inner, LoopChoiceError):  # SHEDPROTO_LOOP names a loop we cannot run
            return fail(args, "usage", str(inner), exit_code=EXIT_USAGE)
        if isinstance(inner, LocalProtocolError):  # the params a user gave do not fit
            return fail(args, inner.code.value, inner.message, exit_code=EXIT_USAGE)
        if isinstance(inner, ProtocolError):
            return fail(args, inner.code.value, inner.message, exit_code=EXIT_FAILURE)
        raise
