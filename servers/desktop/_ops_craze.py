"""craze ops: create options, idempotent create (the hub stand-in), open terminal."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    AttemptState,
    CrazeAttempt,
    DesktopCode,
    DesktopError,
    HostId,
    check_craze_host_id,
    craze_host,
    craze_not_installed,
    craze_refusals,
    mint_request_id,
    rust_debug,
    validate_craze_create,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase
from ._model import Session

__all__ = ["CrazeOps"]


class CrazeOps(AppBase):
    """craze ops: create options, idempotent create (the hub stand-in), open terminal."""

    def _craze_source(self, host: HostId, *, held: bool = False, create: bool = True) -> Any:
        """craze_ask's gates, in order; on a held retry a preflight refusal is outcome_unknown.

        roost_hosts.rs:1476-1522@9668981 ``craze_ask``: an unwatched host is ``bad_request``
        with ``unknown_host``'s words, then ``no_craze``, ``not_installed``,
        ``too_old``, and a live hub that lacks what ``create`` (else the options
        read) needs.
        """
        machine = self.model.machines.get(host.name) if host.kind == "machine" else None
        refusals = craze_refusals(host.origin)
        try:
            if machine is None:
                raise DesktopError(BAD, self._unknown_host(host).message)
            source = machine.craze
            if source is None:
                raise refusals["no_craze"]
            if not source.installed:
                raise craze_not_installed(host.origin, source.cause or "not found")
            if source.too_old:
                raise refusals["too_old"]
            if source.state == "live" and not source.can_create:
                raise refusals["cannot_create" if create else "cannot_list"]
        except DesktopError as exc:
            if held and not exc.matches(BAD):
                raise DesktopError(
                    DesktopCode.OUTCOME_UNKNOWN,
                    f"{exc.message}; the first create's outcome is still unknown",
                ) from None
            raise
        return source

    def op_craze_create_options(self, p: o.MachineParams, raw: Any) -> Any:
        host = craze_host(p.machine)
        source = self._craze_source(host, create=False)
        source.state = "live"  # opening the sheet starts a dormant hub
        return o.CrazeCreateOptions(
            machine=host.address,
            options=o.CrazeOptions(
                providers=[provider.row() for provider in source.providers],
                recent_dirs=list(source.recent_dirs),
                default_provider=source.default_provider,
            ),
        )

    def _hub_create(self, host: HostId, request: Any, request_id: str) -> Any:
        """Answer as craze's hub does for ``request_id``.

        Within the window the first answer is replayed (failures too; ``ended``
        says whether its session is gone); the same id with other params is
        ``bad_request``. After the window a session still running for the id
        is answered again; otherwise a new create runs.
        """
        now = self.model.clock()
        fingerprint = (host.origin, request.cwd, request.provider, request.prompt)
        replayed = self.model.craze_ledger.replay(request_id, now)
        if replayed is not None:
            first_fingerprint, first = replayed
            if first_fingerprint != fingerprint:
                return DesktopError(
                    BAD, f"request id {request_id} was already used with other params"
                )
            if isinstance(first, DesktopError):
                return first
            return {**first, "ended": not self._craze_alive(first["host_id"])}
        running = self.model.craze_requests.get(request_id)
        if running is not None and self._craze_alive(running["host_id"]):
            self.model.craze_ledger.record(request_id, (fingerprint, running), now)
            return running
        refusal = self.model.craze_next_refusal.pop(host.name, None)
        answer: Any
        if refusal is not None:
            answer = DesktopError(refusal[0], refusal[1])
        elif request.provider is not None and request.provider not in self._providers(host):
            answer = DesktopError(BAD, f"unknown provider '{request.provider}'")
        else:
            host_id = self.model.next_craze_host_id()
            session = Session(
                origin=host.origin,
                slug=host_id,
                kind="craze",
                machine=host.address,
                source="craze",
                workdir=request.cwd,
                extra={
                    "provider": request.provider or self._default_provider(host),
                    "agent_lane": {"kind": "craze", "session_id": host_id},
                },
            )
            self.model.sessions.append(session)
            answer = {
                "session": session.row(),
                "host_id": host_id,
                "ended": False,
                "prompt": request.prompt,
                "prompt_error": None,
                "request_id": request_id,
            }
            self.model.craze_requests[request_id] = answer
        if isinstance(answer, DesktopError) and answer.matches(DesktopCode.UNAVAILABLE):
            return answer  # never processed by craze, so nothing to replay
        self.model.craze_ledger.record(request_id, (fingerprint, answer), now)
        return answer

    def _craze_alive(self, host_id: str) -> bool:
        return any(s.source == "craze" and s.slug == host_id for s in self.model.sessions)

    def _default_provider(self, host: HostId) -> str | None:
        source = self.model.machines[host.name].craze
        return None if source is None else source.default_provider

    def _providers(self, host: HostId) -> list[str]:
        source = self.model.machines[host.name].craze
        return [] if source is None else [provider.id for provider in source.providers]

    def op_craze_create(self, p: o.CrazeCreateParams, raw: Any) -> Any:
        """Validate, gate, then attempt: send, one retry under the same id, outcome_unknown.

        A retry under an id whose outcome is unknown is *held*: a preflight
        refusal or an ``unavailable`` answer keeps it unknown; only a session,
        a ``bad_request`` or a replayed failure ends it.
        """
        request = validate_craze_create(p)
        request_id = request.request_id or mint_request_id(self.model.entropy(8))
        held = request_id in self.model.held_request_ids
        self._craze_source(request.host, held=held)
        attempt = CrazeAttempt(request_id)
        answer: Any = None
        while not attempt.done:
            fault = self.model.craze_faults.get(request.host.name)
            if fault is not None and fault.count > 0:
                fault.count -= 1
                if fault.applied:
                    self._hub_create(request.host, request, request_id)
                attempt.on_lost()
                continue
            answer = self._hub_create(request.host, request, request_id)
            if isinstance(answer, DesktopError):
                attempt.on_refusal()
            else:
                attempt.on_session()
        if attempt.state is AttemptState.OUTCOME_UNKNOWN:
            self.model.held_request_ids.add(request_id)
            raise DesktopError(
                DesktopCode.OUTCOME_UNKNOWN,
                f"craze's answer to {request_id} was lost twice; it may have run — "
                "retry with the same request_id",
            )
        if isinstance(answer, DesktopError):
            if held and answer.matches(DesktopCode.UNAVAILABLE):
                # a held retry's "unavailable" does not say whether the first
                # create started a session: the caller keeps its id
                raise DesktopError(
                    DesktopCode.OUTCOME_UNKNOWN,
                    f"{answer.message}; the first create's outcome is still unknown",
                )
            self.model.held_request_ids.discard(request_id)
            raise answer
        self.model.held_request_ids.discard(request_id)
        return o.CrazeCreateResult(**answer)

    def op_craze_open_terminal(self, p: o.CrazeOpenTerminalParams, raw: Any) -> Any:
        """roost_hosts.rs:1618-1683@9668981 ``craze_open_terminal``: the target, the id, the row.

        No craze-source gate: a session the host's rows do not hold (an unknown
        host included) is ``unknown_session``; the tab opens whatever the hub's state.
        """
        host = craze_host(p.machine)
        check_craze_host_id(p.session_id)
        for session in self.model.sessions:
            if (
                session.source == "craze"
                and session.origin == host.origin
                and session.slug == p.session_id
            ):
                tab = self._open_tab(
                    host, ["craze", "attach", p.session_id], session.workdir, "craze", None
                )
                return o.CrazeTerminal(
                    origin=host.origin,
                    machine=host.address,
                    session_id=p.session_id,
                    tab_id=tab.tab_id,
                    cwd=session.workdir,
                    argv=list(tab.argv),
                )
        raise DesktopError(
            DesktopCode.UNKNOWN_SESSION,
            f"{host.origin} lists no craze session {rust_debug(p.session_id)}",
        )
