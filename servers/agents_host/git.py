"""Git checkout discovery below ``checkoutRoots`` (spec section 6.2).

Walks each root (symbolic links are not followed), stops descending at a
directory that holds ``.git``, validates each candidate with ``git
rev-parse --show-toplevel`` (a candidate whose top level is another
directory is skipped), and reads its branch, ``HEAD`` commit and remotes.
``gitRepo`` is the ``origin`` fetch URL, else the first remote's. Any failed
git call or walk error raises :class:`CheckoutDiscoveryError`, which fails the
whole collection so the previous indexes stay unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import anyio

from shedproto.connector import Checkout, GitRemote

__all__ = ["CheckoutDiscoveryError", "find_checkouts", "make_checkout_finder"]

GIT_TIMEOUT = 30.0
"""Seconds one git call may take."""


class CheckoutDiscoveryError(Exception):
    """A checkout could not be discovered or read; the collection publishes nothing."""


def _candidates(roots: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for root in roots:
        stack = [root]
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise CheckoutDiscoveryError(f"cannot read {directory}: {exc.strerror}") from exc
            if any(entry.name == ".git" for entry in entries):
                found.append(directory)
                continue
            stack.extend(
                entry.path
                for entry in entries
                if entry.is_dir(follow_symlinks=False) and entry.name != ".git"
            )
    return sorted(found)


def _same_directory(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)


async def _git(directory: str, *args: str) -> str:
    try:
        with anyio.fail_after(GIT_TIMEOUT):
            result = await anyio.run_process(["git", "-C", directory, *args], check=False)
    except (OSError, TimeoutError) as exc:
        raise CheckoutDiscoveryError(f"git {args[0]} failed in {directory}: {exc}") from exc
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise CheckoutDiscoveryError(f"git {' '.join(args)} failed in {directory}: {message}")
    return result.stdout.decode("utf-8", "replace").strip()


async def _read(directory: str, observed_at: str) -> Checkout | None:
    top = await _git(directory, "rev-parse", "--show-toplevel")
    if not await anyio.to_thread.run_sync(_same_directory, top, directory):
        return None
    try:
        branch = await _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    except CheckoutDiscoveryError:
        branch = ""  # a detached HEAD
    try:
        head = await _git(directory, "rev-parse", "HEAD")
    except CheckoutDiscoveryError:
        head = ""  # a repository without commits
    remotes: dict[str, list[str]] = {}
    for line in (await _git(directory, "remote", "-v")).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] not in remotes.setdefault(parts[0], []):
            remotes[parts[0]].append(parts[1])
    repo = (remotes.get("origin") or next(iter(remotes.values()), [None]))[0]
    return Checkout(
        root=directory,
        gitRepo=repo,
        gitBranch=None if branch in ("", "HEAD") else branch,
        gitHeadSha=head or None,
        # a list, not a generator: see shedproto.host_agent.gate_namespaces (omit_defaults, 3.10)
        gitRemotes=tuple(
            [GitRemote(name=name, urls=tuple(urls)) for name, urls in remotes.items()]
        ),
        observedAt=observed_at,
    )


async def find_checkouts(roots: tuple[str, ...], *, observed_at: str) -> list[Checkout]:
    """Return the checkouts below ``roots``, sorted by root.

    Raises:
        CheckoutDiscoveryError: a directory or a git call failed.

    """
    candidates = await anyio.to_thread.run_sync(_candidates, roots)
    checkouts = []
    for directory in candidates:
        checkout = await _read(directory, observed_at)
        if checkout is not None:
            checkouts.append(checkout)
    return checkouts


def make_checkout_finder(
    now: Callable[[], str],
) -> Callable[[tuple[str, ...]], Awaitable[list[Checkout]]]:
    """Return the host's ``find_checkouts`` hook, stamping checkouts with ``now()``."""

    async def finder(roots: tuple[str, ...]) -> list[Checkout]:
        return await find_checkouts(roots, observed_at=now())

    return finder
