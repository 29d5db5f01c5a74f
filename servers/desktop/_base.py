"""The state and helpers every op group shares; the groups are mixins over it."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    DesktopCode,
    DesktopError,
    Dialect,
    HostId,
    HostIdError,
    LaunchPolicy,
    Release,
    parse_host_id,
    rust_debug,
    swift_bad_enum,
)
from shedproto.desktop import types as o

from ._model import DesktopModel, LaunchedTab, Machine, craze_status

__all__ = [
    "APP_VERSIONS",
    "AppBase",
    "builtin_rules",
    "msgspec_to_builtins",
    "serde_enum_error",
    "serde_unknown_variant",
]

BAD = DesktopCode.BAD_REQUEST
FAILED = DesktopCode.ACTION_FAILED
_CONFIG = "~/.shed/config.yaml"
APP_VERSIONS = {Release.V0_0_14: "0.0.14", Release.LATEST: "0.8.1"}
"""The app's own version per release: mac ``CFBundleShortVersionString`` (``identify.ui_version``,
``rc.launch``'s ``created_by``), Tauri v0.0.14's crate version (``created_by``).

v0.0.14: ``VERSION:1@5a762e8``. The newer mac bundle takes charliek/shed
``desktop/VERSION``, not stored; it moves in lockstep with the Tauri crate's version
(``desktop/RELEASING.md@13cf461``, "Version surfaces"), ``0.8.1`` at the mac dispatch's
commit (``desktop/tauri/src-tauri/Cargo.toml:9@3fecd8a``), the last Swift DMG the
appcast lists (``docs/appcast.xml@1ae8146``).
"""
TERMINAL_PRESET_IDS = ("ghostty", "roost", "custom")
"""The Tauri app's ``TerminalPreset`` wire values (termctl.rs:42-59@5a762e8)."""


