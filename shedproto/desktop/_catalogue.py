"""The op catalogue as data: every op of digest §3, per dialect.

Each :class:`OpSpec` says which dialects have the op and, per dialect, an
:class:`OpShape`: the params Struct, the result Struct, the test-mode
:class:`Gate`, and how the Tauri reader treats mistyped optional params.
:func:`catalogue_schemas` turns the catalogue into ``schemas/desktop-*.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

import msgspec

from . import types as o
from ._dialect import Dialect
from ._release import Release, release_has_op

__all__ = [
    "CATALOGUE",
    "Gate",
    "OpShape",
    "OpSpec",
    "TauriTyping",
    "catalogue_schemas",
    "lookup",
    "ops_for",
]


class Gate(Enum):
    """How test mode affects an op."""

    NONE = "none"
    """Available in and out of test mode."""
    TEST_ONLY = "test_only"
    """Refused (``not-enabled``/``not_enabled``) outside test mode, before params are read."""
    REFUSED_IN_TEST = "refused_in_test"
    """Refused *in* test mode (``terminal.open``, ``updater.check``)."""


class TauriTyping(Enum):
    """How the Tauri reader treats a param of the wrong type."""

    LENIENT = "lenient"
    """``as_str``: a mistyped optional is absent, a mistyped required ``missing '<k>'``."""
    STRICT = "strict"
    """``opt_str``: a mistyped optional is ``'<k>' must be a string`` (``bad_request``)."""
    SERDE = "serde"
    """A serde-typed struct: any mismatch is a serde error (``bad_request``)."""


@dataclass(frozen=True)
class OpShape:
    """One op as one dialect has it."""

    params: type[o.Params]
    result: Any
    """The result type: a :class:`~.types.Result` Struct (or, for a result that
    is itself an open map, the mapping type)."""
    gate: Gate = Gate.NONE
    typing: TauriTyping = TauriTyping.LENIENT
    missing: Mapping[str, str] = field(default_factory=dict)
    """Tauri messages that replace ``missing '<key>'`` for particular keys."""
    raw: frozenset[str] = frozenset()
    """Tauri keys read with ``params.get(key)`` alone: an explicit ``null`` is
    present (only an absent key is ``missing '<key>'``) and reaches the op."""
    refusal: tuple[str, str] | None = None
    """For ``REFUSED_IN_TEST``: the (code, message) the dialect answers."""
    reads_raw: bool = False
    """The op's rules read the params as received (the launch doors look at
    mistyped extras), so its requests always carry ``raw_params``."""
    gate_after_params: bool = False
    """The gate is checked after the params decode, not before (mac ``policy.set``,
    ``terminal.open``)."""


@dataclass(frozen=True)
class OpSpec:
    """One op of the catalogue: its name, shapes per dialect, and the alias it stands for."""

    name: str
    mac: OpShape | None
    tauri: OpShape | None
    alias_of: str | None = None

    def shape(self, dialect: Dialect) -> OpShape | None:
        """Return the op's shape in ``dialect``, or ``None`` when that server lacks it."""
        return self.mac if dialect is Dialect.MAC else self.tauri

    @property
    def dialects(self) -> frozenset[Dialect]:
        """The dialects that have this op."""
        return frozenset(
            d for d, s in ((Dialect.MAC, self.mac), (Dialect.TAURI, self.tauri)) if s is not None
        )


_NP = o.NoParams
_E = o.Empty
_TM = Gate.TEST_ONLY
_STRICT = TauriTyping.STRICT
_SERDE = TauriTyping.SERDE
_KIND = {"kind": "missing or invalid 'kind'"}


def _both(params: type[o.Params], result: Any, **kw: Any) -> tuple[OpShape, OpShape]:
    return OpShape(params, result, **kw), OpShape(params, result, **kw)


def _t(params: type[o.Params], result: Any, **kw: Any) -> tuple[None, OpShape]:
    return None, OpShape(params, result, **kw)


def _m(params: type[o.Params], result: Any, **kw: Any) -> tuple[OpShape, None]:
    return OpShape(params, result, **kw), None


def _shed_action() -> tuple[OpShape, OpShape]:
    return OpShape(o.MacShedActionParams, _E), OpShape(o.ShedActionParams, _E)


_TERMINAL_OPEN_REFUSAL = "terminal.open is disabled in test mode (use terminal.preview)"

