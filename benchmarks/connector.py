"""agents-host connector: command decode throughput and durable ledger put throughput.

* **Command decode**: :func:`shedproto.connector.decode_command` on JSON-string
  queue elements against ``json.loads`` plus the same checks written by hand
  (the obvious port). Target: ratio >= 1.0 (at least as fast as the naive port).
* **Ledger put**: :meth:`CommandLedger.put` (validate, encode, temp file,
  fsync, rename, directory fsync) against the bare durable write of the same
  bytes, one caller at a time, on a 50-receipt and on a 1,000-receipt ledger
  (the file is rewritten whole, so its size is what the encoding costs). It
  is bound by ``fsync``; the ratio shows what validation and encoding add on
  top. Target: ratio >= 0.8.
* **Group commit**: 20 threads each putting and marking published their own
  commands (the host's pattern: one thread per session) against the same
  changes made one by one from one thread. Changes that arrive while a write
  is in flight share the next write, so the ratio is the speed-up from group
  commit (1.0 = none). Target: ratio >= 2.0.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import threading
import uuid
from typing import Any

from shedproto.connector import LedgerState, Receipt, decode_command, in_flight_receipt
from shedproto.servers.connector import CommandLedger

from ._harness import Case, timed

_WS = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_CONTROL = re.compile("[\u0000-\u001f\u007f]")
_TYPES = {"prompt", "start", "cancel", "rename", "set-mode", "set-config-option"}


def _hand_required(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip(_WS):
        raise ValueError(f"{field} must be a non-empty string")
    if len(value) > limit:
        raise ValueError(f"{field} exceeds {limit} characters")
    return value.strip(_WS)


def _hand_decode(text: str) -> dict[str, Any]:
    """Decode as the naive port would: json.loads, then the checks one by one."""
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError("command must be an object")
    if raw.get("schema") != "commonfabric.agent-connector.command":
        raise ValueError("unsupported command schema")
    if raw.get("type") not in _TYPES:
        raise ValueError(f"unsupported command type: {raw.get('type')}")
    if not isinstance(raw.get("payload"), dict):
        raise ValueError("command payload must be an object")
    command_id = _hand_required(raw.get("id"), "command id", 256)
    if _CONTROL.search(command_id):
        raise ValueError("commandId must not contain control characters")
    source = _hand_required(raw.get("sourceId"), "sourceId", 256)
    if _CONTROL.search(source):
        raise ValueError("sourceId must not contain control characters")
    native = _hand_required(raw.get("nativeSessionId"), "nativeSessionId", 1024)
    if _CONTROL.search(native):
        raise ValueError("nativeSessionId must not contain control characters")
    return {
        "schema": raw["schema"],
        "ownerDid": _hand_required(raw.get("ownerDid"), "ownerDid", 4096),
        "id": command_id,
        "createdAt": _hand_required(raw.get("createdAt"), "createdAt", 128),
        "sourceId": source.lower(),
        "nativeSessionId": native,
        "type": raw["type"],
        "payload": raw["payload"],
        "force": raw.get("force") is True,
    }


def _commands(count: int) -> list[str]:
    return [
        json.dumps(
            {
                "schema": "commonfabric.agent-connector.command",
                "ownerDid": "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
                "id": f"cmd-{i:06d}",
                "createdAt": "2026-07-20T00:05:00.000Z",
                "sourceId": "codex",
                "nativeSessionId": f"thr_{i % 97:04d}",
                "type": "prompt",
                "payload": {"text": f"run the tests in package {i % 13} and report failures"},
            },
            separators=(",", ":"),
        )
        for i in range(count)
    ]


def _decode_case(quick: bool) -> Case:
    elements = _commands(20_000 if quick else 100_000)

    def baseline() -> None:
        for element in elements:
            _hand_decode(element)

    def candidate() -> None:
        for element in elements:
            decode_command(element)

    return Case(
        name=f"connector: decode_command x{len(elements)} vs json.loads+hand checks",
        baseline=timed(baseline),
        candidate=timed(candidate),
        target=1.0,
        units=len(elements),
        unit="command",
        repeat=3 if quick else 5,
    )


def _private_root() -> str:
    root = tempfile.mkdtemp(prefix="sp-bench-")
    os.chmod(root, 0o700)
    _CLEANUP.append(root)
    return root


def _claims(count: int, prefix: str = "cmd") -> list[Receipt]:
    return [
        in_flight_receipt(
            owner_did="did:key:z6MkOwner",
            command_id=f"{prefix}-{i:04d}",
            source_id="codex",
            native_session_id=f"thr_{i:04d}",
            claimed_at="2026-07-20T00:05:01.000Z",
        )
        for i in range(count)
    ]


def _ledger_case(quick: bool, live: int) -> Case:
    puts = 40 if quick else 200
    root = _private_root()
    receipts = _claims(live)  # the ledger cycles through these, so its size stays steady
    state = LedgerState()
    for receipt in receipts:
        state = state.put(receipt)
    steady_bytes = state.encode()
    raw_path = os.path.join(root, "raw.json")
    ledger = CommandLedger.open(os.path.join(root, "ledger.json"))
    for receipt in receipts:
        ledger.put(receipt)

    def baseline() -> None:
        for _ in range(puts):
            temp = f"{raw_path}.tmp-{os.getpid()}-{uuid.uuid4()}"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, steady_bytes)
            os.fsync(fd)
            os.close(fd)
            os.rename(temp, raw_path)
            dfd = os.open(root, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)

    def candidate() -> None:
        for i in range(puts):
            ledger.put(receipts[i % live])

    return Case(
        name=f"connector: CommandLedger.put x{puts} ({live} receipts) vs bare durable write",
        baseline=timed(baseline),
        candidate=timed(candidate),
        target=0.8,
        units=puts,
        unit="put",
        repeat=3 if quick else 5,
        notes=[f"ledger file {len(steady_bytes)} bytes; fsync-bound; temp dir {root}"],
    )


def _group_commit_case(quick: bool) -> Case:
    threads = 20
    per_thread = 5 if quick else 15
    receipts = _claims(threads * per_thread, "grp")
    batches = [receipts[t::threads] for t in range(threads)]
    root = _private_root()
    ledger = CommandLedger.open(os.path.join(root, "ledger.json"))

    def changes(batch: list[Receipt]) -> None:
        for receipt in batch:
            ledger.put(receipt)
            ledger.mark_published(receipt.commandId)

    def baseline() -> None:
        for batch in batches:
            changes(batch)

    def candidate() -> None:
        workers = [threading.Thread(target=changes, args=(batch,)) for batch in batches]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    changes_per_run = 2 * len(receipts)
    return Case(
        name=f"connector: {changes_per_run} ledger changes from {threads} threads vs one thread",
        baseline=timed(baseline),
        candidate=timed(candidate),
        target=2.0,
        units=changes_per_run,
        unit="change",
        repeat=3 if quick else 5,
    )


_CLEANUP: list[str] = []


def _cleanup() -> None:
    for root in _CLEANUP:
        shutil.rmtree(root, ignore_errors=True)
    _CLEANUP.clear()


atexit.register(_cleanup)  # the cases' temp dirs live until the harness has run them


def cases(quick: bool) -> list[Case]:
    """Return the connector cases (``quick``: smaller inputs)."""
    _cleanup()
    return [
        _decode_case(quick),
        _ledger_case(quick, 50),
        _ledger_case(quick, 1000),
        _group_commit_case(quick),
    ]
