"""shed-desktop v0.0.14's ``rc.*``: the ``RcSession`` table, in test mode as both apps run it.

v0.0.14 kept its own RC session table (``host/shed/slug`` keys, kinds
``claude-rc``/``claude-broker``/``shell``) where the newer Tauri app lists roost
sessions; the newer mac app keeps the table, with an open ``RcKind`` (``codex``,
``opencode``, ``cursor`` and any other string; charliek/shed
``desktop/Sources/ShedKit/RC/RemoteControl.swift:19-111@1545191``) and the same test-mode
synthesis (``desktop/Sources/ShedDesktopApp/AppModel.swift:1008-1063@5339dc4`` ``rcLaunch``).
Under test mode both apps synthesize a ready, managed session instead of running
``shed-ext-rc`` over SSH (shed-app ``rc.rs:195-243``,
``Sources/ShedDesktopApp/AppModel.swift:998-1030@5a762e8``); the stand-in always
takes that path.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from shedproto.desktop import (
    RC_KINDS,
    RC_STATES,
    DesktopCode,
    DesktopError,
    is_safe_rc_value,
    normalize_rc_prompt,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase

__all__ = ["Rc14Ops"]

SLUG_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
"""The confusable-free slug alphabet (shed-app ``rc.rs:396-404@5a762e8``)."""
DEFAULT_WORKDIR = "/workspace"
_TOOL = "shed-desktop"
"""``created_by``: ``<TOOL_NAME>/<version>`` (shed-core ``rc.rs:21``, ``lib.rs:561``;
mac ``AppModel.swift:1014@5339dc4``, the bundle's version)."""


def _given(value: str | None, default: str) -> str:
    """``value`` unless absent: an empty string is kept, as ``??`` / ``unwrap_or_else`` keep it."""
    return default if value is None else value


def _synthetic_url(kind: str, slug: str) -> str | None:
    if kind == "claude-broker":
        return f"https://claude.ai/code?environment=env_{slug}"
    if kind == "claude-rc":
        return f"https://claude.ai/code/session_{slug}"
    return None


class Rc14Ops(AppBase):
    """v0.0.14 ``rc.list``, ``rc.launch``, ``rc.kill``, ``rc.inject_test``: the RcSession table."""

    def _rc14_param_error(self, message: str) -> DesktopError:
        # a validation error is invalid-param in both apps; Tauri prints RcError's
        # Display (`invalid rc request: ...`, rc.rs:82, ipc.rs:71-79), mac the bare
        # reason (AppModel.swift:1007-1014@5a762e8)
        prefix = "" if self.is_mac else "invalid rc request: "
        return DesktopError(DesktopCode.INVALID_PARAM, prefix + message)

    def _rc14_kind(self, value: Any, *, default: str | None) -> str:
        """Read ``kind`` (``default`` when absent).

        mac: the params decode has checked it (v0.0.14's closed ``RcKind``, the newer
        open one). Tauri: an ``RcKind``, else ``bad_request``.
        """
        if value is None and default is not None:
            return default
        if isinstance(value, str) and (self.is_mac or value in RC_KINDS):
            return value
        raise DesktopError(BAD, "missing or invalid 'kind'")

    def _rc14_now(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.model.wall_clock()))

    def _rc14_list(self, host: str | None, shed: str | None) -> o.RcSessionList:
        rows = [
            s
            for key, s in sorted(self.model.rc_sessions.items())
            if (host is None or s.host == host) and (shed is None or s.shed == shed)
        ]
        return o.RcSessionList(sessions=rows)

    def _rc14_launch(self, raw: Any) -> o.RcSession:
        params = raw if isinstance(raw, dict) else {}
        shed = params.get("shed")
        if not isinstance(shed, str):  # mac's decoder refused it already
            raise DesktopError(BAD, "missing 'shed'")
        kind = self._rc14_kind(params.get("kind"), default="claude-rc" if self.is_mac else None)
        host = params.get("host")
        server = self._server(host if isinstance(host, str) else None, tauri_code=BAD)

        def opt(key: str) -> str | None:
            value = params.get(key)
            return value if isinstance(value, str) else None

        slug = "".join(SLUG_ALPHABET[b % len(SLUG_ALPHABET)] for b in self.model.entropy(6))
        # only an absent name or workdir is defaulted: "" is kept (Swift `??`, Rust
        # `unwrap_or_else`; AppModel.swift:1008-1063@5339dc4, shed-app rc.rs:206,228@5a762e8)
        name = _given(opt("display_name"), f"{shed}/{slug}")
        workdir = opt("workdir")
        swift = self.is_mac  # mac also refuses Unicode format (Cf) characters
        if not is_safe_rc_value(name, swift=swift) or (
            workdir is not None and not is_safe_rc_value(workdir, swift=swift)
        ):
            raise self._rc14_param_error(
                "display name and workdir must not contain newlines or control characters"
            )
        self._rc14_prompt(opt("initial_prompt"), kind)
        session = o.RcSession(
            host=server,
            shed=shed,
            slug=slug,
            tmux_session=f"rc-{slug}",
            display_name=name,
            workdir=_given(workdir, DEFAULT_WORKDIR),
            kind=kind,
            state="ready",
            url=_synthetic_url(kind, slug),
            rc_id=str(uuid.UUID(bytes=self.model.entropy(16), version=4)),
            created_by=f"{_TOOL}/{self.app_version}",
            created_at=self._rc14_now(),
            target_label=f"shed:{shed}@{server}",
            managed=True,
        )
        self.model.rc_sessions[f"{server}/{shed}/{slug}"] = session
        return session

    def _rc14_prompt(self, raw: str | None, kind: str) -> None:
        try:
            normalize_rc_prompt(raw, kind, swift=self.is_mac)
        except ValueError as exc:
            raise self._rc14_param_error(str(exc)) from None

    def _rc14_kill(self, host: str | None, shed: str, slug: str) -> o.Empty:
        server = self._server(host, tauri_code=BAD)
        self.model.rc_sessions.pop(f"{server}/{shed}/{slug}", None)  # idempotent
        return o.Empty()

    def _rc14_inject(self, raw: Any) -> o.Empty:
        params = raw if isinstance(raw, dict) else {}
        shed, slug = params.get("shed"), params.get("slug")
        if not isinstance(shed, str):
            raise DesktopError(BAD, "missing 'shed'")
        if not isinstance(slug, str):
            raise DesktopError(BAD, "missing 'slug'")

        def opt(key: str) -> str | None:
            value = params.get(key)
            return value if isinstance(value, str) else None

        host = opt("host")
        if host is None:  # Tauri: the default server; mac: "" (AppModel.swift:263)
            host = "" if self.is_mac else self._server(None, tauri_code=BAD)
        managed = params.get("managed") is True
        kind, state = params.get("kind"), params.get("state")
        if self.is_mac:
            # the decode checked kind (closed in v0.0.14, open in the newer app) and
            # state (an RcState); test mode is checked after it (AppModel.swift:1074-1077)
            if not self.test_mode:
                raise DesktopError(self.dialect.not_enabled, "rc.inject_test requires test mode")
            kind = "claude-rc" if kind is None else kind
            state = "ready" if state is None else state
        else:
            # Tauri reads kind/state leniently: an unknown value is the default (ipc.rs:564-571)
            kind = kind if kind in RC_KINDS else "claude-rc"
            state = state if state in RC_STATES else "ready"
        session = o.RcSession(
            host=host,
            shed=shed,
            slug=slug,
            tmux_session=f"rc-{slug}",
            display_name=_given(opt("display_name"), slug if managed else f"{shed}/{slug}"),
            workdir=_given(opt("workdir"), DEFAULT_WORKDIR),
            kind=kind,
            state=state,
            url=opt("url"),
            rc_id=opt("rc_id"),
            created_by=opt("created_by"),
            created_at=opt("created_at"),
            target_label=opt("target_label"),
            managed=managed,
        )
        self.model.rc_sessions[f"{host}/{shed}/{slug}"] = session
        return o.Empty()
