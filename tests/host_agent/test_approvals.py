from __future__ import annotations

import json

import pytest

from shedproto import LocalProtocolError
from shedproto.host_agent import (
    ApprovalRegistry,
    ApprovalRequest,
    ApprovalResponse,
    AuditRecord,
    Decision,
    EventRing,
    Outcome,
    PendingApproval,
    decide_by_policy,
    denial_audit,
    encode_audit_line,
    encode_frame,
    format_timestamp,
)
from tests.conftest import requires_shared

from ._shared import golden, mask

WALL = 1_780_000_000.7  # 2026-05-28T...


def open_one(reg: ApprovalRegistry, rid: str = "r1", now: float = 0.0) -> PendingApproval:
    result = reg.open(
        request_id=rid,
        namespace="ssh-agent",
        op="sign",
        shed="web",
        detail="SSH sign request",
        now=now,
        wall=WALL,
    )
    assert isinstance(result, PendingApproval)
    return result


def test_no_consumer_denies_at_once_without_decided_by() -> None:
    reg = ApprovalRegistry()
    result = reg.open(
        request_id="r", namespace="ssh-agent", op="sign", shed="web", detail="d", now=0, wall=WALL
    )
    assert result == Decision(
        approved=False, outcome=Outcome.NO_CONSUMER, policy="shed-desktop", request_id="r"
    )
    assert reg.pending == 0


def test_request_frame_and_binding() -> None:
    reg = ApprovalRegistry(timeout=25)
    reg.promote("A")
    pending = open_one(reg, now=3.0)
    assert pending.connection == "A"
    assert pending.deadline == 28.0
    assert pending.frame == ApprovalRequest(
        id="r1",
        ts="2026-05-28T20:26:40Z",
        namespace="ssh-agent",
        op="sign",
        shed="web",
        detail="SSH sign request",
        expires_at="2026-05-28T20:27:05Z",
    )
    assert reg.request_timeout_ms == 25000
    with pytest.raises(LocalProtocolError):
        open_one(reg)  # same id twice


@pytest.mark.parametrize(
    ("decision", "decided_by", "approved", "who"),
    [
        ("approve", "", True, "user"),
        ("approve", "touchid", True, "touchid"),
        ("deny", "", False, "user"),
        ("Approve", "", False, "user"),  # exactly "approve" approves
        ("", "timeout", False, "timeout"),
        ("yes", "policy", False, "policy"),
    ],
)
def test_resolve(decision: str, decided_by: str, approved: bool, who: str) -> None:
    reg = ApprovalRegistry()
    reg.promote("A")
    open_one(reg)
    response = ApprovalResponse(
        request_id="r1", decision=decision, decided_by=decided_by, scope="per-session", ttl="1h"
    )
    result = reg.resolve("A", response)
    assert result is not None
    assert result.approved is approved
    assert result.decided_by == who
    assert (result.scope, result.ttl) == ("per-session", "1h")
    assert reg.resolve("A", response) is None  # duplicate: ignored


def test_foreign_unknown_and_late_responses_are_ignored() -> None:
    reg = ApprovalRegistry(timeout=1)
    reg.promote("A")
    open_one(reg)
    approve = ApprovalResponse(request_id="r1", decision="approve")
    assert reg.resolve("B", approve) is None  # foreign
    assert reg.resolve("A", ApprovalResponse(request_id="zz", decision="approve")) is None
    assert reg.pending == 1
    (timed_out,) = reg.expire(5.0)
    assert timed_out == Decision(
        approved=False, outcome=Outcome.TIMEOUT, policy="shed-desktop", request_id="r1"
    )
    assert reg.resolve("A", approve) is None  # late


def test_expire_only_due() -> None:
    reg = ApprovalRegistry(timeout=10)
    reg.promote("A")
    open_one(reg, "r1", now=0)
    open_one(reg, "r2", now=5)
    assert reg.next_deadline() == 10
    assert reg.expire(9.99) == ()
    assert [d.request_id for d in reg.expire(10)] == ["r1"]
    assert reg.next_deadline() == 15
    assert reg.cancel("r2") is True
    assert reg.cancel("r2") is False
    assert reg.next_deadline() is None


def test_disconnect_fails_closed_with_user() -> None:
    reg = ApprovalRegistry()
    reg.promote("A")
    open_one(reg, "r1")
    open_one(reg, "r2")
    failed = reg.demote("A")
    assert [(d.request_id, d.outcome, d.decided_by, d.approved) for d in failed] == [
        ("r1", Outcome.DISCONNECTED, "user", False),
        ("r2", Outcome.DISCONNECTED, "user", False),
    ]
    assert reg.consumer is None
    assert reg.demote("A") == ()


