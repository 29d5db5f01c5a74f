"""``herdr status``, ``server``, ``api``, ``notification`` and ``integration``."""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any

from ._args import take_value
from ._runtime import CliError, Context, Reported, Usage, dumps

__all__ = ["API", "INTEGRATION", "NOTIFICATION", "SERVER", "status"]

Handler = Callable[[Context, Sequence[str]], int]

STATUS_HELP = [
    "herdr status commands:",
    "  herdr status [--json]         show local client and running server status",
    "  herdr status server [--json]  show running server status",
    "  herdr status client [--json]  show local client binary status",
]


def status(ctx: Context, args: Sequence[str]) -> int:
    """``status [--json]``, ``status server [--json]``, ``status client [--json]``."""
    first = args[0] if args else None
    if first is None or (first == "--json" and len(args) == 1):
        scope, as_json = "full", first == "--json"
    elif first in ("server", "client"):
        if len(args) > 2 or (len(args) == 2 and args[1] != "--json"):
            raise Usage(f"usage: herdr status {first} [--json]")
        scope, as_json = first, len(args) == 2
    elif first in ("help", "--help", "-h"):
        raise Usage("\n".join(STATUS_HELP), 0 if len(args) == 1 else 2)
    else:
        raise Usage("\n".join(STATUS_HELP))
    client = {
        "version": ctx.client_version,
        "channel": "stable",
        "protocol": ctx.client_protocol,
        "binary": ctx.env.get("SHEDPROTO_HERDR_BIN") or sys.argv[0] or "herdr",
        "session": ctx.active_session(),
    }
    if scope == "client":
        if as_json:
            ctx.out(dumps(client))
        else:
            for key in ("version", "channel", "protocol", "binary"):
                ctx.out(f"{key}: {client[key]}")
        return 0
    server = _server_status(ctx)
    if scope == "server":
        if as_json:
            ctx.out(dumps(server))
        else:
            _server_lines(ctx, server, "")
        return 0
    if as_json:
        update = {"restart_needed": server["restart_needed"]}
        ctx.out(dumps({"client": client, "server": server, "update": update}))
        return 0
    ctx.out("client:")
    for key in ("version", "channel", "protocol"):
        ctx.out(f"  {key}: {client[key]}")
    ctx.out()
    ctx.out("server:")
    _server_lines(ctx, server, "  ")
    ctx.out()
    ctx.out("update:")
    restart = server["restart_needed"]
    ctx.out(f"  restart_needed: {'unknown' if restart is None else 'yes' if restart else 'no'}")
    return 0


def _server_status(ctx: Context) -> dict[str, Any]:
    base = {"socket": ctx.socket_path, "session": ctx.active_session()}
    try:
        pong = ctx.raw("cli:status", "ping", {})
    except Reported:
        empty = dict.fromkeys(("version", "protocol", "capabilities", "compatible"))
        return {"status": "not_running", "running": False, **empty, **base, "restart_needed": False}
    result = pong.get("result") or {}
    version, protocol = result.get("version"), result.get("protocol")
    caps = result.get("capabilities")
    if isinstance(caps, dict):
        caps = {
            key: bool(caps.get(key, False)) for key in ("live_handoff", "detached_server_daemon")
        }
    return {
        "status": "running",
        "running": True,
        "version": version,
        "protocol": protocol,
        "capabilities": caps,
        "compatible": None if protocol is None else protocol == ctx.client_protocol,
        **base,
        "restart_needed": None if version is None else version != ctx.client_version,
    }


def _server_lines(ctx: Context, server: dict[str, Any], indent: str) -> None:
    if not server["running"]:
        ctx.out(f"{indent}status: not running")
        ctx.out(f"{indent}socket: {server['socket']}")
        return
    compatible = server["compatible"]
    ctx.out(f"{indent}status: running")
    ctx.out(f"{indent}version: {server['version'] or 'unknown'}")
    protocol = server["protocol"]
    ctx.out(f"{indent}protocol: {'unknown' if protocol is None else protocol}")
    ctx.out(
        f"{indent}compatible: {'unknown' if compatible is None else 'yes' if compatible else 'no'}"
    )
    ctx.out(f"{indent}socket: {server['socket']}")


def _no_args(usage: str, args: Sequence[str]) -> None:
    if args:
        raise Usage(usage)


def server_stop(ctx: Context, args: Sequence[str]) -> int:
    """``server stop`` -> ``server.stop``: silent on success; the message and exit 1 otherwise."""
    _no_args("usage: herdr server stop", args)
    try:
        response = ctx.request("cli:server:stop", "server.stop", {}, checked=False)
    except Reported as exc:
        ctx.err(exc.response["error"]["message"])
        return 1
    if "error" in response:
        ctx.err(response["error"].get("message", ""))
        return 1
    return 0