_TABLE: dict[str, tuple[OpShape | None, OpShape | None]] = {
    # 3.1 core, UI and window
    "identify": (OpShape(o.IdentifyParams, o.MacIdentify), OpShape(_NP, o.TauriIdentify)),
    "ui.state": _m(_NP, o.UiState),
    "ui.navigate": (
        OpShape(o.UiNavigateParams, o.PaneResult),
        OpShape(o.TauriUiNavigateParams, o.PaneResult),
    ),
    "ui.set_ssh_approval": (
        OpShape(o.MacUiSetSshApprovalParams, _E),
        OpShape(o.UiSetSshApprovalParams, _E, typing=_SERDE),
    ),
    "ui.ssh_prefs": _t(_NP, o.SshPrefs),
    "ui.show_window": _both(_NP, _E),
    "ui.hide_window": _m(_NP, _E),
    "ui.window_state": _m(_NP, o.WindowState),
    "ui.open_preferences": _both(_NP, _E),
    "ui.open_menu": _m(o.UiOpenMenuParams, o.OpenResult),
    "ui.show_create": _both(_NP, _E),
    "ui.show_launch": _both(_NP, _E),
    "ui.current_pane": _t(_NP, o.NullablePane),
    "ui.computed_style": _t(_NP, o.StyleResult),
    "ui.modal": _t(_NP, o.ModalResult),
    "ui.badges": _t(_NP, o.BadgesResult),
    "ui.set_appearance": _t(o.UiSetAppearanceParams, _E),
    "host.list": _m(_NP, o.HostList),
    "hosts.auth": _t(_NP, o.HostsAuth),
    "sheds.list": (
        OpShape(o.ShedsListParams, o.MacShedsList),
        OpShape(o.ShedsListParams, o.TauriShedsList),
    ),
    "sheds.refresh": (OpShape(_NP, _E), OpShape(_NP, o.TauriShedsList)),
    "system.df": _both(_NP, o.UsageList),
    "images.list": _m(_NP, o.ImagesList),
    "app.window_metrics": _m(_NP, o.WindowMetrics),
    "app.screenshot": (
        OpShape(o.ScreenshotParams, o.MacScreenshot),
        OpShape(_NP, o.TauriScreenshot),
    ),
    "tray.show": _t(_NP, _E),
    "tray.toggle": _t(_NP, _E),
    "tray.hide": _t(_NP, _E),
    "tray.dump": _t(_NP, o.TrayDump),
    "loginitem.status": _t(_NP, o.EnabledResult),
    "loginitem.set": _t(o.LoginItemSetParams, _E, missing={"enabled": "missing 'enabled' (bool)"}),
    "prefs.get": _t(_NP, o.TerminalPrefs),
    "prefs.set_terminal": _t(o.PrefsSetTerminalParams, _E),
    "prefs.provider_modes": _t(_NP, o.ProviderModes),
    "prefs.set_provider": _t(o.PrefsSetProviderParams, _E, typing=_SERDE),
    "prefs.dump": _t(_NP, o.PrefsDump),
    "prefs.close": _t(_NP, _E),
    "prefs.remove_shed_rule": _t(o.PrefsRemoveShedRuleParams, _E),
    "broker.status": _t(_NP, o.BrokerStatus),
    "broker.mode": _t(_NP, o.BrokerMode),
    "broker.set_mode": _t(o.BrokerSetModeParams, o.BrokerMode),
    "updater.status": _t(_NP, o.UpdaterStatus),
    # the enabled path fronts the app and presents the updater: {}; otherwise the
    # reason decides (Linux is always linux_apt, even in test mode: updater.rs:60-73@c38944d)
    "updater.check": _t(_NP, _E),
    "egress.show": _t(o.EgressShowParams, _E),
    # 3.2 lifecycle, create and terminal
    # mac decoders read their keys in declaration order: `host` first
    # (IPCHandlerImpl.swift:369-385@3fecd8a), a create's request before its `host`
    "shed.start": _shed_action(),
    "shed.stop": _shed_action(),
    "shed.reset": _shed_action(),
    "shed.delete": _shed_action(),
    "create.start": _both(o.CreateStartParams, o.CreateStarted),
    "create.status": _both(o.CreateIdParams, o.CreateProgress),
    "create.cancel": _both(o.CreateIdParams, _E),
    "terminal.preview": (
        OpShape(o.MacTerminalParams, o.MacTerminalPreview),
        OpShape(o.TauriTerminalParams, o.TerminalCommand),
    ),
    "terminal.open": (
        # mac: decodeParams runs before terminalOpenOp's test-mode guard
        # (IPCHandlerImpl.swift:109-111,308-314@3fecd8a)
        OpShape(
            o.MacTerminalParams,
            o.MacTerminalOpened,
            gate=Gate.REFUSED_IN_TEST,
            refusal=("not-enabled", _TERMINAL_OPEN_REFUSAL),
            gate_after_params=True,
        ),
        OpShape(
            o.TauriTerminalParams,
            o.TauriTerminalOpened,
            gate=Gate.REFUSED_IN_TEST,
            refusal=("not_enabled", _TERMINAL_OPEN_REFUSAL),
        ),
    ),
    "terminal.presets": _t(_NP, o.PresetsResult),
    # 3.3 sessions
    "rc.classify": _both(o.RcClassifyParams, o.RcClassification, missing=_KIND),
    # the mac app keeps the RcSession model in its newer release too
    # (charliek/shed desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift:112-128@3fecd8a)
    "rc.list": (OpShape(o.RcListParams, o.RcSessionList), OpShape(o.RcListParams, o.TauriRcList)),
    "rc.launch": (
        OpShape(o.MacRcLaunchParams, o.RcSession, reads_raw=True),
        OpShape(o.TauriRcLaunchParams, o.SessionRow, missing=_KIND, reads_raw=True),
    ),
    "rc.kill": (OpShape(o.MacRcKillParams, _E), OpShape(o.RcKillParams, _E)),
    "rc.inject_test": (
        OpShape(o.MacRcInjectParams, _E),
        OpShape(o.TauriRcInjectParams, _E, gate=_TM, reads_raw=True),
    ),
    "machines.list": _t(_NP, o.MachinesList),
    "machine.kill": _t(o.MachineKillParams, _E),
    "roost.launch": _t(o.RoostLaunchParams, o.SessionRow, reads_raw=True),
    "roost.run": _t(o.RoostRunParams, o.RoostRunResult),
    "machine.capabilities": _t(o.MachineParams, o.CapabilitiesResult),
    "machine.add": _t(o.MachineAddParams, _E),
    "roost.probe": _t(o.RoostTargetParams, o.RoostProbe),
    "roost.preview": _t(o.RoostTargetParams, o.RoostProbe),
    "roost.bootstrap": _t(o.RoostBootstrapParams, o.RoostBootstrapResult),
    "craze.create_options": _t(o.MachineParams, o.CrazeCreateOptions),
    "craze.create": _t(o.CrazeCreateParams, o.CrazeCreateResult, typing=_STRICT),
    "craze.open_terminal": _t(o.CrazeOpenTerminalParams, o.CrazeTerminal),
    "lane.open": _t(o.LaneParams, o.LaneOpenResult),
    "lane.messages": _t(o.LaneParams, o.LaneMessages),
    "lane.approvals": _t(o.LaneParams, o.LaneApprovals),
    "lane.send": _t(o.LaneSendParams, _E),
    "lane.cancel": _t(o.LaneParams, _E),
    "lane.stop": _t(o.LaneParams, _E),
    "lane.close": _t(o.LaneParams, _E),
    "lane.answer": _t(o.LaneAnswerParams, _E, raw=frozenset({"answer"})),
    "lane.settings": _t(o.LaneParams, o.LaneSettings),
    "lane.set": _t(o.LaneSetParams, _E, raw=frozenset({"change"})),
    # 3.4 approvals
    "approvals.list": _both(_NP, o.ApprovalsList),
    "approval.decide": (
        OpShape(o.MacApprovalDecideParams, _E),
        OpShape(o.ApprovalDecideParams, _E, typing=_SERDE),
    ),
    "activity.list": _both(o.ActivityListParams, o.ActivityEntries),
    "activity.log_path": _both(_NP, o.LogPath),
    "policy.list": _both(_NP, o.PolicyList),
    # mac decodes the rules before it checks test mode (IPCHandlerImpl.swift:146-149,289-294
    # @5a762e8, policySetOp; charliek/shed :142-145,285-290@3fecd8a)
    "policy.set": (
        OpShape(o.MacPolicySetParams, _E, gate=_TM, gate_after_params=True),
        OpShape(o.PolicySetParams, _E, gate=_TM, typing=_SERDE),
    ),
    "notifications.list": _both(_NP, o.NotificationsList),
    "notification.invoke": (
        OpShape(o.NotificationInvokeParams, _E),
        OpShape(o.TauriNotificationInvokeParams, _E),
    ),
    "notification.open": _both(_NP, _E),
    # 3.5 UI-truth dumps and doors
    "dashboard.dump": _t(_NP, o.DashboardDump),
    "agents.dump": _t(_NP, o.AgentsDump),
    "egress.profiles": _t(_NP, o.EgressProfiles),
    "machines.dump": _t(_NP, o.MachinesDump),
    "sidebar.dump": _t(_NP, o.SidebarDump),
    "shed_roost.dump": _t(_NP, o.ShedRoostDump),
    "roost_consent.dump": _t(_NP, o.ConsentDump),
    "launch.dump": _t(_NP, o.LaunchDump),
    "toast.dump": _t(_NP, o.ToastDump),
    "lane.dump": _t(_NP, o.LaneDump),
    "lane_settings.dump": _t(_NP, o.LaneSettingsDump),
    "craze_create.dump": _t(_NP, o.CrazeCreateDump),
    "ui.show_lane": _t(o.UiShowLaneParams, _E),
    "ui.close_lane": _t(_NP, _E),
    "ui.show_craze_create": _t(o.UiShowCrazeCreateParams, _E),
    "ui.close_craze_create": _t(_NP, _E),
    "ui.show_lane_settings": _t(o.UiShowLaneParams, _E),
    "ui.close_lane_settings": _t(_NP, _E),
    "ui.fill_launch": _t(o.UiFillLaunchParams, _E, gate=_TM, typing=_STRICT),
    "ui.submit_launch": _t(_NP, _E, gate=_TM),
    "ui.show_roost_consent": _t(o.UiShowRoostConsentParams, _E, gate=_TM),
    "ui.confirm_roost_consent": _t(_NP, _E, gate=_TM),
    "ui.close_roost_consent": _t(_NP, _E, gate=_TM),
    "ui.fill_craze_create": _t(
        o.UiFillCrazeCreateParams,
        _E,
        gate=_TM,
        typing=_STRICT,
        missing={"recent": "'recent' must be a non-negative index"},
    ),
    "ui.submit_craze_create": _t(_NP, _E, gate=_TM),
    "ui.pick_lane_setting": _t(o.UiPickLaneSettingParams, _E, gate=_TM, typing=_STRICT),
    "ui.hold_lane_view": _t(
        o.UiHoldLaneViewParams,
        _E,
        gate=_TM,
        typing=_STRICT,
        missing={"hold": "'hold' must be true or false"},
    ),
}

