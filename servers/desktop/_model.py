"""The in-memory model of shed-desktop: what the reference server answers from.

A test seeds it (hosts, sheds, machines, sessions, approvals, UI-truth dumps,
craze faults) through the methods here and inspects what the ops did
(:attr:`DesktopModel.launched_tabs`, :attr:`DesktopModel.decisions`, ...).
It is plain Python with no I/O; time and randomness are injected.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from shedproto.desktop import (
    IDEMPOTENCY_WINDOW,
    LANE_RECONNECT_WAIT,
    TAURI_RC_KINDS,
    BootstrapLedger,
    IdempotencyLedger,
    RoostTab,
    agent_hooks_reply,
    craze_host,
    parse_host_id,
    roost_row,
)

__all__ = [
    "DEFAULT_KINDS",
    "HOST_FAILURE_KINDS",
    "AgentHooksHosts",
    "Approval",
    "CrazeFault",
    "CrazeProvider",
    "CrazeSource",
    "craze_status",
    "DesktopModel",
    "Host",
    "LaunchedTab",
    "Machine",
    "Session",
    "Shed",
]

DEFAULT_KINDS = frozenset(TAURI_RC_KINDS)
"""The rc kinds the model knows by default: the newer Tauri app's ``RcKind`` wire values
(:data:`~shedproto.desktop.TAURI_RC_KINDS`); ``roost.launch``/``rc.launch`` refuse any
other string (``unknown rc kind '<k>'``)."""

HOST_FAILURE_KINDS = ("agent_upgrade_required", "other")
"""The ``kind`` values of a ``host_errors`` entry."""


@dataclass
class Shed:
    """A shed on a shed server: shed-server's shed fields (``None``: the server sent none)."""

    name: str
    server: str
    status: str = "running"
    image: str | None = None
    backend: str | None = None
    repo: str | None = None
    image_digest: str | None = None
    local_dir: str | None = None
    ip_address: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    created_at: str | None = None
    started_at: str | None = None
    active_namespaces: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        """Return the row's fields as both apps name them (``host`` is the server name)."""
        return {
            "host": self.server,
            "name": self.name,
            "status": self.status,
            "backend": self.backend,
            "repo": self.repo,
            "image": self.image,
            "image_digest": self.image_digest,
            "local_dir": self.local_dir,
            "ip_address": self.ip_address,
            "cpus": self.cpus,
            "memory_mb": self.memory_mb,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "active_namespaces": list(self.active_namespaces),
        }


@dataclass
class Host:
    """A shed server (``host.list``); an unreachable one carries a typed failure."""

    name: str
    host: str = "127.0.0.1"
    http_port: int = 8080
    ssh_port: int = 2222
    reachable: bool = True
    backend: str | None = None
    version: str | None = None
    last_error: str | None = None
    failure: dict[str, str] | None = None
    auth_mode: str = "token"
    """The config entry's ``auth_mode`` (absent or unrecognised reads as ``token``)."""
    auth_learned: bool = False
    """Whether a mint proved the mode this session (``hosts.auth``'s ``learned``)."""
    sheds: dict[str, Shed] = field(default_factory=dict)
    images: list[dict[str, Any]] = field(default_factory=list)
    """The server's ``ShedImage`` rows (``images.list`` on mac)."""


@dataclass
class AgentHooksHosts:
    """What each stand-in host's session answers a bootstrap's agent-hooks raise from.

    ``homes``: host origin -> the agents whose config directory exists there
    (none by default); ``announced``: the agents its session already reported
    wired to a client. Set ``model.agent_hooks.homes["machine:mini"] = {"claude"}``.
    """

    homes: dict[str, set[str]] = field(default_factory=dict)
    announced: dict[str, set[str]] = field(default_factory=dict)

    def raise_hooks(self, origin: str) -> dict[str, Any]:
        """Answer the raise on ``origin`` (roost's reply) and remember what it announced."""
        told = self.announced.setdefault(origin, set())
        reply = agent_hooks_reply(self.homes.get(origin, ()), told)
        told.update(reply["wired"])
        return reply


