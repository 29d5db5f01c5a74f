"""Approval, activity, policy and notification ops."""

from __future__ import annotations

from typing import Any

import msgspec

from shedproto.desktop import (
    DesktopError,
    audit_log_path,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase, serde_enum_error

__all__ = ["ApprovalOps"]


POLICY_SCOPES = ("default", "namespace", "shed", "session")
POLICY_ACTIONS = ("approve", "deny", "prompt")
POLICY_GATES = ("biometrics", "biometrics-or-password", "none")
"""shed-core's ``PolicyScope``, ``PolicyAction``, ``PolicyGate``.

approval/models.rs:294-299,145-149,154-164@5a762e8.
"""
SSH_DEFAULT_SCOPES = {
    "per-shed-allow": "per-shed",
    "time-based-allow": "per-session",
    "always-ask": "per-request",
}
"""``SshApprovalPolicy::default_scope`` (approval/models.rs:280-289@5a762e8); else per-request."""


class ApprovalOps(AppBase):
    """Approval, activity, policy and notification ops."""

    def op_approvals_list(self, p: Any, raw: Any) -> Any:
        # soonest to expire first, the SSH prefs' scope and TTL on every card
        # (shed-app coordinator.rs:934-947, AppModel.swift:1328-1334@5a762e8)
        ssh = self.model.prefs["ssh"]
        scope = SSH_DEFAULT_SCOPES.get(ssh["policy"], "per-request")
        pending = sorted(self.model.approvals.values(), key=lambda a: a.expires_at)
        return o.ApprovalsList(approvals=[a.row(scope, ssh["ttl"]) for a in pending])

    def op_approval_decide(self, p: o.ApprovalDecideParams, raw: Any) -> Any:
        # mac decoded both as Swift enums already (MacApprovalDecideParams)
        self._variant("decision", p.decision, ("approve", "deny"), "ApprovalDecision")
        if p.scope is not None:
            scopes = ("per-request", "per-session", "per-shed")
            self._variant("scope", p.scope, scopes, "ApprovalScope")
        if not self._decide(p.id, p.decision, p.scope, p.ttl, p.persist):
            if not self.is_mac:  # the coordinator drops an unknown id: ok, nothing done
                return o.Empty()  # (shed-app coordinator.rs:528-532@5a762e8)
            raise DesktopError(self.dialect.not_found, f"no pending approval {p.id}")
        return o.Empty()

    def _decide(
        self, request_id: str, action: str, scope: str | None, ttl: str | None, persist: bool
    ) -> bool:
        """Decide a pending approval as ``approval.decide`` does; ``False`` when none is pending."""
        approval = self.model.approvals.pop(request_id, None)
        if approval is None:
            return False
        # a decided request's banner is withdrawn
        self.model.notifications = [
            n for n in self.model.notifications if n.get("id") != request_id
        ]
        decision = {
            "id": request_id,
            "decision": action,
            "scope": scope or "per-request",
            "ttl": ttl,
            "persist": persist,
        }
        self.model.decisions.append(decision)
        self.model.activity.append({"kind": "approval", **decision})
        if persist:  # a per-shed rule with no gate (coordinator.rs:886-901@5a762e8)
            self.model.policy_rules = [
                r
                for r in self.model.policy_rules
                if (r.get("scope"), r.get("server"), r.get("shed"))
                != ("shed", approval.server, approval.shed)
            ]
            self.model.policy_rules.append(
                {
                    "scope": "shed",
                    "server": approval.server,
                    "shed": approval.shed,
                    "action": action,
                    "gate": "none",
                }
            )
            self._rebuild_policy()
        return True

    def op_activity_list(self, p: o.ActivityListParams, raw: Any) -> Any:
        limit = 200 if p.limit is None else max(p.limit, 0)
        if not self.is_mac and p.limit is not None and p.limit < 0:
            limit = 200  # as_u64 reads a negative limit as absent (ipc.rs:639@5a762e8)
        return o.ActivityEntries(entries=self.model.activity[-limit:] if limit else [])

    def op_activity_log_path(self, p: Any, raw: Any) -> Any:
        # the app's own audit file (set model.ui["audit_path"] to place it); the
        # stand-in has no HOME of its own, so it answers the home-less path
        path = self.model.ui.get("audit_path") or audit_log_path(self.dialect, {})
        return o.LogPath(path=path)

    def op_policy_list(self, p: Any, raw: Any) -> Any:
        # the built-in namespace rules, then the per-shed ones; or what policy.set
        # installed (coordinator.rs:384-396, AppModel.swift:1354-1358@5a762e8)
        return o.PolicyList(rules=[o.PolicyRule(**r) for r in self._policy_rules()])

    def op_policy_set(self, p: Any, raw: Any) -> Any:
        if self.is_mac:  # MacPolicySetParams: each rule decoded as Swift's PolicyRule
            rules = [
                {k: v for k, v in msgspec.structs.asdict(rule).items() if v is not None}
                for rule in p.rules
            ]
        else:
            rules = [self._policy_rule(rule) for rule in p.rules]
        self.model.engine_rules = rules  # replaces every rule, built-ins too
        return o.Empty()

    def _policy_rule(self, rule: dict[str, Any]) -> dict[str, Any]:
        """Read one Tauri ``PolicyRule`` as serde does.

        ``scope`` and ``action`` are required, ``gate`` defaults to
        ``biometrics-or-password`` (shed-core approval/models.rs:143-164@5a762e8).

        Raises:
            DesktopError: ``bad_request`` with serde's wording.

        """
        for key in ("scope", "action"):
            if not isinstance(rule.get(key), str):
                raise DesktopError(BAD, f"missing field `{key}`")
        self._variant("scope", rule["scope"], POLICY_SCOPES, "PolicyScope")
        self._variant("action", rule["action"], POLICY_ACTIONS, "PolicyAction")
        gate = rule.get("gate", "biometrics-or-password")
        self._variant("gate", gate, POLICY_GATES, "PolicyGate")
        kept = {k: rule[k] for k in ("server", "namespace", "shed") if rule.get(k) is not None}
        return {"scope": rule["scope"], **kept, "action": rule["action"], "gate": gate}

    def op_notifications_list(self, p: Any, raw: Any) -> Any:
        # only the test presenter records posts; the native notifiers list none
        # (tauri/src-tauri/src/lib.rs:650-660, ipc.rs:669-673, AppModel.swift:1362-1364@5a762e8)
        notes = list(self.model.notifications) if self.test_mode else []
        return o.NotificationsList(notifications=notes)

    def _test_presenter(self, op: str) -> None:
        """mac: the notification doors drive the test presenter, installed in test mode only.

        Raises:
            DesktopError: ``not-enabled`` ``<op> requires the test presenter`` outside
                test mode (AppModel.swift:1154-1155,1366-1379@5a762e8).

        """
        if self.is_mac and not self.test_mode:
            raise DesktopError(self.dialect.not_enabled, f"{op} requires the test presenter")

    def op_notification_open(self, p: Any, raw: Any) -> Any:
        self._test_presenter("notification.open")
        if self.is_mac:  # the banner body opens the dashboard on Approvals (onOpen,
            self._mac_show_pane("approvals")  # AppModel.swift:1191-1194@5339dc4 startApprovals)
        return o.Empty()

    def op_notification_invoke(self, p: Any, raw: Any) -> Any:
        if not self.is_mac and p.action not in ("approve", "deny"):
            # (mac decoded it as an ApprovalDecision already: NotificationInvokeParams)
            # serde_json::from_value::<ApprovalDecision>(action or null), prefixed "action: "
            # (charliek/shed desktop/tauri/src-tauri/src/ipc.rs:930@2cd01ef, notification_invoke)
            raise DesktopError(BAD, f"action: {serde_enum_error(p.action, ('approve', 'deny'))}")
        self._test_presenter("notification.invoke")  # after the params decode, as on mac
        if not any(note.get("id") == p.id for note in self.model.notifications):
            raise DesktopError(self.dialect.not_found, f"no posted notification {p.id}")
        # the posted note's action decides the approval with the default choice (no scope,
        # ttl or persist), through the same path as approval.decide; deciding withdraws the
        # note (shed-app coordinator.rs:400-422@5a762e8, AppModel.swift:1156-1159@5a762e8)
        self._decide(p.id, p.action, None, None, False)
        return o.Empty()