_BY_RELEASE: dict[tuple[str, Dialect, Release], OpShape] = {
    # v0.0.14's RC session model (shed-core rc.rs:121-147@5a762e8): rc.launch answers an
    # RcSession and rc.list an RcSessionList in both apps; the Tauri inject door takes a
    # whole session (ipc.rs:471-579@5a762e8, IPCHandlerImpl.swift:116-132@5a762e8)
    ("rc.list", Dialect.TAURI, Release.V0_0_14): OpShape(o.RcListParams, o.RcSessionList),
    ("rc.launch", Dialect.TAURI, Release.V0_0_14): OpShape(
        o.Rc14TauriLaunchParams, o.RcSession, missing=_KIND, reads_raw=True
    ),
    ("rc.inject_test", Dialect.TAURI, Release.V0_0_14): OpShape(
        o.Rc14TauriInjectParams, _E, gate=_TM
    ),
    # v0.0.14's mac RcKind is closed (claude-rc, claude-broker, shell); the newer one keeps
    # any string (charliek/shed desktop/Sources/ShedKit/RC/RemoteControl.swift:44-54@1545191)
    ("rc.launch", Dialect.MAC, Release.V0_0_14): OpShape(
        o.Rc14MacLaunchParams, o.RcSession, reads_raw=True
    ),
    ("rc.inject_test", Dialect.MAC, Release.V0_0_14): OpShape(o.Rc14MacInjectParams, _E),
}
"""Where an older release's op has another shape than the newest (``lookup(..., release)``)."""