@dataclass
class CrazeProvider:
    """One provider row of craze's ``sessions.createOptions`` (shed-core ``LaneProvider``).

    ``state`` is ``ready``, ``needs_setup`` or ``unavailable``; ``reason`` and
    ``fix`` are craze's words for a provider that is not ready (absent when
    craze states none). ``label`` defaults to the id.
    """

    id: str
    label: str | None = None
    state: str = "ready"
    reason: str | None = None
    fix: str | None = None

    def row(self) -> dict[str, Any]:
        """Return the row ``craze.create_options`` carries (unstated ``reason``/``fix`` absent)."""
        row: dict[str, Any] = {
            "id": self.id,
            "label": self.id if self.label is None else self.label,
            "state": self.state,
        }
        row.update((k, v) for k, v in (("reason", self.reason), ("fix", self.fix)) if v is not None)
        return row


def _craze_providers() -> list[CrazeProvider]:
    return [CrazeProvider("grok"), CrazeProvider("cursor"), CrazeProvider("native")]


@dataclass
class CrazeSource:
    """A host's craze source: ``live``, ``dormant`` or ``offline`` (``None`` on a host: none).

    ``providers`` are craze's rows in craze's order (the stand-in's default: the
    three providers craze's recorded hub offers, all ready).
    """

    state: str = "live"
    cause: str | None = None
    installed: bool = True
    too_old: bool = False
    can_create: bool = True
    providers: list[CrazeProvider] = field(default_factory=_craze_providers)
    default_provider: str | None = "grok"
    recent_dirs: list[str] = field(default_factory=list)


def craze_status(source: CrazeSource | None) -> dict[str, Any]:
    """Return a status row's ``craze`` half as ``CrazeState::status`` words it.

    No source, or craze not installed: ``absent`` (the latter with cause
    ``not_installed``); too old: ``offline`` with cause ``too_old``; otherwise the
    source's state, an ``offline`` one with its ``cause``. The capabilities are
    the live hub's only (craze.rs:570-590@9a84ddf ``CrazeState::status``).
    """
    if source is None:
        return {"state": "absent", "cause": None, "create": False, "create_options": False}
    state: str = source.state
    cause: str | None = source.cause if state == "offline" else None
    if not source.installed:
        state, cause = "absent", "not_installed"
    elif source.too_old:
        state, cause = "offline", "too_old"
    live = state == "live" and source.can_create
    return {"state": state, "cause": cause, "create": live, "create_options": live}


@dataclass
class Machine:
    """A native host reached over SSH; unreachable is a state, ``detail`` verbatim."""

    name: str
    host: str | None = None
    """The ssh host its config entry names (``None``: the name itself)."""
    user: str | None = None
    ssh_port: int = 22
    reachable: bool = True
    connected_once: bool = True
    detail: str | None = None
    down_kind: str | None = None
    """The transport's classification while unreachable (``not-installed``, ``no-session``)."""
    craze: CrazeSource | None = None
    kinds: frozenset[str] | None = None
    """Kinds the stand-in gives a launch recipe on this host (``None``: the app's own,
    :data:`~shedproto.desktop.LAUNCH_RECIPE_KINDS`)."""
    listed: bool = True
    """Whether it has a status row (``HostState::listed``): a configured machine from the
    start; the implicit ``localhost`` once a session answers there
    (:meth:`DesktopModel.answer_machine`) or its craze hub goes live, then for good."""
    added_live: bool = False
    """Added by ``machine.add`` while the app ran: registered after the implicit
    ``localhost`` (``RoostHosts::add``), where a configured one is registered before it."""


