"""Session ops: rc.*, machines, roost launch/run/probe/bootstrap."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec

from shedproto.desktop import (
    LAUNCH_RECIPE_KINDS,
    ROOST_SOURCES,
    DesktopCode,
    DesktopError,
    HostId,
    HostIdError,
    LaunchPolicy,
    classify_pane,
    fingerprint_changed,
    hooks_result,
    inject_kind,
    launch_fields,
    launch_target,
    parse_host_id,
    parse_i64,
    rc_tab_id,
    read_machine_add,
    require_consent,
    roost_capabilities,
    run_command,
    rust_debug,
)
from shedproto.desktop import types as o

from ._base import BAD, FAILED, msgspec_to_builtins
from ._model import Session
from ._ops_rc14 import Rc14Ops

__all__ = ["SessionOps"]

PROBE = DesktopCode.PROBE


class SessionOps(Rc14Ops):
    """Session ops: rc.*, machines, roost launch/run/probe/bootstrap."""

    def op_rc_classify(self, p: o.RcClassifyParams, raw: Any) -> Any:
        # v0.0.14 only: shed-core rc.rs:415-461, RemoteControl.swift:264-303@5a762e8
        state, url = classify_pane(p.kind, p.pane)
        return o.RcClassification(state=state, url=url)

    @property
    def _rc_session_model(self) -> bool:
        """Whether rc.* work on the RcSession table: v0.0.14, and the mac app in every release.

        The newer mac dispatch still answers RcSession rows (charliek/shed
        desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift:244-250@3fecd8a, rcListOp/rcLaunchOp).
        """
        return self.is_mac or not self.is_latest

    def op_rc_list(self, p: o.RcListParams, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_list(p.host, p.shed)
        # rc_list_payload (ipc.rs:123-178@2cd01ef): RoostHosts::snapshot's rows and status
        # under rc.list's shed filter, which omits every machine (roost_hosts.rs:1163-1169
        # @9668981); one roost_capabilities per status row's origin (ipc.rs:163-172)
        rows = self.model.sessions
        if p.shed is not None:
            rows = [s for s in rows if s.shed == p.shed]
        if p.host is not None:
            rows = [s for s in rows if s.origin.startswith(f"roost:{p.host}/")]
        machines = self._status_rows(p.host, p.shed)
        return o.TauriRcList(
            sessions=[s.row() for s in rows],
            capabilities={m.origin: roost_capabilities() for m in machines},
            machines=[msgspec_to_builtins(m) for m in machines],
        )

    def op_machines_list(self, p: Any, raw: Any) -> Any:
        return o.MachinesList(machines=self._status_rows())

    def _launch(self, host: HostId, kind: str, raw: Any) -> o.SessionRow:
        fields = launch_fields(
            self.dialect,
            kind=kind,
            raw=raw,
            known_kinds=self.model.kinds,
            policy=self.launch_policy,
        )
        self._resolve_launch_host(host)
        machine = self.model.machines.get(host.name) if host.kind == "machine" else None
        recipes = LAUNCH_RECIPE_KINDS if machine is None or machine.kinds is None else machine.kinds
        if fields.kind not in recipes:
            # RoostHosts::create -> open_params (roost_hosts.rs:1339-1373,3170-3196
            # @9668981): the host is registered and reached first; the kind is named
            raise DesktopError(
                FAILED, f"unknown kind {rust_debug(fields.kind)}: roost has no launch recipe for it"
            )
        # RoostHosts::launch -> create (roost_hosts.rs:1339-1373,1391-1416@9668981): only the
        # kind and workdir reach roost; the row is host_row of opened_session, whose title is
        # roost's (it follows the foreground process: the stand-in says the agent's binary)
        # (ipc.md's newer text, REFUSE_EXTRAS, names the tab after display_name instead)
        tab = self._open_tab(host, [fields.kind], fields.workdir, fields.kind, fields.display_name)
        title = ROOST_SOURCES.get(fields.kind, fields.kind)
        if self.launch_policy is LaunchPolicy.REFUSE_EXTRAS and fields.display_name is not None:
            title = fields.display_name
        session = Session(
            origin=host.origin,
            slug=tab.tab_id,
            kind=fields.kind,
            shed=host.name if host.kind == "shed" else "",
            machine=host.address,
            display_name=title,
            workdir=fields.workdir,
        )
        self.model.add_session(session)
        return o.SessionRow(**session.row())

    def op_rc_launch(self, p: Any, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_launch(raw)
        server = self._server(p.host, tauri_code=BAD)
        return self._launch(HostId(kind="shed", name=p.shed, server=server), p.kind, raw)

    def _kill(self, origin: str, slug: str) -> Any:
        for index, session in enumerate(self.model.sessions):
            if session.origin == origin and session.slug == slug:
                del self.model.sessions[index]
                return o.Empty()
        # RoostHosts::listed_row (roost_hosts.rs:1233-1245@9668981)
        raise DesktopError(
            self.dialect.internal,
            f"{origin} lists no agent session {slug}: a tab id is only closable on the host"
            " whose rows carry it",
        )

    def op_rc_kill(self, p: o.RcKillParams, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_kill(p.host, p.shed, p.slug)
        server = self._server(p.host, tauri_code=BAD)
        return self._kill(f"roost:{server}/{p.shed}", p.slug)

    def op_rc_inject_test(self, p: Any, raw: Any) -> Any:
        if self._rc_session_model:
            typed = {k: v for k, v in msgspec.structs.asdict(p).items() if v is not None}
            return self._rc14_inject(typed if raw is None else raw)
        # charliek/shed desktop/tauri/src-tauri/src/ipc.rs:1868-1878@2cd01ef rc_inject_test: the
        # shed and host, then build_inject_row (1882-1910: slug, kind), then RoostHosts::inject_test
        # (roost_hosts.rs:1709-1742@9668981): the adapter, then the registration
        server = self._server(p.host, tauri_code=BAD)
        slug = rc_tab_id(p.slug)
        kind = inject_kind(raw, p.lifecycle)
        host = HostId(kind="shed", name=p.shed, server=server)
        self._registered(host, BAD)
        origin = host.origin
        self.model.sessions = [
            s for s in self.model.sessions if not (s.origin == origin and s.slug == slug)
        ]
        self.model.add_roost_session(
            origin,
            slug,
            kind,
            display_name=p.slug if p.display_name is None else p.display_name,
            workdir=INJECT_DEFAULT_WORKDIR if p.workdir is None else p.workdir,
            lifecycle=p.lifecycle,
            attention=bool(p.attention),
        )
        # the row answered: reachable again (roost_hosts.rs:1733-1737@9668981)
        self.model.shed_hosts[origin] = None
        return o.Empty()

    def op_machine_kill(self, p: o.MachineKillParams, raw: Any) -> Any:
        # RoostHosts::kill (roost_hosts.rs:1277-1317@9668981): the host id, the registered
        # host, the slug as the tab id it parses to, then a row of this host's carrying it;
        # every failure is action_failed (ipc.rs:1402-1410@2cd01ef, machine_kill)
        host = self._launch_host(p.machine)
        self._watched(host)
        tab_id = parse_i64(p.slug.strip())  # parse_tab_id: trimmed, then i64
        if tab_id is None:
            raise DesktopError(FAILED, f"{rust_debug(p.slug)} is not a roost tab id")
        return self._kill(host.origin, str(tab_id))

    def _watched(self, host: HostId) -> None:
        """Refuse a host the app does not watch, as ``RoostHosts::known`` words it."""
        watched = (host.kind == "machine" and host.name in self.model.machines) or (
            host.kind == "shed"
            and host.server in self.model.hosts
            and host.name in self.model.hosts[host.server].sheds
        )
        if not watched:
            raise self._unknown_host(host)

    def op_roost_launch(self, p: o.RoostLaunchParams, raw: Any) -> Any:
        # the address, then the kind (charliek/shed desktop/tauri/src-tauri/src/ipc.rs:868@2cd01ef,
        # roost_launch: target, else req_str(machine), then rc_kind)
        address = launch_target(p.target, p.machine)
        if p.kind is None:
            raise DesktopError(BAD, "missing or invalid 'kind'")
        fields_first = launch_fields(
            self.dialect,
            kind=p.kind,
            raw=raw,
            known_kinds=self.model.kinds,
            policy=self.launch_policy,
        )
        host = self._launch_host(address)
        return self._launch(host, fields_first.kind, raw)

    def op_roost_run(self, p: o.RoostRunParams, raw: Any) -> Any:
        address = launch_target(p.target, p.machine)  # before the command (ipc.rs:871@2cd01ef)
        argv = run_command(p.command)
        workdir = p.workdir.strip() if p.workdir and p.workdir.strip() else None
        host = self._launch_host(address)
        self._resolve_launch_host(host)
        tab = self._open_tab(host, argv, workdir, None, None)
        return o.RoostRunResult(
            origin=host.origin, machine=host.address, slug=tab.tab_id, cwd=workdir, argv=argv
        )

    def op_machine_capabilities(self, p: o.MachineParams, raw: Any) -> Any:
        host = self._launch_host(p.machine)
        self._watched(host)  # capabilities -> known (roost_hosts.rs:857-860,961-967@0041e17)
        return o.CapabilitiesResult(capabilities=roost_capabilities())

    def op_machine_add(self, p: o.MachineAddParams, raw: Any) -> Any:
        """``add_from_json`` (machines.rs:76-166@9a84ddf): the stand-in's config is its machines."""
        entry = read_machine_add(
            p.name, p.host, p.user, p.ssh_port, configured=self.model.machines.keys()
        )
        self.model.add_machine(
            entry.name, host=entry.host, user=entry.user, ssh_port=entry.ssh_port, added_live=True
        )
        return o.Empty()

    def _probe(self, target: str, code: str = PROBE) -> tuple[HostId, dict[str, Any]]:
        """Probe the stand-in host; the answer is shaped as ``probe_json``.

        ``probe_json`` is roost_hosts.rs:1797-1831@0041e17. A host the app cannot
        register or reach fails at the ``probe`` stage (``run_probe``, 1561-1576);
        ``code`` is how the caller answers that stage.
        """
        try:
            host = parse_host_id(target)
        except HostIdError as exc:
            raise DesktopError(code, str(exc)) from None
        self._resolve_launch_host(host, code)
        dest = f"/home/{host.name}/.local/bin/roost-session"
        return host, {
            "outcome": {"kind": "missing"},
            "arch": "x86_64",
            "home": f"/home/{host.name}",
            "session": {"state": "not-installed"},
            "candidates": [],
            "dest": dest,
            "fingerprint": f"fp-{host.origin}",
        }

    @staticmethod
    def _plan(probe: dict[str, Any]) -> dict[str, Any]:
        """Return the plan a missing binary lands on (``plan_json``'s ``install`` row)."""
        return {"kind": "install", "needs_source": True, "dest": probe["dest"]}

    def op_roost_probe(self, p: o.RoostTargetParams, raw: Any) -> Any:
        host, probe = self._probe(p.target)
        return o.RoostProbe(target=host.origin, probe=probe, plan=self._plan(probe))

    def op_roost_preview(self, p: o.RoostTargetParams, raw: Any) -> Any:
        host, probe = self._probe(p.target)
        return o.RoostProbe(
            target=host.origin,
            probe=probe,
            plan=self._plan(probe),
            source={
                "rung": "release",
                "sentence": f"download the roost-session release for {probe['arch']}",
                "available": True,
                "skipped": [],
            },
            actionable=True,
            client_label=CLIENT_LABEL,
        )

    def _bootstrap_target(self, p: o.RoostBootstrapParams) -> HostId:
        """Consent, then the target grammar (``Refusal``s, error envelopes)."""
        require_consent(p.target, p.consent)
        try:
            return parse_host_id(p.target)
        except HostIdError as exc:
            raise DesktopError(BAD, str(exc)) from None

    def _bootstrap_checks(
        self, p: o.RoostBootstrapParams, host: HostId
    ) -> o.RoostBootstrapResult | None:
        """Run the re-probe and the fingerprint: a stage failure (``ok: false``), or ``None``."""
        try:
            _, probe = self._probe(p.target)
        except DesktopError as exc:
            return _stage_failure("probe", exc.message)
        if p.fingerprint != probe["fingerprint"]:
            return _stage_failure("fingerprint", fingerprint_changed(host.origin))
        return None

    def _installed(self, host: HostId) -> o.RoostBootstrapResult:
        """``installed_json`` for the stand-in's install (roost_hosts.rs:1880-1894@0041e17)."""
        dest = f"/home/{host.name}/.local/bin/roost-session"
        return o.RoostBootstrapResult(
            ok=True,
            target=host.origin,
            plan={"kind": "install", "needs_source": True, "dest": dest},
            dest=dest,
            verdict=f"ready pid={STAND_IN_PID}",
            session_protocol=ROOST_SESSION_PROTOCOL,
            session_id=f"stand-in-{host.origin}",
            path_warning=None,
            backup_warning=None,
            hooks=self._wire_hooks(host),
        )

    def _wire_hooks(self, host: HostId) -> dict[str, Any]:
        """Run the hooks step that follows shed's start (``hooks_json``'s shape)."""
        return hooks_result(CLIENT_LABEL, self.model.agent_hooks.raise_hooks(host.origin))

    def op_roost_bootstrap(self, p: o.RoostBootstrapParams, raw: Any) -> Any:
        """Install at once (the synchronous form, for ``DesktopApp.handle``).

        It still refuses while a served bootstrap of the same host runs.
        """
        host = self._bootstrap_target(p)
        ledger = self.model.bootstraps
        ledger.begin(host.origin, 0.0)
        try:
            failed = self._bootstrap_checks(p, host)
        finally:
            ledger.end(host.origin)
        return failed if failed is not None else self._installed(host)

    async def aop_roost_bootstrap(self, p: o.RoostBootstrapParams, raw: Any) -> Any:
        """Install over ``model.bootstrap_seconds`` (the served form), within the budget."""
        host = self._bootstrap_target(p)
        ledger = self.model.bootstraps
        origin = host.origin
        ledger.begin(origin, anyio.current_time())
        try:
            with anyio.move_on_after(ledger.remaining(origin, anyio.current_time())) as budget:
                failed = self._bootstrap_checks(p, host)
                if failed is not None:
                    return failed
                await anyio.sleep(self.model.bootstrap_seconds)
            if budget.cancelled_caught:
                raise ledger.over_budget(p.target)
        finally:
            ledger.end(origin)
        return self._installed(host)