_ALIASES = {
    "app.activate": "ui.show_window",
    "ui.show_preferences": "ui.open_preferences",
    "machine.launch": "roost.launch",
}


def _build() -> Mapping[str, OpSpec]:
    specs = {name: OpSpec(name, mac, tauri) for name, (mac, tauri) in _TABLE.items()}
    for alias, target in _ALIASES.items():
        base = specs[target]
        # the aliases exist only on the Tauri server
        specs[alias] = OpSpec(alias, None, base.tauri, alias_of=target)
    return MappingProxyType(dict(sorted(specs.items())))


CATALOGUE: Mapping[str, OpSpec] = _build()
"""Every op by wire name (aliases included), sorted by name; read-only."""


_SHAPES: dict[Dialect, dict[str, OpShape]] = {
    dialect: {
        name: shape
        for name, spec in CATALOGUE.items()
        if (shape := spec.shape(dialect)) is not None
    }
    for dialect in Dialect
}


def lookup(op: str, dialect: Dialect, release: Release = Release.LATEST) -> OpShape | None:
    """Return ``op``'s shape in ``dialect`` as ``release`` has it.

    ``None`` when that server has no such op (whether ``release`` has it is
    :func:`release_has_op`'s).
    """
    if release is not Release.LATEST:
        older = _BY_RELEASE.get((op, dialect, release))
        if older is not None:
            return older
    return _SHAPES[dialect].get(op)


