"""Approval, activity, policy and notification ops."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    DesktopError,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase, serde_unknown_variant

__all__ = ["ApprovalOps"]


class ApprovalOps(AppBase):
    """Approval, activity, policy and notification ops."""

    def op_approvals_list(self, p: Any, raw: Any) -> Any:
        return o.ApprovalsList(approvals=[a.row() for a in self.model.approvals.values()])

    def op_approval_decide(self, p: o.ApprovalDecideParams, raw: Any) -> Any:
        self._variant("decision", p.decision, ("approve", "deny"))
        if p.scope is not None:
            self._variant("scope", p.scope, ("per-request", "per-session", "per-shed"))
        approval = self.model.approvals.pop(p.id, None)
        if approval is None:
            if not self.is_mac:  # the coordinator drops an unknown id: ok, nothing done
                return o.Empty()  # (shed-app coordinator.rs:528-532@5a762e8)
            raise DesktopError(self.dialect.not_found, f"no pending approval {p.id}")
        decision = {
            "id": p.id,
            "decision": p.decision,
            "scope": p.scope or "per-request",
            "ttl": p.ttl,
            "persist": p.persist,
        }
        self.model.decisions.append(decision)
        self.model.activity.append({"kind": "approval", **decision})
        if p.persist:
            action = "always-allow" if p.decision == "approve" else "always-deny"
            self.model.policy_rules = [
                r
                for r in self.model.policy_rules
                if (r["server"], r["shed"]) != (approval.server, approval.shed)
            ]
            self.model.policy_rules.append(
                {"server": approval.server, "shed": approval.shed, "action": action}
            )
        return o.Empty()

    def op_activity_list(self, p: o.ActivityListParams, raw: Any) -> Any:
        limit = 200 if p.limit is None else max(p.limit, 0)
        if not self.is_mac and p.limit is not None and p.limit < 0:
            limit = 200  # as_u64 reads a negative limit as absent (ipc.rs:639@5a762e8)
        return o.ActivityEntries(entries=self.model.activity[-limit:] if limit else [])

    def op_activity_log_path(self, p: Any, raw: Any) -> Any:
        return o.LogPath(path=self.model.ui.get("audit_path", "/tmp/shed-desktop/audit.jsonl"))

    def op_policy_list(self, p: Any, raw: Any) -> Any:
        return o.PolicyList(rules=[o.PolicyRule(**r) for r in self.model.policy_rules])

    def op_policy_set(self, p: o.PolicySetParams, raw: Any) -> Any:
        rules = []
        for rule in p.rules:
            if not all(isinstance(rule.get(k), str) for k in ("server", "shed", "action")):
                raise self._bad("each rule needs string server, shed and action")
            rules.append({"server": rule["server"], "shed": rule["shed"], "action": rule["action"]})
        self.model.policy_rules = rules
        return o.Empty()

    def op_notifications_list(self, p: Any, raw: Any) -> Any:
        return o.NotificationsList(notifications=list(self.model.notifications))

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
        return o.Empty()

    def op_notification_invoke(self, p: o.NotificationInvokeParams, raw: Any) -> Any:
        if p.action not in ("approve", "deny"):
            if self.is_mac:
                raise self._bad(f"action: {p.action} is not one of approve, deny")
            variant = serde_unknown_variant(p.action, ("approve", "deny"))
            raise DesktopError(BAD, f"action: {variant}")
        self._test_presenter("notification.invoke")  # after the params decode, as on mac
        for note in self.model.notifications:
            if note.get("id") == p.id:
                self.model.notifications.remove(note)
                return o.Empty()
        raise DesktopError(self.dialect.not_found, f"no posted notification {p.id}")
