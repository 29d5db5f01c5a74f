"""Params and result Structs of every op in the catalogue (digest §3).

Params Structs are strict (the mac server rejects unknown keys; the Tauri
reader drops them before conversion, see ``shedproto.desktop._params``). A field with no
default is required. Result Structs are lenient so that a client reading a
newer server's answer ignores fields it does not know. Where the two servers
answer different shapes the Struct names carry ``Mac``/``Tauri``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from shedproto import LenientFrame, StrictFrame

from ._rc import RcKindName, RcStateName
from ._swift import SwiftEnum

# The mac app's String-backed Swift enums its params decode into (a value outside
# them is Swift's ``dataCorrupted``): charliek/shed-desktop
# ``Sources/ShedKit/Approval/ApprovalModels.swift:56-57,158-200@5a762e8``,
# ``Sources/ShedKit/Models/Models.swift:643-647@5a762e8`` (ScreenshotSurface),
# unchanged in charliek/shed ``desktop/Sources/ShedKit/Models/Models.swift:673-677@1cea187``.
_ApprovalDecision = Annotated[Literal["approve", "deny"], SwiftEnum("ApprovalDecision")]
_ApprovalScope = Annotated[
    Literal["per-request", "per-session", "per-shed"], SwiftEnum("ApprovalScope")
]
_ApprovalMethod = Annotated[
    Literal["biometrics-or-password", "biometrics", "prompt"], SwiftEnum("ApprovalMethod")
]
_SshPolicy = Annotated[
    Literal["always-allow", "per-shed-allow", "time-based-allow", "always-ask", "always-deny"],
    SwiftEnum("SSHApprovalPolicy"),
]
_Surface = Annotated[Literal["window", "menu", "preferences"], SwiftEnum("ScreenshotSurface")]
_RcState = Annotated[RcStateName, SwiftEnum("RcState")]

__all__ = [
    "Params",
    "Result",
    "NoParams",
    "Empty",
    # core / UI
    "IdentifyParams",
    "MacIdentify",
    "TauriIdentify",
    "UiNavigateParams",
    "TauriUiNavigateParams",
    "PaneResult",
    "UiSetSshApprovalParams",
    "MacUiSetSshApprovalParams",
    "SshPrefs",
    "UiOpenMenuParams",
    "OpenResult",
    "WindowState",
    "UiSetAppearanceParams",
    "UpdaterStatus",
    "StyleResult",
    "ModalResult",
    "BadgesResult",
    "NullablePane",
    "HostFailure",
    "MacHost",
    "HostList",
    "HostAuth",
    "HostsAuth",
    "ShedsListParams",
    "MacShed",
    "MacShedsList",
    "TauriShed",
    "TauriShedsList",
    "UsageList",
    "ImagesList",
    "WindowMetrics",
    "ScreenshotParams",
    "MacScreenshot",
    "TauriScreenshot",
    "TrayDump",
    "EnabledResult",
    "LoginItemSetParams",
    "PrefsSetTerminalParams",
    "PrefsSetProviderParams",
    "PrefsRemoveShedRuleParams",
    "AnyObject",
    "UiState",
    "TerminalPrefs",
    "ProviderModes",
    "PrefsDump",
    "BrokerSetModeParams",
    "BrokerConfigSource",
    "BrokerMode",
    "BrokerProbe",
    "BrokerStatus",
    "EgressShowParams",
    # lifecycle
    "ShedActionParams",
    "MacShedActionParams",
    "CreateStartParams",
    "CreateStarted",
    "CreateIdParams",
    "CreateProgress",
    "MacTerminalParams",
    "TauriTerminalParams",
    "TerminalCommand",
    "PresetsResult",
    # sessions
    "MacTerminalOpened",
    "MacTerminalPreview",
    "LaunchInvocation",
    "RcClassification",
    "RcSession",
    "RcSessionList",
    "TauriTerminalOpened",
    "RcClassifyParams",
    "RcListParams",
    "TauriRcList",
    "MacRcLaunchParams",
    "Rc14MacLaunchParams",
    "TauriRcLaunchParams",
    "Rc14TauriInjectParams",
    "Rc14TauriLaunchParams",
    "RcKillParams",
    "MacRcKillParams",
    "MacRcInjectParams",
    "Rc14MacInjectParams",
    "TauriRcInjectParams",
    "CrazeStatus",
    "MachineRow",
    "MachinesList",
    "MachineKillParams",
    "RoostLaunchParams",
    "RoostRunParams",
    "RoostRunResult",
    "MachineParams",
    "CapabilitiesResult",
    "MachineAddParams",
    "RoostTargetParams",
    "RoostProbe",
    "RoostBootstrapParams",
    "BootstrapStageError",
    "RoostBootstrapResult",
    "SessionRow",
    "CrazeOptions",
    "CrazeCreateOptions",
    "CrazeCreateParams",
    "CrazeCreateResult",
    "CrazeOpenTerminalParams",
    "CrazeTerminal",
    "LaneParams",
    "LaneOpenResult",
    "LaneMessages",
    "LaneApprovals",
    "LaneSendParams",
    "LaneAnswerParams",
    "LaneSettings",
    "LaneSetParams",
    # approvals
    "ApprovalsList",
    "ApprovalDecideParams",
    "MacPolicyRule",
    "MacPolicySetParams",
    "MacApprovalDecideParams",
    "ActivityListParams",
    "ActivityEntries",
    "LogPath",
    "PolicyRule",
    "PolicyList",
    "PolicySetParams",
    "NotificationsList",
    "NotificationInvokeParams",
    "TauriNotificationInvokeParams",
    # dumps and doors
    "DashboardEmpty",
    "DashboardDump",
    "AgentsDump",
    "EgressProfiles",
    "MachinesDump",
    "SidebarDump",
    "ShedRoostDump",
    "ConsentDump",
    "LaunchDump",
    "ToastDump",
    "LaneDump",
    "LaneSettingsDump",
    "CrazeCreateDump",
    "UiShowLaneParams",
    "UiShowCrazeCreateParams",
    "UiFillLaunchParams",
    "UiShowRoostConsentParams",
    "UiFillCrazeCreateParams",
    "UiPickLaneSettingParams",
    "UiHoldLaneViewParams",
]

Row = dict[str, Any]


class Params(StrictFrame, frozen=True, kw_only=True):
    """Base of every params Struct: frozen, keyword-only, unknown keys rejected."""


class Result(LenientFrame, frozen=True, kw_only=True):
    """Base of every result Struct: frozen, keyword-only, unknown keys ignored on read."""


class NoParams(Params, frozen=True, kw_only=True):
    """An op that takes no parameters (mac: any key is ``unknown-field``)."""


class Empty(Result, frozen=True, kw_only=True):
    """The ``{}`` result."""


class AnyObject(Result, frozen=True, kw_only=True):
    """A result whose shape the digest leaves open: some JSON object (read it raw)."""


# --- core, UI and window -------------------------------------------------------


class IdentifyParams(Params, frozen=True, kw_only=True):
    """mac ``identify``: these two keys are allowed, with any value (Tauri ignores params).

    The app checks the key allow-list, then decodes an ``EmptyParams`` that reads no
    property (charliek/shed ``IPCHandlerImpl.swift:27-29,361@3fecd8a``,
    charliek/shed-desktop ``:27-29@5a762e8``).
    """

    client_name: Any = None
    client_version: Any = None


class MacIdentify(Result, omit_defaults=True, frozen=True, kw_only=True):
    """mac ``identify``: ``mock_base_url`` is omitted when unset."""

    socket_path: str
    pid: int
    app_label: str
    app_id: str
    ui_version: str
    protocol_version: int
    test_mode: bool
    mock_base_url: str | None = None
    core: str


class TauriIdentify(Result, frozen=True, kw_only=True):
    """Tauri ``identify``: ``mock_base_url`` is ``null`` when unset.

    v0.0.14 sends exactly ``socket_path, pid, core, platform, test_mode,
    mock_base_url`` (charliek/shed-desktop ``tauri/src-tauri/src/ipc.rs:116-125@5a762e8``);
    the newer app adds ``broker_mode`` (absent here means v0.0.14).
    """

    socket_path: str
    pid: int
    core: str = "rust"
    platform: str = "tauri"
    test_mode: bool
    mock_base_url: str | None = None
    broker_mode: BrokerMode | msgspec.UnsetType = msgspec.UNSET


class UiNavigateParams(Params, frozen=True, kw_only=True):
    """mac ``ui.navigate``: ``pane`` is required."""

    pane: str


class TauriUiNavigateParams(Params, frozen=True, kw_only=True):
    """Tauri ``ui.navigate``: a missing ``pane`` reads as ``""`` (then ``unknown pane: ""``)."""

    pane: str | None = None


class PaneResult(Result, frozen=True, kw_only=True):
    """``{pane}``."""

    pane: str


class NullablePane(Result, frozen=True, kw_only=True):
    """``ui.current_pane``: null before the frontend's first report."""

    pane: str | None = None


