"""Worktree groups: ``workspace.close`` of a group's primary and ``close_group`` (issue 26).

Sources: herdrdev/herdr src/app/actions.rs:1680-1697@v0.8.2 (the group a close takes:
every workspace of the primary's repo_key, when there are two or more),
src/app/api/workspaces.rs:298-331@v0.8.2 (0.8.2: one ``workspace_closed``, the target's),
src/app/api/worktrees.rs:380-405@v0.8.2 (a worktree create/open makes the repository's
workspace the primary, opening one when none is), CHANGELOG.md:27@16996f3 (0.9.0: a group
closes only with ``close_group: true``, otherwise it stays open). The refusal's code and
message: the index's stored copies of ``handle_workspace_close`` at 0.9.x (a herdr-derived
tree the index does not name) and two clients' records of live 0.9.1 and 0.9.3 answers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import typing
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

LIMIT = 20

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _member(key: str, linked: bool) -> t.WorkspaceWorktreeInfo:
    return t.WorkspaceWorktreeInfo(
        repo_key=key, repo_name="r", repo_root="/r", checkout_path="/r", is_linked_worktree=linked
    )


def test_closing_a_primary_takes_its_group_and_anything_else_closes_alone() -> None:
    # src/app/actions.rs:1680-1697@v0.8.2: a primary (not linked) with >= 2 members of its key
    primary, child, other = _member("k", False), _member("k", True), _member("o", True)
    trees = [primary, None, child, other, _member("k", True)]
    assert herdr.close_group_members(0, trees) == [0, 2, 4]
    assert herdr.close_group_members(2, trees) == [2]  # a linked member closes alone
    assert herdr.close_group_members(1, trees) == [1]  # not in a group
    assert herdr.close_group_members(0, [primary, other]) == [0]  # a group of one
    with pytest.raises(IndexError):
        herdr.close_group_members(9, trees)


@pytest.mark.parametrize(
    ("version", "intent"),
    [("0.8.2", False), ("0.9.0-preview", True)]
    + [(v, True) for v in ("0.9.0", "0.9.1", "0.9.2", "0.9.3", "0.9.4", "0.9.5")],
)
def test_which_releases_need_group_intent(version: str, intent: bool) -> None:
    # CHANGELOG.md:27@16996f3 (0.9.0); close_group is in protocol 21's published
    # WorkspaceCloseParams (docs/next/api/herdr-api.schema.json@06ef861) and not in 20's
    protocol = {"0.8.2": 20, "0.9.0-preview": 21}.get(version, 22)
    assert herdr.release_for(protocol, version).group_close_intent is intent
    params = typing.get_type_hints(t.PROTOCOL_TABLES[protocol][0]["workspace.close"])["params"]
    assert ("close_group" in params.__struct_fields__) is intent


def _git_repo(root: Path) -> Path:
    repo = root / "proj"
    repo.mkdir()
    who = {"NAME": "t", "EMAIL": "t@example.invalid"}
    env = {
        **os.environ,
        **{f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER") for k, v in who.items()},
    }
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return repo


def _closed(server: HerdrServer) -> list[str]:
    return [
        event.data.workspace_id
        for _, event in server.hub.events
        if isinstance(event.data, t.WorkspaceClosedEventData)
    ]


async def _group(server: HerdrServer, repo: Path, client: AsyncHerdrClient) -> tuple[str, str]:
    created = await client.worktree_create(cwd=str(repo), branch="feat/x")
    listed = await client.workspace_list()
    [primary] = [w for w in listed.workspaces if w.workspace_id != created.workspace.workspace_id]
    return primary.workspace_id, created.workspace.workspace_id


@needs_git
@pytest.mark.parametrize("protocol", [21, 22])
async def test_a_primary_refuses_to_close_its_group_without_close_group(
    short_socket_dir: Path, tmp_path: Path, protocol: int
) -> None:
    repo = _git_repo(tmp_path)
    server = HerdrServer(
        short_socket_dir / "h.sock", protocol=protocol, shell=["/bin/sh"], cwd=str(repo),
        worktrees_dir=str(tmp_path / "trees"),
    )  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path, protocol=protocol)
            primary, child = await _group(server, repo, client)
            # src/app/api/worktrees.rs:396-401@v0.8.2: the repository's workspace was opened
            # for the worktree and became the primary (not linked); the child is linked
            info = (await client.workspace_get(primary)).workspace
            assert info.worktree is not None
            assert not info.worktree.is_linked_worktree
            assert info.worktree.checkout_path == str(repo)
            linked = (await client.workspace_get(child)).workspace.worktree
            assert linked is not None
            assert linked.is_linked_worktree
            # src/app/api/worktrees.rs:127-153@v0.8.2: membership first, then the open events
            created = [
                event.data.workspace.worktree
                for _, event in server.hub.events
                if isinstance(event.data, t.WorkspaceCreatedEventData)
            ]
            assert created == [info.worktree, linked]
            with pytest.raises(herdr.HerdrApiError) as refused:
                await client.workspace_close(primary)
            assert refused.value.code == herdr.HerdrErrorCode.WORKSPACE_GROUP_CLOSE_REQUIRED
            assert refused.value.message == herdr.GROUP_CLOSE_REQUIRED_MESSAGE
            assert len((await client.workspace_list()).workspaces) == 2  # nothing closed
            await client.workspace_close(primary, close_group=True)
            assert (await client.workspace_list()).workspaces == []
            # one workspace_closed per member, in workspace order (primary first)
            assert _closed(server) == [primary, child]
            server.shutdown()


@needs_git
async def test_a_linked_member_closes_alone_and_then_the_primary_closes_plainly(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    repo = _git_repo(tmp_path)
    server = HerdrServer(
        short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(repo),
        worktrees_dir=str(tmp_path / "trees"),
    )  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            primary, child = await _group(server, repo, client)
            await client.workspace_close(child)
            listed = (await client.workspace_list()).workspaces
            assert [w.workspace_id for w in listed] == [primary]
            await client.workspace_close(primary)  # a group of one: no intent needed
            assert _closed(server) == [child, primary]
            server.shutdown()


@needs_git
async def test_herdr_082_closes_the_whole_group_unasked_and_announces_the_target(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    # src/app/actions.rs:1680-1715 and src/app/api/workspaces.rs:318-328@v0.8.2
    repo = _git_repo(tmp_path)
    server = HerdrServer(
        short_socket_dir / "h.sock", protocol=20, shell=["/bin/sh"], cwd=str(repo),
        worktrees_dir=str(tmp_path / "trees"),
    )  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path, protocol=20)
            primary, _child = await _group(server, repo, client)
            await client.workspace_close(primary)
            assert (await client.workspace_list()).workspaces == []
            assert _closed(server) == [primary]
            server.shutdown()


@needs_git
async def test_a_worktree_from_a_linked_worktree_is_refused(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    # src/app/api/worktrees.rs:204-208, 316-320@v0.8.2
    repo = _git_repo(tmp_path)
    server = HerdrServer(
        short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(repo),
        worktrees_dir=str(tmp_path / "trees"),
    )  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            _primary, child = await _group(server, repo, client)
            for call in (
                client.worktree_create(workspace_id=child, branch="feat/y"),
                client.worktree_open(workspace_id=child, branch="main"),
            ):
                with pytest.raises(herdr.HerdrApiError) as refused:
                    await call
                assert refused.value.code == herdr.HerdrErrorCode.LINKED_WORKTREE_SOURCE
            server.shutdown()


@needs_git
async def test_closing_a_primarys_last_tab_or_pane_asks_first(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    # src/app/api/tabs.rs:246-253, src/app/api/panes.rs:1562-1569 and
    # src/app/actions.rs:2004-2012@v0.8.2 (ui.confirm_close, on by default)
    repo = _git_repo(tmp_path)
    server = HerdrServer(
        short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(repo),
        worktrees_dir=str(tmp_path / "trees"),
    )  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            primary, child = await _group(server, repo, client)
            info = (await client.workspace_get(primary)).workspace
            [pane] = (await client.pane_list(workspace_id=primary)).panes
            for call, what in (
                (client.tab_close(info.active_tab_id), "tab"),
                (client.pane_close(pane.pane_id), "pane"),
            ):
                with pytest.raises(herdr.HerdrApiError) as refused:
                    await call
                assert refused.value.code == herdr.HerdrErrorCode.CONFIRMATION_REQUIRED
                assert refused.value.message == f"closing this {what} would close a worktree group"
            assert len((await client.workspace_list()).workspaces) == 2
            # a linked member's last pane closes it as ever
            [linked] = (await client.pane_list(workspace_id=child)).panes
            await client.pane_close(linked.pane_id)
            assert _closed(server) == [child]
            server.shutdown()
