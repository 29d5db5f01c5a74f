"""The ``worktree.*`` handlers over ``git worktree`` (a worktree opens as a workspace)."""

from __future__ import annotations

import anyio
import msgspec

from shedproto.herdr import (
    branch_exists_args,
    checkout_path,
    generated_branch,
    is_dirty_remove_error,
    option_shaped,
    parent_membership,
    parse_worktree_list,
    removed_worktree,
    worktree_add_args,
    worktree_info,
    worktree_remove_args,
    worktree_source,
)
from shedproto.herdr import types as t

from ._model import Workspace
from ._state import AnswerError, E
from ._workspaces import WorkspaceHandlers

LINKED_SOURCE_MESSAGE = "New and open worktree actions start from the repo parent workspace."
"""herdr's ``linked_worktree_source`` message (src/app/api/worktrees.rs:207@v0.8.2)."""

HANDLERS: dict[str, str] = {
    "worktree.list": "_worktree_list",
    "worktree.create": "_worktree_create",
    "worktree.open": "_worktree_open",
    "worktree.remove": "_worktree_remove",
}
"""Method -> the name of the coroutine here that answers it."""


class WorktreeHandlers(WorkspaceHandlers):
    """The ``worktree.*`` handlers over ``git worktree`` (a worktree opens as a workspace)."""

    async def _git(self, directory: str, *args: str, code: str, check: bool = True) -> str | None:
        """Run ``git -C directory args``; its stdout, or ``code`` with git's message.

        With ``check=False`` a non-zero exit returns None instead of answering ``code``.
        """
        try:
            done = await anyio.run_process(
                ["git", "-C", directory, *args], check=False, env=self.environ
            )
        except OSError as exc:
            raise AnswerError(code, f"cannot run git: {exc}") from None
        if done.returncode != 0:
            if not check:
                return None
            message = done.stderr.decode(errors="replace").strip() or f"git {args[0]} failed"
            raise AnswerError(code, message)
        return done.stdout.decode(errors="replace").strip()

    async def _git_out(self, directory: str, *args: str, code: str) -> str:
        """Run git as :meth:`_git` does and return its stdout (a failure answers ``code``)."""
        out = await self._git(directory, *args, code=code)
        assert out is not None  # checked: a failure raised
        return out

    async def _repo(
        self, workspace_id: str | None, cwd: str | None
    ) -> tuple[t.WorktreeSourceInfo, Workspace | None]:
        ws = None if workspace_id is None else self._find_workspace(workspace_id)
        root_pane = ws.panes()[0] if ws is not None and ws.panes() else None
        directory = (root_pane.cwd if root_pane else None) or cwd or self.cwd
        top = await self._git_out(
            directory, "rev-parse", "--show-toplevel", code="worktree_not_found"
        )
        common = await self._git_out(
            directory, "rev-parse", "--path-format=absolute", "--git-common-dir",
            code="worktree_not_found",
        )  # fmt: skip
        return worktree_source(top, common, ws.id if ws else None), ws

    def _refuse_linked_source(self, source: t.WorktreeSourceInfo, given: Workspace | None) -> None:
        """Answer ``linked_worktree_source`` when a create or open starts from a linked worktree."""
        tree = given.worktree if given is not None else None
        linked = tree is not None and tree.is_linked_worktree
        if linked or source.source_checkout_path != source.repo_root:
            raise AnswerError(E.LINKED_WORKTREE_SOURCE, LINKED_SOURCE_MESSAGE)

    async def _ensure_parent(
        self, source: t.WorktreeSourceInfo, given: Workspace | None
    ) -> Workspace:
        """Make the repository's workspace the group's primary, opening one if none is open.

        The primary is the workspace the request named, else an open primary of
        the same repository, else one open on the repository's checkout, else a
        new unfocused workspace there. A workspace that was already open and
        becomes a primary is announced with ``workspace_updated`` (herdrdev/herdr
        src/app/api/worktrees.rs:380-405, :447-470@v0.8.2).
        """
        parent = given
        if parent is None:
            parent = next(
                (
                    ws for ws in self.workspaces
                    if ws.worktree is not None and not ws.worktree.is_linked_worktree
                    and ws.worktree.repo_key == source.repo_key
                ),
                None,
            ) or self._open_workspace(source.source_checkout_path)  # fmt: skip
        if parent is None:
            parent = next(
                (
                    ws for ws in self.workspaces
                    if ws.worktree is None and ws.panes()
                    and ws.panes()[0].cwd == source.source_checkout_path
                ),
                None,
            )  # fmt: skip
        if parent is None:
            created = await self._workspace_create(
                "",
                t.WorkspaceCreateParams(cwd=source.source_checkout_path, focus=False),
                worktree=parent_membership(source),
            )
            return self._find_workspace(created.workspace.workspace_id)
        membership = parent_membership(source)
        if parent.worktree != membership:
            parent.worktree = membership
            self.hub.emit(t.WorkspaceUpdatedEventData(workspace=self._ws_info(parent)))
        return parent

    def _open_workspace(self, path: str) -> Workspace | None:
        for ws in self.workspaces:
            if ws.worktree is not None and ws.worktree.checkout_path == path:
                return ws
        return None

    async def _worktrees(self, source: t.WorktreeSourceInfo) -> list[t.WorktreeInfo]:
        text = await self._git_out(
            source.repo_root, "worktree", "list", "--porcelain", code="worktree_not_found"
        )
        out = []
        for entry in parse_worktree_list(text):
            ws = self._open_workspace(entry.path)
            out.append(worktree_info(entry, source.repo_root, ws.id if ws else None))
        return out

    async def _worktree_list(self, id: str, params: t.WorktreeListParams) -> t.WorktreeListReply:
        source, _ = await self._repo(params.workspace_id, params.cwd)
        return t.WorktreeListReply(source=source, worktrees=await self._worktrees(source))

    async def _open_as_workspace(
        self, source: t.WorktreeSourceInfo, info: t.WorktreeInfo, label: str | None, focus: bool
    ) -> t.WorkspaceCreatedReply:
        membership = t.WorkspaceWorktreeInfo(
            repo_key=source.repo_key, repo_name=source.repo_name, repo_root=source.repo_root,
            checkout_path=info.path, is_linked_worktree=info.is_linked_worktree,
        )  # fmt: skip
        params = t.WorkspaceCreateParams(cwd=info.path, label=label or info.label, focus=focus)
        return await self._workspace_create("", params, worktree=membership)

    async def _worktree_create(
        self, id: str, params: t.WorktreeCreateParams
    ) -> t.WorktreeCreatedReply:
        source, given = await self._repo(params.workspace_id, params.cwd)
        self._refuse_linked_source(source, given)
        branch = params.branch or generated_branch(next(self._worktree_seeds))
        refused = option_shaped(branch, params.base)
        if refused is not None:
            raise AnswerError(E.INVALID_PARAMS, f"not a branch or commit: {refused}")
        path = checkout_path(
            source.repo_root, params.path, self.worktrees_dir, source.repo_name, branch
        )
        exists = await self._git(
            source.repo_root, *branch_exists_args(branch),
            code="worktree_create_failed", check=False,
        )  # fmt: skip
        args = worktree_add_args(path, branch, params.base, branch_exists=exists is not None)
        await self._git(source.repo_root, *args, code="worktree_create_failed")
        real = await anyio.Path(path).resolve()
        entries = await self._worktrees(source)
        matching = [w for w in entries if await anyio.Path(w.path).resolve() == real]
        if not matching:
            raise AnswerError("worktree_create_failed", f"git did not list {path}")
        info = matching[0]
        await self._ensure_parent(source, given)
        created = await self._open_as_workspace(source, info, params.label, params.focus)
        info = msgspec.structs.replace(info, open_workspace_id=created.workspace.workspace_id)
        self.hub.emit(t.WorktreeCreatedEventData(workspace=created.workspace, worktree=info))
        return t.WorktreeCreatedReply(
            workspace=created.workspace, tab=created.tab, root_pane=created.root_pane,
            worktree=info,
        )  # fmt: skip

    async def _worktree_open(self, id: str, params: t.WorktreeOpenParams) -> t.WorktreeOpenedReply:
        source, given = await self._repo(params.workspace_id, params.cwd)
        self._refuse_linked_source(source, given)
        entries = await self._worktrees(source)
        wanted = await anyio.Path(params.path).resolve() if params.path else None
        info = None
        for entry in entries:
            if wanted is not None:
                if await anyio.Path(entry.path).resolve() == wanted:
                    info = entry
            elif params.branch is not None and entry.branch == params.branch:
                info = entry
        if info is None:
            raise AnswerError("worktree_not_found", "worktree cannot be opened")
        await self._ensure_parent(source, given)
        open_ws = self._open_workspace(info.path)
        if open_ws is not None:
            if params.focus:
                await self._workspace_focus(id, t.WorkspaceTarget(workspace_id=open_ws.id))
            tab = open_ws.active_tab or open_ws.tabs[0]
            pane = tab.focused_pane or tab.panes()[0]
            reply = t.WorktreeOpenedReply(
                workspace=self._ws_info(open_ws), tab=self._tab_info(tab),
                root_pane=self._pane_info(pane), worktree=info, already_open=True,
            )  # fmt: skip
        else:
            created = await self._open_as_workspace(source, info, params.label, params.focus)
            info = msgspec.structs.replace(info, open_workspace_id=created.workspace.workspace_id)
            reply = t.WorktreeOpenedReply(
                workspace=created.workspace, tab=created.tab, root_pane=created.root_pane,
                worktree=info, already_open=False,
            )  # fmt: skip
        self.hub.emit(
            t.WorktreeOpenedEventData(
                workspace=reply.workspace, worktree=info, already_open=reply.already_open
            )
        )
        return reply

    async def _worktree_remove(
        self, id: str, params: t.WorktreeRemoveParams
    ) -> t.WorktreeRemovedReply:
        ws = self._find_workspace(params.workspace_id)
        tree = ws.worktree
        if tree is None or not tree.is_linked_worktree:
            raise AnswerError("not_linked_worktree", f"workspace {ws.id} is not a linked worktree")
        args = worktree_remove_args(tree.checkout_path, params.force)
        try:
            await self._git(tree.repo_root, *args, code="worktree_remove_failed")
        except AnswerError as failure:
            if is_dirty_remove_error(failure.message):
                raise AnswerError("dirty_worktree_requires_force", failure.message) from None
            raise
        info = self._ws_info(ws)
        worktree = removed_worktree(tree.checkout_path)
        await self._close_all(ws.panes())
        self.hub.emit(
            t.WorktreeRemovedEventData(
                workspace_id=ws.id, workspace=info, worktree=worktree, forced=params.force
            )
        )
        return t.WorktreeRemovedReply(
            workspace_id=ws.id, path=tree.checkout_path, forced=params.force
        )