class UiSetSshApprovalParams(Params, frozen=True, kw_only=True):
    """``ui.set_ssh_approval`` (the code's ``policy``, not the doc's ``scope``)."""

    method: str | None = None
    policy: str | None = None
    ttl: str | None = None


class MacUiSetSshApprovalParams(Params, frozen=True, kw_only=True):
    """mac ``ui.set_ssh_approval``: Swift enums.

    ``method`` an ``ApprovalMethod?``, ``policy`` an ``SSHApprovalPolicy?``
    (``IPCHandlerImpl.swift:469-480@5a762e8``: ``SetSshApprovalParams``).
    """

    method: _ApprovalMethod | None = None
    policy: _SshPolicy | None = None
    ttl: str | None = None


class SshPrefs(Result, frozen=True, kw_only=True):
    """``ui.ssh_prefs``."""

    method: str
    policy: str
    ttl: str | None = None


class UiOpenMenuParams(Params, frozen=True, kw_only=True):
    """``ui.open_menu``."""

    open: bool


class OpenResult(Result, frozen=True, kw_only=True):
    """``{open}``."""

    open: bool


class WindowState(Result, frozen=True, kw_only=True):
    """``ui.window_state``."""

    visible: bool
    activation_policy: str


class UiSetAppearanceParams(Params, frozen=True, kw_only=True):
    """``ui.set_appearance``: ``light`` or ``dark``; absent or mistyped reads as ``""``."""

    mode: str | None = None


class StyleResult(Result, frozen=True, kw_only=True):
    """``ui.computed_style``."""

    style: Any = None


class ModalResult(Result, frozen=True, kw_only=True):
    """``ui.modal``."""

    modal: Any = None


class BadgesResult(Result, frozen=True, kw_only=True):
    """``ui.badges``."""

    badges: Any = None


class HostFailure(Result, frozen=True, kw_only=True):
    """A host whose sheds could not be listed (``kind``: ``agent_upgrade_required``|``other``)."""

    server: str
    kind: str
    summary: str
    detail: str


class MacHost(Result, omit_defaults=True, frozen=True, kw_only=True):
    """One ``host.list`` entry (mac); ``failure`` only when the probe failed."""

    name: str
    host: str
    http_port: int
    ssh_port: int
    reachable: bool
    backend: str | None = None
    version: str | None = None
    last_error: str | None = None
    failure: HostFailure | None = None


class HostList(Result, frozen=True, kw_only=True):
    """``host.list``."""

    hosts: list[MacHost]


class UiState(Result, omit_defaults=True, frozen=True, kw_only=True):
    """``ui.state`` (mac): the dashboard as the app holds it.

    ``sheds`` are ``sheds.list`` rows; ``last_error`` is omitted when nil
    (Swift's ``encodeIfPresent``); ``sheds_empty_state`` is the sentence the
    Sheds pane's empty state would render, decided by the hosts alone and always
    sent by the newer app (charliek/shed ``desktop/Sources/ShedKit/Models/HostFailure.swift
    :119-127@1cea187`` ``shedsEmptyState``); v0.0.14's ``UIState`` has no such field
    (``Models.swift:342-353@5a762e8``).
    """

    pane: str
    hosts: list[MacHost]
    sheds: list[MacShed]
    host_agent_connected: bool
    last_error: str | None = None
    sheds_empty_state: str | msgspec.UnsetType = msgspec.UNSET


class HostAuth(Result, frozen=True, kw_only=True):
    """One ``hosts.auth`` entry."""

    name: str
    auth_mode: str
    learned: bool


