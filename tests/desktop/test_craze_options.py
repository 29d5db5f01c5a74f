"""``craze.create_options``: the provider rows as craze states them.

charliek/shed ``desktop/tauri/ui/src/lib/crazeCreate.ts:13-21,26-30@9668981`` declares what the
op carries (``CrazeProvider``, shed-core's ``LaneProvider``): ``{id, label, state,
reason?, fix?}``, ``state`` one of ``ready``, ``needs_setup``, ``unavailable``, and
``options`` ``{providers, default_provider?, recent_dirs}``. The rows are craze's
``sessions.createOptions`` answer in craze's order (the hub exchange recorded in
``crates/shed-craze/fixtures/wire/26-hub-create-options.ndjson@bacc5c1``: a ready
row carries no ``reason``/``fix``, the others carry craze's words), passed on as
``{machine, options}`` by ``desktop/tauri/src-tauri/src/roost_hosts.rs:1532-1538@9668981``
(``craze_create_options``, whose doc at 1524-1527 names the states, reasons and fixes).
"""

from __future__ import annotations

from typing import Any

from shedproto.desktop import Dialect
from shedproto.servers.desktop import CrazeProvider, CrazeSource, DesktopModel

from ._helpers import answer


def _options(source: CrazeSource) -> Any:
    model = DesktopModel()
    model.add_machine("mini", craze=source)
    reply = answer(Dialect.TAURI, model, "craze.create_options", {"machine": "mini"})
    assert reply["ok"] is True, reply
    return reply["result"]


def test_every_provider_row_states_its_state() -> None:
    result = _options(CrazeSource())
    assert result["machine"] == "mini"
    rows = result["options"]["providers"]
    assert [row["id"] for row in rows] == ["grok", "cursor", "native"]
    assert all(set(row) == {"id", "label", "state"} for row in rows)
    assert {row["state"] for row in rows} == {"ready"}
    assert result["options"]["default_provider"] in [row["id"] for row in rows]


def test_a_provider_that_is_not_ready_says_why_and_how_to_fix_it() -> None:
    source = CrazeSource(
        providers=[
            CrazeProvider(
                "cursor",
                state="unavailable",
                reason="cursor may not reach the login keychain",
                fix="run craze ps in a terminal on the Mac",
            ),
            CrazeProvider("grok"),
            CrazeProvider("native", label="Native", state="needs_setup", reason="no key"),
        ],
        default_provider="grok",
        recent_dirs=["/home/me/lumen", "/home/me/shed"],
    )
    assert _options(source)["options"] == {
        "providers": [
            {
                "id": "cursor",
                "label": "cursor",
                "state": "unavailable",
                "reason": "cursor may not reach the login keychain",
                "fix": "run craze ps in a terminal on the Mac",
            },
            {"id": "grok", "label": "grok", "state": "ready"},
            {"id": "native", "label": "Native", "state": "needs_setup", "reason": "no key"},
        ],
        "default_provider": "grok",
        "recent_dirs": ["/home/me/lumen", "/home/me/shed"],
    }
