"""Core, UI, window, hosts, sheds, prefs, tray, broker and updater ops."""

from __future__ import annotations

from typing import Any

import msgspec

from shedproto.desktop import (
    DesktopCode,
    DesktopError,
    rust_debug,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase, serde_unknown_variant
from ._model import Host

BROKER_PREFS = ("auto", "embedded", "external")
"""``broker.set_mode``'s modes (broker.rs:361-368@51bd544, ``parse_mode_pref``)."""

__all__ = ["UiOps"]

MAC_PANES = ("sheds", "approvals", "agents", "activity", "egress", "system")
TAURI_PANES = ("sheds", "machines", "approvals", "agents", "activity", "egress", "system")
V0_0_14_TAURI_PANES = ("sheds", "approvals", "agents", "activity", "system")
"""The panes v0.0.14's Tauri ``ui.navigate`` accepts (``ipc.rs:303-309@5a762e8``)."""
SSH_METHODS = ("biometrics-or-password", "biometrics", "prompt")
"""``ApprovalMethod`` wire values (shed-core approval/models.rs:174-184@5a762e8)."""
SSH_POLICIES = (
    "always-allow",
    "per-shed-allow",
    "time-based-allow",
    "always-ask",
    "always-deny",
)
"""``SshApprovalPolicy`` wire values (shed-core approval/models.rs:235-243@5a762e8)."""
MAC_APP_LABEL = "ShedDesktop"
"""mac ``identify.app_label``: ``BundleProfile.mac`` (BundleProfile.swift:44-48@5a762e8)."""
MAC_APP_ID = "ai.stridelabs.ShedDesktop"
"""mac ``identify.app_id`` (BundleProfile.swift:48@5a762e8)."""
MAC_PROTOCOL_VERSION = 1
"""mac ``identify.protocol_version``: ``ipcProtocolVersion`` (IPCMessages.swift:209@5a762e8)."""
PREFERENCES_TITLE = "shed desktop \u2014 Preferences"
"""The Preferences window's title (``prefs.dump``)."""


NO_SHEDS_REACHABLE = "No sheds across the reachable hosts."
NO_REACHABLE_HOSTS = (
    "No reachable hosts. Check ~/.shed/config.yaml and that shed-server is running."
)


def mac_sheds_empty_state(hosts: list[o.MacHost]) -> str:
    """Return the newer mac app's ``ui.state.sheds_empty_state`` for ``hosts``.

    Decided by the hosts alone (the sentence is there whether or not sheds are
    listed): a reachable host gives :data:`NO_SHEDS_REACHABLE`; else the first
    failure of a known kind (not ``other``) speaks its summary; else
    :data:`NO_REACHABLE_HOSTS` (charliek/shed
    ``desktop/Sources/ShedKit/Models/HostFailure.swift:119-127@1cea187`` ``shedsEmptyState``,
    ``Models.swift:383-391@1cea187`` ``UIState.init``).
    """
    if any(h.reachable for h in hosts):
        return NO_SHEDS_REACHABLE
    for h in hosts:
        if h.failure is not None and h.failure.kind != "other":
            return h.failure.summary
    return NO_REACHABLE_HOSTS


class UiOps(AppBase):
    """Core, UI, window, hosts, sheds, prefs, tray, broker and updater ops."""

    def op_identify(self, p: Any, raw: Any) -> Any:
        if self.is_mac:
            return o.MacIdentify(
                socket_path=self.socket_path,
                pid=self.pid,
                app_label=MAC_APP_LABEL,
                app_id=MAC_APP_ID,
                # CFBundleShortVersionString (Resources/Info.plist.template:42-43@5a762e8,
                # IPCHandlerImpl.swift:176-187@3fecd8a)
                ui_version=self.app_version,
                protocol_version=MAC_PROTOCOL_VERSION,
                test_mode=self.test_mode,
                mock_base_url=self.mock_base_url,
                core=self.model.core,
            )
        if not self.is_latest:
            return o.TauriIdentify(
                socket_path=self.socket_path,
                pid=self.pid,
                test_mode=self.test_mode,
                mock_base_url=self.mock_base_url,
            )
        return o.TauriIdentify(
            socket_path=self.socket_path,
            pid=self.pid,
            test_mode=self.test_mode,
            mock_base_url=self.mock_base_url,
            broker_mode=self._broker_mode(),
        )

    def _mac_probe_error(self, host: Host) -> str | None:
        """Return a mac host row's ``last_error``: what the last poll kept of its failed probe.

        The newer app keeps the failure's summary (charliek/shed
        ``desktop/Sources/ShedKit/Models/Models.swift:87-96@1cea187``,
        ``applyingProbe(info:failure:)``); v0.0.14 ``"<server>: <error>"``, Swift's
        rendering of the thrown error (``AppModel.swift:491@5a762e8``,
        ``Models.swift:66-73@5a762e8``).
        """
        if host.failure is not None and self.is_latest:
            return str(host.failure["summary"])
        if host.last_error is None or self.is_latest:
            return host.last_error
        return f"{host.name}: {self._shed_server_error(host.last_error).message}"

    def op_ui_state(self, p: Any, raw: Any) -> Any:
        hosts = self.op_host_list(p, raw).hosts
        # a poll overwrites the banner with its rollup: one failure's text, or the count
        # (AppModel.swift:516-517@5a762e8, :526-527@5339dc4); the row and the banner carry
        # the same text (HostFailure.swift:72-73@1cea187)
        failures = [h.last_error for h in hosts if not h.reachable and h.last_error is not None]
        banner = self.model.ui.get("last_error")
        if failures:
            banner = failures[0] if len(failures) == 1 else f"{len(failures)} hosts unreachable"
        return o.UiState(
            pane=self.model.ui["pane"],
            hosts=hosts,
            sheds=self._shed_rows(),
            host_agent_connected=True,
            last_error=banner,
            sheds_empty_state=mac_sheds_empty_state(hosts) if self.is_latest else msgspec.UNSET,
        )

    def op_ui_navigate(self, p: Any, raw: Any) -> Any:
        pane: str = p.pane or ""
        if self.is_mac:
            if pane not in MAC_PANES:
                raise self._bad(f"unknown pane: {pane} (want {'|'.join(MAC_PANES)})")
        elif pane not in (TAURI_PANES if self.is_latest else V0_0_14_TAURI_PANES):
            raise DesktopError(BAD, f"unknown pane: {rust_debug(pane)}")
        self._frontend_ready()
        self.model.ui["pane"] = pane
        if not self.is_mac and not self.is_latest:
            return o.Empty()  # v0.0.14 acks with {}
        return o.PaneResult(pane=pane)

    def op_ui_current_pane(self, p: Any, raw: Any) -> Any:
        return o.NullablePane(
            pane=self.model.ui["pane"] if self.model.ui["frontend_ready"] else None
        )

    def op_ui_set_ssh_approval(self, p: o.UiSetSshApprovalParams, raw: Any) -> Any:
        # the params are enums in both apps (shed-core approval/models.rs:174-243@5a762e8)
        if p.method is not None:
            self._variant("method", p.method, SSH_METHODS, "ApprovalMethod")
        if p.policy is not None:
            self._variant("policy", p.policy, SSH_POLICIES, "SSHApprovalPolicy")
        ssh = self.model.prefs["ssh"]
        for key in ("method", "policy", "ttl"):
            value = getattr(p, key)
            if value is not None:
                ssh[key] = value
        self._rebuild_policy()
        return o.Empty()

    def op_ui_ssh_prefs(self, p: Any, raw: Any) -> Any:
        ssh = self.model.prefs["ssh"]
        return o.SshPrefs(method=ssh["method"], policy=ssh["policy"], ttl=ssh["ttl"])

    def op_ui_window_state(self, p: Any, raw: Any) -> Any:
        # mac launches as a menu-bar accessory (ShedDesktopApp.swift:26@5a762e8)
        return o.WindowState(
            # built hidden: the harness (and a login launch) starts menu-bar only
            # (AppModel.swift:608-640, ShedDesktopApp.swift:40-50@5a762e8)
            visible=self.model.ui.get("visible", False),
            activation_policy=self.model.ui.get("activation_policy", "accessory"),
        )

    def op_ui_show_window(self, p: Any, raw: Any) -> Any:
        self.model.ui["visible"] = True
        if not self.test_mode:  # a Dock icon while a window is open, never under the
            self.model.ui["activation_policy"] = "regular"  # harness (AppModel.swift:745-753)
        return o.Empty()

    def op_ui_show_create(self, p: Any, raw: Any) -> Any:
        if self.is_mac:
            self._mac_show_pane("sheds")
        return o.Empty()

    def op_ui_hide_window(self, p: Any, raw: Any) -> Any:
        self.model.ui["visible"] = False
        # closing the last window reverts to accessory; an open Preferences window keeps
        # the app regular; under the harness the close handler does nothing
        # (AppModel.swift:738-743,1385-1395@5a762e8, AppModel.swift@5339dc4 windowWillClose)
        if not self.test_mode:
            prefs_open = self.model.preferences_window == "visible"
            self.model.ui["activation_policy"] = "regular" if prefs_open else "accessory"
        return o.Empty()

    def op_ui_open_menu(self, p: o.UiOpenMenuParams, raw: Any) -> Any:
        self.model.ui["menu_open"] = p.open
        return o.OpenResult(open=p.open)

    def op_ui_set_appearance(self, p: o.UiSetAppearanceParams, raw: Any) -> Any:
        mode = p.mode or ""  # absent or mistyped reads as "" (ipc.rs:1085-1089@2cd01ef)
        if mode not in ("light", "dark"):
            raise DesktopError(BAD, f"unknown mode: {rust_debug(mode)}")
        self.model.prefs["appearance"] = mode
        return o.Empty()

    def op_ui_computed_style(self, p: Any, raw: Any) -> Any:
        return o.StyleResult(style=self.model.dumps.get("ui.computed_style"))

    def op_ui_modal(self, p: Any, raw: Any) -> Any:
        return o.ModalResult(modal=self.model.dumps.get("ui.modal"))

    def op_ui_badges(self, p: Any, raw: Any) -> Any:
        default = {"hosts": len(self.model.host_errors())}
        return o.BadgesResult(badges=self.model.dumps.get("ui.badges", default))

    def op_host_list(self, p: Any, raw: Any) -> o.HostList:
        hosts = [
            o.MacHost(
                name=h.name,
                host=h.host,
                http_port=h.http_port,
                ssh_port=h.ssh_port,
                reachable=h.reachable,
                backend=h.backend,
                version=h.version,
                last_error=self._mac_probe_error(h),
                # v0.0.14's ShedHost has no failure (Models.swift:26-43@5a762e8)
                failure=(
                    None
                    if h.failure is None or not self.is_latest
                    else o.HostFailure(**h.failure)
                ),
            )
            for h in self.model.hosts.values()
        ]
        return o.HostList(hosts=hosts)

    def op_hosts_auth(self, p: Any, raw: Any) -> Any:
        """``AuthModeRegistry::snapshot``: every configured server, sorted by name.

        ``auth_mode`` is ``AuthMode::as_str`` (``token`` or ``mtls``; the config's
        absent or unrecognised mode reads as ``token``); ``learned`` is whether a
        mint proved it this session (charliek/shed crates/shed-app/src/auth_modes.rs
        :220-231@c7d4c85, ipc.rs:2189-2207@2cd01ef ``hosts_auth``).
        """
        return o.HostsAuth(
            hosts=[
                o.HostAuth(
                    name=h.name,
                    auth_mode="mtls" if h.auth_mode == "mtls" else "token",
                    learned=h.auth_learned,
                )
                for h in sorted(self.model.hosts.values(), key=lambda h: h.name)
            ]
        )

    def op_sheds_list(self, p: o.ShedsListParams, raw: Any) -> Any:
        if self.is_mac:  # the mac app filters by host; Tauri ignores it
            return o.MacShedsList(sheds=self._shed_rows(p.host))
        if not self.is_latest:
            return o.TauriShedsList(sheds=self._shed_rows())
        return o.TauriShedsList(sheds=self._shed_rows(), host_errors=self._host_failures())

    def op_sheds_refresh(self, p: Any, raw: Any) -> Any:
        if self.is_mac or not self.is_latest:
            return o.Empty()
        return o.TauriShedsList(sheds=self._shed_rows(), host_errors=self._host_failures())

    def op_system_df(self, p: Any, raw: Any) -> Any:
        """One row per server: ``{host, usage, error}``, an unreachable host an error row.

        Tauri rows are shed-app's ``HostDiskUsage`` through serde (absent halves
        ``null``; backend.rs:269-293,410-417@5a762e8); mac rows omit them
        (Models.swift:548-558, AppModel.swift:535-544@5a762e8). The usage object
        is shed-server's ``SystemDiskUsage`` (sizes 0 in the stand-in).
        """
        rows: list[dict[str, Any]] = []
        hosts = list(self.model.hosts.values())
        if self.is_mac:  # sorted by host (AppModel.swift:549@5a762e8)
            hosts.sort(key=lambda h: h.name)
        for host in hosts:
            if not host.reachable:
                error = self._shed_server_error(host.last_error or "connection refused").message
                row: dict[str, Any] = {"host": host.name, "usage": None, "error": error}
            else:
                row = {"host": host.name, "usage": self._disk_usage(host), "error": None}
            rows.append({k: v for k, v in row.items() if v is not None} if self.is_mac else row)
        return o.UsageList(usage=rows)

    def _disk_usage(self, host: Any) -> dict[str, Any]:
        zero = {"logical_bytes": 0, "physical_bytes": 0}
        entry: dict[str, Any] = {"docker_ref": None} if not self.is_mac else {}
        usage: dict[str, Any] = {
            "server_name": host.name,
            "backend": host.backend,
            "images": [],
            "sheds": [{"name": name, **entry, "size": dict(zero)} for name in host.sheds],
            "orphans": [],
            "totals": {k: dict(zero) for k in ("images", "sheds", "snapshots", "orphans", "all")},
        }
        if self.is_mac and usage["backend"] is None:
            del usage["backend"]
        return usage

    def op_images_list(self, p: Any, raw: Any) -> Any:
        """One ``HostImageList`` per server, by name: ``{host, images}``, or ``{host, error}``.

        (``Sources/ShedDesktopApp/AppModel.swift:556-583``, ``Models.swift:565-638@5a762e8``;
        ``nil`` omitted.) A seeded ``images.list`` dump wins, for a canned answer.
        """
        if "images.list" in self.model.dumps:
            return o.ImagesList(images=self.model.dumps["images.list"])
        rows: list[dict[str, Any]] = []
        for host in sorted(self.model.hosts.values(), key=lambda h: h.name):
            if host.reachable:
                rows.append({"host": host.name, "images": list(host.images)})
            else:
                error = self._shed_server_error(host.last_error or "connection refused").message
                rows.append({"host": host.name, "error": error})
        return o.ImagesList(images=rows)

    def op_app_window_metrics(self, p: Any, raw: Any) -> Any:
        # the dashboard window is built with an 860x660 content size
        # (AppModel.swift:620@5a762e8; charliek/shed AppModel.swift@5339dc4 buildMainWindow)
        return o.WindowMetrics(
            window_width=860,
            window_height=660,
            sidebar_width=200,  # Theme.sidebarWidth (ShedDesktopUI/Theme.swift:51@5a762e8)
            visible_pane=self.model.ui["pane"],
        )

    _PNG_1X1 = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
        "WjR9awAAAABJRU5ErkJggg=="
    )

    def op_app_screenshot(self, p: Any, raw: Any) -> Any:
        if not self.is_mac:
            return o.TauriScreenshot(png=self._PNG_1X1, width=1, height=1)
        # mac: the params decode (scale, then the ScreenshotSurface enum) ran already;
        # the range check and the surface's window follow (IPCHandlerImpl.swift
        # screenshot(), @5a762e8 and charliek/shed @3fecd8a; AppModel.swift window(for:))
        surface = p.surface or "window"
        scale = 1 if p.scale is None else p.scale
        if scale not in (1, 2):
            raise self._bad(f"scale must be 1 or 2, got {scale}")
        if surface == "menu" and not self.model.ui.get("menu_open"):
            raise self._fail("menu is not open; call ui.open_menu {open:true} first")
        if surface == "preferences" and self.model.preferences_window is None:
            raise self._fail("no window to capture")  # built on the first open only
        return o.MacScreenshot(
            png=self._PNG_1X1, width=scale, height=scale, scale=scale, surface=surface
        )

    def op_tray_dump(self, p: Any, raw: Any) -> Any:
        return o.TrayDump(
            present=True,
            items=["open", "approvals", "preferences", "quit"],  # tray.rs:40-48@5a762e8
            popover=None,
            popover_visible=self.model.ui.get("tray_visible", False),
            popover_height=None,
        )

    def op_tray_show(self, p: Any, raw: Any) -> Any:
        self.model.ui["tray_visible"] = True
        return o.Empty()

    def op_tray_hide(self, p: Any, raw: Any) -> Any:
        self.model.ui["tray_visible"] = False
        return o.Empty()

    def op_tray_toggle(self, p: Any, raw: Any) -> Any:
        self.model.ui["tray_visible"] = not self.model.ui.get("tray_visible", False)
        return o.Empty()

    def op_loginitem_status(self, p: Any, raw: Any) -> Any:
        return o.EnabledResult(enabled=self.model.prefs["login_item"])

    def op_loginitem_set(self, p: o.LoginItemSetParams, raw: Any) -> Any:
        self.model.prefs["login_item"] = p.enabled
        return o.Empty()

    def op_prefs_get(self, p: Any, raw: Any) -> Any:
        terminal = self.model.prefs["terminal"]
        return o.TerminalPrefs(
            terminal_preset=terminal["preset"], terminal_template=terminal["template"] or ""
        )

    def op_prefs_dump(self, p: Any, raw: Any) -> Any:
        window = self.model.preferences_window
        return o.PrefsDump(
            visible=window == "visible",
            title=None if window is None else PREFERENCES_TITLE,
            prefs=self.model.dumps.get("prefs.dump"),
        )

    def op_ui_open_preferences(self, p: Any, raw: Any) -> Any:
        self.model.preferences_window = "visible"
        if self.is_mac and not self.test_mode:  # AppModel.swift openPreferences (@5339dc4)
            self.model.ui["activation_policy"] = "regular"
        return o.Empty()

    def op_prefs_close(self, p: Any, raw: Any) -> Any:
        if self.model.preferences_window is not None:
            self.model.preferences_window = "hidden"  # closing only hides it
        return o.Empty()

    def op_prefs_set_terminal(self, p: o.PrefsSetTerminalParams, raw: Any) -> Any:
        self._preset(p.preset)
        self.model.prefs["terminal"] = {"preset": p.preset, "template": p.template}
        return o.Empty()

    def op_prefs_provider_modes(self, p: Any, raw: Any) -> Any:
        return dict(self.model.prefs["provider_modes"])

    def op_prefs_set_provider(self, p: o.PrefsSetProviderParams, raw: Any) -> Any:
        """Set a provider mode as shed-app does (coordinator.rs:965-973@861fedae).

        serde reads ``decision`` as an ``ApprovalDecision`` first; then only the two
        provider namespaces take a mode.
        """
        if p.decision not in _DECISIONS:
            raise DesktopError(BAD, serde_unknown_variant(p.decision, _DECISIONS))
        if p.namespace not in _PROVIDER_NAMESPACES:
            raise DesktopError(
                BAD, f"provider mode not settable for namespace {rust_debug(p.namespace)}"
            )
        self.model.prefs["provider_modes"][p.namespace] = p.decision
        self._rebuild_policy()
        return o.Empty()

    def op_prefs_remove_shed_rule(self, p: o.PrefsRemoveShedRuleParams, raw: Any) -> Any:
        self.model.policy_rules = [
            r
            for r in self.model.policy_rules
            if (r.get("scope"), r.get("server"), r.get("shed")) != ("shed", p.server, p.shed)
        ]
        self._rebuild_policy()
        return o.Empty()

    # broker (charliek/shed desktop/tauri/src-tauri/src/broker.rs@51bd544): the persisted
    # pref is read live (mode_pref, 351-358); the effective mode is the one the app
    # launched into (BrokerRuntime, 72-92; restart_required, 138-140)

    def _broker_mode(self) -> o.BrokerMode:
        broker = self.model.broker
        pref = self.model.prefs["broker_mode"]
        return o.BrokerMode(
            pref=pref,
            effective=broker["effective"],
            restart_required=pref != broker["launch_pref"],
        )

    def op_broker_status(self, p: Any, raw: Any) -> Any:
        broker = self.model.broker
        mode = self._broker_mode()
        embedded = broker["effective"] != "external"
        source = broker["config_source"] if embedded else None
        return o.BrokerStatus(
            effective_mode=mode.effective,
            pref=mode.pref,
            restart_required=mode.restart_required,
            probe=o.BrokerProbe(**broker["probe"]),
            config=o.BrokerConfigSource(
                source=source, message=broker["error"] if source == "error" else None
            ),
            resolved_ssh_mode=broker["resolved_ssh_mode"] if embedded else None,
            gate_namespaces=list(broker["gate_namespaces"]) if embedded else [],
            servers=list(broker["servers"]) if embedded else [],
            broker_error=broker["error"],
        )

    def op_broker_mode(self, p: Any, raw: Any) -> Any:
        return self._broker_mode()

    def op_broker_set_mode(self, p: o.BrokerSetModeParams, raw: Any) -> Any:
        if p.mode not in BROKER_PREFS:  # parse_mode_pref
            raise DesktopError(BAD, f"unknown broker mode: {rust_debug(p.mode)}")
        self.model.prefs["broker_mode"] = p.mode
        return self._broker_mode()

    # updater (charliek/shed desktop/tauri/src-tauri/src/updater.rs:60-73@c38944d,
    # updater_reason): the reason by precedence: Linux (apt) always, then test mode,
    # then a missing bundle

    def _updater_reason(self) -> tuple[str, bool]:
        if self.model.platform["os"] == "linux":
            return "linux_apt", False
        instantiated = not self.test_mode and bool(self.model.platform["bundle"])
        if self.test_mode:
            return "test_mode", instantiated
        return ("ok" if instantiated else "no_bundle"), instantiated

    def op_updater_status(self, p: Any, raw: Any) -> Any:
        reason, instantiated = self._updater_reason()
        return o.UpdaterStatus(
            os=self.model.platform["os"],
            enabled=reason == "ok",
            reason=reason,
            instantiated=instantiated,
        )

    def op_updater_check(self, p: Any, raw: Any) -> Any:
        reason, _ = self._updater_reason()
        if reason != "ok":
            raise DesktopError(DesktopCode.UPDATER_DISABLED, f"updater_disabled:{reason}")
        return o.Empty()  # the enabled path fronts the app and presents the updater

    def op_egress_show(self, p: o.EgressShowParams, raw: Any) -> Any:
        # tab checked, then readiness: the pane must have reported
        # (charliek/shed desktop/tauri/src-tauri/src/ipc.rs:848@2cd01ef, egress_show)
        if p.tab is not None and p.tab not in ("activity", "profiles"):
            raise DesktopError(BAD, f"unknown tab: {rust_debug(p.tab)}")
        if self._egress_snapshot() is None:
            raise DesktopError(
                DesktopCode.FRONTEND_NOT_READY, "egress pane has not reported yet; retry"
            )
        view = self.model.ui.setdefault("egress", {"tab": "activity", "selected": None})
        if p.tab is not None:
            view["tab"] = p.tab
        if p.profile is not None:
            view["selected"] = {"profile": p.profile, "host": p.host}
        return o.Empty()


_DECISIONS = ("approve", "deny")
"""shed-core's ``ApprovalDecision`` variants."""
_PROVIDER_NAMESPACES = frozenset({"aws-credentials", "docker-credentials"})
"""The namespaces a provider mode is kept for (coordinator.rs ``set_provider_mode``)."""