class HostsAuth(Result, frozen=True, kw_only=True):
    """``hosts.auth``."""

    hosts: list[HostAuth]


class ShedsListParams(Params, frozen=True, kw_only=True):
    """``sheds.list``: mac filters by ``host``; Tauri ignores it."""

    host: str | None = None


class TauriShed(Result, frozen=True, kw_only=True):
    """A shed row as the Tauri app sends it: shed-core's ``Shed`` through serde.

    Every field is always present; an unknown optional is ``null`` (no
    ``skip_serializing_if``: charliek/shed-desktop
    ``core/shed-core/src/models.rs:63-84@5a762e8``). ``host`` is the config
    server name the client stamped on the row; ``status`` is
    ``running|stopped|starting|error|unknown``.
    """

    host: str
    name: str
    status: str
    backend: str | None = None
    repo: str | None = None
    image: str | None = None
    image_digest: str | None = None
    local_dir: str | None = None
    ip_address: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    created_at: str | None = None
    started_at: str | None = None
    active_namespaces: list[str] = msgspec.field(default_factory=list)


class MacShed(Result, omit_defaults=True, frozen=True, kw_only=True):
    """A shed row as the mac app sends it: ``Models.swift``'s ``Shed``, synthesized Encodable.

    ``nil`` optionals are omitted (``encodeIfPresent``); ``active_namespaces``
    is not optional and always present, ``[]`` when empty (charliek/shed-desktop
    ``Sources/ShedKit/Models/Models.swift:82-110@5a762e8``).
    """

    host: str
    name: str
    status: str
    backend: str | None = None
    repo: str | None = None
    image: str | None = None
    image_digest: str | None = None
    local_dir: str | None = None
    ip_address: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    created_at: str | None = None
    started_at: str | None = None
    active_namespaces: list[str]


class MacShedsList(Result, frozen=True, kw_only=True):
    """mac ``sheds.list`` (filtered by ``host`` when given)."""

    sheds: list[MacShed]


class TauriShedsList(Result, frozen=True, kw_only=True):
    """Tauri ``sheds.list`` / ``sheds.refresh``.

    ``host_errors`` is always present in the newer app and absent in
    v0.0.14, whose ``sheds.list`` is ``{sheds}`` alone (charliek/shed-desktop
    ``tauri/src-tauri/src/ipc.rs:210@5a762e8``).
    """

    sheds: list[TauriShed]
    host_errors: list[HostFailure] | msgspec.UnsetType = msgspec.UNSET


class UsageList(Result, frozen=True, kw_only=True):
    """``system.df``."""

    usage: list[Row]


class ImagesList(Result, frozen=True, kw_only=True):
    """``images.list``."""

    images: list[Row]


class WindowMetrics(Result, frozen=True, kw_only=True):
    """``app.window_metrics``."""

    window_width: int
    window_height: int
    sidebar_width: int
    visible_pane: str


class ScreenshotParams(Params, frozen=True, kw_only=True):
    """mac ``app.screenshot``: ``scale`` (1 or 2, checked after the decode), then ``surface``.

    ``surface`` is a ``ScreenshotSurface`` (``window``, ``menu``, ``preferences``), read
    after ``scale`` (``IPCHandlerImpl.swift:518-527@5a762e8``, ``:512-521@3fecd8a``:
    ``ScreenshotParams``).
    """

    scale: int | None = None
    surface: _Surface | None = None


class MacScreenshot(Result, frozen=True, kw_only=True):
    """mac ``app.screenshot``."""

    png: str
    width: int
    height: int
    scale: int
    surface: str


class TauriScreenshot(Result, frozen=True, kw_only=True):
    """Tauri ``app.screenshot``."""

    png: str
    width: int
    height: int


class TrayDump(Result, frozen=True, kw_only=True):
    """``tray.dump``."""

    present: bool
    items: list[Any]
    popover: Any = None
    popover_visible: bool = False
    popover_height: int | None = None


class EnabledResult(Result, frozen=True, kw_only=True):
    """``{enabled}``."""

    enabled: bool


class LoginItemSetParams(Params, frozen=True, kw_only=True):
    """``loginitem.set``."""

    enabled: bool


class PrefsSetTerminalParams(Params, frozen=True, kw_only=True):
    """``prefs.set_terminal``."""

    preset: str
    template: str | None = None


class PrefsSetProviderParams(Params, frozen=True, kw_only=True):
    """``prefs.set_provider`` (serde-typed on Tauri)."""

    namespace: str
    decision: str


class PrefsRemoveShedRuleParams(Params, frozen=True, kw_only=True):
    """``prefs.remove_shed_rule``."""

    server: str
    shed: str


class TerminalPrefs(Result, frozen=True, kw_only=True):
    """``prefs.get`` (Tauri): the persisted terminal preference.

    ``terminal_preset`` is a preset id from ``terminal.presets``;
    ``terminal_template`` is the custom command template (``""`` when unset).
    """

    terminal_preset: str
    terminal_template: str


ProviderModes = dict[str, str]
"""``prefs.provider_modes`` (Tauri): ``{namespace: "approve"|"deny"}``.

The result *is* the map (no wrapper key); its keys are provider namespaces
(``aws``, ``docker``, ...), an open set, so it stays a mapping.
"""


class PrefsDump(Result, frozen=True, kw_only=True):
    """``prefs.dump`` (Tauri UI truth): the Preferences window.

    ``visible`` and ``title`` are the native window's state (``False`` and
    ``None`` before the first open: the window is created lazily); ``prefs``
    is the snapshot the window's frontend last reported (``{sections, values,
    mode}`` in the real app; ``None`` before it reported). The snapshot is the
    frontend's own document, so it stays an open object.
    """

    visible: bool
    title: str | None
    prefs: dict[str, Any] | None


class BrokerSetModeParams(Params, frozen=True, kw_only=True):
    """``broker.set_mode``."""

    mode: str


class BrokerMode(Result, frozen=True, kw_only=True):
    """``broker.mode`` / ``broker.set_mode`` / ``identify.broker_mode``.

    ``pref`` is the persisted ``auto|embedded|external``; ``effective`` the mode
    the app launched into (``external|embedded|headless-coexist``);
    ``restart_required`` whether the pref drifted from the launch pref
    (charliek/shed ``desktop/tauri/src-tauri/src/broker.rs:143-149@51bd544``,
    ``BrokerRuntime::identify_fragment``).
    """

    pref: str
    effective: str
    restart_required: bool


