"""``herdr plugin ...``: the plugin subcommands that go through the socket.

``install``/``uninstall`` (a git checkout from GitHub) and ``config-dir``
(herdr's local plugin directories) do not talk to the server; they answer
with one line on stderr and exit 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._args import env_pair, parse_options
from ._runtime import Context, Usage
from ._sessions import absolute_path

__all__ = ["PLUGIN"]

Handler = Callable[[Context, Sequence[str]], int]
PLACEMENTS = {"overlay": "overlay", "popup": "popup", "split": "split", "tab": "tab"}
PLACEMENTS.update(zoomed="zoomed", fullscreen="zoomed")


def plugin_link(ctx: Context, args: Sequence[str]) -> int:
    """``plugin link PATH [--disabled|--enabled]``."""
    if not args:
        raise Usage("usage: herdr plugin link <path> [--disabled]")
    opts = parse_options(args[1:], flags=["--disabled", "--enabled"])
    enabled = True
    for flag in opts.flags:
        enabled = flag == "--enabled"
    params = {"path": absolute_path(ctx, args[0]), "enabled": enabled}
    return ctx.call("cli:plugin", "plugin.link", params)


def plugin_list(ctx: Context, args: Sequence[str]) -> int:
    """``plugin list [--plugin ID] [--json]``: a summary, or the answer line with ``--json``."""
    opts = parse_options(args, values=["--plugin"], flags=["--json"])
    response = ctx.request("cli:plugin", "plugin.list", {"plugin_id": opts.last("--plugin")})
    plugins = response.get("result", {}).get("plugins")
    if opts.has("--json") or "error" in response or not isinstance(plugins, list):
        return ctx.print_response(response)
    if not plugins:
        ctx.out("No plugins installed.")
        return 0
    ctx.out(f"{len(plugins)} plugin{'' if len(plugins) == 1 else 's'} installed:")
    from shedproto.herdr import config_dir

    for plugin in plugins:
        state = "enabled" if plugin.get("enabled") else "disabled"
        warnings = plugin.get("warnings") or []
        warning = f"; {len(warnings)} warning(s)" if warnings else ""
        plugin_id = plugin.get("plugin_id")
        ctx.out(f"- {plugin_id} ({plugin.get('name')}) {state} [{_source(plugin)}{warning}]")
        ctx.out(f"  config: {config_dir(ctx.env)}/plugins/config/{plugin_id}")
        for text in warnings:
            ctx.out(f"  warning: {text}")
    return 0


def _source(plugin: dict[str, Any]) -> str:
    """Say where a plugin came from: ``github:OWNER/REPO[/SUB]@REF`` or ``local:ROOT``."""
    source = plugin.get("source") or {}
    if source.get("kind") != "github":
        return f"local:{plugin.get('plugin_root')}"
    subdir = f"/{source['subdir']}" if source.get("subdir") else ""
    ref = source.get("requested_ref") or source.get("resolved_commit") or "unknown"
    owner, repo = source.get("owner") or "unknown", source.get("repo") or "unknown"
    return f"github:{owner}/{repo}{subdir}@{ref}"


def _plugin_target(verb: str, method: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        if len(args) != 1:
            raise Usage(f"usage: herdr plugin {verb} <plugin_id>")
        return ctx.call("cli:plugin", method, {"plugin_id": args[0]})

    return run


def plugin_log(ctx: Context, args: Sequence[str]) -> int:
    """``plugin log [list] [--plugin ID] [--limit N]``."""
    rest = list(args[1:]) if args and args[0] == "list" else list(args)
    opts = parse_options(rest, values=["--plugin", "--limit"])
    limit = opts.last("--limit")
    if limit is not None and not (limit.isascii() and limit.isdigit()):
        raise Usage(f"invalid --limit value: {limit}")
    params: dict[str, Any] = {"plugin_id": opts.last("--plugin")}
    params["limit"] = None if limit is None else int(limit)
    return ctx.call("cli:plugin", "plugin.log.list", params)


def plugin_action(ctx: Context, args: Sequence[str]) -> int:
    """``plugin action list [--plugin ID]`` and ``plugin action invoke ACTION [--plugin ID]``."""
    help_lines = [
        "herdr plugin action commands:",
        "  herdr plugin action list [--plugin ID]",
        "  herdr plugin action invoke <action_id> [--plugin ID]",
    ]
    verb = args[0] if args else None
    if verb == "list":
        opts = parse_options(args[1:], values=["--plugin"])
        return ctx.call("cli:plugin", "plugin.action.list", {"plugin_id": opts.last("--plugin")})
    if verb == "invoke":
        if len(args) < 2:
            raise Usage("usage: herdr plugin action invoke <action_id> [--plugin ID]")
        opts = parse_options(args[2:], values=["--plugin"])
        params: dict[str, Any] = {"action_id": args[1], "plugin_id": opts.last("--plugin")}
        params["context"] = {"invocation_source": "cli"}
        return ctx.call("cli:plugin", "plugin.action.invoke", params)
    raise Usage("\n".join(help_lines), 0 if verb in ("help", "--help", "-h") else 2)


def _popup_size(flag: str, value: str) -> int | str:
    """Parse a popup size: ``N`` cells (an integer) or ``N%`` (1-100, kept as the string)."""
    number = value[:-1] if value.endswith("%") else value
    valid = number.isascii() and number.isdigit() and int(number) > 0
    if value.endswith("%"):
        if not valid or int(number) > 100:
            raise Usage(f"{flag} must be a percentage from 1% to 100%")
        return f"{int(number)}%"
    if not valid or int(number) > 65535:
        raise Usage(f"{flag} must be a number of cells or a percentage like 80%")
    return int(number)


def plugin_pane(ctx: Context, args: Sequence[str]) -> int:
    """``plugin pane open --plugin ID --entrypoint NAME [...]``, ``focus ID``, ``close ID``."""
    verb = args[0] if args else None
    if verb in ("focus", "close"):
        if len(args) != 2:
            raise Usage(f"usage: herdr plugin pane {verb} <pane_id>")
        return ctx.call("cli:plugin", f"plugin.pane.{verb}", {"pane_id": args[1]})
    if verb != "open":
        help_lines = [
            "herdr plugin pane commands:",
            "  herdr plugin pane open --plugin ID --entrypoint NAME [--placement P] ...",
            "  herdr plugin pane focus <pane_id>",
            "  herdr plugin pane close <pane_id>",
        ]
        raise Usage("\n".join(help_lines), 0 if verb in ("help", "--help", "-h") else 2)
    values = ["--plugin", "--entrypoint", "--placement", "--width", "--height", "--workspace"]
    values += ["--target-pane", "--direction", "--cwd", "--env"]
    opts = parse_options(args[1:], values=values, flags=["--focus", "--no-focus"])
    placement = opts.last("--placement")
    if placement is not None and placement not in PLACEMENTS:
        raise Usage(f"invalid pane placement: {placement}")
    direction = opts.last("--direction")
    if direction is not None and direction not in ("right", "down"):
        raise Usage(f"invalid split direction: {direction}")
    plugin, entrypoint = opts.last("--plugin"), opts.last("--entrypoint")
    if plugin is None:
        raise Usage("missing required --plugin")
    if entrypoint is None:
        raise Usage("missing required --entrypoint")
    width, height = opts.last("--width"), opts.last("--height")
    focus = False
    for flag in opts.flags:
        focus = flag == "--focus"
    params: dict[str, Any] = {"plugin_id": plugin, "entrypoint": entrypoint}
    params["placement"] = None if placement is None else PLACEMENTS[placement]
    params["width"] = None if width is None else _popup_size("--width", width)
    params["height"] = None if height is None else _popup_size("--height", height)
    params.update(workspace_id=opts.last("--workspace"), target_pane_id=opts.last("--target-pane"))
    params.update(direction=direction, cwd=opts.last("--cwd"), focus=focus)
    params["env"] = dict(env_pair(raw) for raw in opts.all("--env"))
    return ctx.call("cli:plugin", "plugin.pane.open", params)


def _local_only(verb: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        del args
        ctx.err(f"herdr plugin {verb} works on herdr's local plugin store; not available here")
        return 1

    return run


PLUGIN: tuple[dict[str, Handler], list[str]] = (
    {
        "install": _local_only("install"),
        "uninstall": _local_only("uninstall"),
        "config-dir": _local_only("config-dir"),
        "link": plugin_link,
        "list": plugin_list,
        "unlink": _plugin_target("unlink", "plugin.unlink"),
        "enable": _plugin_target("enable", "plugin.enable"),
        "disable": _plugin_target("disable", "plugin.disable"),
        "action": plugin_action,
        "log": plugin_log,
        "logs": plugin_log,
        "pane": plugin_pane,
    },
    [
        "herdr plugin commands:",
        "  herdr plugin install <owner>/<repo>[/subdir...] [--ref REF] [--yes]",
        "  herdr plugin uninstall <plugin_id|owner/repo[/subdir...]>",
        "  herdr plugin link <path> [--disabled]",
        "  herdr plugin list [--plugin ID] [--json]",
        "  herdr plugin config-dir <plugin_id>",
        "  herdr plugin unlink <plugin_id>",
        "  herdr plugin enable <plugin_id>",
        "  herdr plugin disable <plugin_id>",
        "  herdr plugin action <list|invoke>",
        "  herdr plugin log list [--plugin ID] [--limit N]",
        "  herdr plugin pane <open|focus|close>",
    ],
)