def test_supersede_fails_the_old_consumers_requests() -> None:
    reg = ApprovalRegistry()
    assert reg.promote("A").superseded is None
    open_one(reg, "r1")
    promotion = reg.promote("B")
    assert promotion.superseded == "A"
    assert [(d.request_id, d.outcome, d.decided_by) for d in promotion.failed] == [
        ("r1", Outcome.SUPERSEDED, "user")
    ]
    # the new consumer cannot resolve the old request, and A's late demote changes nothing
    assert reg.resolve("B", ApprovalResponse(request_id="r1", decision="approve")) is None
    assert reg.demote("A") == ()
    assert reg.consumer == "B"
    assert reg.promote("B").superseded is None


def test_demote_of_a_non_consumer_keeps_the_consumer() -> None:
    reg = ApprovalRegistry()
    reg.promote("A")
    reg.demote("X")
    assert reg.consumer == "A"


def test_invalid_timeout() -> None:
    with pytest.raises(LocalProtocolError):
        ApprovalRegistry(timeout=0)


@pytest.mark.parametrize(
    ("policy", "approved"),
    [("approve-all", True), ("deny-all", False), ("", False), ("biometrics", False)],
)
def test_policy_gate(policy: str, approved: bool) -> None:
    decision = decide_by_policy(policy)
    assert decision is not None
    assert decision.approved is approved
    assert decision.decided_by is None
    assert decision.policy == (policy or "deny-all")


def test_shed_desktop_asks_the_consumer() -> None:
    assert decide_by_policy("shed-desktop") is None


def test_ring_keeps_the_last_100_and_replays_byte_identical() -> None:
    ring = EventRing()
    frames = [b'{"v":2,"type":"event","id":"%d"}\n' % i for i in range(150)]
    for frame in frames:
        ring.append(frame)
    assert len(ring) == 100
    assert ring.replay(10) == frames[-10:]
    assert ring.replay(1000) == frames[-100:]
    assert ring.replay(0) == []
    assert ring.replay(-5) == []
    assert ring.replay(3) == frames[-3:]  # replay does not drain
    assert all(a is b for a, b in zip(ring.replay(2), frames[-2:], strict=True))
    with pytest.raises(LocalProtocolError):
        EventRing(0)


def test_audit_line_vs_event_omit_rules() -> None:
    record = AuditRecord(ts="t", ns="egress", op="tcp", result="allow", detail="h:443 (1.1.1.1)")
    assert encode_audit_line(record) == (
        b'{"ts":"t","shed":"","ns":"egress","op":"tcp","result":"allow",'
        b'"detail":"h:443 (1.1.1.1)","approval":""}\n'
    )
    assert encode_frame(record.to_event("e")) == (
        b'{"v":2,"type":"event","id":"e","ts":"t","kind":"audit","ns":"egress","op":"tcp",'
        b'"result":"allow","detail":"h:443 (1.1.1.1)"}\n'
    )


@pytest.mark.parametrize(
    ("ns", "code"), [("ssh-agent", ""), ("docker-credentials", "APPROVAL_DENIED")]
)
def test_denial_audit(ns: str, code: str) -> None:
    decision = Decision(approved=False, outcome=Outcome.NO_CONSUMER, policy="shed-desktop")
    record = denial_audit(decision, ts="t", namespace=ns, op="get", shed="web")
    assert record.code == code
    assert record.decided_by == ""
    assert record.result == "denied"


@requires_shared
@pytest.mark.parametrize(
    ("name", "outcome", "decided_by"),
    [
        ("test_bus_sign_gated__test_bus_sign_gated_deny.json", Outcome.DENIED, "user"),
        (
            "test_bus_sign_gated__test_bus_sign_no_consumer_fails_closed.json",
            Outcome.NO_CONSUMER,
            None,
        ),
    ],
)
def test_denial_audit_matches_goldens(name: str, outcome: Outcome, decided_by: str | None) -> None:
    expected = golden(name)
    decision = Decision(
        approved=False, outcome=outcome, policy="shed-desktop", decided_by=decided_by
    )
    record = denial_audit(
        decision, ts="2026-01-01T00:00:00Z", namespace="ssh-agent", op="sign", shed="web"
    )
    assert mask(json.loads(encode_audit_line(record)), "ts") == expected["audit"]
    if "event" in expected:
        event = json.loads(encode_frame(record.to_event("e")))
        assert mask(event, "id", "ts") == expected["event"]