class BrokerProbe(Result, frozen=True, kw_only=True):
    """``broker.status.probe``: which host-agent sockets answered at launch."""

    desktop_socket_live: bool
    status_socket_live: bool


class BrokerConfigSource(Result, frozen=True, kw_only=True):
    """``broker.status.config``: ``loaded|synthesized|error`` (``null`` in external mode)."""

    source: str | None
    message: str | None


class BrokerStatus(Result, frozen=True, kw_only=True):
    """``broker.status`` (``BrokerRuntime::status``, broker.rs:154-185@51bd544).

    ``servers`` is the embedded broker's per-server health (``[]`` outside
    embedded mode); its rows are left open.
    """

    effective_mode: str
    pref: str
    restart_required: bool
    probe: BrokerProbe
    config: BrokerConfigSource
    resolved_ssh_mode: str | None
    gate_namespaces: list[str]
    servers: list[Row]
    broker_error: str | None


class UpdaterStatus(Result, frozen=True, kw_only=True):
    """``updater.status`` (charliek/shed ``desktop/tauri/src-tauri/src/updater.rs``).

    ``status`` at ``updater.rs:115-125@c38944d``.

    ``reason`` is ``ok|test_mode|no_bundle|linux_apt`` and ``enabled`` is
    ``reason == "ok"``; ``instantiated`` whether a real updater was created.
    """

    os: str
    enabled: bool
    reason: str
    instantiated: bool


class EgressShowParams(Params, frozen=True, kw_only=True):
    """``egress.show``: ``tab`` activity|profiles."""

    tab: str | None = None
    profile: str | None = None
    host: str | None = None


# --- lifecycle, create, terminal ----------------------------------------------


class ShedActionParams(Params, frozen=True, kw_only=True):
    """``shed.start`` / ``.stop`` / ``.reset`` / ``.delete``."""

    name: str
    host: str | None = None


class MacShedActionParams(Params, frozen=True, kw_only=True):
    """mac ``shed.*``: ``host`` is decoded before ``name``.

    Swift's ``ShedActionParams`` declares them in that order (charliek/shed
    ``desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift:369-372@3fecd8a``,
    charliek/shed-desktop ``IPCHandlerImpl.swift:373-376@5a762e8``).
    """

    host: str | None = None
    name: str


class CreateStartParams(Params, frozen=True, kw_only=True):
    """``create.start``: the ``CreateShedRequest`` fields in their order, then ``host``.

    The mac app decodes the request first, then the flat ``host``
    (``IPCHandlerImpl.swift:376-385@3fecd8a``, ``:380-389@5a762e8``; the request's
    fields as ``Models.swift:221-252@1cea187`` declares them); the Tauri reader only
    requires ``name``, so the order is the mac one.
    """

    name: str
    repo: str | None = None
    local_dir: str | None = None
    image: str | None = None
    backend: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    no_provision: bool | None = None
    host: str | None = None


class CreateStarted(Result, frozen=True, kw_only=True):
    """``{create_id}``."""

    create_id: str


class CreateIdParams(Params, frozen=True, kw_only=True):
    """``create.status`` / ``create.cancel``."""

    create_id: str


class CreateProgress(Result, frozen=True, kw_only=True):
    """``create.status``: a create's progress, ``state`` ``progress|complete|error``.

    Both apps send the create store's snapshot ``{id, state, messages, shed,
    error}``: Tauri through serde (``shed``/``error`` ``null`` when absent;
    charliek/shed-desktop ``core/shed-core/src/create.rs:22-39@5a762e8``), mac
    omitting them (``Sources/ShedKit/Models/Models.swift:661-675@5a762e8``).
    ``shed`` is the created shed's row once complete. For an id it does not
    hold, Tauri answers ``{state: "unknown"}`` alone (``ipc.rs:386-392@5a762e8``);
    mac answers ``not-found``.
    """

    id: str | msgspec.UnsetType = msgspec.UNSET
    state: str
    messages: list[str] | msgspec.UnsetType = msgspec.UNSET
    shed: Row | msgspec.UnsetType | None = msgspec.UNSET
    error: str | msgspec.UnsetType | None = msgspec.UNSET


class MacTerminalParams(Params, frozen=True, kw_only=True):
    """mac ``terminal.preview`` / ``terminal.open`` (fields in the decoder's order)."""

    host: str | None = None
    shed: str
    session: str | None = None


class TauriTerminalParams(Params, frozen=True, kw_only=True):
    """Tauri ``terminal.preview`` / ``terminal.open``; any non-null ``machine`` is refused."""

    shed: str
    host: str | None = None
    session: str | None = None
    preset: str | None = None
    template: str | None = None
    machine: Any = None


class TerminalCommand(Result, frozen=True, kw_only=True):
    """``terminal.preview`` / ``terminal.open``."""

    argv: list[str]
    command: str
    preset: str
    invocation: str


class LaunchInvocation(Result, frozen=True, kw_only=True):
    """mac: what the terminal preset would exec (``TerminalLauncher.swift:35-43@5a762e8``)."""

    executable: str
    arguments: list[str]


class MacTerminalPreview(Result, frozen=True, kw_only=True):
    """mac ``terminal.preview``: the ssh ``TerminalCommand`` plus the preset and what it runs.

    ``preset`` a ``TerminalPreset`` (``terminal-app``, ``ghostty``, ``iterm2``, ``warp``,
    ``roost``, ``custom``); ``invocation`` an object, not the Tauri string
    (``IPCHandlerImpl.swift:402-407@5a762e8``, ``:398-403@3fecd8a``: ``TerminalPreviewResult``).
    """

    argv: list[str]
    command: str
    preset: str
    invocation: LaunchInvocation


class MacTerminalOpened(Result, frozen=True, kw_only=True):
    """mac ``terminal.open``: the ``TerminalCommand`` it launched.

    (``Sources/ShedDesktopApp/AppModel.swift:916-925@5a762e8``)
    """

    argv: list[str]
    command: str