class AppBase:
    """The stand-in app's state (model, dialect, test mode, identity) and shared helpers."""

    def __init__(
        self,
        model: DesktopModel,
        dialect: Dialect,
        *,
        test_mode: bool,
        socket_path: str,
        pid: int,
        mock_base_url: str | None = None,
        launch_policy: LaunchPolicy = LaunchPolicy.IGNORE_EXTRAS,
        release: Release = Release.LATEST,
    ) -> None:
        self.model = model
        self.dialect = dialect
        self.test_mode = test_mode
        self.socket_path = socket_path
        self.pid = pid
        self.mock_base_url = mock_base_url
        self.launch_policy = launch_policy
        self.release = release
        self.is_latest = release is Release.LATEST
        """Whether this app answers like the newer release (not shed-desktop v0.0.14)."""

    @property
    def app_version(self) -> str:
        """The app's version in this release (:data:`APP_VERSIONS`)."""
        return APP_VERSIONS[self.release]

    @property
    def is_mac(self) -> bool:
        """Whether this app speaks the mac dialect."""
        return self.dialect is Dialect.MAC

    def _mac_show_pane(self, pane: str) -> None:
        """Show the mac dashboard on ``pane``, as ``ui.show_window`` then ``ui.navigate`` do.

        ``showCreateSheet``/``showLaunchSheet`` and the notification's open action
        (``AppModel.swift:755-765,1161-1165@5a762e8``; the same in charliek/shed
        ``AppModel.swift:765-775,1191-1194@5339dc4``).
        """
        self.model.ui["visible"] = True
        if not self.test_mode:
            self.model.ui["activation_policy"] = "regular"
        self.model.ui["pane"] = pane

    def _fail(self, message: str) -> DesktopError:
        return DesktopError(self.dialect.internal, message)

    def _bad(self, message: str) -> DesktopError:
        return DesktopError(self.dialect.invalid_param, message)

    def _egress_snapshot(self) -> Any:
        """Return what the Egress pane reported: ``None`` unless it is mounted."""
        if self.model.ui["pane"] != "egress":
            return None
        found = self.model.dumps.get("egress.profiles")
        if found is not None:
            return found
        view = self.model.ui.setdefault("egress", {"tab": "activity", "selected": None})
        return {
            "tab": view["tab"],
            "profiles": [],
            "errors": [],
            "selected": view["selected"],
            "activity_count": len(self.model.activity),
        }

    def _frontend_ready(self) -> None:
        if not self.is_mac and not self.model.ui["frontend_ready"]:
            raise DesktopError(
                DesktopCode.FRONTEND_NOT_READY, "frontend has not reported yet; retry"
            )

    def _host_failures(self) -> list[o.HostFailure]:
        return [o.HostFailure(**f) for f in self.model.host_errors()]

    def _server(self, host: str | None, *, tauri_code: DesktopCode = FAILED) -> str:
        """Resolve ``host`` (``None``: the default, the first configured server) to a server name.

        Raises:
            DesktopError: no such configured server, worded as the apps' backends
                word it: Tauri ``no configured host[: <h>]`` (shed-app
                ``backend.rs:385-388@5a762e8``), carried as ``tauri_code``
                (``action_failed`` for lifecycle/create/terminal, ``bad_request``
                for the rc ops); mac ``not-found`` ``no configured host[ named <h>]``
                (``AppModel.swift:422-427@5a762e8``).

        """
        if host is None:
            if self.model.hosts:
                return next(iter(self.model.hosts))
        elif host in self.model.hosts:
            return host
        if self.is_mac:
            which = "" if host is None else f" named {host}"
            raise DesktopError(DesktopCode.NOT_FOUND, f"no configured host{which}")
        which = "" if host is None else f": {host}"
        raise DesktopError(tauri_code, f"no configured host{which}")

    def _shed_server_error(self, error: str) -> DesktopError:
        """Return the shed-server failure the app passes through (``ShedError``).

        Tauri: ``action_failed`` with the Rust ``Display`` (``shed-server returned
        HTTP 404``, ``transport error: ...``; shed-core ``http.rs:28-39@5a762e8``).
        mac: ``internal``. v0.0.14 prints Swift's string interpolation of the error
        (``IPCServer.swift:163-165@5a762e8``): the Swift core's ``ShedClientError``
        description (``ShedServerClient.swift:16-30@5a762e8``), the same sentence;
        under the default Rust core the UniFFI enum's case rendering (``BadStatus(status:
        404)``). The newer mac app prints ``HostFailure.displayMessage``, the Rust
        ``Display`` sentence under either core (charliek/shed
        ``desktop/Sources/ShedKit/IPC/IPCServer.swift:153-173@1cea187`` ``dispatch``,
        ``Models/HostFailure.swift:90-112@1cea187`` ``displayMessage``).
        ``error`` is ``"404"`` for a bad status, else the transport detail.
        """
        status = error.isdigit()
        if not self.is_mac or self.model.core == "swift" or self.is_latest:
            text = f"shed-server returned HTTP {error}" if status else f"transport error: {error}"
            return DesktopError(FAILED if not self.is_mac else self.dialect.internal, text)
        text = f"BadStatus(status: {error})" if status else f'Transport(message: "{error}")'
        return DesktopError(self.dialect.internal, text)

    def _shed_rows(self, host: str | None = None) -> list[Any]:
        """Return the listable sheds as this dialect's rows (``MacShed`` or ``TauriShed``).

        mac rows are sorted by (host, name), as the poll publishes them
        (``AppModel.swift:513@5a762e8``, charliek/shed ``AppModel.swift:523@5339dc4``).
        """
        sheds = [s for s in self.model.listed_sheds() if host is None or s.server == host]
        if self.is_mac:
            sheds.sort(key=lambda s: (s.server, s.name))
            return [o.MacShed(**shed.fields()) for shed in sheds]
        return [o.TauriShed(**shed.fields()) for shed in sheds]

    def _empty_state(self) -> o.DashboardEmpty | None:
        if self.model.listed_sheds():
            return None
        failures = self.model.host_errors()
        if failures:
            names = ", ".join(f["server"] for f in failures)
            return o.DashboardEmpty(
                title="Can't list sheds",
                body=f"{names} can't be reached right now; see SHED SERVERS in the sidebar.",
            )
        return o.DashboardEmpty(title="No sheds yet", body="Create one to get started.")

    def _machine_row(self, machine: Machine) -> o.MachineRow:
        # RoostHosts::status (charliek/shed desktop/tauri/src-tauri/src/roost_hosts.rs:1033-1077
        # @0041e17, status_locked): every configured machine has a row, reachable or not; its
        # craze half is CrazeState::status (roost_hosts.rs:2070-2072@9668981,
        # craze.rs:570-590@9a84ddf)
        origin = f"machine:{machine.name}"
        return o.MachineRow(
            name=machine.name,
            label=machine.name,
            origin=origin,
            kind="machine",
            server=None,
            reachable=machine.reachable,
            connected_once=machine.connected_once,
            sessions=len(self.model.sessions_for(origin)),
            detail=None if machine.reachable else machine.detail,
            down_kind=None if machine.reachable else machine.down_kind,
            craze=o.CrazeStatus(**craze_status(machine.craze)),
        )

    def _status_rows(self, server: str | None = None, shed: str | None = None) -> list[Any]:
        """Return ``RoostHosts::status_locked``'s rows under ``rc.list``'s shed filter.

        The configured machines, then the listed shed hosts (roost_hosts.rs:2020-2076
        @9668981); any filter omits every machine and keeps the shed hosts it matches
        (1163-1169, ``snapshot``).
        """
        rows: list[Any] = []
        if server is None and shed is None:
            rows = [self._machine_row(m) for m in self._listed_machines()]
        for origin in self.model.shed_hosts:
            host = parse_host_id(origin)
            if server in (None, host.server) and shed in (None, host.name):
                rows.append(self._shed_host_row(host))
        return rows

    def _shed_host_row(self, host: HostId) -> o.MachineRow:
        # a listed shed's status row: name its address (the token), label the shed's name
        # (HostId::address/label/server, roost_hosts.rs:207-212,215-220,223-228@9668981);
        # listed: a session answered (seen); down after it, the Down arm's detail and kind
        # (roost_hosts.rs:2053-2069,3483-3489@9668981); the stand-in's have no craze source
        origin = host.origin
        down = self.model.shed_hosts[origin]
        return o.MachineRow(
            name=origin,
            label=host.name,
            origin=origin,
            kind="shed",
            server=host.server,
            reachable=down is None,
            connected_once=True,
            sessions=len(self.model.sessions_for(origin)),
            detail=None if down is None else down[0],
            down_kind=None if down is None else down[1],
            craze=o.CrazeStatus(**craze_status(None)),
        )

    def _machines_in_order(self) -> list[Machine]:
        """Return the registered machines in the app's order (``reg.ids``), listed or not.

        ``RoostHosts::start_with`` registers the configured machines, then the implicit
        ``localhost`` (roost_hosts.rs:1040-1048@9668981); ``machine.add`` registers after
        them (``add``, 1127-1148).
        """
        machines = list(self.model.machines.values())
        return sorted(machines, key=lambda m: (m.added_live, m.name == "localhost"))

    def _listed_machines(self) -> list[Machine]:
        """Return the machines with a status row, in order.

        ``status_locked`` skips an unlisted host (roost_hosts.rs:2043-2045@9668981): the
        implicit ``localhost`` before it answers.
        """
        return [m for m in self._machines_in_order() if self.model.machine_listed(m)]

    def _unknown_host(self, host: HostId) -> DesktopError:
        """Return ``unknown_host``'s refusal, naming the watched tokens.

        roost_hosts.rs:1963-1968@0041e17 (``unknown_host``).
        """
        have = ", ".join(f"machine:{m.name}" for m in self._machines_in_order())
        return DesktopError(FAILED, f"no host {host.origin} is being watched (have: {have})")

    def _registered(self, host: HostId, code: str = FAILED) -> None:
        """Check ``host`` can be registered, as ``RoostHosts::ssh_entry`` words it.

        Raises:
            DesktopError: ``code`` with ``no machine "<n>" in ~/.shed/config.yaml``,
                ``no server "<s>" in ~/.shed/config.yaml`` or ``no shed "<n>" on server
                "<s>": "<s>" has not listed a running shed by that name, so nothing was
                contacted`` (roost_hosts.rs:1608-1642@0041e17, ``ssh_entry``).

        """
        if host.kind == "shed":
            server = self.model.hosts.get(host.server)
            if server is None:
                raise DesktopError(code, f"no server {rust_debug(host.server)} in {_CONFIG}")
            if host.name not in server.sheds:
                quoted = rust_debug(host.server)
                raise DesktopError(
                    code,
                    f"no shed {rust_debug(host.name)} on server {quoted}: {quoted} has not "
                    "listed a running shed by that name, so nothing was contacted",
                )
            return
        if host.name not in self.model.machines:
            raise DesktopError(code, f"no machine {rust_debug(host.name)} in {_CONFIG}")

    def _resolve_launch_host(self, host: HostId, code: str = FAILED) -> None:
        """Check ``host`` is known and reachable; host-layer failures are ``code``."""
        self._registered(host, code)
        if host.kind == "shed":
            server = self.model.hosts[host.server]
            if not server.reachable:
                raise DesktopError(
                    code,
                    f"{host.origin} has no usable transport: {server.last_error or 'unreachable'}",
                )
            return
        machine = self.model.machines[host.name]
        if not machine.reachable:
            raise DesktopError(
                code, f"{host.origin} has no usable transport: {machine.detail or 'unreachable'}"
            )

    def _launch_host(self, text: str) -> HostId:
        try:
            return parse_host_id(text)
        except HostIdError as exc:
            raise DesktopError(FAILED, str(exc)) from None

    def _open_tab(
        self, host: HostId, argv: list[str], cwd: str | None, kind: str | None, title: str | None
    ) -> LaunchedTab:
        tab = LaunchedTab(
            origin=host.origin,
            tab_id=self.model.next_tab_id(),
            argv=tuple(argv),
            cwd=cwd,
            kind=kind,
            title=title,
        )
        self.model.launched_tabs.append(tab)
        return tab

    def _preset(self, preset: str | None) -> None:
        """Refuse a terminal preset the app has no such variant for.

        Raises:
            DesktopError: ``bad_request`` ``unknown preset: X`` (termctl.rs:148-151@5a762e8).

        """
        if preset is not None and preset not in TERMINAL_PRESET_IDS:
            raise DesktopError(BAD, f"unknown preset: {preset}")

    def _rebuild_policy(self) -> None:
        """Drop the rules ``policy.set`` installed: the engine is the built-ins again.

        Both apps rebuild on every pref change (shed-app coordinator.rs:831,901,
        ``AppModel.swift:185-200,232-239@5a762e8``).
        """
        self.model.engine_rules = None

    def _policy_rules(self) -> list[dict[str, Any]]:
        """Return the engine's rules as ``policy.list`` answers them."""
        if self.model.engine_rules is not None:
            return self.model.engine_rules
        return builtin_rules(self.model.prefs) + self.model.policy_rules

    def _variant(
        self, key: str, value: str, variants: tuple[str, ...], swift_name: str, *path: str
    ) -> None:
        """Refuse an enum value: serde's wording on Tauri, Swift's on mac.

        mac decodes the param as the ``String``-backed Swift enum ``swift_name``:
        ``invalid-param`` with ``DecodingError.dataCorrupted``'s description at
        ``path`` (default: ``key``), e.g. ``Cannot initialize ApprovalDecision from
        invalid String value X`` (``IPCHandlerImpl.swift:559-576@5a762e8`` ``decodeParams``, and
        charliek/shed ``:553-570@3fecd8a``).
        """
        if value in variants:
            return
        if self.is_mac:
            raise self._bad(swift_bad_enum(swift_name, value, list(path) or [key]))
        raise DesktopError(BAD, serde_unknown_variant(value, variants))


