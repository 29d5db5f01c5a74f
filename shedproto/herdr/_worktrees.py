"""herdr's worktree rules: checkout paths, branch slugs, ``git worktree list`` parsing.

A new worktree without a ``path`` goes to ``<worktrees dir>/<repo name>/<branch
slug>`` (herdr's default directory is ``~/.herdr/worktrees``); the slug keeps
ASCII letters and digits in lower case and turns every other run into one
``-``. A branch left out is generated as ``worktree/<adjective>-<noun>-<hex>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

__all__ = [
    "GitWorktree",
    "branch_slug",
    "default_checkout_path",
    "generated_branch",
    "is_dirty_remove_error",
    "parse_worktree_list",
]

_PREFIX = "worktree"
_ADJECTIVES = ("brave", "calm", "clear", "green", "lucky", "quiet", "rapid", "silver")
_NOUNS = ("river", "cloud", "field", "forest", "harbor", "meadow", "stone", "valley")


def branch_slug(branch: str) -> str:
    """Return the directory name herdr derives from ``branch``."""
    out: list[str] = []
    for char in branch:
        if char.isascii() and char.isalnum():
            out.append(char.lower())
        elif not out or out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-") or _PREFIX


def generated_branch(seed: int) -> str:
    """Return herdr's generated branch name for ``seed``."""
    adjective = _ADJECTIVES[seed % len(_ADJECTIVES)]
    noun = _NOUNS[(seed // len(_ADJECTIVES)) % len(_NOUNS)]
    return f"{_PREFIX}/{adjective}-{noun}-{seed & 0xFFFF:04x}"


def default_checkout_path(root: str, repo_name: str, branch: str) -> str:
    """Return where a new worktree of ``repo_name`` for ``branch`` goes under ``root``."""
    return str(PurePath(root) / repo_name / branch_slug(branch))


def is_dirty_remove_error(message: str) -> bool:
    """Return whether ``git worktree remove`` refused because the checkout is dirty."""
    lower = message.lower()
    return "contains modified or untracked files" in lower and "use --force" in lower


@dataclass(frozen=True)
class GitWorktree:
    """One entry of ``git worktree list --porcelain``."""

    path: str
    branch: str | None = None
    is_bare: bool = False
    is_detached: bool = False
    is_prunable: bool = False


def parse_worktree_list(text: str) -> list[GitWorktree]:
    """Parse ``git worktree list --porcelain`` output (the first entry is the main checkout)."""
    found: list[GitWorktree] = []
    for block in text.strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields:
            continue
        branch = fields.get("branch")
        found.append(
            GitWorktree(
                path=fields["worktree"],
                branch=branch.removeprefix("refs/heads/") if branch else None,
                is_bare="bare" in fields,
                is_detached="detached" in fields,
                is_prunable="prunable" in fields,
            )
        )
    return found