def _plain(verb: str, method: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        _no_args(f"usage: herdr server {verb}", args)
        return ctx.call(f"cli:server:{verb}", method, {})

    return run


def server_agent_manifests(ctx: Context, args: Sequence[str], *, reload: bool = False) -> int:
    """``server agent-manifests [--json]``: a table, or the answer line with ``--json``.

    ``update-agent-manifests`` (``reload=True``) would first fetch the newest
    manifests from the network; here it reloads and then lists them.
    """
    verb = "update-agent-manifests" if reload else "agent-manifests"
    if args and args != ["--json"]:
        raise Usage(f"usage: herdr server {verb} [--json]")
    if reload:
        answer = ctx.request(
            "cli:server:reload-agent-manifests", "server.reload_agent_manifests", {}
        )
        if "error" in answer:
            return ctx.print_response(answer)
    response = ctx.request("cli:server:agent-manifests", "server.agent_manifests", {})
    if args or "error" in response:
        return ctx.print_response(response)
    result = response.get("result", {})
    last = result.get("last_check_unix")
    ctx.out(f"last check: {'never' if last is None else last}")
    ctx.out(f"result: {result.get('last_result') or 'not checked'}")
    ctx.out()
    for manifest in result.get("manifests") or []:
        error, shadow = (
            manifest.get("remote_update_error"),
            manifest.get("local_override_shadowing_remote"),
        )
        marker = "!" if shadow else "x" if isinstance(error, str) else " "
        columns = [str(manifest.get(key) or "-") for key in
                   ("agent", "source_kind", "active_version", "cached_remote_version")]  # fmt: skip
        remote = manifest.get("remote_update_result") or "not checked"
        ctx.out(
            f"{marker} {columns[0]:<9} {columns[1]:<14} active {columns[2]:<14} "
            f"remote {columns[3]:<14} {remote}"
        )
        if isinstance(error, str):
            ctx.out(f"  {error}")
        elif shadow:
            ctx.out("  local override shadows cached remote rules")
        elif isinstance(manifest.get("warning"), str):
            ctx.out(f"  {manifest['warning']}")
    return 0


def server_live_handoff(ctx: Context, args: Sequence[str]) -> int:
    """``server live-handoff [--import-exe P] [--expected-protocol N] [--expected-version V]``.

    Sent without the protocol guard, as herdr does (it is the mismatch's remedy).
    """
    usage = (
        "usage: herdr server live-handoff [--import-exe <path>] [--expected-protocol <n>] "
        "[--expected-version <version>]"
    )
    params: dict[str, Any] = {}
    index = 0
    while index < len(args):
        flag, sep, value = args[index].partition("=")
        if not sep:
            if index + 1 >= len(args):
                raise Usage(usage)
            value = args[index + 1]
            index += 1
        index += 1
        if flag == "--import-exe":
            params["import_exe"] = value
        elif flag == "--expected-protocol" and value.isascii() and value.isdigit():
            params["expected_protocol"] = int(value)
        elif flag == "--expected-version":
            params["expected_version"] = value
        else:
            raise Usage(usage)
    response = ctx.request("cli:server:live-handoff", "server.live_handoff", params, checked=False)
    if "error" in response:
        ctx.err(dumps(response))
        return 1
    from shedproto.herdr import data_dir

    ctx.err(f"live handoff complete; server log: {data_dir(ctx.env, ctx.session)}/herdr-server.log")
    return 0


def server_handoff_import(ctx: Context, args: Sequence[str]) -> int:
    """``server --handoff-import SOCKET TOKEN``: the successor a live handoff starts.

    Not in herdr's help (src/cli/server.rs:11@1c76079f passes it on to the
    server); it serves as this shim's release, with the old server's session
    and options (:func:`shedproto.servers.herdr.run_handoff_import`).
    """
    if len(args) != 2:
        raise Usage("usage: herdr server --handoff-import <socket> <token>")
    from shedproto.herdr import RELEASES
    from shedproto.servers.herdr import ImportIdentity, run_handoff_import

    release = RELEASES.get(ctx.client_version)
    own = release is not None and release.protocol == ctx.client_protocol
    identity = ImportIdentity(
        protocol=ctx.client_protocol,
        version=ctx.client_version,
        herdr_version=ctx.client_version if own else None,
    )
    shim = ctx.env.get("SHEDPROTO_HERDR_BIN")
    command = [shim] if shim else None
    return run_handoff_import(args[0], args[1], identity, handoff_command=command, err=ctx.stderr)


SERVER: tuple[dict[str, Handler], list[str]] = (
    {
        "stop": server_stop,
        "live-handoff": server_live_handoff,
        "--handoff-import": server_handoff_import,
        "reload-config": _plain("reload-config", "server.reload_config"),
        "agent-manifests": server_agent_manifests,
        "update-agent-manifests": lambda ctx, args: server_agent_manifests(ctx, args, reload=True),
        "reload-agent-manifests": _plain("reload-agent-manifests", "server.reload_agent_manifests"),
    },
    [
        "herdr server commands:",
        "  herdr server stop           stop the running server via the API socket",
        "  herdr server live-handoff   hand off live panes to a new local server",
        "  herdr server reload-config  reload config.toml in the running server",
        "  herdr server agent-manifests [--json]  show agent detection manifest status",
        "  herdr server update-agent-manifests [--json]  fetch and reload agent detection "
        "manifests",
        "  herdr server reload-agent-manifests  reload agent detection manifests in the running "
        "server",
    ],
)


def schema_document(protocol: int) -> dict[str, Any]:
    """Build the API schema this CLI's protocol implies, generated from the library's types.

    Shaped like herdr's published document: ``protocol``, ``schema_version``
    and ``schemas`` with ``request``, ``success_response``, ``error_response``,
    ``event`` and ``subscription_event``, each a JSON Schema whose ``$defs``
    its ``$ref`` s point into.

    Raises:
        CliError: the library has no types for ``protocol``.

    """
    import msgspec

    from shedproto.herdr import types as t

    tables = t.PROTOCOL_TABLES.get(protocol)
    if tables is None:
        raise CliError(f"no API schema for protocol {protocol}")
    requests, _, defs = tables
    roots: dict[str, Any] = {"request": _union(tuple(requests.values()))}
    if "ResponseResult" in defs:
        roots["success_response"] = msgspec.defstruct(
            "SuccessResponse", [("id", str), ("result", defs["ResponseResult"])]
        )
    if "ErrorBody" in defs:
        roots["error_response"] = msgspec.defstruct(
            "ErrorResponse", [("id", str), ("error", defs["ErrorBody"])]
        )
    if "EventEnvelope" in defs:
        roots["event"] = defs["EventEnvelope"]
    schemas: dict[str, Any] = {}
    for name, root in roots.items():
        (schema,), components = msgspec.json.schema_components(
            [root], ref_template=f"#/schemas/{name}/$defs/{{name}}"
        )
        schemas[name] = {"$defs": components, **schema}
    if "SubscriptionEventKind" in defs and "SubscriptionEventData" in defs:
        # the data union is untagged (herdr's serde ``untagged``): compose it by hand
        members = typing.get_args(defs["SubscriptionEventData"])
        (kind, *data), components = msgspec.json.schema_components(
            [defs["SubscriptionEventKind"], *members],
            ref_template="#/schemas/subscription_event/$defs/{name}",
        )
        schemas["subscription_event"] = {
            "$defs": components,
            "type": "object",
            "properties": {"event": kind, "data": {"anyOf": data}},
            "required": ["event", "data"],
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "protocol": protocol,
        "schema_version": 1,
        "schemas": schemas,
        "title": "Herdr API",
    }


def _union(types: tuple[Any, ...]) -> Any:
    from functools import reduce
    from operator import or_

    return reduce(or_, types)


def api_command(ctx: Context, args: Sequence[str]) -> int:
    """Run ``api snapshot`` (``session.snapshot``) or ``api schema [--json | --output PATH]``."""
    help_lines = [
        "herdr api commands:",
        "  herdr api snapshot",
        "  herdr api schema [--json | --output PATH]",
    ]
    verb = args[0] if args else None
    rest = list(args[1:])
    if verb == "snapshot":
        _no_args("usage: herdr api snapshot", rest)
        return ctx.call("cli:api:snapshot", "session.snapshot", {})
    if verb != "schema":
        raise Usage("\n".join(help_lines), 0 if verb in ("help", "--help", "-h") else 2)
    schema_usage = "usage: herdr api schema [--json | --output PATH]"
    if rest in (["help"], ["--help"], ["-h"]):
        raise Usage(schema_usage, 0)
    if rest == ["--output"]:
        raise Usage("missing value for --output")
    if len(rest) == 1 and rest[0].startswith("-") and rest[0] != "--json":
        raise Usage(f"unknown option: {rest[0]}")
    if rest not in ([], ["--json"]) and not (len(rest) == 2 and rest[0] == "--output"):
        raise Usage(schema_usage)
    document = schema_document(ctx.client_protocol)
    text = json.dumps(document, indent=2) + "\n"
    if rest == ["--json"]:
        ctx.stdout.write(text)
    elif rest:
        try:
            with open(rest[1], "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise CliError(str(exc)) from None
        ctx.out(f"wrote API schema to {rest[1]}")
    else:
        ctx.out("Herdr API schema")
        ctx.out(f"protocol: {document['protocol']}")
        ctx.out(f"schema_version: {document['schema_version']}")
        ctx.out(f"schemas: {', '.join(sorted(document['schemas']))}")
        ctx.out()
        ctx.out("Use `herdr api schema --json` to print the full schema.")
        ctx.out("Use `herdr api schema --output PATH` to write it to a file.")
    return 0


NOTIFICATION_USAGE = (
    "usage: herdr notification show <title> [--body TEXT] "
    "[--position top-left|top-right|bottom-left|bottom-right] [--sound none|done|request]"
)
POSITIONS = ("top-left", "top-right", "bottom-left", "bottom-right")


def notification_show(ctx: Context, args: Sequence[str]) -> int:
    """``notification show TITLE [--body] [--position] [--sound]`` -> ``notification.show``."""
    if not args or args[0] in ("help", "--help", "-h"):
        raise Usage(NOTIFICATION_USAGE)
    params: dict[str, Any] = {"title": args[0], "sound": "none"}
    index = 1
    while index < len(args):
        flag = args[index]
        value = take_value(args, index, ("--body", "--position", "--sound"))
        if flag == "--position" and value not in POSITIONS:
            raise Usage(
                f"invalid position: {value} "
                "(expected top-left, top-right, bottom-left, or bottom-right)"
            )
        if flag == "--sound" and value not in ("none", "done", "request"):
            raise Usage(f"invalid sound: {value} (expected none, done, or request)")
        params[flag[2:]] = value
        index += 2
    return ctx.call("cli:notification:show", "notification.show", params)


NOTIFICATION: tuple[dict[str, Handler], list[str]] = (
    {"show": notification_show},
    ["herdr notification commands:", "  " + NOTIFICATION_USAGE.removeprefix("usage: ")],
)

TARGETS = (
    "pi", "omp", "claude", "codex", "copilot", "devin", "droid", "kimi", "opencode", "kilo",
    "hermes", "qodercli", "qwen", "cursor", "mastracode", "antigravity-cli", "grok",
    "command-code",
)  # fmt: skip
ALIASES = {
    "antigravity_cli": "antigravity-cli",
    "command_code": "command-code",
    "cmd": "command-code",
}


def _integration(action: str) -> Handler:
    def run(ctx: Context, args: Sequence[str]) -> int:
        usage = f"usage: herdr integration {action} <{'|'.join(TARGETS)}>"
        if len(args) != 1:
            raise Usage(usage.replace("|antigravity-cli", ""))  # as herdr's usage line
        target = args[0]
        target = ALIASES.get(target, target)
        if target not in TARGETS:
            raise Usage(
                f"unknown integration target: {target}\ncurrently supported: {', '.join(TARGETS)}"
            )
        params = {"target": target.replace("-", "_")}
        response = ctx.request(f"cli:integration:{action}", f"integration.{action}", params)
        if "error" in response:
            ctx.err(response["error"].get("message", ""))
            return 1
        result = response.get("result", {})
        for message in (result.get("details") or result).get("messages") or []:
            ctx.out(str(message))
        return 0

    return run


def integration_status(ctx: Context, args: Sequence[str]) -> int:
    """``integration status [--outdated-only]`` -> ``integration.list`` (protocol 22).

    Prints ``TARGET: STATE`` per integration the server lists.
    """
    if args not in ([], ["--outdated-only"]):
        raise Usage("usage: herdr integration status [--outdated-only]")
    response = ctx.request("cli:integration:status", "integration.list", {})
    if "error" in response:
        ctx.err(dumps(response))
        return 1
    for item in response.get("result", {}).get("integrations") or []:
        state = str(item.get("state") or item.get("status") or "unknown")
        if args and state != "outdated":
            continue
        ctx.out(f"{item.get('target')}: {state}")
    return 0


INTEGRATION: tuple[dict[str, Handler], list[str]] = (
    {
        "install": _integration("install"),
        "uninstall": _integration("uninstall"),
        "status": integration_status,
    },
    [
        "herdr integration commands:",
        *(f"  herdr integration install {target}" for target in TARGETS),
        *(f"  herdr integration uninstall {target}" for target in TARGETS),
        "  herdr integration status [--outdated-only]",
    ],
)

API: Handler = api_command
