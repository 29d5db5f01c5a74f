"""UI-truth dumps (settable through the model) and the drivable doors."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    DesktopError,
    rust_debug,
)
from shedproto.desktop import types as o

from ._base import BAD, msgspec_to_builtins
from ._ops_craze import CrazeOps
from ._ops_lanes import LaneOps
from ._ops_sessions import SessionOps

__all__ = ["UiTruthOps"]


class UiTruthOps(SessionOps, CrazeOps, LaneOps):
    """UI-truth dumps (settable through the model) and the drivable doors."""

    def op_dashboard_dump(self, p: Any, raw: Any) -> Any:
        if "dashboard.dump" in self.model.dumps:
            return self.model.dumps["dashboard.dump"]
        rows = self._shed_rows() if self.model.ui["pane"] == "sheds" else []
        if not self.is_latest:  # v0.0.14: {rows} alone
            return o.DashboardDump(rows=[msgspec_to_builtins(r) for r in rows])
        return o.DashboardDump(
            rows=[msgspec_to_builtins(r) for r in rows],
            host_errors=self._host_failures(),
            empty=self._empty_state() if self.model.ui["pane"] == "sheds" else None,
        )

    def op_sidebar_dump(self, p: Any, raw: Any) -> Any:
        if "sidebar.dump" in self.model.dumps:
            return self.model.dumps["sidebar.dump"]
        servers = [
            {
                "name": h.name,
                "reachable": h.reachable,
                "detail": (h.failure or {}).get("summary", ""),
            }
            for h in self.model.hosts.values()
        ]
        machines = []
        for m in self._listed_machines():
            count = len(self.model.sessions_for(f"machine:{m.name}"))
            note = "offline" if not m.reachable else f"{count} sessions"
            machines.append({"name": m.name, "note": note})
        return o.SidebarDump(servers=servers, machines=machines)

    def op_machines_dump(self, p: Any, raw: Any) -> Any:
        default = None
        if self.model.ui["pane"] == "machines":
            default = [
                msgspec_to_builtins(self._machine_row(m)) for m in self._listed_machines()
            ]
        return o.MachinesDump(machines=self.model.dumps.get("machines.dump", default))

    def _keyed_dump(self, op: str, key: str) -> Any:
        return {key: self.model.dumps.get(op)}

    def op_agents_dump(self, p: Any, raw: Any) -> Any:
        # [] and null off the Agents pane: only a mounted pane reports
        # (charliek/shed desktop/tauri/src-tauri/src/ipc.rs:895@2cd01ef, agents_dump;
        # v0.0.14 has no `empty`: ipc.rs:584-599@5a762e8)
        found = self.model.dumps.get("agents.dump") or {}
        on_agents = self.model.ui["pane"] == "agents"
        sessions = found.get("sessions") if on_agents else None
        if not self.is_latest:
            return {"sessions": [] if sessions is None else sessions}
        empty = found.get("empty") if on_agents else None
        return {"sessions": [] if sessions is None else sessions, "empty": empty}

    def op_egress_profiles(self, p: Any, raw: Any) -> Any:
        return {"egress": self._egress_snapshot()}

    def op_shed_roost_dump(self, p: Any, raw: Any) -> Any:
        return self._keyed_dump("shed_roost.dump", "sheds")

    def op_roost_consent_dump(self, p: Any, raw: Any) -> Any:
        return {"consent": self.model.dumps.get("roost_consent.dump", self.model.ui.get("consent"))}

    def op_launch_dump(self, p: Any, raw: Any) -> Any:
        return {"launch": self.model.dumps.get("launch.dump", self.model.ui.get("launch"))}

    def op_toast_dump(self, p: Any, raw: Any) -> Any:
        return self._keyed_dump("toast.dump", "toast")

    def op_lane_dump(self, p: Any, raw: Any) -> Any:
        return {"lane": self.model.dumps.get("lane.dump", self.model.ui.get("lane"))}

    def op_lane_settings_dump(self, p: Any, raw: Any) -> Any:
        return self._keyed_dump("lane_settings.dump", "lane_settings")

    def op_craze_create_dump(self, p: Any, raw: Any) -> Any:
        return {
            "craze_create": self.model.dumps.get(
                "craze_create.dump", self.model.ui.get("craze_create")
            )
        }

    def op_ui_show_launch(self, p: Any, raw: Any) -> Any:
        if self.is_mac:  # the dashboard on the Agents pane, its launch sheet up
            self._mac_show_pane("agents")  # (AppModel.swift:771-775@5339dc4 showLaunchSheet)
            return o.Empty()
        self.model.ui["launch"] = {
            "mode": "agent",
            "target": None,
            "command": "",
            "workdir": "",
            "name": "",
        }
        return o.Empty()

    # The doors only emit an event to the frontend and answer {} (charliek/shed
    # desktop/tauri/src-tauri/src/ipc.rs:323-354,725-729@2cd01ef): a dialog that is not
    # open ignores them, and what a submit leads to is shown by the UI (toast.dump),
    # never answered by the op.

    def op_ui_fill_launch(self, p: o.UiFillLaunchParams, raw: Any) -> Any:
        if p.mode is not None and p.mode not in ("agent", "command"):
            raise DesktopError(BAD, f"unknown launch mode: {rust_debug(p.mode)} (agent | command)")
        launch = self.model.ui.get("launch")
        if launch is not None:
            for key in ("mode", "target", "command", "workdir"):
                value = getattr(p, key)
                if value is not None:
                    launch[key] = value
        return o.Empty()

    def op_ui_submit_launch(self, p: Any, raw: Any) -> Any:
        launch = self.model.ui.get("launch")
        if launch is None:
            return o.Empty()
        target = launch.get("target") or ""
        if target.startswith("shed:"):
            target = "roost:" + target[len("shed:") :]
        try:
            if launch["mode"] == "command":
                self.op_roost_run(
                    o.RoostRunParams(
                        target=target, command=launch["command"], workdir=launch["workdir"]
                    ),
                    {},
                )
            else:
                self._launch(
                    self._launch_host(target),
                    launch.get("kind") or "claude-rc",  # the stand-in dialog's pick
                    {"workdir": launch["workdir"], "display_name": launch.get("name") or ""},
                )
        except DesktopError as exc:  # the dialog stays open and says why
            self.model.dumps["toast.dump"] = {"kind": "error", "text": exc.message}
            return o.Empty()
        self.model.ui["launch"] = None
        return o.Empty()

    def op_ui_show_roost_consent(self, p: o.UiShowRoostConsentParams, raw: Any) -> Any:
        self.model.ui["consent"] = {"target": p.target, "confirmed": False}
        return o.Empty()

    def op_ui_confirm_roost_consent(self, p: Any, raw: Any) -> Any:
        consent = self.model.ui.get("consent")
        if consent is not None:  # no card open: the event goes unheard (ipc.rs:266@2cd01ef)
            consent["confirmed"] = True
        return o.Empty()

    def op_ui_close_roost_consent(self, p: Any, raw: Any) -> Any:
        self.model.ui["consent"] = None
        return o.Empty()

    def op_ui_show_lane(self, p: o.UiShowLaneParams, raw: Any) -> Any:
        # the op only asks the frontend to mount the panel (ipc.rs:752-760@2cd01ef)
        self.model.ui["lane"] = {"machine": p.machine, "kind": p.kind, "session_id": p.session_id}
        return o.Empty()

    def op_ui_close_lane(self, p: Any, raw: Any) -> Any:
        self.model.ui["lane"] = None
        return o.Empty()

    def op_ui_show_craze_create(self, p: o.UiShowCrazeCreateParams, raw: Any) -> Any:
        # the sheet opens and reads its options itself; a refusal shows in the sheet,
        # the op answers {} (ipc.rs:771-778@2cd01ef)
        sheet: dict[str, Any] = {"machine": p.machine, "provider": None, "cwd": "", "prompt": ""}
        try:
            self.op_craze_create_options(o.MachineParams(machine=p.machine), raw)
        except DesktopError as exc:
            sheet["error"] = {"code": exc.code, "message": exc.message}
        self.model.ui["craze_create"] = sheet
        return o.Empty()

    def op_ui_close_craze_create(self, p: Any, raw: Any) -> Any:
        self.model.ui["craze_create"] = None
        return o.Empty()

    def op_ui_fill_craze_create(self, p: o.UiFillCrazeCreateParams, raw: Any) -> Any:
        sheet = self.model.ui.get("craze_create")
        if sheet is not None:  # ipc.rs:373-412@2cd01ef: no sheet, nothing heard
            for key in ("provider", "cwd", "prompt"):
                value = getattr(p, key)
                if value is not None:
                    sheet[key] = value
        return o.Empty()

    def op_ui_submit_craze_create(self, p: Any, raw: Any) -> Any:
        sheet = self.model.ui.get("craze_create")
        if sheet is None:
            return o.Empty()
        params = o.CrazeCreateParams(
            machine=sheet["machine"],
            cwd=sheet["cwd"] or None,
            provider=sheet["provider"],
            prompt=sheet["prompt"],
        )
        try:
            self.op_craze_create(params, {})
        except DesktopError as exc:  # the sheet shows the outcome (Try again)
            sheet["error"] = {"code": exc.code, "message": exc.message}
            return o.Empty()
        self.model.ui["craze_create"] = None
        return o.Empty()

    def op_ui_show_lane_settings(self, p: o.UiShowLaneParams, raw: Any) -> Any:
        self.op_ui_show_lane(p, raw)
        return o.Empty()

    def op_ui_pick_lane_setting(self, p: o.UiPickLaneSettingParams, raw: Any) -> Any:
        if not p.row:  # ipc.rs:440-442@2cd01ef
            raise DesktopError(BAD, "'row' names a settings row")
        return o.Empty()
