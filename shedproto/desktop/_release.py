"""Which release of the apps a server answers like: shed-desktop v0.0.14, or the newer app.

The newer Tauri app (charliek/shed ``desktop/tauri``) added ops and fields
to what shed-desktop v0.0.14 shipped; :data:`Release.LATEST` (the default
everywhere) answers like the newer app, :data:`Release.V0_0_14` like the
tag. The op sets of v0.0.14 are read off its dispatch tables
(charliek/shed-desktop ``tauri/src-tauri/src/ipc.rs:188-266@5a762e8`` and
``Sources/ShedDesktopApp/IPCHandlerImpl.swift:26-166@5a762e8``); an op
outside them answers ``unknown_op`` / ``unknown-op`` under that release,
before its params are read, as the real match/switch does. The per-op field
differences are in ``docs/protocols/desktop.md`` (the release table).
"""

from __future__ import annotations

from enum import Enum

from ._dialect import Dialect

__all__ = ["REMOVED_OPS", "V0_0_14_OPS", "Release", "release_has_op"]


class Release(str, Enum):
    """The app release a server answers like."""

    V0_0_14 = "0.0.14"
    """charliek/shed-desktop tag v0.0.14 (commit 5a762e8), mac and Tauri."""
    LATEST = "latest"
    """The newer app: charliek/shed ``desktop/`` (the Tauri app carries every newer op)."""


V0_0_14_OPS: dict[Dialect, frozenset[str]] = {
    Dialect.MAC: frozenset(
        {
            "identify",
            "app.screenshot",
            "app.window_metrics",
            "ui.window_state",
            "ui.state",
            "ui.navigate",
            "ui.set_ssh_approval",
            "ui.show_window",
            "ui.hide_window",
            "ui.show_create",
            "ui.show_launch",
            "ui.open_preferences",
            "ui.open_menu",
            "host.list",
            "sheds.list",
            "sheds.refresh",
            "system.df",
            "images.list",
            "shed.start",
            "shed.stop",
            "shed.reset",
            "shed.delete",
            "create.start",
            "create.status",
            "create.cancel",
            "terminal.preview",
            "terminal.open",
            "rc.classify",
            "rc.list",
            "rc.launch",
            "rc.kill",
            "rc.inject_test",
            "approvals.list",
            "approval.decide",
            "activity.list",
            "activity.log_path",
            "policy.set",
            "policy.list",
            "notifications.list",
            "notification.invoke",
            "notification.open",
        }
    ),
    Dialect.TAURI: frozenset(
        {
            "identify",
            "ui.navigate",
            "ui.current_pane",
            "ui.computed_style",
            "ui.modal",
            "ui.show_window",
            "app.activate",
            "ui.show_preferences",
            "ui.show_create",
            "app.screenshot",
            "sheds.list",
            "sheds.refresh",
            "dashboard.dump",
            "shed.start",
            "shed.stop",
            "shed.reset",
            "shed.delete",
            "create.start",
            "create.status",
            "create.cancel",
            "system.df",
            "terminal.preview",
            "terminal.open",
            "terminal.presets",
            "rc.classify",
            "rc.list",
            "rc.launch",
            "rc.kill",
            "rc.inject_test",
            "agents.dump",
            "prefs.get",
            "prefs.set_terminal",
            "approvals.list",
            "approval.decide",
            "activity.list",
            "activity.log_path",
            "policy.set",
            "policy.list",
            "notifications.list",
            "notification.invoke",
            "notification.open",
            "ui.set_ssh_approval",
            "ui.ssh_prefs",
            "loginitem.status",
            "loginitem.set",
            "tray.show",
            "tray.toggle",
            "tray.hide",
            "tray.dump",
        }
    ),
}
"""The catalogue ops each v0.0.14 app dispatches."""

REMOVED_OPS: frozenset[str] = frozenset({"rc.classify"})
"""Catalogue ops v0.0.14 had and the newer app dropped: ``unknown_op`` under :data:`Release.LATEST`.

``rc.classify`` (``tauri/src-tauri/src/ipc.rs:226@5a762e8``,
``Sources/ShedDesktopApp/IPCHandlerImpl.swift:112@5a762e8``) left with the RC
session model when the newer app moved sessions to roost.
"""


def release_has_op(release: Release, dialect: Dialect, op: str) -> bool:
    """Whether ``op`` (already known to be in ``dialect``'s catalogue) exists in ``release``."""
    if release is Release.LATEST:
        return op not in REMOVED_OPS
    return op in V0_0_14_OPS[dialect]