@dataclass
class Session:
    """A session row (a roost tab, or a craze session).

    A roost row (``source`` ``roost``) answers as the newer Tauri app's
    ``host_row`` (:func:`~shedproto.desktop.roost_row`): ``display_name`` is roost's
    tab title and ``workdir`` its directory (``""`` when unset), ``lifecycle`` roost's
    ``agent_lifecycle`` (sent as the row's ``activity``), ``created_at`` the tab's
    unix seconds and ``session_id`` the agent's own id (``""``: none).
    """

    origin: str
    slug: str
    kind: str
    shed: str = ""
    """Empty for a machine row: key rows by ``origin``, never by ``shed``."""
    machine: str = ""
    source: str = "roost"
    display_name: str | None = None
    workdir: str | None = None
    stale: bool = False
    attention: bool = False
    lifecycle: str | None = None
    created_at: int = 0
    session_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def origin_kind(self) -> str:
        """``machine`` or ``shed``."""
        return "machine" if self.origin.startswith("machine:") else "shed"

    def row(self) -> dict[str, Any]:
        """Return the row as ``rc.list`` answers it."""
        if self.source == "roost":
            # extra: the stamps the stand-in seeds beside the row (agent_lane)
            return {**roost_row(self.tab(), stale=self.stale), **self.extra}
        row: dict[str, Any] = {
            "origin": self.origin,
            "origin_kind": self.origin_kind,
            "source": self.source,
            "slug": self.slug,
            "kind": self.kind,
            "shed": self.shed,
            "machine": self.machine,
            "stale": self.stale,
            "attention": self.attention,
        }
        if self.display_name is not None:
            row["display_name"] = self.display_name
        if self.workdir is not None:
            row["workdir"] = self.workdir
        row.update(self.extra)
        return row

    def tab(self) -> RoostTab:
        """Return the roost tab this row is (its host read off ``origin``)."""
        server = parse_host_id(self.origin).server if self.origin_kind == "shed" else None
        return RoostTab(
            origin=self.origin,
            address=self.machine,
            server=server,
            shed=self.shed,
            tab_id=self.slug,
            kind=self.kind,
            title=self.display_name or "",
            cwd=self.workdir or "",
            lifecycle=self.lifecycle,
            attention=self.attention,
            created_at=self.created_at,
            session_id=self.session_id,
        )


@dataclass
class Lane:
    """An agent lane the app holds open over a craze or opencode row (``lane.*``).

    Seed it from a test to play the lane contract: ``reconnect_in`` seconds
    until a dropped lane is back (``None``: live; ``math.inf``: never; a craze
    lane's verbs wait up to 10 s, then are ``unavailable``, an opencode lane's
    are ``unavailable`` at once); ``lost_answers`` verbs that still apply but
    whose answers are lost (craze ``outcome_unknown``, opencode ``unavailable``); ``stale``
    (why the lane is not live), ``ended``, ``capabilities`` and ``settings``
    as ``lane.messages`` reports them.
    """

    session: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    generation: int = 1
    stale: str | None = None
    ended: bool = False
    reconnect_in: float | None = None
    lost_answers: int = 0

    def drop(self, reconnect_in: float, reason: str = "reconnecting") -> None:
        """Drop the lane's connection: stale with ``reason`` until it is back."""
        self.reconnect_in = reconnect_in
        self.stale = reason

    def reconnected(self) -> None:
        """Bring the lane back: live again, on a new generation."""
        self.reconnect_in = None
        self.stale = None
        self.generation += 1


@dataclass(frozen=True)
class LaunchedTab:
    """A roost ``tab.open`` the server performed (launch doors and ``roost.run``)."""

    origin: str
    tab_id: str
    argv: tuple[str, ...]
    cwd: str | None
    kind: str | None
    title: str | None = None