@pytest.mark.parametrize(
    "record",
    [
        AuditRecord(
            ts="2026-07-10T00:00:00Z",
            shed="web",
            ns="ssh-agent",
            op="sign",
            result="ok",
            approval="shed-desktop",
            decided_by="user",
        ),
        AuditRecord(
            ts="t",
            server="prod",
            shed="web",
            ns="aws-credentials",
            op="get",
            result="denied",
            detail='x"y\\z\n\u00e9/<',
            code="C",
            reason="r",
            approval="deny-all",
            decided_by="d",
            scope="s",
            ttl="1h",
        ),
        AuditRecord(ts="t", ns="egress", op="tcp", result="allow"),  # empty shed/approval
        AuditRecord(ts="", shed="w", ns="n", op="o", result="", approval="a"),
        AuditRecord(ts='q"uote', shed="w", ns="n", op="o", result="r", approval="a"),
        AuditRecord(ts="back\\slash", shed="w", ns="n", op="o", result="r", approval="a"),
        AuditRecord(ts="tab\there", shed="w", ns="n", op="o", result="r", approval="a"),
        AuditRecord(ts="del\x7f", shed="w", ns="n", op="o", result="r", approval="a"),
        AuditRecord(ts="caf\u00e9", shed="w", ns="n", op="o", result="r", approval="a"),
    ],
)
@pytest.mark.parametrize("event_id", ["6f1c2d4e-8a9b-4c3d-9e2f-0a1b2c3d4e5f", "", 'a"b', "\u2028"])
def test_event_line_is_the_encoded_event(record: AuditRecord, event_id: str) -> None:
    assert record.event_line(event_id) == encode_frame(record.to_event(event_id))


def test_event_line_every_printable_ascii_character() -> None:
    for code in range(32, 127):
        text = f"a{chr(code)}b"
        record = AuditRecord(ts=text, shed="w", ns="n", op="o", result="r", approval="a")
        assert record.event_line(text) == encode_frame(record.to_event(text)), repr(text)


def test_event_line_ts_cache_follows_each_records_ts() -> None:
    # event_line keeps the last ts's encoded part: a record with another ts must not reuse it
    records = [
        AuditRecord(ts=ts, shed="w", ns="n", op="o", result="r", approval="a")
        for ts in ("2026-07-10T00:00:00Z", "2026-07-10T00:00:01Z", "", "2026-07-10T00:00:00Z", 'q"')
    ]
    for record in records + records[::-1]:
        assert record.event_line("i") == encode_frame(record.to_event("i")), record.ts


def test_pending_approval_keeps_its_value_api_as_a_struct() -> None:
    # PendingApproval became a msgspec Struct for speed: positional, immutable, by value
    reg = ApprovalRegistry(timeout=25.0)
    reg.promote("c1")
    pending = open_one(reg, now=2.0)
    same = PendingApproval(pending.request_id, "c1", pending.frame, 27.0)
    assert (pending.request_id, pending.connection, pending.deadline) == ("r1", "c1", 27.0)
    assert pending == same
    assert hash(pending) == hash(same)
    assert pending != PendingApproval("r2", "c1", pending.frame, 27.0)
    with pytest.raises(AttributeError):
        pending.deadline = 1.0  # type: ignore[misc]


def test_open_reuses_timestamps_only_within_one_second_and_timeout() -> None:
    # open() keeps ts/expires_at for the second it last stamped: each frame must still be exact
    reg = ApprovalRegistry(timeout=25.0)
    reg.promote("c1")
    walls = [WALL, WALL + 0.2, WALL + 0.3, WALL + 1.0, WALL, -0.5, 0.3, -0.5, 0.0]
    for index, wall in enumerate(walls):
        if index == 2:
            reg.timeout = 7.5  # same second, new timeout: expires_at changes
        opened = reg.open(
            request_id=f"r{index}", namespace="ssh-agent", op="sign", shed="w", detail="d",
            now=0.0, wall=wall,
        )  # fmt: skip
        assert isinstance(opened, PendingApproval)
        expected = (format_timestamp(wall), format_timestamp(int(wall) + reg.timeout))
        assert (opened.frame.ts, opened.frame.expires_at) == expected, wall
    with pytest.raises(ValueError, match="finite"):
        reg.open(
            request_id="nan", namespace="ssh-agent", op="sign", shed="w", detail="d",
            now=0.0, wall=float("nan"),
        )  # fmt: skip
