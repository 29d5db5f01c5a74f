"""herdr's worktree rules: checkout paths, branch slugs, git argv, ``git worktree list`` parsing.

A new worktree without a ``path`` goes to ``<worktrees dir>/<repo name>/<branch
slug>`` (herdr's default directory is ``~/.herdr/worktrees``); the slug keeps
ASCII letters and digits in lower case and turns every other run into one
``-``. A branch left out is generated as ``worktree/<adjective>-<noun>-<hex>``.
A relative ``path`` resolves in the repository, as git resolves it. Request
values never reach git as options: paths follow ``--`` and an option-shaped
branch or base is refused (:func:`option_shaped`). The shell runs the argv
these functions build and turns git's output into the protocol's infos here.

Worktree groups: opening or creating a worktree makes the repository's
workspace (the primary, ``is_linked_worktree`` false) and each worktree's
workspace members of one group, keyed by ``repo_key``
(:func:`parent_membership`). Closing the primary closes the group
(:func:`close_group_members`); closing a linked member closes it alone. From
0.9.0 herdr closes a group only when asked (``close_group: true``), and
otherwise answers ``workspace_group_close_required`` with
:data:`GROUP_CLOSE_REQUIRED_MESSAGE`; 0.8.2 closes it without asking.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from . import types as t

__all__ = [
    "GROUP_CLOSE_REQUIRED_MESSAGE",
    "GitWorktree",
    "branch_exists_args",
    "branch_slug",
    "checkout_path",
    "close_group_members",
    "default_checkout_path",
    "generated_branch",
    "is_dirty_remove_error",
    "option_shaped",
    "parent_membership",
    "parse_worktree_list",
    "removed_worktree",
    "worktree_add_args",
    "worktree_info",
    "worktree_remove_args",
    "worktree_source",
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


def option_shaped(*values: str | None) -> str | None:
    """Return the first value git would read as an option (it starts with ``-``), or None."""
    for value in values:
        if value is not None and value.startswith("-"):
            return value
    return None


def checkout_path(
    repo_root: str, path: str | None, worktrees_dir: str, repo_name: str, branch: str
) -> str:
    """Return where ``worktree.create`` checks ``branch`` out: ``path`` (relative to the repo).

    Without ``path`` it is :func:`default_checkout_path` under ``worktrees_dir``.
    """
    chosen = path or default_checkout_path(worktrees_dir, repo_name, branch)
    return posixpath.join(repo_root, chosen)


def branch_exists_args(branch: str) -> list[str]:
    """Return the git arguments whose exit status 0 means local ``branch`` exists."""
    return ["show-ref", "--verify", "--quiet", f"refs/heads/{branch}"]


def worktree_add_args(path: str, branch: str, base: str | None, branch_exists: bool) -> list[str]:
    """Return the ``git worktree add`` arguments: check out ``branch``, or create it at ``base``."""
    if branch_exists:
        return ["worktree", "add", "--", path, branch]
    return ["worktree", "add", "-b", branch, "--", path, *([base] if base else [])]


def worktree_remove_args(path: str, force: bool) -> list[str]:
    """Return the ``git worktree remove`` arguments for ``path``."""
    return ["worktree", "remove", *(["--force"] if force else []), "--", path]


def worktree_source(top: str, common_dir: str, workspace_id: str | None) -> t.WorktreeSourceInfo:
    """Return the repository a checkout belongs to, from git's ``--show-toplevel``/common dir."""
    is_dot_git = posixpath.basename(common_dir) == ".git"
    main = posixpath.dirname(common_dir) if is_dot_git else common_dir
    return t.WorktreeSourceInfo(
        repo_key=common_dir,
        repo_name=posixpath.basename(main),
        repo_root=main,
        source_checkout_path=top,
        source_workspace_id=workspace_id,
    )


def worktree_info(
    entry: GitWorktree, repo_root: str, open_workspace_id: str | None
) -> t.WorktreeInfo:
    """Return herdr's info for one listed worktree (linked unless it is the main checkout)."""
    return t.WorktreeInfo(
        path=entry.path,
        branch=entry.branch,
        is_bare=entry.is_bare,
        is_detached=entry.is_detached,
        is_prunable=entry.is_prunable,
        is_linked_worktree=entry.path != repo_root,
        open_workspace_id=open_workspace_id,
        label=posixpath.basename(entry.path),
    )


def removed_worktree(path: str) -> t.WorktreeInfo:
    """Return the info ``worktree_removed`` carries for the linked checkout at ``path``."""
    return t.WorktreeInfo(
        path=path,
        is_bare=False,
        is_detached=False,
        is_prunable=False,
        is_linked_worktree=True,
        label=posixpath.basename(path),
    )


GROUP_CLOSE_REQUIRED_MESSAGE = (
    "workspace has linked worktree workspaces; use --group (close_group=true in the API) "
    "to close the group"
)
"""The message of herdr's ``workspace_group_close_required`` answer (0.9.0 and later)."""


def parent_membership(source: t.WorktreeSourceInfo) -> t.WorkspaceWorktreeInfo:
    """Return the group membership of the repository's own workspace (the primary)."""
    return t.WorkspaceWorktreeInfo(
        repo_key=source.repo_key,
        repo_name=source.repo_name,
        repo_root=source.repo_root,
        checkout_path=source.source_checkout_path,
        is_linked_worktree=False,
    )


def close_group_members(
    target: int, memberships: Sequence[t.WorkspaceWorktreeInfo | None]
) -> list[int]:
    """Return the indices of the workspaces closing ``memberships[target]`` closes, in order.

    A group's primary takes every workspace of its ``repo_key`` with it when
    the group has at least two; any other workspace closes alone.

    Raises:
        IndexError: ``target`` is not an index of ``memberships``.

    """
    tree = memberships[target]
    if tree is None or tree.is_linked_worktree:
        return [target]
    group = [
        index
        for index, member in enumerate(memberships)
        if member is not None and member.repo_key == tree.repo_key
    ]
    return group if len(group) >= 2 else [target]
