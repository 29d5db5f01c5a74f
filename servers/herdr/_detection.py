"""What herdr sees in a pane without hooks: the agent in front and its state on screen.

:class:`ManifestSet` is the set of agent manifests in force: the built-in
rules, each replaced by ``<config_dir>/agent-detection/<label>.toml`` when
that file parses and names the agent (herdr's override rule; a bad file
leaves the built-in rules with herdr's warning). :class:`PaneDetector` is
one pane's detection: on each tick it asks the PTY for its foreground
process group (one ``tcgetpgrp``), reads the job from ``/proc`` only when
the group changed or every 5 s, and re-reads the screen only when the
pane's output changed since the last reading or an idle is being
confirmed, so an idle pane costs one system call a tick and nothing on the
request path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from shedproto.herdr import types as t
from shedproto.herdr._builtin_manifests import BUILTIN_MANIFESTS
from shedproto.herdr._detect import identify_agent_in_job
from shedproto.herdr._detect_state import DetectionTracker
from shedproto.herdr._manifests import (
    LoadedManifest,
    Manifest,
    ManifestState,
    detect,
    load_agent_manifest,
    override_path,
)

from ._model import Pane
from ._procinfo import foreground_job

__all__ = ["PROCESS_RECHECK_SECONDS", "Detected", "ManifestSet", "PaneDetector"]

PROCESS_RECHECK_SECONDS = 5.0
"""How often herdr re-reads a pane's foreground job when its group has not changed."""
_MAX_MANIFEST_BYTES = 1 << 20


class ManifestSet:
    """The agent manifests in force: built-in rules and the user's overrides."""

    def __init__(self, config_dir: str | None) -> None:
        self.config_dir = config_dir
        self.loaded: dict[str, LoadedManifest] = {}
        self.reload()

    def reload(self) -> list[t.AgentManifestInfo]:
        """Re-read every override file and return herdr's report of the new set."""
        loaded = {}
        for agent, bundled in BUILTIN_MANIFESTS.items():
            if self.config_dir is None:
                loaded[agent] = LoadedManifest(agent=agent, manifest=bundled)
                continue
            path = override_path(self.config_dir, agent)
            text, error = _read_text(path)
            loaded[agent] = load_agent_manifest(agent, bundled, path, text, error)
        self.loaded = loaded
        return self.infos()

    def get(self, agent: str) -> Manifest | None:
        """Return the manifest in force for ``agent`` (None: herdr reads no screen for it)."""
        found = self.loaded.get(agent)
        return None if found is None else found.manifest

    def infos(self) -> list[t.AgentManifestInfo]:
        """Return herdr's ``AgentManifestInfo`` for each manifest, in herdr's order."""
        return [
            t.AgentManifestInfo(
                agent=agent,
                source=item.source,
                source_kind=item.source_kind,
                active_version=item.manifest.version,
                local_override_shadowing_remote=False,
                warning=item.warning,
            )
            for agent, item in self.loaded.items()
        ]


def _read_text(path: str) -> tuple[str | None, str | None]:
    try:
        with open(path, "rb") as file:
            data = file.read(_MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if len(data) > _MAX_MANIFEST_BYTES:
        return None, f"file is larger than {_MAX_MANIFEST_BYTES} bytes"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "stream did not contain valid UTF-8"


def _resolve(path: str) -> str | None:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return None


@dataclass
class Detected:
    """One tick's news: the agent now in front (None: none) and its state, if either changed."""

    agent: str | None
    agent_changed: bool
    state: ManifestState | None


@dataclass
class PaneDetector:
    """herdr's detection for one pane; the caller ticks it on its own clock."""

    group: int | None = None
    agent: str | None = None
    probed_at: float | None = None
    screen_seq: int = -1
    tracker: DetectionTracker = field(default_factory=DetectionTracker)

    def tick(self, pane: Pane, manifests: ManifestSet, now: float) -> Detected | None:
        """Look at ``pane`` once; return what changed, or None."""
        if pane.closed or pane.exited:
            if self.agent is None:
                return None
            self.agent = None
            self.tracker.reset()
            return Detected(agent=None, agent_changed=True, state=None)
        agent_changed = self._probe(pane, now)
        if self.agent is None:
            if agent_changed:
                self.tracker.reset()
                return Detected(agent=None, agent_changed=True, state=None)
            return None
        if not (agent_changed or self.tracker.holding or pane.content_revision != self.screen_seq):
            return None
        self.screen_seq = pane.content_revision
        screen = pane.screen.read("detection").text
        reading = detect(manifests.get(self.agent), screen, pane.screen.title or "")
        state = self.tracker.observe(reading, now, agent_changed=agent_changed)
        if state is None and not agent_changed:
            return None
        return Detected(agent=self.agent, agent_changed=agent_changed, state=state)

    def _probe(self, pane: Pane, now: float) -> bool:
        shell_pid = pane.process.pid
        try:
            group: int | None = os.tcgetpgrp(pane.process.master)
        except OSError:
            group = None
        due = self.probed_at is None or now - self.probed_at >= PROCESS_RECHECK_SECONDS
        if group == self.group and not due:
            return False
        self.group, self.probed_at = group, now
        found = None
        if group is not None:
            leader, processes = foreground_job(shell_pid, pane.process.master)
            identified = identify_agent_in_job(leader, processes, _resolve)
            found = None if identified is None else identified[0]
        if found == self.agent:
            return False
        self.agent = found
        if found is None:
            self.tracker.reset()
        return True