class TauriTerminalOpened(Result, frozen=True, kw_only=True):
    """Tauri ``terminal.open``: ``{command}`` (``termctl.rs:102-126@5a762e8``)."""

    command: str


class PresetsResult(Result, frozen=True, kw_only=True):
    """``terminal.presets``."""

    presets: list[Row]


# --- sessions -----------------------------------------------------------------


class RcClassifyParams(Params, frozen=True, kw_only=True):
    """``rc.classify`` (v0.0.14): ``kind`` is an ``RcKind``, read before ``pane``."""

    kind: Annotated[RcKindName, SwiftEnum("RcKind")]
    pane: str


class RcClassification(Result, omit_defaults=True, frozen=True, kw_only=True):
    """``rc.classify``: the pane's ``state``; ``url`` omitted when none (both apps)."""

    state: str
    url: str | None = None


class RcSession(Result, omit_defaults=True, frozen=True, kw_only=True):
    """A v0.0.14 RC session (shed-core ``RcSession``, ``rc.rs:121-147@5a762e8``).

    ``rc.launch`` answers one, ``rc.list`` lists them. Unset optionals are
    omitted in both apps; ``managed`` is always sent.
    """

    host: str
    shed: str
    slug: str
    tmux_session: str
    display_name: str
    workdir: str
    kind: str
    state: str
    url: str | None = None
    rc_id: str | None = None
    created_by: str | None = None
    created_at: str | None = None
    target_label: str | None = None
    managed: bool


class RcSessionList(Result, frozen=True, kw_only=True):
    """v0.0.14 ``rc.list`` (both apps): ``{sessions}`` sorted by ``host/shed/slug``."""

    sessions: list[RcSession]


class RcListParams(Params, frozen=True, kw_only=True):
    """``rc.list``."""

    host: str | None = None
    shed: str | None = None


class TauriRcList(Result, frozen=True, kw_only=True):
    """Tauri ``rc.list``: ``capabilities`` keyed by origin."""

    sessions: list[Row]
    capabilities: dict[str, Any]
    machines: list[Row]


class TauriRcLaunchParams(Params, frozen=True, kw_only=True):
    """Tauri ``rc.launch``: ``kind`` is required, and read after the host is resolved.

    charliek/shed ``desktop/tauri/src-tauri/src/ipc.rs:1828-1843@2cd01ef`` (``rc_launch``):
    ``shed_target`` (``shed``, then ``host``), then ``rc_kind``; so an absent ``kind``
    (``missing or invalid 'kind'``) is the op's to refuse, after the host.
    """

    shed: str
    host: str | None = None
    kind: str | None = None
    display_name: str | None = None
    workdir: str | None = None
    initial_prompt: str | None = None
    permission_mode: str | None = None


class MacRcLaunchParams(Params, frozen=True, kw_only=True):
    """mac ``rc.launch`` (the newer app): ``kind`` any string, ``permission_mode`` unknown.

    ``kind`` defaults to ``claude-rc``; the newer ``RcKind`` keeps an unknown string
    verbatim (charliek/shed ``desktop/Sources/ShedKit/RC/RemoteControl.swift:44-54@1545191``,
    ``RcKind.init(wire:)``); ``permission_mode`` is ``unknown-field``. Fields in the
    decoder's order (``IPCHandlerImpl.swift:408-431@3fecd8a``, ``RcLaunchParams``).
    """

    host: str | None = None
    shed: str
    kind: str | None = None
    display_name: str | None = None
    workdir: str | None = None
    initial_prompt: str | None = None


class Rc14MacLaunchParams(Params, frozen=True, kw_only=True):
    """v0.0.14 mac ``rc.launch``: ``kind`` a closed Swift ``RcKind?``.

    An unknown kind is ``dataCorrupted`` (charliek/shed-desktop
    ``IPCHandlerImpl.swift:413-436@5a762e8``).
    """

    host: str | None = None
    shed: str
    kind: Annotated[RcKindName, SwiftEnum("RcKind")] | None = None
    display_name: str | None = None
    workdir: str | None = None
    initial_prompt: str | None = None


class Rc14TauriLaunchParams(Params, frozen=True, kw_only=True):
    """v0.0.14 Tauri ``rc.launch``: ``kind`` required, no ``permission_mode``.

    charliek/shed-desktop ``tauri/src-tauri/src/ipc.rs:481-504@5a762e8``.
    """

    shed: str
    kind: str
    host: str | None = None
    display_name: str | None = None
    workdir: str | None = None
    initial_prompt: str | None = None


class Rc14TauriInjectParams(Params, frozen=True, kw_only=True):
    """v0.0.14 Tauri ``rc.inject_test`` (test mode only): a whole ``RcSession`` bag.

    charliek/shed-desktop ``tauri/src-tauri/src/ipc.rs:530-579@5a762e8``; an unknown
    ``kind``/``state`` reads as the default (``claude-rc`` / ``ready``).
    """

    shed: str
    slug: str
    host: str | None = None
    kind: str | None = None
    state: str | None = None
    display_name: str | None = None
    workdir: str | None = None
    url: str | None = None
    managed: bool | None = None
    rc_id: str | None = None
    created_by: str | None = None
    created_at: str | None = None
    target_label: str | None = None


class RcKillParams(Params, frozen=True, kw_only=True):
    """``rc.kill``."""

    shed: str
    slug: str
    host: str | None = None


class MacRcKillParams(Params, frozen=True, kw_only=True):
    """mac ``rc.kill``: ``host``, ``shed``, ``slug`` in the decoder's order.

    (``IPCHandlerImpl.swift:406@3fecd8a``, ``:411@5a762e8``: ``RcKillParams``)
    """

    host: str | None = None
    shed: str
    slug: str


class MacRcInjectParams(Params, frozen=True, kw_only=True):
    """mac ``rc.inject_test`` (the newer app): ``kind`` any string, ``state`` an ``RcState``.

    Fields in the synthesized decoder's order (``IPCHandlerImpl.swift:438-461@3fecd8a``,
    ``RcInjectTestParams``); the newer ``RcKind`` is open (``RemoteControl.swift:19-111@1545191``).
    """

    host: str | None = None
    shed: str
    slug: str
    kind: str | None = None
    state: _RcState | None = None
    display_name: str | None = None
    workdir: str | None = None
    url: str | None = None
    managed: bool | None = None
    rc_id: str | None = None
    created_by: str | None = None
    created_at: str | None = None
    target_label: str | None = None


