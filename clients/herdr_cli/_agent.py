"""``herdr agent ...``: the agent subcommands over the socket."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._agent_start import agent_start
from ._args import AGENT_STATUSES, read_format, read_source, take_value, timeout_flag, u64
from ._runtime import Context, Usage, dumps
from ._terminal import agent_attach

__all__ = ["AGENT"]

Handler = Callable[[Context, Sequence[str]], int]


def _status(value: str) -> str:
    if value not in AGENT_STATUSES:
        raise Usage(
            f"invalid agent status: {value} (expected idle, working, blocked, done, or unknown)"
        )
    return value


def agent_list(ctx: Context, args: Sequence[str]) -> int:
    """``agent list``."""
    if args:
        raise Usage("usage: herdr agent list")
    return ctx.call("cli:agent:list", "agent.list", {})


def _target(verb: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        if len(args) != 1:
            raise Usage(f"usage: herdr agent {verb} <target>")
        return ctx.call(f"cli:agent:{verb}", f"agent.{verb}", {"target": args[0]})

    return run


def _waits(args: Sequence[str], start: int, *, allow_wait: bool) -> dict[str, Any]:
    found: dict[str, Any] = {"until": [], "timeout_ms": None, "wait": False}
    index = start
    while index < len(args):
        flag = args[index]
        if flag == "--wait" and allow_wait:
            found["wait"] = True
            index += 1
        elif flag == "--until":
            if index + 1 >= len(args):
                raise Usage("--until requires at least one status")
            found["until"].append(_status(args[index + 1]))
            index += 2
        elif flag == "--timeout":
            if index + 1 >= len(args):
                raise Usage("missing value for --timeout")
            found["timeout_ms"] = timeout_flag(args[index + 1])
            index += 2
        elif flag in ("help", "--help", "-h") and not allow_wait:
            raise Usage("usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]", 0)
        else:
            raise Usage(f"unknown option: {flag}")
    return found


def agent_wait(ctx: Context, args: Sequence[str]) -> int:
    """``agent wait TARGET [--until STATUS]... [--timeout MS]``."""
    if not args:
        raise Usage("usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]")
    found = _waits(args, 1, allow_wait=False)
    params = {"target": args[0], "until": found["until"], "timeout_ms": found["timeout_ms"]}
    return ctx.call("cli:agent:wait", "agent.wait", params)


def agent_prompt(ctx: Context, args: Sequence[str]) -> int:
    """``agent prompt TARGET TEXT [--wait] [--until STATUS]... [--timeout MS]``."""
    if not args:
        raise Usage(
            "usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]"
        )
    if len(args) < 2:
        raise Usage("agent prompt requires text")
    found = _waits(args, 2, allow_wait=True)
    if found["until"] and not found["wait"]:
        raise Usage("--until requires --wait")
    if found["timeout_ms"] is not None and not found["wait"]:
        raise Usage("--timeout requires --wait")
    params: dict[str, Any] = {"target": args[0], "text": args[1]}
    if found["wait"]:
        wait = {"until": found["until"], "timeout_ms": found["timeout_ms"]}
        params["wait"] = {key: value for key, value in wait.items() if value is not None}
    return ctx.call("cli:agent:prompt", "agent.prompt", params)


def agent_rename(ctx: Context, args: Sequence[str]) -> int:
    """``agent rename TARGET NAME|--clear``."""
    if len(args) != 2:
        raise Usage("usage: herdr agent rename <target> <name>|--clear")
    name = None if args[1] == "--clear" else args[1]
    return ctx.call("cli:agent:rename", "agent.rename", {"target": args[0], "name": name})


def agent_send_keys(ctx: Context, args: Sequence[str]) -> int:
    """``agent send-keys TARGET KEY...`` (prints the answer line)."""
    if len(args) < 2:
        raise Usage("usage: herdr agent send-keys <target> <key> [key ...]")
    params = {"target": args[0], "keys": list(args[1:])}
    return ctx.call("cli:agent:send-keys", "agent.send_keys", params)


def agent_read(ctx: Context, args: Sequence[str]) -> int:
    """``agent read TARGET [--source S] [--lines N] [--format F] [--ansi]``: prints the text."""
    if not args:
        raise Usage(
            "usage: herdr agent read <target> [--source visible|recent|recent-unwrapped] "
            "[--lines N] [--format text|ansi] [--ansi]"
        )
    params: dict[str, Any] = {"target": args[0], "source": "recent", "format": "text"}
    params["strip_ansi"] = True
    index = 1
    while index < len(args):
        flag = args[index]
        if flag == "--ansi":
            params.update(format="ansi", strip_ansi=False)
            index += 1
            continue
        value = take_value(args, index, ("--source", "--lines", "--format"))
        if flag == "--source":
            params["source"] = read_source(value)
        elif flag == "--lines":
            params["lines"] = u64(flag, value)
        else:
            params["format"] = read_format(value)
            params["strip_ansi"] = value != "ansi"
        index += 2
    return ctx.call_read("cli:agent:read", "agent.read", params)


def agent_explain(ctx: Context, args: Sequence[str]) -> int:
    """``agent explain TARGET [--json|--format text|json] [--verbose]``.

    The ``--file PATH --agent LABEL`` form evaluates herdr's local detection
    manifests and is not available here (exit 1, one line).
    """
    usage = "usage: herdr agent explain <target> [--json]"
    json_out = verbose = False
    target = None
    local = False
    index = 0
    while index < len(args):
        flag = args[index]
        if flag in ("--file", "--agent", "--format"):
            if index + 1 >= len(args):
                raise Usage(f"missing value for {flag}")
            value = args[index + 1]
            if flag == "--format":
                if value not in ("json", "text"):
                    raise Usage(f"invalid --format: {value} (expected text or json)")
                json_out = value == "json"
            else:
                local = True
            index += 2
        elif flag == "--json":
            json_out = True
            index += 1
        elif flag in ("--verbose", "-v"):
            verbose = True
            index += 1
        elif flag in ("help", "--help", "-h"):
            raise Usage(
                "usage: herdr agent explain <target> [--json|--verbose]\n"
                "usage: herdr agent explain --file PATH --agent LABEL [--json|--verbose]",
                0,
            )
        elif flag.startswith("-"):
            raise Usage(f"unknown option: {flag}")
        else:
            if target is not None:
                raise Usage(usage)
            target = flag
            index += 1
    if local:
        ctx.err("agent explain --file needs herdr's local detection manifests; not available here")
        return 1
    if target is None:
        raise Usage(usage + "\nusage: herdr agent explain --file PATH --agent LABEL [--json]")
    response = ctx.request("cli:agent:explain", "agent.explain", {"target": target})
    if "error" in response:
        ctx.err(dumps(response))
        return 1
    explain = response.get("result", {}).get("explain", {})
    if json_out:
        ctx.out(dumps(explain))
    else:
        _explain_text(ctx, explain, verbose=verbose)
    return 0


def _explain_text(ctx: Context, explain: dict[str, Any], *, verbose: bool) -> None:
    ctx.out(f"agent: {explain.get('agent') or 'unknown'}")
    ctx.out(f"state: {explain.get('state') or 'unknown'}")
    source = explain.get("manifest_source") or "none"
    ctx.out(f"manifest: {source} {explain.get('manifest_version') or 'unknown'}")
    rule = explain.get("matched_rule")
    if isinstance(rule, dict):
        region, priority = rule.get("region") or "-", rule.get("priority") or 0
        ctx.out(f"rule: {rule.get('id') or '-'} (region={region} priority={priority})")
    else:
        ctx.out("rule: none")
    for key in ("fallback_reason", "screen_detection_skip_reason", "skipped_update_reason"):
        if isinstance(explain.get(key), str):
            ctx.out(f"{key}: {explain[key]}")
    if isinstance(explain.get("warning"), str):
        ctx.out(f"warning: {explain['warning']}")
    if verbose:
        flags = [f"{name}={str(bool(explain.get('visible_' + name))).lower()}" for name in
                 ("idle", "blocker", "working")]  # fmt: skip
        ctx.out("visible: " + " ".join(flags))
        ctx.out(f"cached_remote_version: {explain.get('cached_remote_version') or 'none'}")
        shadow = str(bool(explain.get("local_override_shadowing_remote"))).lower()
        ctx.out(f"local_override_shadowing_remote: {shadow}")


AGENT: tuple[dict[str, Handler], list[str]] = (
    {
        "list": agent_list,
        "get": _target("get"),
        "read": agent_read,
        "send-keys": agent_send_keys,
        "prompt": agent_prompt,
        "rename": agent_rename,
        "focus": _target("focus"),
        "wait": agent_wait,
        "attach": agent_attach,
        "start": agent_start,
        "explain": agent_explain,
    },
    [
        "herdr agent commands:",
        "  herdr agent list",
        "  herdr agent get <target>",
        "  herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] "
        "[--lines N] [--format text|ansi] [--ansi]",
        "  herdr agent send-keys <target> <key> [key ...]",
        "  herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]",
        "  herdr agent rename <target> <name>|--clear",
        "  herdr agent focus <target>",
        "  herdr agent wait <target> [--until STATUS]... [--timeout MS]",
        "  herdr agent attach <target> [--takeover]",
        "  herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]",
        "  herdr agent explain <target> [--json|--format text|json] [--verbose]",
        "  targets accept unique agent names and pane ids that currently host agents",
    ],
)
