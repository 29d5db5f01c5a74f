"""The files ``integration.install`` puts beside each agent: this library's own.

herdr ships one hook script or plugin per agent (herdrdev/herdr
src/integration/assets/*@1c76079f); these are written here from scratch and do
the same job in a smaller way: report to the herdr pane they run in (through
``$HERDR_SOCKET_PATH`` and ``$HERDR_PANE_ID``, only when ``HERDR_ENV=1``) the
agent's session (``pane.report_agent_session``), its state
(``pane.report_agent``) or its exit (``pane.release_agent``), with source
``herdr:<agent>``, and stay silent outside herdr. Each file carries herdr's
markers ``HERDR_INTEGRATION_ID=`` / ``HERDR_INTEGRATION_VERSION=`` with
herdr's version numbers (src/integration/mod.rs), which herdr's own status
check reads.
"""

from __future__ import annotations

__all__ = [
    "INTEGRATION_COMMANDS",
    "INTEGRATION_LABELS",
    "INTEGRATION_VERSIONS",
    "hermes_plugin_files",
    "hook_script",
    "js_plugin",
    "parse_integration_version",
]

INTEGRATION_VERSIONS: dict[str, int] = {
    "pi": 8, "omp": 8, "claude": 8, "codex": 8, "kimi": 7, "copilot": 3, "devin": 2,
    "droid": 3, "opencode": 10, "kilo": 4, "hermes": 5, "qodercli": 3, "qwen": 1,
    "cursor": 1, "antigravity_cli": 2, "mastracode": 2, "grok": 1,
}  # fmt: skip
"""Target -> the integration version herdr's assets carry (mod.rs@1c76079f)."""

_AGENT_NAMES = {"antigravity_cli": "antigravity"}

_REPORTER = r"""
import json, os, socket, sys, time
action, agent = sys.argv[1], sys.argv[2]
try:
    hook = json.loads(sys.stdin.read() or "{}")
except ValueError:
    hook = {}
if not isinstance(hook, dict):
    hook = {}
if not action:
    event = hook.get("hook_event_name") or hook.get("hookEventName") or ""
    action = "session" if str(event).lower() == "sessionstart" else ""
if action not in ("session", "working", "blocked", "idle", "release"):
    sys.exit(0)
params = {"pane_id": os.environ["HERDR_PANE_ID"], "source": "herdr:" + agent,
          "agent": agent, "seq": time.time_ns()}
session = hook.get("session_id") or hook.get("sessionId") or hook.get("conversationId")
if action == "session":
    method = "pane.report_agent_session"
    if session:
        params["agent_session_id"] = str(session)
    if hook.get("transcript_path"):
        params["agent_session_path"] = str(hook["transcript_path"])
    if hook.get("source"):
        params["session_start_source"] = str(hook["source"])
elif action == "release":
    method = "pane.release_agent"
else:
    method = "pane.report_agent"
    params["state"] = action
line = json.dumps({"id": "herdr:" + agent, "method": method, "params": params})
try:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(2)
        conn.connect(os.environ["HERDR_SOCKET_PATH"])
        conn.sendall(line.encode() + b"\n")
        conn.recv(65536)
except OSError:
    pass
"""


def hook_script(target: str) -> str:
    """Return the shell hook for ``target``: ``<hook> <action>`` reports to the pane.

    Actions: ``session``, ``working``, ``blocked``, ``idle``, ``release``; with
    none, a ``SessionStart`` event on stdin means ``session`` (copilot's hook
    has no action); anything else does nothing. The hook reads the agent's
    JSON on stdin.
    """
    agent = _AGENT_NAMES.get(target, target)
    return (
        "#!/bin/sh\n"
        "# installed by herdr\n"
        "# managed by herdr; reinstalling or updating the integration overwrites this file.\n"
        f"# HERDR_INTEGRATION_ID={target}\n"
        f"# HERDR_INTEGRATION_VERSION={INTEGRATION_VERSIONS[target]}\n"
        f"# Reports {agent}'s session and state to the herdr pane it runs in; silent outside"
        " herdr.\n"
        "quiet() { cat >/dev/null 2>&1; exit 0; }  # the agent's JSON is read either way\n"
        '[ "${HERDR_ENV:-}" = "1" ] || quiet\n'
        '[ -n "${HERDR_SOCKET_PATH:-}" ] && [ -n "${HERDR_PANE_ID:-}" ] || quiet\n'
        "command -v python3 >/dev/null 2>&1 || quiet\n"
        f"exec python3 -c '{_REPORTER}' \"${{1:-}}\" {agent}\n"
    )


