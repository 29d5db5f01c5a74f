"""The ``health`` answer's fast path: the owner's remembered document, encoded once."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from shedproto.agents_host import HealthResult, encode_result
from shedproto.connector import Health
from shedproto.servers.agents_host import SqliteTarget
from shedproto.servers.agents_host.api import _health_result

from .conftest import OWNER

SPACE = "did:key:space"
_READY = (
    b'{"schema":"commonfabric.agent-connector.health","ownerDid":"%s","service":"agents-host",'
    b'"status":"ready","startedAt":"2026-01-01T00:00:00.000Z",'
    b'"updatedAt":"2026-01-01T00:00:01.000Z","target":{"spaceDid":"did:key:space",'
    b'"ownerDid":"%s","cells":{"recentIndex":"r","allIndex":"a","health":"h",'
    b'"commands":"c","receipts":"x"}},"commandProcessing":{"accepting":true,'
    b'"pendingReceiptPublications":0,"failedCommands":0},"sources":[],"activity":[]}'
) % (OWNER.encode(), OWNER.encode())


def health(status: Literal["ready", "degraded", "stopped"] = "ready") -> Health:
    return msgspec.structs.replace(msgspec.json.decode(_READY, type=Health), status=status)


def open_path(path: Path, *, owner: bool) -> SqliteTarget:
    return SqliteTarget.open_path(str(path), owner_did=OWNER, space=SPACE, owner=owner)


def test_the_owner_reads_back_each_health_it_published(tmp_path: Path) -> None:
    target = open_path(tmp_path / "t.sqlite3", owner=True)
    try:
        assert target.read_health() is None
        target.publish_health(health("ready"))
        assert target.read_health() == health("ready")
        target.publish_health(health("degraded"))
        assert target.read_health() == health("degraded")
    finally:
        target.close()


def test_a_new_owner_reads_the_health_a_previous_run_left(tmp_path: Path) -> None:
    first = open_path(tmp_path / "t.sqlite3", owner=True)
    first.publish_health(health("stopped"))
    first.close()
    second = open_path(tmp_path / "t.sqlite3", owner=True)
    try:
        assert second.read_health() == health("stopped")
    finally:
        second.close()


def test_a_reader_that_is_not_the_owner_sees_every_new_health(tmp_path: Path) -> None:
    writer = open_path(tmp_path / "t.sqlite3", owner=True)
    reader = open_path(tmp_path / "t.sqlite3", owner=False)
    try:
        writer.publish_health(health("ready"))
        assert reader.read_health() == health("ready")
        writer.publish_health(health("degraded"))
        assert reader.read_health() == health("degraded")
    finally:
        reader.close()
        writer.close()


def test_the_health_answer_is_the_structs_bytes_and_follows_a_new_document() -> None:
    ready, degraded = health("ready"), health("degraded")
    for request_id, value in ((1, ready), (2, ready), (3, degraded), (4, None)):
        assert encode_result(request_id, _health_result(value)) == encode_result(
            request_id, HealthResult(health=value)
        )
