"""Session ops: rc.*, machines, roost launch/run/probe/bootstrap."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec

from shedproto.desktop import (
    DesktopError,
    Dialect,
    HostId,
    LaunchPolicy,
    classify_pane,
    launch_fields,
    launch_target,
    require_consent,
    run_command,
)
from shedproto.desktop import types as o

from ._base import BAD, FAILED, msgspec_to_builtins
from ._model import Session
from ._ops_rc14 import Rc14Ops

__all__ = ["SessionOps"]


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
        desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift@3fecd8a, rcListOp/rcLaunchOp).
        """
        return self.is_mac or not self.is_latest

    def op_rc_list(self, p: o.RcListParams, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_list(p.host, p.shed)
        rows = self.model.sessions
        if p.shed is not None:
            rows = [s for s in rows if s.shed == p.shed]
        if p.host is not None:
            rows = [s for s in rows if s.origin.startswith(f"roost:{p.host}/")]
        sessions = [s.row() for s in rows]
        origins = sorted({s.origin for s in rows})
        machines = [msgspec_to_builtins(self._machine_row(m)) for m in self.model.machines.values()]
        return o.TauriRcList(
            sessions=sessions,
            capabilities={origin: self._capabilities(origin) for origin in origins},
            machines=machines,
        )

    def op_machines_list(self, p: Any, raw: Any) -> Any:
        return o.MachinesList(machines=[self._machine_row(m) for m in self.model.machines.values()])

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
        if machine is not None and machine.kinds is not None and fields.kind not in machine.kinds:
            raise DesktopError(FAILED, f"{host.origin} has no recipe for kind '{fields.kind}'")
        title = None
        if fields.display_name is not None and self.launch_policy is LaunchPolicy.REFUSE_EXTRAS:
            title = "applied"
        tab = self._open_tab(host, [fields.kind], fields.workdir, fields.kind, fields.display_name)
        session = Session(
            origin=host.origin,
            slug=tab.tab_id,
            kind=fields.kind,
            shed=host.name if host.kind == "shed" else "",
            machine=host.address,
            display_name=fields.display_name,
            workdir=fields.workdir,
            title=title,
        )
        self.model.sessions.append(session)
        return o.SessionRow(**session.row())

    def op_rc_launch(self, p: Any, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_launch(raw)
        if self.is_mac:
            fields = launch_fields(Dialect.MAC, kind=p.kind, raw=raw, known_kinds=self.model.kinds)
            server = self._server(p.host)
            host = HostId(kind="shed", name=p.shed, server=server)
            if p.shed not in self.model.hosts[server].sheds:
                raise self._fail(f"no shed {p.shed} on {server}")
            tab = self._open_tab(
                host, [fields.kind], fields.workdir, fields.kind, fields.display_name
            )
            session = Session(
                origin=host.origin,
                slug=tab.tab_id,
                kind=fields.kind,
                shed=p.shed,
                machine=host.address,
                display_name=fields.display_name,
                workdir=fields.workdir,
            )
            self.model.sessions.append(session)
            return o.SessionRow(**session.row())
        server = self._server(p.host, tauri_code=BAD)
        return self._launch(HostId(kind="shed", name=p.shed, server=server), p.kind, raw)

    def _kill(self, origin: str, slug: str) -> Any:
        for index, session in enumerate(self.model.sessions):
            if session.origin == origin and session.slug == slug:
                del self.model.sessions[index]
                return o.Empty()
        raise DesktopError(self.dialect.internal, f"{origin} lists no agent session {slug}")

    def op_rc_kill(self, p: o.RcKillParams, raw: Any) -> Any:
        if self._rc_session_model:
            return self._rc14_kill(p.host, p.shed, p.slug)
        server = self._server(p.host, tauri_code=BAD)
        return self._kill(f"roost:{server}/{p.shed}", p.slug)

    def op_rc_inject_test(self, p: Any, raw: Any) -> Any:
        if self._rc_session_model:
            typed = {k: v for k, v in msgspec.structs.asdict(p).items() if v is not None}
            return self._rc14_inject(typed if raw is None else raw)
        server = self._server(p.host, tauri_code=BAD)
        if not self.is_mac and not p.slug.isdigit():
            raise DesktopError(BAD, f'slug "{p.slug}" is not a roost tab id')
        kind = p.kind or "claude"
        if not self.is_mac and kind not in self.model.kinds:
            raise DesktopError(BAD, f"roost has no adapter for kind '{kind}'")
        extra = {}
        if self.is_mac and p.state is not None:
            extra["state"] = p.state
        self.model.add_roost_session(
            f"roost:{server}/{p.shed}",
            p.slug,
            kind,
            display_name=p.display_name,
            workdir=p.workdir,
            lifecycle=getattr(p, "lifecycle", None),
            attention=bool(getattr(p, "attention", None)),
            extra=extra,
        )
        return o.Empty()

    def op_machine_kill(self, p: o.MachineKillParams, raw: Any) -> Any:
        host = self._launch_host(p.machine)
        self._resolve_launch_host(host)
        return self._kill(host.origin, p.slug)

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
        if p.command is None:
            raise DesktopError(BAD, "missing 'command'")
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
        known = (host.kind == "machine" and host.name in self.model.machines) or (
            host.kind == "shed" and host.server in self.model.hosts
        )
        if not known:
            raise DesktopError(FAILED, f"{host.origin}: unknown host")
        return o.CapabilitiesResult(capabilities=self._capabilities(host.origin))

    def op_machine_add(self, p: o.MachineAddParams, raw: Any) -> Any:
        if not p.name.strip():
            raise DesktopError(BAD, "missing 'name'")
        self.model.add_machine(p.name.strip())
        return o.Empty()

    def _probe(self, target: str) -> tuple[HostId, dict[str, Any]]:
        host = self._launch_host(target)
        self._resolve_launch_host(host)
        fingerprint = f"fp-{host.origin}"
        return host, {"os": "linux", "arch": "x86_64", "fingerprint": fingerprint}

    def op_roost_probe(self, p: o.RoostTargetParams, raw: Any) -> Any:
        host, probe = self._probe(p.target)
        return o.RoostProbe(target=host.origin, probe=probe, plan={"steps": ["install", "start"]})

    def op_roost_preview(self, p: o.RoostTargetParams, raw: Any) -> Any:
        host, probe = self._probe(p.target)
        return o.RoostProbe(
            target=host.origin,
            probe=probe,
            plan={"steps": ["install", "start"]},
            source={
                "rung": "release",
                "sentence": "download the release",
                "available": True,
                "skipped": [],
            },
            actionable=True,
            client_label="shed-desktop",
        )

    def _bootstrap_checks(self, p: o.RoostBootstrapParams) -> o.RoostBootstrapResult | HostId:
        """Consent, target and fingerprint: a refusal, a stage failure, or the host to install."""
        require_consent(p.target, p.consent)
        host, probe = self._probe(p.target)
        if p.fingerprint != probe["fingerprint"]:
            return o.RoostBootstrapResult(
                ok=False,
                error=o.BootstrapStageError(
                    stage="fingerprint", message="the host changed since the probe"
                ),
            )
        return host

    def op_roost_bootstrap(self, p: o.RoostBootstrapParams, raw: Any) -> Any:
        """Install at once (the synchronous form, for ``DesktopApp.handle``).

        It still refuses while a served bootstrap of the same host runs.
        """
        checked = self._bootstrap_checks(p)
        if isinstance(checked, o.RoostBootstrapResult):
            return checked
        self.model.bootstraps.begin(checked.origin, 0.0)
        self.model.bootstraps.end(checked.origin)
        return o.RoostBootstrapResult(ok=True, target=checked.origin, installed=True)

    async def aop_roost_bootstrap(self, p: o.RoostBootstrapParams, raw: Any) -> Any:
        """Install over ``model.bootstrap_seconds`` (the served form), within the budget."""
        checked = self._bootstrap_checks(p)
        if isinstance(checked, o.RoostBootstrapResult):
            return checked
        ledger = self.model.bootstraps
        origin = checked.origin
        ledger.begin(origin, anyio.current_time())
        try:
            with anyio.move_on_after(ledger.remaining(origin, anyio.current_time())) as budget:
                await anyio.sleep(self.model.bootstrap_seconds)
            if budget.cancelled_caught:
                raise ledger.over_budget(origin)
        finally:
            ledger.end(origin)
        return o.RoostBootstrapResult(ok=True, target=origin, installed=True)