class Rc14MacInjectParams(Params, frozen=True, kw_only=True):
    """v0.0.14 mac ``rc.inject_test``: closed Swift enums.

    ``kind`` an ``RcKind?``, ``state`` an ``RcState?`` (``IPCHandlerImpl.swift:444-467@5a762e8``).
    """

    host: str | None = None
    shed: str
    slug: str
    kind: Annotated[RcKindName, SwiftEnum("RcKind")] | None = None
    state: _RcState | None = None
    display_name: str | None = None
    workdir: str | None = None
    url: str | None = None
    managed: bool | None = None
    rc_id: str | None = None
    created_by: str | None = None
    created_at: str | None = None
    target_label: str | None = None


class TauriRcInjectParams(Params, frozen=True, kw_only=True):
    """Tauri ``rc.inject_test`` (test mode only).

    Fields in the order the app reads them (charliek/shed
    ``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef``, ``rc_inject_test``: ``shed``, the
    ``host`` resolved, then ``build_inject_row``'s ``slug`` and ``kind``), so ``slug``
    is checked by the op, after the host (see :func:`~shedproto.desktop.inject_kind`).
    """

    shed: str
    host: str | None = None
    slug: str | None = None
    kind: str | None = None
    display_name: str | None = None
    workdir: str | None = None
    lifecycle: str | None = None
    attention: bool | None = None


class CrazeStatus(Result, frozen=True, kw_only=True):
    """A status row's ``craze`` half (``CrazeState::status``), every key present.

    ``state`` ``live``, ``dormant``, ``offline`` or ``absent`` (no craze source,
    never reached, or not installed); ``cause`` the offline (or not-installed)
    reason class, else ``null``; ``create``/``create_options`` the live hub's
    capabilities, ``false`` otherwise.
    """

    state: str
    cause: str | None = None
    create: bool
    create_options: bool


class MachineRow(Result, frozen=True, kw_only=True):
    """One ``machines.list`` row (``RoostHosts::status``): unreachable is a state.

    ``name`` is the address ops take (a machine's bare name), ``origin`` the
    grammar token, ``kind`` ``machine`` or ``shed``, ``server`` ``null`` for a
    machine. ``detail`` is the watcher's sentence verbatim and ``down_kind`` the
    transport's classification (``not-installed``, ``no-session``, ...), both
    ``null`` while reachable. ``craze`` is the host's craze source state
    (:class:`CrazeStatus`), ``absent`` for a host with none.
    """

    name: str
    label: str
    origin: str
    kind: str
    server: str | None
    reachable: bool
    connected_once: bool
    sessions: int
    detail: str | None
    down_kind: str | None
    craze: CrazeStatus


class MachinesList(Result, frozen=True, kw_only=True):
    """``machines.list``."""

    machines: list[MachineRow]


class MachineKillParams(Params, frozen=True, kw_only=True):
    """``machine.kill``."""

    machine: str
    slug: str


class RoostLaunchParams(Params, frozen=True, kw_only=True):
    """``roost.launch`` / ``machine.launch``: ``target`` (grammar) or ``machine``; ``kind``."""

    target: str | None = None
    machine: str | None = None
    kind: str | None = None
    workdir: str | None = None
    display_name: str | None = None
    permission_mode: str | None = None
    initial_prompt: str | None = None


class RoostRunParams(Params, frozen=True, kw_only=True):
    """``roost.run``: ``command`` is split on ASCII whitespace (``split_argv()``)."""

    target: str | None = None
    machine: str | None = None
    command: str | None = None
    workdir: str | None = None


class RoostRunResult(Result, frozen=True, kw_only=True):
    """``roost.run``: the tab, not a row."""

    origin: str
    machine: str
    slug: str
    cwd: str | None
    argv: list[str]


class MachineParams(Params, frozen=True, kw_only=True):
    """Ops addressed by ``machine`` alone."""

    machine: str


class CapabilitiesResult(Result, frozen=True, kw_only=True):
    """``machine.capabilities``."""

    capabilities: dict[str, Any]


class MachineAddParams(Params, frozen=True, kw_only=True):
    """``machine.add``: read as ``add_from_json`` reads them (a non-string is absent).

    ``ssh_port`` is any JSON value: an unsigned integer or a string holding one,
    1..65535, is a port; anything else but ``null`` is refused by name.
    """

    name: str | None = None
    host: str | None = None
    user: str | None = None
    ssh_port: Any = None


class RoostTargetParams(Params, frozen=True, kw_only=True):
    """``roost.probe`` / ``roost.preview``."""

    target: str


class RoostProbe(Result, omit_defaults=True, frozen=True, kw_only=True):
    """``roost.probe`` / ``roost.preview``."""

    target: str
    probe: dict[str, Any]
    plan: dict[str, Any]
    source: dict[str, Any] | None = None
    actionable: bool | None = None
    client_label: str | None = None


class RoostBootstrapParams(Params, frozen=True, kw_only=True):
    """``roost.bootstrap``: ``consent`` missing means false."""

    target: str
    fingerprint: str
    consent: bool | None = None


class BootstrapStageError(Result, frozen=True, kw_only=True):
    """The failing stage of a ``roost.bootstrap`` (``fingerprint``, ``probe``, ...).

    ``restored`` says whether the host was put back as it was (``failure_json``).
    """

    stage: str
    message: str
    restored: Any = None


class RoostBootstrapResult(Result, frozen=True, kw_only=True):
    """``roost.bootstrap``'s result, which always rides an ``ok: true`` envelope.

    Installed (``installed_json``): ``{ok: true, target, plan, dest, verdict,
    session_protocol, session_id, path_warning, backup_warning, hooks}``, every
    key present (``null`` when unset). A stage failure (a stale fingerprint
    included) is *not* an error envelope: ``{ok: false, error: {stage, message,
    restored}}`` (``failure_json``), and the installed keys are absent.
    """

    ok: bool
    target: str | msgspec.UnsetType = msgspec.UNSET
    plan: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    dest: str | msgspec.UnsetType | None = msgspec.UNSET
    verdict: Any = msgspec.UNSET
    session_protocol: int | msgspec.UnsetType | None = msgspec.UNSET
    session_id: str | msgspec.UnsetType | None = msgspec.UNSET
    path_warning: str | msgspec.UnsetType | None = msgspec.UNSET
    backup_warning: str | msgspec.UnsetType | None = msgspec.UNSET
    hooks: dict[str, Any] | msgspec.UnsetType | None = msgspec.UNSET
    error: BootstrapStageError | msgspec.UnsetType = msgspec.UNSET