_METHOD_GATES = {"biometrics-or-password": "biometrics-or-password", "biometrics": "biometrics"}
_SSH_ACTIONS = {"always-allow": "approve", "always-deny": "deny"}


def builtin_rules(prefs: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the three namespace rules both apps rebuild from their prefs, in order.

    ssh-agent: the SSH policy's action (``always-allow`` approve, ``always-deny``
    deny, the rest prompt) gated by the method when it prompts (``prompt``: no
    gate); aws- and docker-credentials: the provider mode, ``deny`` when unset,
    never gated (shed-app coordinator.rs:836-877, shed-core approval/models.rs:187-193,
    264-278, ``Sources/ShedDesktopApp/AppModel.swift:185-196@5a762e8``).
    """
    ssh = prefs["ssh"]
    action = _SSH_ACTIONS.get(ssh["policy"], "prompt")
    gate = _METHOD_GATES.get(ssh["method"], "none") if action == "prompt" else "none"
    rules = [{"scope": "namespace", "namespace": "ssh-agent", "action": action, "gate": gate}]
    modes = prefs["provider_modes"]
    for namespace in ("aws-credentials", "docker-credentials"):
        mode = modes.get(namespace, "deny")
        rules.append({"scope": "namespace", "namespace": namespace, "action": mode, "gate": "none"})
    return rules


def serde_unknown_variant(value: str, variants: tuple[str, ...]) -> str:
    """Return serde's message for a string that names no variant of an enum."""
    quoted = [f"`{v}`" for v in variants]
    pair = len(quoted) == 2
    expected = f"{quoted[0]} or {quoted[1]}" if pair else "one of " + ", ".join(quoted)
    return f"unknown variant `{value}`, expected {expected}"


def msgspec_to_builtins(value: Any) -> Any:
    """Convert a Struct to plain JSON-ready builtins (for rows nested in ``dict`` results)."""
    import msgspec

    return msgspec.to_builtins(value)


def serde_enum_error(value: Any, variants: tuple[str, ...]) -> str:
    """Word serde_json's refusal of ``value`` for a unit-variant enum read from a JSON value.

    A string is an unknown variant; anything else is ``invalid type: <what>, expected
    string or map`` (serde_json's ``Value::deserialize_enum``; ``null`` is a unit value).
    """
    if isinstance(value, str):
        return serde_unknown_variant(value, variants)
    if value is None:
        found = "unit value"
    elif isinstance(value, bool):
        found = f"boolean `{'true' if value else 'false'}`"
    elif isinstance(value, int):
        found = f"integer `{value}`"
    elif isinstance(value, float):
        found = f"floating point `{value}`"
    elif isinstance(value, list):
        found = "sequence"
    else:
        found = "map"
    return f"invalid type: {found}, expected string or map"
