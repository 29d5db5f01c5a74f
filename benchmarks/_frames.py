"""The benchmark frame: a 300-byte approval request, as in shared/specs/perf-baseline.md."""

from __future__ import annotations

from shedproto import LenientFrame, encode_line


class Client(LenientFrame, frozen=True):
    pid: int
    exe: str


class ApprovalRequest(LenientFrame, frozen=True, tag_field="type", tag="approval_request"):
    v: int
    id: str
    kind: str
    namespace: str
    summary: str
    detail: str
    requested_at: str
    expires_at: str
    timeout_ms: int
    client: Client


class Ping(LenientFrame, frozen=True, tag_field="type", tag="ping"):
    v: int
    seq: int


BenchFrame = ApprovalRequest | Ping


def sample_frame(seq: int) -> ApprovalRequest:
    """Return a ~300-byte frame whose id varies with ``seq``."""
    return ApprovalRequest(
        v=2,
        id=f"req-{seq:012d}",
        kind="bus.sign",
        namespace="github.com/example/repo",
        summary="sign a commit on branch main for the example repository",
        detail="commit 0123456789abcdef0123456789abcdef01234567",
        requested_at="2026-11-29T12:00:00Z",
        expires_at="2026-11-29T12:01:00Z",
        timeout_ms=60000,
        client=Client(pid=4242, exe="/usr/local/bin/shed"),
    )


def ndjson_stream(total_bytes: int) -> bytes:
    """Return at least ``total_bytes`` of NDJSON made of sample frames."""
    line = encode_line(sample_frame(0))
    count = total_bytes // len(line) + 1
    return b"".join(encode_line(sample_frame(i)) for i in range(count))


__all__ = ["ApprovalRequest", "BenchFrame", "Client", "Ping", "ndjson_stream", "sample_frame"]