def ops_for(dialect: Dialect) -> list[str]:
    """Return the sorted op names ``dialect`` answers (aliases included)."""
    return [name for name, spec in CATALOGUE.items() if spec.shape(dialect) is not None]


def catalogue_schemas() -> dict[str, Any]:
    """Return ``{file name: JSON Schema}`` for ``schemas/desktop-*.json``.

    One file per dialect: ``$defs`` holds every params and result Struct, and
    ``x-ops`` maps each op to its params/result refs, its test-mode gate, the
    releases that have it and, under ``by_release``, an older release's own shape
    where it differs.
    Plus ``desktop-envelope.json`` with the request and both response shapes.
    """
    from ._envelope import ErrorBody, ErrorResponse, OkResponse, RequestFrame

    out: dict[str, Any] = {}
    for dialect in Dialect:
        names = ops_for(dialect)
        types: list[Any] = []
        for name in names:
            shape = CATALOGUE[name].shape(dialect)
            assert shape is not None
            types += [shape.params, shape.result]
        for (_, d, _), older in _BY_RELEASE.items():
            if d is dialect:
                types += [older.params, older.result]
        unique = list(dict.fromkeys(types))
        refs, components = msgspec.json.schema_components(unique, ref_template="#/$defs/{name}")
        ref_of = dict(zip(unique, refs, strict=True))
        ops: dict[str, Any] = {}
        for name in names:
            shape = CATALOGUE[name].shape(dialect)
            assert shape is not None
            entry: dict[str, Any] = {
                "params": ref_of[shape.params],
                "result": ref_of[shape.result],
                "test_mode": shape.gate.value,
            }
            if shape.gate_after_params:
                entry["test_mode_after_params"] = True
            alias = CATALOGUE[name].alias_of
            if alias is not None:
                entry["alias_of"] = alias
            entry["releases"] = [r.value for r in Release if release_has_op(r, dialect, name)]
            by_release = {
                r.value: {
                    "params": ref_of[older.params],
                    "result": ref_of[older.result],
                    "test_mode": older.gate.value,
                }
                for (op, d, r), older in _BY_RELEASE.items()
                if op == name and d is dialect
            }
            if by_release:
                entry["by_release"] = by_release
            ops[name] = entry
        out[f"desktop-{dialect.value}.json"] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"shed-desktop control socket ops ({dialect.value} dialect)",
            "x-ops": ops,
            "$defs": components,
        }
    envelope_types = [RequestFrame, OkResponse, ErrorResponse, ErrorBody]
    refs, components = msgspec.json.schema_components(envelope_types, ref_template="#/$defs/{name}")
    out["desktop-envelope.json"] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "shed-desktop control socket envelope (one JSON object per line)",
        "anyOf": refs[:3],
        "$defs": components,
    }
    return out