def js_plugin(target: str, *, marker: str | None = None, typescript: bool = False) -> str:
    """Return a JS (or, for pi/omp, TS extension) plugin reporting the agent's session.

    The JS form is a plugin factory whose ``event`` hook reports
    ``pane.report_agent_session`` when a ``session.*`` event carries a session
    id; the TS form registers a ``session_start`` listener on the extension API.
    Each id is reported once; nothing is sent outside herdr.
    """
    agent = _AGENT_NAMES.get(target, target)
    a = ": any" if typescript else ""
    head = (
        "// installed by herdr\n"
        "// managed by herdr; reinstalling or updating the integration overwrites this file.\n"
        f"// HERDR_INTEGRATION_ID={marker or target}\n"
        f"// HERDR_INTEGRATION_VERSION={INTEGRATION_VERSIONS[target]}\n"
        + ("// @ts-nocheck\n" if typescript else "")
        + 'import net from "node:net";\n\n'
        "let reported = null;\n\n"
        f"function report(sessionId{a}) {{\n"
        "  const socketPath = process.env.HERDR_SOCKET_PATH;\n"
        "  const paneId = process.env.HERDR_PANE_ID;\n"
        '  if (process.env.HERDR_ENV !== "1" || !socketPath || !paneId) return;\n'
        "  if (!sessionId || sessionId === reported) return;\n"
        "  reported = sessionId;\n"
        "  const request = {\n"
        f'    id: "herdr:{agent}",\n'
        '    method: "pane.report_agent_session",\n'
        f'    params: {{ pane_id: paneId, source: "herdr:{agent}", agent: "{agent}",\n'
        "              agent_session_id: String(sessionId) },\n"
        "  };\n"
        "  const socket = net.createConnection(socketPath);\n"
        '  socket.on("error", () => socket.destroy());\n'
        '  socket.on("data", () => socket.destroy());\n'
        '  socket.on("connect", () => socket.write(JSON.stringify(request) + "\\n"));\n'
        "  setTimeout(() => socket.destroy(), 2000).unref?.();\n"
        "}\n\n"
    )
    if typescript:
        return head + (
            f"export default function herdrAgentState(pi{a}) {{\n"
            f'  pi?.on?.("session_start", (_event{a}, ctx{a}) =>\n'
            "    report(ctx?.sessionManager?.getSessionId?.()));\n"
            "}\n"
        )
    return head + (
        "export default async function herdrAgentState() {\n"
        "  return {\n"
        "    event: async ({ event }) => {\n"
        '      if (!String(event?.type ?? "").startsWith("session.")) return;\n'
        "      const props = event?.properties ?? {};\n"
        "      report(props.info?.id ?? props.sessionID ?? props.sessionId);\n"
        "    },\n"
        "  };\n"
        "}\n"
    )


def hermes_plugin_files() -> dict[str, str]:
    """Return hermes's plugin folder: file name -> text (``plugin.yaml``, ``__init__.py``)."""
    init = (
        '"""Hermes plugin installed by herdr: announces the session to the herdr pane."""\n\n'
        "# HERDR_INTEGRATION_ID=hermes\n"
        f"# HERDR_INTEGRATION_VERSION={INTEGRATION_VERSIONS['hermes']}\n\n"
        "import json\nimport os\nimport socket\n\n\n"
        "def _report(session_id):\n"
        '    pane, path = os.environ.get("HERDR_PANE_ID"), os.environ.get("HERDR_SOCKET_PATH")\n'
        '    if os.environ.get("HERDR_ENV") != "1" or not pane or not path or not session_id:\n'
        "        return\n"
        '    params = {"pane_id": pane, "source": "herdr:hermes", "agent": "hermes",\n'
        '              "agent_session_id": str(session_id)}\n'
        '    line = json.dumps({"id": "herdr:hermes", "method": "pane.report_agent_session",'
        ' "params": params})\n'
        "    try:\n"
        "        with socket.socket(socket.AF_UNIX) as conn:\n"
        "            conn.settimeout(2)\n"
        "            conn.connect(path)\n"
        '            conn.sendall(line.encode() + b"\\n")\n'
        "            conn.recv(65536)\n"
        "    except OSError:\n"
        "        pass\n\n\n"
        "def _on_session_start(session_id=None, **_):\n"
        "    _report(session_id)\n\n\n"
        "def register(ctx):\n"
        '    """Report each session hermes starts to the herdr pane; silent outside herdr."""\n'
        '    hook = getattr(ctx, "register_hook", None)\n'
        "    if callable(hook):\n"
        '        hook("on_session_start", _on_session_start)\n'
    )
    manifest = (
        "name: herdr-agent-state\n"
        'version: "1.0"\n'
        "description: Report the Hermes session to the herdr pane it runs in\n"
    )
    return {"plugin.yaml": manifest, "__init__.py": init}


INTEGRATION_LABELS: dict[str, str] = {"antigravity_cli": "antigravity-cli"}
"""Targets whose label is not their wire name (herdr's registry.rs integration_target_label)."""

INTEGRATION_COMMANDS: dict[str, tuple[str, ...]] = {
    "kilo": ("kilo", "kilo-code"), "cursor": ("cursor-agent",), "antigravity_cli": ("agy",),
}  # fmt: skip
"""Targets whose agent command is not their name (registry.rs integration_target_command_names)."""


def parse_integration_version(content: str) -> int | None:
    """Return the ``HERDR_INTEGRATION_VERSION=`` marker of an installed file, if any."""
    for line in content.splitlines():
        marker = line.strip().lstrip("/").lstrip("#").strip()
        if marker.startswith("HERDR_INTEGRATION_VERSION="):
            value = marker.removeprefix("HERDR_INTEGRATION_VERSION=").strip()
            if value.isdigit():
                return int(value)
    return None
