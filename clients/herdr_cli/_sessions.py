"""``herdr workspace``, ``tab`` and ``worktree``: the session-structure subcommands."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ._args import env_pair, parse_options, take_value, token_pair, u64
from ._runtime import Context, Usage

__all__ = ["TAB", "WORKSPACE", "WORKTREE"]

Handler = Callable[[Context, Sequence[str]], int]


def _exactly_one(args: Sequence[str], usage: str) -> str:
    if len(args) != 1:
        raise Usage(usage)
    return args[0]


def _create_params(args: Sequence[str], *, workspace: bool) -> dict[str, Any]:
    values = ["--cwd", "--label", "--env"] + (["--workspace"] if workspace else [])
    opts = parse_options(args, values=values, flags=["--focus", "--no-focus"])
    env = dict(env_pair(raw) for raw in opts.all("--env"))
    focus = False
    for flag in opts.flags:
        focus = flag == "--focus"
    params: dict[str, Any] = {"cwd": opts.last("--cwd"), "focus": focus, "env": env}
    params["label"] = opts.last("--label")
    if workspace:
        params["workspace_id"] = opts.last("--workspace")
    return params


def workspace_list(ctx: Context, args: Sequence[str]) -> int:
    """``workspace list`` -> ``workspace.list``."""
    if args:
        raise Usage("usage: herdr workspace list")
    return ctx.call("cli:workspace:list", "workspace.list", {})


def workspace_create(ctx: Context, args: Sequence[str]) -> int:
    """``workspace create [--cwd] [--label] [--env K=V] [--focus|--no-focus]``."""
    params = _create_params(args, workspace=False)
    return ctx.call("cli:workspace:create", "workspace.create", params)


def _target(group: str, verb: str) -> Handler:
    """``GROUP VERB ID`` -> ``group.verb`` with ``{group}_id``."""
    key = f"{group}_id"

    def run(ctx: Context, args: Sequence[str]) -> int:
        target = _exactly_one(args, f"usage: herdr {group} {verb} <{key}>")
        return ctx.call(f"cli:{group}:{verb}", f"{group}.{verb}", {key: target})

    return run


def _rename(group: str) -> Handler:
    """``GROUP rename ID LABEL...`` (the label words joined with spaces) -> ``group.rename``."""
    key = f"{group}_id"

    def run(ctx: Context, args: Sequence[str]) -> int:
        if len(args) < 2:
            raise Usage(f"usage: herdr {group} rename <{key}> <label>")
        params = {key: args[0], "label": " ".join(args[1:])}
        return ctx.call(f"cli:{group}:rename", f"{group}.rename", params)

    return run


def workspace_report_metadata(ctx: Context, args: Sequence[str]) -> int:
    """``workspace report-metadata ID --source ID [--token N=V] [--clear-token N] ...``."""
    if not args:
        raise Usage(
            "usage: herdr workspace report-metadata <workspace_id> --source ID "
            "[--token NAME=VALUE] [--clear-token NAME] [--seq N] [--ttl-ms N]"
        )
    tokens: dict[str, str | None] = {}
    source = seq = ttl = None
    rest = list(args[1:])
    index = 0
    while index < len(rest):
        flag = rest[index]
        value = take_value(
            rest, index, ("--source", "--token", "--clear-token", "--seq", "--ttl-ms")
        )
        if flag == "--source":
            source = value
        elif flag == "--token":
            key, token = token_pair(value)
            tokens[key] = token
        elif flag == "--clear-token":
            tokens[value] = None
        elif flag == "--seq":
            seq = u64(flag, value)
        else:
            ttl = u64(flag, value)
        index += 2
    if source is None or not source.strip():
        raise Usage("missing required --source")
    if not tokens:
        raise Usage("missing token to set or clear")
    params: dict[str, Any] = {"workspace_id": args[0], "source": source, "tokens": tokens}
    params.update({"seq": seq, "ttl_ms": ttl})
    return ctx.call_ok("workspace.report_metadata", params)


def workspace_close(ctx: Context, args: Sequence[str]) -> int:
    """``workspace close ID [--group]`` -> ``workspace.close`` (``--group``: ``close_group``).

    ``--group`` closes a worktree group's primary with its linked workspaces;
    herdr 0.8.2's CLI (protocol 20) has no such flag. Anything else is a
    usage error naming the usage line herdr prints for a bad invocation.
    """
    grouped = ctx.client_protocol != 20
    usage = "usage: herdr workspace close <workspace_id>" + (" [--group]" if grouped else "")
    rest = [arg for arg in args if not (grouped and arg == "--group")]
    if len(rest) != 1 or rest[0].startswith("-"):
        raise Usage(usage)
    params: dict[str, Any] = {"workspace_id": rest[0]}
    if len(rest) != len(args):
        params["close_group"] = True
    return ctx.call("cli:workspace:close", "workspace.close", params)


WORKSPACE_HELP = [
    "herdr workspace commands:",
    "  herdr workspace list",
    "  herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus] [--no-focus]",
    "  herdr workspace get <workspace_id>",
    "  herdr workspace focus <workspace_id>",
    "  herdr workspace rename <workspace_id> <label>",
    "  herdr workspace report-metadata <workspace_id> --source ID [--token NAME=VALUE] "
    "[--clear-token NAME] [--seq N] [--ttl-ms N]",
    "  herdr workspace close <workspace_id> [--group]",
]

WORKSPACE: tuple[dict[str, Handler], list[str]] = (
    {
        "list": workspace_list,
        "create": workspace_create,
        "get": _target("workspace", "get"),
        "focus": _target("workspace", "focus"),
        "rename": _rename("workspace"),
        "report-metadata": workspace_report_metadata,
        "close": workspace_close,
    },
    WORKSPACE_HELP,
)


def tab_list(ctx: Context, args: Sequence[str]) -> int:
    """``tab list [--workspace ID]``."""
    opts = parse_options(args, values=["--workspace"])
    return ctx.call("cli:tab:list", "tab.list", {"workspace_id": opts.last("--workspace")})


def tab_create(ctx: Context, args: Sequence[str]) -> int:
    """``tab create [--workspace] [--cwd] [--label] [--env] [--focus|--no-focus]``."""
    return ctx.call("cli:tab:create", "tab.create", _create_params(args, workspace=True))


TAB: tuple[dict[str, Handler], list[str]] = (
    {
        "list": tab_list,
        "create": tab_create,
        "get": _target("tab", "get"),
        "focus": _target("tab", "focus"),
        "rename": _rename("tab"),
        "close": _target("tab", "close"),
    },
    [
        "herdr tab commands:",
        "  herdr tab list [--workspace <workspace_id>]",
        "  herdr tab create [--workspace <workspace_id>] [--cwd PATH] [--label TEXT] "
        "[--env KEY=VALUE] [--focus] [--no-focus]",
        "  herdr tab get <tab_id>",
        "  herdr tab focus <tab_id>",
        "  herdr tab rename <tab_id> <label>",
        "  herdr tab close <tab_id>",
    ],
)


def absolute_path(ctx: Context, value: str) -> str:
    """Expand ``~`` (from ``HOME``) and make ``value`` absolute against the working directory."""
    home = ctx.env.get("HOME")
    if home and (value == "~" or value.startswith("~/")):
        value = home + value[1:]
    return value if os.path.isabs(value) else os.path.join(os.getcwd(), value)


_WT_CREATE_USAGE = (
    "usage: herdr worktree create [--workspace ID | --cwd PATH] [--branch NAME] [--base REF] "
    "[--path PATH] [--label TEXT] [--focus] [--no-focus]"
)
_WT_OPEN_USAGE = (
    "usage: herdr worktree open [--workspace ID | --cwd PATH] (--path PATH | --branch NAME) "
    "[--label TEXT] [--focus] [--no-focus]"
)


def _worktree_params(
    ctx: Context, args: Sequence[str], values: list[str], usage: str
) -> dict[str, Any]:
    opts = parse_options(args, values=values, flags=["--focus", "--no-focus", "--json"])
    params: dict[str, Any] = {}
    for flag in values:
        value = opts.last(flag)
        key = {"--workspace": "workspace_id"}.get(flag, flag[2:])
        params[key] = absolute_path(ctx, value) if value and flag in ("--cwd", "--path") else value
    if params.get("workspace_id") is not None and params.get("cwd") is not None:
        raise Usage(usage)
    focus = False
    for flag in opts.flags:
        if flag != "--json":
            focus = flag == "--focus"
    if "--label" in values:
        params["focus"] = focus
    return params


def worktree_list(ctx: Context, args: Sequence[str]) -> int:
    """``worktree list [--workspace ID | --cwd PATH]`` (always JSON)."""
    params = _worktree_params(
        ctx,
        args,
        ["--workspace", "--cwd"],
        "usage: herdr worktree list [--workspace ID | --cwd PATH]",
    )
    return ctx.call("cli:worktree:list", "worktree.list", params)


def worktree_create(ctx: Context, args: Sequence[str]) -> int:
    """``worktree create [--workspace|--cwd] [--branch] [--base] [--path] [--label] [--focus]``."""
    values = ["--workspace", "--cwd", "--branch", "--base", "--path", "--label"]
    params = _worktree_params(ctx, args, values, _WT_CREATE_USAGE)
    return ctx.call("cli:worktree:create", "worktree.create", params)


def worktree_open(ctx: Context, args: Sequence[str]) -> int:
    """``worktree open [--workspace|--cwd] (--path | --branch) [--label] [--focus]``."""
    values = ["--workspace", "--cwd", "--path", "--branch", "--label"]
    params = _worktree_params(ctx, args, values, _WT_OPEN_USAGE)
    if (params["path"] is None) == (params["branch"] is None):
        raise Usage(_WT_OPEN_USAGE)
    return ctx.call("cli:worktree:open", "worktree.open", params)


def worktree_remove(ctx: Context, args: Sequence[str]) -> int:
    """``worktree remove --workspace ID [--force]``."""
    opts = parse_options(args, values=["--workspace"], flags=["--force", "--json"])
    workspace = opts.last("--workspace")
    if workspace is None:
        raise Usage("usage: herdr worktree remove --workspace ID [--force]")
    params = {"workspace_id": workspace, "force": opts.has("--force")}
    return ctx.call("cli:worktree:remove", "worktree.remove", params)


WORKTREE: tuple[dict[str, Handler], list[str]] = (
    {
        "list": worktree_list,
        "create": worktree_create,
        "open": worktree_open,
        "remove": worktree_remove,
    },
    [
        "herdr worktree commands:",
        "  herdr worktree list [--workspace ID | --cwd PATH]",
        "  " + _WT_CREATE_USAGE.removeprefix("usage: "),
        "  " + _WT_OPEN_USAGE.removeprefix("usage: "),
        "  herdr worktree remove --workspace ID [--force]",
    ],
)