class SessionRow(Result, omit_defaults=True, frozen=True, kw_only=True):
    """A roost session row (``host_row``) as ``rc.list`` and the launch doors answer it.

    shed-core's ``RcSessionDto`` mapped from the tab (``RoostSession::to_rc_dto``):
    ``slug`` the tab id, ``tmux_session`` ``""``, ``kind``, ``state`` ``ready``,
    ``managed`` true, ``display_name`` roost's tab title, ``workdir`` its directory,
    ``created_at`` RFC 3339; ``id`` (the agent's own session id), ``activity`` and
    ``activity_at`` only when known (absent, never ``null``). Then the app's stamps:
    ``origin``, ``origin_kind``, ``machine`` (the address ops take), ``source``
    ``roost``, ``host`` (a shed's server, a machine's token), ``shed`` (empty on a
    machine row: key rows by ``origin``), ``stale``, ``attention``, ``tab_id`` and,
    for a row with an agent lane, ``agent_lane``. Lenient on read like every result.
    (charliek/shed ``desktop/tauri/src-tauri/src/roost_hosts.rs:3550-3585@9668981``,
    ``host_row``; ``crates/shed-core/src/roost/model.rs:357-387@0041e17``, ``to_rc_dto``;
    ``crates/shed-core/src/rc.rs:337-391@44e50e1``, ``RcSessionDto``.)
    """

    slug: str
    tmux_session: str
    kind: str
    state: str
    managed: bool
    display_name: str
    workdir: str
    created_at: str
    origin: str
    origin_kind: str
    machine: str
    source: str
    host: str
    shed: str
    stale: bool
    attention: bool
    tab_id: str
    id: str | None = None
    activity: str | None = None
    activity_at: str | None = None
    agent_lane: dict[str, Any] | None = None


class CrazeOptions(Result, omit_defaults=True, frozen=True, kw_only=True):
    """The ``options`` of ``craze.create_options``."""

    providers: list[Row]
    recent_dirs: list[str]
    default_provider: str | None = None


class CrazeCreateOptions(Result, frozen=True, kw_only=True):
    """``craze.create_options``."""

    machine: str
    options: CrazeOptions


class CrazeCreateParams(Params, frozen=True, kw_only=True):
    """``craze.create``: optional strings are strict (a non-string is refused, never absent)."""

    machine: str
    cwd: str | None = None
    provider: str | None = None
    prompt: str | None = None
    request_id: str | None = None


class CrazeCreateResult(Result, frozen=True, kw_only=True):
    """``craze.create``."""

    session: Row
    host_id: str
    ended: bool
    prompt: str | None
    prompt_error: str | None
    request_id: str


class CrazeOpenTerminalParams(Params, frozen=True, kw_only=True):
    """``craze.open_terminal``: ``session_id`` is 12 lowercase hex digits."""

    machine: str
    session_id: str


class CrazeTerminal(Result, frozen=True, kw_only=True):
    """``craze.open_terminal``."""

    origin: str
    machine: str
    session_id: str
    tab_id: str
    cwd: str | None
    argv: list[str]


class LaneParams(Params, frozen=True, kw_only=True):
    """Every ``lane.*`` op: all three required."""

    machine: str
    kind: str
    session_id: str


class LaneOpenResult(Result, frozen=True, kw_only=True):
    """``lane.open``."""

    session: Row | None


class LaneMessages(Result, frozen=True, kw_only=True):
    """``lane.messages``."""

    messages: list[Row]
    activity: Any = None
    generation: int = 0
    stale: Any = None
    ended: bool = False
    capabilities: Any = None
    settings: Any = None
    session: Row | None = None


class LaneApprovals(Result, frozen=True, kw_only=True):
    """``lane.approvals``."""

    approvals: list[Row]


class LaneSendParams(Params, frozen=True, kw_only=True):
    """``lane.send``: ``mode`` queue|interject."""

    machine: str
    kind: str
    session_id: str
    text: str
    mode: str | None = None


class LaneAnswerParams(Params, frozen=True, kw_only=True):
    """``lane.answer``."""

    machine: str
    kind: str
    session_id: str
    approval_id: str
    answer: Any


class LaneSettings(Result, frozen=True, kw_only=True):
    """``lane.settings``."""

    settings: Any = None


class LaneSetParams(Params, frozen=True, kw_only=True):
    """``lane.set``."""

    machine: str
    kind: str
    session_id: str
    change: Any


# --- approvals ------------------------------------------------------------------


class ApprovalsList(Result, frozen=True, kw_only=True):
    """``approvals.list``."""

    approvals: list[Row]


class ApprovalDecideParams(Params, frozen=True, kw_only=True):
    """``approval.decide``: decision approve|deny; scope per-request|per-session|per-shed."""

    id: str
    decision: str
    scope: str | None = None
    ttl: str | None = None
    persist: bool = False


class MacApprovalDecideParams(Params, frozen=True, kw_only=True):
    """mac ``approval.decide``: Swift enums.

    ``decision`` an ``ApprovalDecision``, ``scope`` an ``ApprovalScope?``
    (``IPCHandlerImpl.swift:482-497@5a762e8``, ``:476-491@3fecd8a``: ``ApprovalDecideParams``).
    """

    id: str
    decision: _ApprovalDecision
    scope: _ApprovalScope | None = None
    ttl: str | None = None
    persist: bool = False


class ActivityListParams(Params, frozen=True, kw_only=True):
    """``activity.list``: ``limit`` defaults to 200."""

    limit: int | None = None


class ActivityEntries(Result, frozen=True, kw_only=True):
    """``activity.list``."""

    entries: list[Row]


class LogPath(Result, frozen=True, kw_only=True):
    """``activity.log_path``."""

    path: str