@dataclass
class Approval:
    """A pending credential approval: shed-core's ``ApprovalRequest`` and its gate.

    The fields are the request the host agent delegated (``approval/models.rs:29-48@5a762e8``);
    ``gate`` is what the policy decided for it (the default SSH rule's gate).
    """

    id: str
    server: str
    shed: str
    namespace: str = "ssh-agent"
    detail: str = ""
    op: str = "sign"
    ts: str = "2026-01-01T00:00:00Z"
    expires_at: str = "2026-01-01T00:01:00Z"
    gate: str = "biometrics-or-password"

    def row(self, default_scope: str, default_ttl: str) -> dict[str, Any]:
        """Return the ``approvals.list`` row: the request inline, the gate, the SSH defaults."""
        return {
            "id": self.id,
            "ts": self.ts,
            "server": self.server,
            "namespace": self.namespace,
            "op": self.op,
            "shed": self.shed,
            "detail": self.detail,
            "expires_at": self.expires_at,
            "gate": self.gate,
            "default_scope": default_scope,
            "default_ttl": default_ttl,
        }

    def notification(self) -> dict[str, str]:
        """Return the ``PostedNotification`` the test presenter records for it.

        ``Approve <namespace>?`` / ``<op> · <server/shed or shed> · <detail>``
        (shed-app traits.rs:79-94, ``NotificationPresenter.swift:13-43@5a762e8``).
        """
        where = f"{self.server}/{self.shed}" if self.server else self.shed
        return {
            "id": self.id,
            "title": f"Approve {self.namespace}?",
            "body": f"{self.op} · {where} · {self.detail}",
        }


@dataclass
class CrazeFault:
    """Lose the next ``count`` hub answers for a host; ``applied``: the hub acted anyway."""

    count: int
    applied: bool = True


