"""``herdr pane ...``: every pane subcommand, built as herdr's CLI builds its request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._args import (
    AGENT_STATUSES,
    env_pair,
    expand_equals,
    finite_float,
    parse_options,
    read_format,
    read_source,
    take_value,
    token_pair,
    u64,
)
from ._runtime import CliError, Context, Usage

__all__ = ["PANE"]

Handler = Callable[[Context, Sequence[str]], int]
DIRECTIONS = ("left", "right", "up", "down")


def _env_pane(ctx: Context) -> str | None:
    value = ctx.env.get("HERDR_PANE_ID")
    return value if value is not None and value.strip() else None


def _usage_from(error: CliError) -> Usage:
    return Usage(str(error))


def _positional_pane(arg: str, pane: str | None) -> str:
    """Take ``arg`` as the one positional pane id.

    Raises:
        Usage: ``arg`` looks like an option, or a pane was already given.

    """
    if arg.startswith("-"):
        raise Usage(f"unknown option: {arg}")
    if pane is not None:
        raise Usage(f"unexpected argument: {arg}")
    return arg


def _direction(value: str) -> str:
    if value not in DIRECTIONS:
        raise Usage(f"invalid pane direction: {value} (expected left, right, up, or down)")
    return value


def pane_list(ctx: Context, args: Sequence[str]) -> int:
    """``pane list [--workspace ID]``."""
    opts = parse_options(args, values=["--workspace"])
    return ctx.call("cli:pane:list", "pane.list", {"workspace_id": opts.last("--workspace")})


def pane_get(ctx: Context, args: Sequence[str]) -> int:
    """``pane get ID``."""
    if len(args) != 1:
        raise Usage("usage: herdr pane get <pane_id>")
    return ctx.call("cli:pane:get", "pane.get", {"pane_id": args[0]})


def pane_current(ctx: Context, args: Sequence[str]) -> int:
    """``pane current [--pane ID|--current]``: ``caller_pane_id`` defaults to ``HERDR_PANE_ID``."""
    caller = _optional_pane(ctx, args, default=_env_pane(ctx))
    return ctx.call("cli:pane:current", "pane.current", {"caller_pane_id": caller})


def _optional_pane(ctx: Context, args: Sequence[str], *, default: str | None) -> str | None:
    """``[--pane ID|--current]``, the last one winning; ``--current`` is ``HERDR_PANE_ID``."""
    pane = default
    index = 0
    while index < len(args):
        if args[index] == "--pane":
            if index + 1 >= len(args):
                raise Usage("missing value for --pane")
            pane = args[index + 1]
            index += 2
        elif args[index] == "--current":
            pane = _env_pane(ctx)
            index += 1
        else:
            raise Usage(f"unknown option: {args[index]}")
    return pane


def _pane_query(name: str, method: str, request_id: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        pane = _optional_pane(ctx, args, default=None)
        return ctx.call(request_id, method, {"pane_id": pane})

    run.__doc__ = f"``pane {name} [--pane ID|--current]`` -> ``{method}``."
    return run


def _directional(args: Sequence[str], usage: str, *, amount: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"pane_id": None}
    index = 0
    while index < len(args):
        flag = args[index]
        if flag == "--current":
            params["pane_id"] = None
            index += 1
            continue
        allowed = ("--pane", "--direction", "--amount") if amount else ("--pane", "--direction")
        value = take_value(args, index, allowed)
        if flag == "--pane":
            params["pane_id"] = value
        elif flag == "--direction":
            params["direction"] = _direction(value)
        else:
            params["amount"] = finite_float(value, "amount")
        index += 2
    if "direction" not in params:
        raise Usage(usage)
    return params


def pane_neighbor(ctx: Context, args: Sequence[str]) -> int:
    """``pane neighbor --direction D [--pane ID|--current]``."""
    usage = "usage: herdr pane neighbor --direction left|right|up|down [--pane ID|--current]"
    return ctx.call("cli:pane:neighbor", "pane.neighbor", _directional(args, usage))


def pane_focus(ctx: Context, args: Sequence[str]) -> int:
    """``pane focus --direction D [--pane ID|--current]`` -> ``pane.focus_direction``."""
    usage = "usage: herdr pane focus --direction left|right|up|down [--pane ID|--current]"
    try:
        params = _directional(args, usage)
    except Usage:
        raise Usage(usage) from None
    return ctx.call("cli:pane:focus", "pane.focus_direction", params)


def pane_resize(ctx: Context, args: Sequence[str]) -> int:
    """``pane resize --direction D [--amount F] [--pane ID|--current]``."""
    usage = (
        "usage: herdr pane resize --direction left|right|up|down [--amount FLOAT] "
        "[--pane ID|--current]"
    )
    return ctx.call("cli:pane:resize", "pane.resize", _directional(args, usage, amount=True))


def pane_zoom(ctx: Context, args: Sequence[str]) -> int:
    """``pane zoom [ID|--pane ID|--current] [--toggle|--on|--off]``."""
    pane = None
    mode = None
    index = 0
    if args and not args[0].startswith("--"):
        pane = args[0]
        index = 1
    while index < len(args):
        flag = args[index]
        if flag == "--pane":
            if index + 1 >= len(args):
                raise Usage("missing value for --pane")
            pane = args[index + 1]
            index += 2
        elif flag == "--current":
            pane = None
            index += 1
        elif flag in ("--toggle", "--on", "--off"):
            if mode is not None:
                raise Usage("provide only one of --toggle, --on, or --off")
            mode = flag[2:]
            index += 1
        else:
            raise Usage(f"unknown option: {flag}")
    return ctx.call("cli:pane:zoom", "pane.zoom", {"pane_id": pane, "mode": mode or "toggle"})


def pane_rename(ctx: Context, args: Sequence[str]) -> int:
    """``pane rename ID LABEL...|--clear``."""
    if len(args) < 2:
        raise Usage("usage: herdr pane rename <pane_id> <label>|--clear")
    label = None if len(args) == 2 and args[1] == "--clear" else " ".join(args[1:])
    return ctx.call("cli:pane:rename", "pane.rename", {"pane_id": args[0], "label": label})


def pane_read(ctx: Context, args: Sequence[str]) -> int:
    """``pane read ID [--source S] [--lines N] [--format F] [--ansi] [--raw]``: prints the text."""
    usage = (
        "usage: herdr pane read <pane_id> [--source visible|recent|recent-unwrapped|detection] "
        "[--lines N] [--format text|ansi] [--ansi] [--raw]"
    )
    items = expand_equals(args, ["--source", "--lines", "--format"])
    opts = parse_options(
        items, values=["--source", "--lines", "--format"], flags=["--ansi", "--raw"], positionals=1
    )
    if not opts.positionals:
        raise Usage(usage)
    params: dict[str, Any] = {"pane_id": opts.positionals[0], "source": "recent"}
    params.update(format="text", strip_ansi=True)
    try:
        _read_options(items, params, raw_flag=True)
    except CliError as exc:
        raise _usage_from(exc) from None
    return ctx.call_read("cli:pane:read", "pane.read", params)


def _read_options(args: Sequence[str], params: dict[str, Any], *, raw_flag: bool) -> None:
    """Apply ``--source``/``--lines``/``--format``/``--ansi``/``--raw`` in order, as herdr does."""
    index = 0
    while index < len(args):
        flag = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if flag == "--source":
            params["source"] = read_source(value)
            index += 2
        elif flag == "--lines":
            params["lines"] = u64("--lines", value)
            index += 2
        elif flag == "--format":
            params["format"] = read_format(value)
            if not raw_flag:
                params["strip_ansi"] = value != "ansi"
            index += 2
        elif flag == "--ansi":
            params["format"] = "ansi"
            if not raw_flag:
                params["strip_ansi"] = False
            index += 1
        elif flag == "--raw":
            params.update(format="ansi", strip_ansi=False)
            index += 1
        else:
            index += 1


def pane_input(ctx: Context, args: Sequence[str]) -> int:
    """``pane input [ID|--pane ID|--current] --right-click herdr|pane`` -> ``pane.input.set``."""
    usage = "usage: herdr pane input [<pane_id>|--pane ID|--current] --right-click herdr|pane"
    items = expand_equals(args, ["--pane", "--right-click"])
    pane = right_click = None
    index = 0
    while index < len(items):
        flag = items[index]
        if flag in ("--pane", "--current") and pane is not None:
            raise Usage("provide only one pane selector")
        if flag in ("--pane", "--right-click"):
            if index + 1 >= len(items):
                raise Usage(f"missing value for {flag}")
            value = items[index + 1]
            if flag == "--pane":
                pane = value
            elif value in ("herdr", "pane"):
                right_click = value
            else:
                raise Usage(f"invalid right-click target: {value}")
            index += 2
        elif flag == "--current":
            pane = _env_pane(ctx)
            if pane is None:
                raise Usage("--current requires HERDR_PANE_ID")
            index += 1
        else:
            pane = _positional_pane(flag, pane)
            index += 1
    if pane is None or right_click is None:
        raise Usage(usage)
    params = {"pane_id": pane, "right_click": right_click}
    return ctx.call("cli:pane:input:set", "pane.input.set", params)


def pane_split(ctx: Context, args: Sequence[str]) -> int:
    """``pane split [ID|--pane|--current] --direction right|down [--ratio] [--cwd] ...``."""
    usage = (
        "usage: herdr pane split [<pane_id>|--pane ID|--current] --direction right|down "
        "[--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE] [--right-click herdr|pane] [--focus] "
        "[--no-focus]"
    )
    items = expand_equals(args, ["--right-click"])
    params: dict[str, Any] = {"target_pane_id": None, "focus": False, "right_click": "herdr"}
    env: dict[str, str] = {}
    index = 0
    if items and not items[0].startswith("--"):
        params["target_pane_id"] = items[0]
        index = 1
    while index < len(items):
        flag = items[index]
        if flag in ("--focus", "--no-focus"):
            params["focus"] = flag == "--focus"
            index += 1
            continue
        if flag == "--current":
            params["target_pane_id"] = _env_pane(ctx)
            if params["target_pane_id"] is None:
                raise Usage("--current requires HERDR_PANE_ID")
            index += 1
            continue
        allowed = ("--pane", "--direction", "--ratio", "--cwd", "--right-click", "--env")
        value = take_value(items, index, allowed)
        if flag == "--pane":
            params["target_pane_id"] = value
        elif flag == "--direction":
            if value not in ("right", "down"):
                raise Usage(f"invalid split direction: {value}")
            params["direction"] = value
        elif flag == "--ratio":
            params["ratio"] = finite_float(value, "ratio")
        elif flag == "--cwd":
            params["cwd"] = value
        elif flag == "--right-click":
            if value not in ("herdr", "pane"):
                raise Usage(f"invalid right-click target: {value}")
            params["right_click"] = value
        else:
            key, val = env_pair(value)
            env[key] = val
        index += 2
    if "direction" not in params:
        raise Usage(usage)
    params["env"] = env
    return ctx.call("cli:pane:split", "pane.split", params)


def pane_swap(ctx: Context, args: Sequence[str]) -> int:
    """``pane swap --direction D [--pane|--current]`` or ``--source-pane ID --target-pane ID``."""
    usage = (
        "usage: herdr pane swap --direction left|right|up|down [--pane ID|--current]\n"
        "       herdr pane swap --source-pane ID --target-pane ID"
    )
    opts = parse_options(
        args,
        values=["--pane", "--direction", "--source-pane", "--target-pane"],
        flags=["--current"],
    )
    pane = opts.last("--pane")
    if opts.has("--current") and args.index("--current") > _last_index(args, "--pane"):
        pane = None
    direction = opts.last("--direction")
    source, target = opts.last("--source-pane"), opts.last("--target-pane")
    if direction is not None and source is None and target is None:
        params = {"pane_id": pane, "direction": _direction(direction)}
    elif direction is None and pane is None and source is not None and target is not None:
        params = {"source_pane_id": source, "target_pane_id": target}
    else:
        raise Usage(usage)
    return ctx.call("cli:pane:swap", "pane.swap", params)


def _last_index(args: Sequence[str], flag: str) -> int:
    found = [i for i, arg in enumerate(args) if arg == flag]
    return found[-1] if found else -1


MOVE_USAGE = (
    "usage: herdr pane move <pane_id> --tab <tab_id> --split right|down [--target-pane ID] "
    "[--ratio FLOAT] [--focus|--no-focus]\n"
    "       herdr pane move <pane_id> --new-tab [--workspace ID] [--label TEXT] "
    "[--focus|--no-focus]\n"
    "       herdr pane move <pane_id> --new-workspace [--label TEXT] [--tab-label TEXT] "
    "[--focus|--no-focus]"
)


def pane_move(ctx: Context, args: Sequence[str]) -> int:
    """``pane move ID (--tab T --split D | --new-tab | --new-workspace) ...``."""
    if not args or args[0].startswith("-"):
        raise Usage(MOVE_USAGE)
    opts = parse_options(
        args[1:],
        values=[
            "--tab",
            "--workspace",
            "--target-pane",
            "--split",
            "--ratio",
            "--label",
            "--tab-label",
        ],
        flags=["--new-tab", "--new-workspace", "--focus", "--no-focus"],
    )
    split = opts.last("--split")
    if split is not None and split not in ("right", "down"):
        raise Usage(f"invalid split direction: {split} (expected right or down)")
    ratio = opts.last("--ratio")
    ratio_value = None if ratio is None else finite_float(ratio, "ratio")
    focus = True
    for flag in opts.flags:
        if flag in ("--focus", "--no-focus"):
            focus = flag == "--focus"
    tab, new_tab, new_ws = opts.last("--tab"), opts.has("--new-tab"), opts.has("--new-workspace")
    workspace, target = opts.last("--workspace"), opts.last("--target-pane")
    label, tab_label = opts.last("--label"), opts.last("--tab-label")
    if (tab is not None) + new_tab + new_ws != 1:
        raise Usage(MOVE_USAGE)
    destination: dict[str, Any]
    if tab is not None:
        if split is None or workspace is not None or label is not None or tab_label is not None:
            raise Usage(MOVE_USAGE)
        destination = {"type": "tab", "tab_id": tab, "split": split}
        destination.update({"target_pane_id": target, "ratio": ratio_value})
    elif new_tab:
        if split is not None or target is not None or tab_label is not None:
            raise Usage(MOVE_USAGE)
        destination = {"type": "new_tab", "workspace_id": workspace, "label": label}
    else:
        if split is not None or target is not None or workspace is not None:
            raise Usage(MOVE_USAGE)
        destination = {"type": "new_workspace", "label": label, "tab_label": tab_label}
    destination = {key: value for key, value in destination.items() if value is not None}
    params = {"pane_id": args[0], "destination": destination, "focus": focus}
    return ctx.call("cli:pane:move", "pane.move", params)


def pane_close(ctx: Context, args: Sequence[str]) -> int:
    """``pane close ID``."""
    if len(args) != 1:
        raise Usage("usage: herdr pane close <pane_id>")
    return ctx.call("cli:pane:close", "pane.close", {"pane_id": args[0]})


def pane_send_text(ctx: Context, args: Sequence[str]) -> int:
    """``pane send-text ID TEXT...``: the words joined with spaces, no Enter; prints nothing."""
    if len(args) < 2:
        raise Usage("usage: herdr pane send-text <pane_id> <text>")
    return ctx.call_ok("pane.send_text", {"pane_id": args[0], "text": " ".join(args[1:])})


def pane_send_keys(ctx: Context, args: Sequence[str]) -> int:
    """``pane send-keys ID KEY...``; prints nothing on success."""
    if len(args) < 2:
        raise Usage("usage: herdr pane send-keys <pane_id> <key> [key ...]")
    return ctx.call_ok("pane.send_keys", {"pane_id": args[0], "keys": list(args[1:])})


def pane_run(ctx: Context, args: Sequence[str]) -> int:
    """``pane run ID COMMAND...``: ``pane.send_input`` with the text and ``Enter``."""
    if len(args) < 2:
        raise Usage("usage: herdr pane run <pane_id> <command>")
    params = {"pane_id": args[0], "text": " ".join(args[1:]), "keys": ["Enter"]}
    return ctx.call_ok("pane.send_input", params)


def pane_wait_output(ctx: Context, args: Sequence[str]) -> int:
    """``pane wait-output ID (--match T|--regex P) [--source] [--lines] [--timeout] [--raw]``."""
    usage = (
        "usage: herdr pane wait-output <pane_id> (--match TEXT | --regex PATTERN) "
        "[--source visible|recent|recent-unwrapped] [--lines N] [--timeout MS] [--raw]"
    )
    items = expand_equals(args, ["--match", "--regex", "--source", "--lines", "--timeout"])
    params: dict[str, Any] = {"source": "recent", "strip_ansi": True}
    pane = matcher = None
    index = 0
    try:
        while index < len(items):
            flag = items[index]
            if flag == "--raw":
                params["strip_ansi"] = False
                index += 1
                continue
            if flag in ("--match", "--regex", "--source", "--lines", "--timeout"):
                if index + 1 >= len(items):
                    raise Usage(f"missing value for {flag}")
                value = items[index + 1]
                if flag in ("--match", "--regex"):
                    if matcher is not None:
                        raise Usage("--match and --regex are mutually exclusive")
                    kind = "regex" if flag == "--regex" else "substring"
                    matcher = {"type": kind, "value": value}
                elif flag == "--source":
                    params["source"] = read_source(value)
                elif flag == "--lines":
                    params["lines"] = u64(flag, value)
                else:
                    params["timeout_ms"] = u64(flag, value)
                index += 2
            else:
                pane = _positional_pane(flag, pane)
                index += 1
    except CliError as exc:
        raise _usage_from(exc) from None
    if pane is None:
        raise Usage(usage)
    if matcher is None:
        raise Usage("missing required --match or --regex")
    params.update(pane_id=pane, match=matcher)
    return ctx.call("cli:pane:wait-output", "pane.wait_for_output", params)


def _reporting(
    args: Sequence[str], usage: str, values: list[str], flags: Sequence[str] = ()
) -> tuple[str, dict[str, Any], list[tuple[str, str]]]:
    """Parse ``ID --source S ...`` in order; returns (pane, single values, ordered pairs)."""
    if not args:
        raise Usage(usage)
    found: dict[str, Any] = {}
    pairs: list[tuple[str, str]] = []
    index = 1
    while index < len(args):
        flag = args[index]
        if flag in flags:
            found[flag] = True
            index += 1
            continue
        value = take_value(args, index, values)
        if flag in ("--seq", "--ttl-ms"):
            found[flag] = u64(flag, value)
        elif flag in ("--token", "--clear-token", "--state-label"):
            pairs.append((flag, value))
        else:
            found[flag] = value
        index += 2
    source = found.get("--source")
    if not isinstance(source, str) or not source.strip():
        raise Usage("missing required --source")
    found["--source"] = source.strip()
    return args[0], found, pairs


def _agent_params(pane: str, found: dict[str, Any], *optional: str) -> dict[str, Any]:
    """``pane_id``, ``source``, the required ``agent``, ``seq`` and the ``optional`` flags.

    Raises:
        Usage: ``--agent`` is missing.

    """
    agent = found.get("--agent")
    if agent is None:
        raise Usage("missing required --agent")
    params = {"pane_id": pane, "source": found["--source"], "agent": agent}
    for flag in ("--seq", *optional):
        params[flag[2:].replace("-", "_")] = found.get(flag)
    return params


def pane_report_agent(ctx: Context, args: Sequence[str]) -> int:
    """``pane report-agent ID --source --agent --state [--message] [--seq] [--agent-session-*]``."""
    usage = (
        "usage: herdr pane report-agent <pane_id> --source ID --agent LABEL --state "
        "idle|working|blocked|unknown [--message TEXT] [--seq N] [--agent-session-id ID] "
        "[--agent-session-path PATH]"
    )
    values = ["--source", "--agent", "--state", "--message", "--seq"]
    values += ["--agent-session-id", "--agent-session-path"]
    pane, found, _ = _reporting(args, usage, values)
    state = found.get("--state")
    if state is not None and state not in ("idle", "working", "blocked", "unknown"):
        raise CliError(
            f"invalid pane agent state: {state} (expected idle, working, blocked, or unknown)"
        )
    if found.get("--agent") is None:
        raise Usage("missing required --agent")
    if state is None:
        raise Usage("missing required --state")
    params = _agent_params(pane, found, "--message", "--agent-session-id", "--agent-session-path")
    params["state"] = state
    return ctx.call_ok("pane.report_agent", params)


def pane_report_agent_session(ctx: Context, args: Sequence[str]) -> int:
    """``pane report-agent-session ID --source --agent [--seq] [--agent-session-*] ...``."""
    usage = (
        "usage: herdr pane report-agent-session <pane_id> --source ID --agent LABEL [--seq N] "
        "[--agent-session-id ID] [--agent-session-path PATH] [--session-start-source SOURCE]"
    )
    values = ["--source", "--agent", "--seq", "--agent-session-id", "--agent-session-path"]
    pane, found, _ = _reporting(args, usage, [*values, "--session-start-source"])
    params = _agent_params(
        pane, found, "--agent-session-id", "--agent-session-path", "--session-start-source"
    )
    return ctx.call_ok("pane.report_agent_session", params)


def pane_release_agent(ctx: Context, args: Sequence[str]) -> int:
    """``pane release-agent ID --source ID --agent LABEL [--seq N]``."""
    usage = "usage: herdr pane release-agent <pane_id> --source ID --agent LABEL [--seq N]"
    pane, found, _ = _reporting(args, usage, ["--source", "--agent", "--seq"])
    return ctx.call_ok("pane.release_agent", _agent_params(pane, found))


def pane_report_metadata(ctx: Context, args: Sequence[str]) -> int:
    """``pane report-metadata ID --source ID [--title|--clear-title] [--token N=V] ...``."""
    usage = (
        "usage: herdr pane report-metadata <pane_id> --source ID [--agent LABEL] "
        "[--applies-to-source ID] [--title TEXT|--clear-title] "
        "[--display-agent TEXT|--clear-display-agent] [--state-label STATUS=TEXT] "
        "[--clear-state-labels] [--token NAME=VALUE] [--clear-token NAME] [--seq N] [--ttl-ms N]"
    )
    values = ["--source", "--agent", "--applies-to-source", "--title", "--display-agent"]
    values += ["--state-label", "--token", "--clear-token", "--seq", "--ttl-ms"]
    flags = ("--clear-title", "--clear-display-agent", "--clear-state-labels")
    pane, found, pairs = _reporting(args, usage, values, flags)
    labels: dict[str, str] = {}
    tokens: dict[str, str | None] = {}
    for flag, value in pairs:
        if flag == "--state-label":
            status, sep, text = value.partition("=")
            if not sep:
                raise Usage("expected --state-label STATUS=TEXT")
            status = status.strip().lower()
            if status not in AGENT_STATUSES:
                raise Usage(f"unknown state label: {status}")
            labels[status] = text
        elif flag == "--token":
            key, token = token_pair(value)
            tokens[key] = token
        else:
            tokens[value] = None
    applies = found.get("--applies-to-source")
    if applies is not None and not str(applies).strip():
        raise Usage("missing value for --applies-to-source")
    title, display = found.get("--title"), found.get("--display-agent")
    clear_title = bool(found.get("--clear-title"))
    clear_display = bool(found.get("--clear-display-agent"))
    clear_labels = bool(found.get("--clear-state-labels"))
    if (
        (title is not None and clear_title)
        or (display is not None and clear_display)
        or (labels and clear_labels)
    ):
        raise Usage("cannot set and clear the same metadata field")
    if not (title is not None or display is not None or labels or tokens) and not (
        clear_title or clear_display or clear_labels
    ):
        raise Usage("missing metadata field to set or clear")
    params: dict[str, Any] = {"pane_id": pane, "source": found["--source"]}
    params.update(agent=found.get("--agent"), applies_to_source=applies, title=title)
    params.update(display_agent=display, state_labels=labels, tokens=tokens)
    params.update(clear_title=clear_title, clear_display_agent=clear_display)
    params.update(clear_state_labels=clear_labels, seq=found.get("--seq"))
    params["ttl_ms"] = found.get("--ttl-ms")
    return ctx.call_ok("pane.report_metadata", params)


PANE_HELP = [
    "herdr pane commands:",
    "  herdr pane list [--workspace <workspace_id>]",
    "  herdr pane current [--pane ID|--current]",
    "  herdr pane get <pane_id>",
    "  herdr pane layout [--pane ID|--current]",
    "  herdr pane process-info [--pane ID|--current]",
    "  herdr pane neighbor --direction left|right|up|down [--pane ID|--current]",
    "  herdr pane edges [--pane ID|--current]",
    "  herdr pane focus --direction left|right|up|down [--pane ID|--current]",
    "  herdr pane resize --direction left|right|up|down [--amount FLOAT] [--pane ID|--current]",
    "  herdr pane zoom [<pane_id>|--pane ID|--current] [--toggle|--on|--off]",
    "  herdr pane rename <pane_id> <label>|--clear",
    "  herdr pane read <pane_id> [--source visible|recent|recent-unwrapped] [--lines N] "
    "[--format text|ansi] [--ansi]",
    "  herdr pane input [<pane_id>|--pane ID|--current] --right-click herdr|pane",
    "  herdr pane split [<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] "
    "[--cwd PATH] [--env KEY=VALUE] [--right-click herdr|pane] [--focus] [--no-focus]",
    "  herdr pane swap --direction left|right|up|down [--pane ID|--current]",
    "  herdr pane swap --source-pane ID --target-pane ID",
    *("  " + line.strip().removeprefix("usage: ") for line in MOVE_USAGE.split("\n")),
    "  herdr pane close <pane_id>",
    "  herdr pane send-text <pane_id> <text>",
    "  herdr pane send-keys <pane_id> <key> [key ...]",
    "  herdr pane wait-output <pane_id> (--match TEXT | --regex PATTERN) "
    "[--source visible|recent|recent-unwrapped] [--lines N] [--timeout MS] [--raw]",
    "  herdr pane report-agent <pane_id> --source ID --agent LABEL --state "
    "idle|working|blocked|unknown [--message TEXT] [--seq N] [--agent-session-id ID] "
    "[--agent-session-path PATH]",
    "  herdr pane report-agent-session <pane_id> --source ID --agent LABEL [--seq N] "
    "[--agent-session-id ID] [--agent-session-path PATH]",
    "  herdr pane release-agent <pane_id> --source ID --agent LABEL [--seq N]",
    "  herdr pane report-metadata <pane_id> --source ID [--agent LABEL] ...",
    "  herdr pane run <pane_id> <command>",
]

PANE: tuple[dict[str, Handler], list[str]] = (
    {
        "list": pane_list,
        "current": pane_current,
        "get": pane_get,
        "layout": _pane_query("layout", "pane.layout", "cli:pane:layout"),
        "process-info": _pane_query("process-info", "pane.process_info", "cli:pane:process_info"),
        "neighbor": pane_neighbor,
        "edges": _pane_query("edges", "pane.edges", "cli:pane:edges"),
        "focus": pane_focus,
        "resize": pane_resize,
        "zoom": pane_zoom,
        "read": pane_read,
        "rename": pane_rename,
        "input": pane_input,
        "split": pane_split,
        "swap": pane_swap,
        "move": pane_move,
        "close": pane_close,
        "send-text": pane_send_text,
        "send-keys": pane_send_keys,
        "wait-output": pane_wait_output,
        "report-agent": pane_report_agent,
        "report-agent-session": pane_report_agent_session,
        "release-agent": pane_release_agent,
        "report-metadata": pane_report_metadata,
        "run": pane_run,
    },
    PANE_HELP,
)