class PolicyRule(Result, frozen=True, kw_only=True):
    """One policy rule: shed-core's ``PolicyRule`` (approval/models.rs:292-333@5a762e8).

    ``scope`` ``default|namespace|shed|session``; ``action`` ``approve|deny|prompt``;
    ``gate`` ``biometrics|biometrics-or-password|none`` (always sent); ``server``,
    ``namespace`` and ``shed`` are omitted when unset. A persisted approval adds
    ``{scope: "shed", server, shed, action, gate: "none"}`` (coordinator.rs:893-900).
    """

    scope: str
    server: str | msgspec.UnsetType = msgspec.UNSET
    namespace: str | msgspec.UnsetType = msgspec.UNSET
    shed: str | msgspec.UnsetType = msgspec.UNSET
    action: str
    gate: str = "biometrics-or-password"


class PolicyList(Result, frozen=True, kw_only=True):
    """``policy.list``."""

    rules: list[PolicyRule]


class PolicySetParams(Params, frozen=True, kw_only=True):
    """``policy.set`` (test mode only)."""

    rules: list[dict[str, Any]]


class MacPolicyRule(LenientFrame, frozen=True, kw_only=True):
    """One mac ``PolicyRule`` as its synthesized ``Decodable`` reads it.

    ``scope``, ``action`` and ``gate`` are required Swift enums (no default ``gate``,
    unlike serde's), in declaration order; other keys are ignored
    (``Sources/ShedKit/Approval/ApprovalModels.swift:244-268@5a762e8``).
    """

    scope: Annotated[Literal["default", "namespace", "shed", "session"], SwiftEnum("PolicyScope")]
    server: str | None = None
    namespace: str | None = None
    shed: str | None = None
    action: Annotated[Literal["approve", "deny", "prompt"], SwiftEnum("PolicyAction")]
    gate: Annotated[
        Literal["biometrics", "biometrics-or-password", "none"], SwiftEnum("PolicyGate")
    ]


class MacPolicySetParams(Params, frozen=True, kw_only=True):
    """mac ``policy.set``: the rules decode before the test-mode check."""

    rules: list[MacPolicyRule]


class NotificationsList(Result, frozen=True, kw_only=True):
    """``notifications.list``."""

    notifications: list[Row]


class NotificationInvokeParams(Params, frozen=True, kw_only=True):
    """mac ``notification.invoke``: ``action`` an ``ApprovalDecision`` (approve|deny)."""

    id: str
    action: _ApprovalDecision


class TauriNotificationInvokeParams(Params, frozen=True, kw_only=True):
    """Tauri ``notification.invoke``: ``action`` (approve|deny), read by serde.

    Any value reaches the op, which words a wrong one as serde does.
    """

    id: str
    action: Any = None


# --- UI-truth dumps and doors (Tauri) -------------------------------------------


class DashboardEmpty(Result, frozen=True, kw_only=True):
    """The rendered empty state of the Sheds pane."""

    title: str
    body: str


class DashboardDump(Result, frozen=True, kw_only=True):
    """``dashboard.dump``: rendered rows, held failures, empty state (null when rows render).

    v0.0.14 answers ``{rows}`` alone (charliek/shed-desktop
    ``tauri/src-tauri/src/ipc.rs:212-214@5a762e8``): ``host_errors`` and
    ``empty`` are then absent.
    """

    rows: list[Row]
    host_errors: list[HostFailure] | msgspec.UnsetType = msgspec.UNSET
    empty: DashboardEmpty | msgspec.UnsetType | None = msgspec.UNSET


class AgentsDump(Result, frozen=True, kw_only=True):
    """``agents.dump``."""

    sessions: Any = None
    empty: Any = None


class EgressProfiles(Result, frozen=True, kw_only=True):
    """``egress.profiles``."""

    egress: Any = None


class MachinesDump(Result, frozen=True, kw_only=True):
    """``machines.dump``."""

    machines: Any = None


class SidebarDump(Result, frozen=True, kw_only=True):
    """``sidebar.dump``."""

    servers: list[Row]
    machines: list[Row]


class ShedRoostDump(Result, frozen=True, kw_only=True):
    """``shed_roost.dump``."""

    sheds: Any = None


class ConsentDump(Result, frozen=True, kw_only=True):
    """``roost_consent.dump``."""

    consent: Any = None


class LaunchDump(Result, frozen=True, kw_only=True):
    """``launch.dump``."""

    launch: Any = None


class ToastDump(Result, frozen=True, kw_only=True):
    """``toast.dump``."""

    toast: Any = None


class LaneDump(Result, frozen=True, kw_only=True):
    """``lane.dump``."""

    lane: Any = None


class LaneSettingsDump(Result, frozen=True, kw_only=True):
    """``lane_settings.dump``."""

    lane_settings: Any = None


class CrazeCreateDump(Result, frozen=True, kw_only=True):
    """``craze_create.dump``."""

    craze_create: Any = None


class UiShowLaneParams(Params, frozen=True, kw_only=True):
    """``ui.show_lane`` / ``ui.show_lane_settings``."""

    machine: str
    kind: str
    session_id: str


class UiShowCrazeCreateParams(Params, frozen=True, kw_only=True):
    """``ui.show_craze_create``."""

    machine: str


class UiFillLaunchParams(Params, frozen=True, kw_only=True):
    """``ui.fill_launch`` (test mode only; strict strings)."""

    mode: str | None = None
    target: str | None = None
    command: str | None = None
    workdir: str | None = None


class UiShowRoostConsentParams(Params, frozen=True, kw_only=True):
    """``ui.show_roost_consent`` (test mode only)."""

    target: str


class UiFillCrazeCreateParams(Params, frozen=True, kw_only=True):
    """``ui.fill_craze_create`` (test mode only; strict)."""

    provider: str | None = None
    cwd: str | None = None
    prompt: str | None = None
    recent: Annotated[int, msgspec.Meta(ge=0)] | None = None


class UiPickLaneSettingParams(Params, frozen=True, kw_only=True):
    """``ui.pick_lane_setting`` (test mode only; strict)."""

    row: str
    value: str


class UiHoldLaneViewParams(Params, frozen=True, kw_only=True):
    """``ui.hold_lane_view`` (test mode only): ``hold`` must be a boolean."""

    hold: bool