class DesktopModel:
    """Everything the reference server knows. Seed it, run ops, inspect it.

    ``clock`` (seconds, monotonic) drives the craze idempotency window;
    ``entropy(n)`` mints request ids and v0.0.14 RC slugs; ``wall_clock``
    stamps v0.0.14 RC sessions.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        entropy: Callable[[int], bytes] = os.urandom,
        kinds: frozenset[str] = DEFAULT_KINDS,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self.entropy = entropy
        self.wall_clock = wall_clock
        """Seconds since the epoch: v0.0.14 ``rc.launch``'s ``created_at``."""
        self.kinds = kinds
        self.core = "rust"
        """mac ``identify``'s ``core``: ``swift`` under ``SHED_DESKTOP_RUST_CORE=0``."""
        self.hosts: dict[str, Host] = {}
        # the implicit localhost: HostState::new(false) until its session answers
        # (roost_hosts.rs:1065-1073,560-572@9668981)
        self.machines: dict[str, Machine] = {
            "localhost": Machine(
                "localhost", craze=None, reachable=False, connected_once=False, listed=False
            )
        }
        self.sessions: list[Session] = []
        # the listed shed hosts (roost:<server>/<shed>), in the order a session first
        # answered there (a seeded or injected row, a launch): listed for good; each
        # None, or (detail, down_kind) while its watcher reports it Down
        self.shed_hosts: dict[str, tuple[str, str | None] | None] = {}
        self.launched_tabs: list[LaunchedTab] = []
        self.approvals: dict[str, Approval] = {}
        self.decisions: list[dict[str, Any]] = []
        self.rc_sessions: dict[str, Any] = {}
        """v0.0.14's RC table: ``host/shed/slug`` -> :class:`~shedproto.desktop.types.RcSession`."""
        self.policy_rules: list[dict[str, Any]] = []
        """The persisted per-shed rules (the apps' ``extra_rules``), after the built-ins."""
        self.engine_rules: list[dict[str, Any]] | None = None
        """The rules ``policy.set`` installed in place of every other rule, until the
        next rebuild (an SSH or provider pref change, a per-shed rule added or removed);
        ``None``: the built-ins plus :attr:`policy_rules`."""
        self.activity: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.creates: dict[str, dict[str, Any]] = {}
        self.dumps: dict[str, Any] = {}
        self.ui: dict[str, Any] = {"pane": "sheds", "frontend_ready": True}
        self.platform: dict[str, Any] = {"os": "linux", "bundle": True}
        """Where the Tauri stand-in runs: ``os`` ``linux`` (no in-app updater:
        ``updater.status`` reason ``linux_apt``) or ``macos``; ``bundle``: a macOS app
        from a real bundle (else ``no_bundle``)."""
        self.broker: dict[str, Any] = default_broker()
        """The credential broker as the app launched it (``broker.status``)."""
        self.preferences_window: str | None = None
        """The Preferences window: ``None`` (never opened), ``"visible"`` or
        ``"hidden"`` (``prefs.close`` only hides it)."""
        self.prefs: dict[str, Any] = {
            # TerminalPreset's #[default] is Custom (shed-core terminal.rs:79-88@5a762e8)
            "terminal": {"preset": "custom", "template": None},
            # shed-app's SshPrefs::default (coordinator.rs:69-78@5a762e8)
            "ssh": {"method": "biometrics-or-password", "policy": "time-based-allow", "ttl": "2h"},
            "appearance": "light",
            "login_item": False,
            "broker_mode": "auto",
            "provider_modes": {},
        }
        self.craze_ledger: IdempotencyLedger[Any] = IdempotencyLedger(IDEMPOTENCY_WINDOW)
        self.craze_faults: dict[str, CrazeFault] = {}
        self.craze_next_refusal: dict[str, tuple[str, str]] = {}
        self.craze_requests: dict[str, dict[str, Any]] = {}
        """Request id -> the create answer of the session it started (live or not)."""
        self.held_request_ids: set[str] = set()
        self.lanes: dict[str, Lane] = {}
        """Open agent lanes by ``<origin>#<session_id>`` (see :meth:`lane`)."""
        self.lane_reconnect_wait = LANE_RECONNECT_WAIT
        """How long a lane verb waits for a reconnecting lane (shrink it in a test)."""
        self.bootstraps = BootstrapLedger()
        """Hosts with a ``roost.bootstrap`` running (set ``bootstraps.budget`` to
        shrink the 600 s budget in a test)."""
        self.bootstrap_seconds = 0.0
        """How long the stand-in's install takes (``math.inf``: it hangs until the
        budget answers ``action_failed``). Later requests on that connection wait;
        other connections see ``already running`` for the same host."""
        self.agent_hooks = AgentHooksHosts()
        self._mock_unreachable: frozenset[str] = frozenset()
        self._mock_detail = "connection refused"
        self._tab_counter, self._craze_counter = 0, 0

    # --- seeding -----------------------------------------------------------

    def add_host(self, name: str, **fields: Any) -> Host:
        """Add (or replace) shed server ``name``; ``fields`` set :class:`Host` attributes.

        A name listed by :meth:`mock_unreachable` comes up unreachable.
        """
        host = Host(name=name, **fields)
        self.hosts[name] = host
        if name in self._mock_unreachable:
            self._mark_mock_unreachable(name)
        return host

    def mock_unreachable(self, names: Iterable[str], *, detail: str) -> None:
        """Make the servers ``names`` unreachable now and whenever they are (re)added.

        What ``SHED_*_MOCK_UNREACHABLE_HOSTS`` does in test mode: the app
        points such a host at a dead address, so its listing fails with
        ``detail`` (a ``host_errors`` entry of kind ``other``).
        """
        self._mock_unreachable = frozenset(names)
        self._mock_detail = detail
        for name in self._mock_unreachable & self.hosts.keys():
            self._mark_mock_unreachable(name)

    def _mark_mock_unreachable(self, name: str) -> None:
        self.make_host_unreachable(name, summary=f"can't reach {name}", detail=self._mock_detail)

    def add_shed(self, server: str, name: str, **fields: Any) -> Shed:
        """Add a shed to server ``server`` (created if missing)."""
        host = self.hosts.get(server) or self.add_host(server)
        shed = Shed(name=name, server=server, **fields)
        host.sheds[name] = shed
        return shed

    def make_host_unreachable(
        self,
        server: str,
        *,
        kind: str = "other",
        summary: str = "can't reach the shed server",
        detail: str = "connection refused",
    ) -> None:
        """Mark a server unreachable with a ``host_errors`` entry.

        ``kind`` is ``agent_upgrade_required`` or ``other``; ``detail`` is kept verbatim.

        Raises:
            ValueError: ``kind`` is neither of the two.

        """
        if kind not in HOST_FAILURE_KINDS:
            raise ValueError(f"kind must be one of {', '.join(HOST_FAILURE_KINDS)}, got {kind!r}")
        host = self.hosts.get(server) or self.add_host(server)
        host.reachable = False
        host.last_error = detail
        host.failure = {"server": server, "kind": kind, "summary": summary, "detail": detail}

    def make_host_reachable(self, server: str) -> None:
        """Clear a server's failure."""
        host = self.hosts[server]
        host.reachable, host.last_error, host.failure = True, None, None

    def add_machine(self, name: str, **fields: Any) -> Machine:
        """Add a configured machine; ``fields`` set :class:`Machine` attributes."""
        machine = Machine(name=name, **fields)
        self.machines[name] = machine
        return machine

    def make_machine_unreachable(
        self, name: str, detail: str, down_kind: str | None = None
    ) -> None:
        """Mark a machine unreachable; ``detail`` and ``down_kind`` are reported verbatim."""
        machine = self.machines[name]
        machine.reachable, machine.detail, machine.down_kind = False, detail, down_kind

    def answer_machine(self, name: str = "localhost") -> Machine:
        """Make a roost session answer on machine ``name``: listed for good, reachable, seen.

        ``consume``'s snapshot arm (roost_hosts.rs:3470-3476@9668981); the implicit
        ``localhost`` is no status row before it.
        """
        machine = self.machines[name]
        machine.listed = machine.reachable = machine.connected_once = True
        machine.detail = machine.down_kind = None
        return machine

    def make_shed_host_unreachable(
        self, origin: str, detail: str, down_kind: str | None = None
    ) -> None:
        """Mark a listed shed host (``roost:<server>/<shed>``) down; its rows stay.

        ``consume``'s ``Down`` arm (roost_hosts.rs:3483-3489@9668981): ``seen`` is kept;
        an inject answers again (1733-1737).

        Raises:
            ValueError: nothing answered on ``origin``, so no watcher reports it.

        """
        if origin not in self.shed_hosts:
            raise ValueError(f"{origin} is no listed shed host: nothing answered there")
        self.shed_hosts[origin] = (detail, down_kind)

    def machine_listed(self, machine: Machine) -> bool:
        """Whether ``machine`` has a status row; a live craze hub lists it for good.

        A craze ``Ready`` is an answer (``HostCrazeSink::fold``, roost_hosts.rs:2889-2893
        @9668981); ``listed`` never flips back (``HostState::listed``, 466-480).
        """
        if craze_status(machine.craze)["state"] == "live":
            machine.listed = True
        return machine.listed

    def add_roost_session(
        self, origin: str, slug: str, kind: str = "claude-rc", **fields: Any
    ) -> Session:
        """Add a roost row under ``origin`` (``machine:<n>`` or ``roost:<s>/<shed>``).

        ``kind`` is the row's ``RcKind`` as the app lists it: shed-core's
        ``RoostSession::agent_kind`` reads roost's ``claude`` owner as ``claude-rc``
        (``crates/shed-core/src/roost/model.rs:239-254@0041e17``, the arm at 244).
        """
        shed = origin.rpartition("/")[2] if origin.startswith("roost:") else ""
        machine = origin.partition(":")[2] if origin.startswith("machine:") else origin
        session = Session(origin=origin, slug=slug, kind=kind, shed=shed, machine=machine, **fields)
        self.add_session(session)
        return session

    def add_session(self, session: Session) -> None:
        """Add a row; its host is listed from now on (``HostState::listed``).

        A row is a snapshot that answered: an unlisted machine answers
        (:meth:`answer_machine`).
        """
        self.sessions.append(session)
        machine = self.machines.get(session.machine) if session.origin_kind == "machine" else None
        if machine is not None and not machine.listed:
            self.answer_machine(machine.name)
        if session.origin.startswith("roost:"):
            self.shed_hosts.setdefault(session.origin, None)

    def end_craze_session(self, host_id: str) -> None:
        """End a craze session: its row leaves the listing (a replay then says ``ended``)."""
        self.sessions = [
            s for s in self.sessions if not (s.source == "craze" and s.slug == host_id)
        ]

    def add_approval(self, approval_id: str, server: str, shed: str, **fields: Any) -> Approval:
        """Add a pending credential approval and post its notification (as a prompt does)."""
        approval = Approval(id=approval_id, server=server, shed=shed, **fields)
        self.approvals[approval_id] = approval
        self.notifications = [n for n in self.notifications if n.get("id") != approval_id]
        self.notifications.append(approval.notification())
        return approval

    def set_dump(self, op: str, value: Any) -> None:
        """Set what a UI-truth op answers, as the frontend would have rendered it.

        For the one-key dumps (``toast.dump`` answers ``{toast}``, likewise
        ``launch.dump``, ``lane.dump``, ``lane_settings.dump``,
        ``craze_create.dump``, ``roost_consent.dump``, ``shed_roost.dump``,
        ``egress.profiles``, ``machines.dump``, ``prefs.dump``) and the
        ``ui.computed_style`` / ``ui.modal`` / ``ui.badges`` reads, ``value``
        is what goes under that key. For ``dashboard.dump``, ``sidebar.dump``
        and ``agents.dump`` it is the whole result. Unset, each answers what
        the model implies (or ``null`` under its key).
        """
        self.dumps[op] = value

    def lose_craze_answers(self, machine: str, count: int, *, applied: bool = True) -> None:
        """Lose the next ``count`` hub answers for ``machine`` (``applied``: the hub acted)."""
        self.craze_faults[machine] = CrazeFault(count=count, applied=applied)

    def refuse_next_craze_create(self, machine: str, code: str, message: str) -> None:
        """Make the hub's next fresh create on ``machine`` a refusal (replayed like any answer)."""
        self.craze_next_refusal[machine] = (code, message)

    # --- inspection helpers --------------------------------------------------

    def lane(self, machine: str, session_id: str) -> Lane:
        """Return the lane ``lane.open`` opened on ``machine`` for ``session_id``.

        Raises:
            KeyError: no such lane is open.

        """
        return self.lanes[f"{craze_host(machine).origin}#{session_id}"]

    def sessions_for(self, origin: str) -> list[Session]:
        """Return the rows under ``origin``."""
        return [s for s in self.sessions if s.origin == origin]

    def next_tab_id(self) -> str:
        """Allocate a roost tab id."""
        self._tab_counter += 1
        return str(self._tab_counter)

    def next_craze_host_id(self) -> str:
        """Allocate a 12-lowercase-hex craze session id."""
        self._craze_counter += 1
        return f"{self._craze_counter:012x}"

    def host_errors(self) -> list[dict[str, str]]:
        """Return the per-host failures, ``[]`` when every host is healthy."""
        return [dict(h.failure) for h in self.hosts.values() if h.failure is not None]

    def listed_sheds(self) -> list[Shed]:
        """Every listable shed, in server order (unreachable servers list none)."""
        return [
            shed for host in self.hosts.values() if host.reachable for shed in host.sheds.values()
        ]


def default_broker() -> dict[str, Any]:
    """Return the stand-in's broker: pref ``auto`` resolved with no host-agent daemon.

    ``auto`` with no daemon socket live launches the embedded broker on a
    synthesized config (charliek/shed desktop/tauri/src-tauri/src/broker.rs@51bd544,
    ``BrokerRuntime`` 72-92, ``BrokerRuntime::status`` 154-185).
    """
    return {
        "launch_pref": "auto",
        "effective": "embedded",
        "probe": {"desktop_socket_live": False, "status_socket_live": False},
        "config_source": "synthesized",
        "resolved_ssh_mode": None,
        "gate_namespaces": ["ssh-agent", "aws-credentials", "docker-credentials"],
        "servers": [],
        "error": None,
    }