CLIENT_LABEL = "shed-desktop"
"""Who shed says it is on roost's wire (roost_hosts.rs:101@0041e17, ``CLIENT_LABEL``)."""
ROOST_SESSION_PROTOCOL = 6
"""The roost session protocol the stand-in reports after an install (the stand-in's value)."""
INJECT_DEFAULT_WORKDIR = "/home/shed"
"""An injected row's working directory when the params name none (ipc.rs:1903@2cd01ef,
``build_inject_row``; its title defaults to the slug, 1902)."""
STAND_IN_PID = 4242
"""The pid in the stand-in's readiness verdict: ``Installed::verdict`` is roost's verdict
rendered, ``ready pid=<n>`` or ``already-running`` (shed-core
roost/bootstrap/machines.rs:407-434@3170191, ``Installed``)."""


def _stage_failure(stage: str, message: str) -> o.RoostBootstrapResult:
    """``failure_json``: ``{ok: false, error: {stage, message, restored}}``.

    ``restored`` is ``null``: shed-core's ``BootstrapFailure::new`` leaves it unset,
    and only a post-commit failure knows it (copy.rs:111-117@0041e17).
    """
    return o.RoostBootstrapResult(
        ok=False, error=o.BootstrapStageError(stage=stage, message=message, restored=None)
    )
