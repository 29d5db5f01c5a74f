"""The real ``shedctl`` command by command, over a real socket, as the acceptance list.

``shedctl`` (charliek/shed-desktop ``core/shedctl/src/main.rs:261-300@5a762e8``, ``main``)
opens one connection per command, writes one frame built by ``build_request`` (a serde_json
map: ``{"id":"1","op":...,"params":{...}}``, lines 46-54), reads one line back and
reads it with ``parse_reply`` (lines 59-77): ``ok: true`` yields ``result``
(``null`` if absent); otherwise ``error.code`` (``"error"`` when empty) and
``error.message`` (``""`` when absent), printed as ``error <code>: <message>``
(exit 1). ``screenshot --out`` decodes ``result.png`` (standard base64) and
reads ``width``/``height`` as unsigned integers (lines 225-237). No Rust
toolchain with crates is available here, so these tests replay exactly those
frames and that reading; ``parse_reply`` below is its logic in Python.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.desktop import Dialect, Release
from shedproto.servers.desktop import DesktopModel

from .test_server import running


def shedctl_frame(op: str, params: dict[str, Any]) -> bytes:
    """``build_request("1", op, params)`` + LF (serde_json map order: id, op, params)."""
    return json.dumps({"id": "1", "op": op, "params": params}, separators=(",", ":")).encode() + (
        b"\n"
    )


def parse_reply(line: bytes) -> tuple[bool, Any]:
    """shedctl's ``parse_reply``: ``(True, result)`` or ``(False, "error <code>: <message>")``."""
    reply = json.loads(line)
    if reply.get("ok") is True:
        return True, reply.get("result")
    error = reply.get("error") or {}
    code = error.get("code") if isinstance(error.get("code"), str) else ""
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    return False, f"error {code or 'error'}: {message}"


async def shedctl(path: Path, op: str, params: dict[str, Any]) -> tuple[bool, Any]:
    """One shedctl invocation: connect, write one frame, read one line."""
    async with await anyio.connect_unix(path) as stream:
        await stream.send(shedctl_frame(op, params))
        buffered = b""
        while b"\n" not in buffered:
            buffered += await stream.receive()
    return parse_reply(buffered.split(b"\n", 1)[0])


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_shed("prod", "web")
    return model


COMMANDS: list[tuple[str, str, dict[str, Any], dict[Dialect, Any]]] = [
    # (shedctl command, op, params, per dialect: result keys (ok) or the error line)
    ("identify", "identify", {}, {Dialect.TAURI: "platform", Dialect.MAC: "app_id"}),
    ("sheds list", "sheds.list", {}, {Dialect.TAURI: "host_errors", Dialect.MAC: "sheds"}),
    (
        "dashboard dump",
        "dashboard.dump",
        {},
        {Dialect.TAURI: "rows", Dialect.MAC: "error unknown-op: no such op: dashboard.dump"},
    ),
    ("screenshot", "app.screenshot", {"scale": 1}, {Dialect.TAURI: "png", Dialect.MAC: "png"}),
    (
        "screenshot --scale 3",
        "app.screenshot",
        {"scale": 3},
        {Dialect.TAURI: "png", Dialect.MAC: "error invalid-param: scale must be 1 or 2, got 3"},
    ),
    ("shed start web", "shed.start", {"name": "web"}, {Dialect.TAURI: {}, Dialect.MAC: {}}),
    (
        "shed stop web --host prod",
        "shed.stop",
        {"name": "web", "host": "prod"},
        {Dialect.TAURI: {}, Dialect.MAC: {}},
    ),
    (
        "shed reset web --host prod",
        "shed.reset",
        {"name": "web", "host": "prod"},
        {Dialect.TAURI: {}, Dialect.MAC: {}},
    ),
    (
        "shed delete web --host prod",
        "shed.delete",
        {"name": "web", "host": "prod"},
        {Dialect.TAURI: {}, Dialect.MAC: {}},
    ),
    (
        "shed start nope",
        "shed.start",
        {"name": "nope"},
        {
            Dialect.TAURI: "error action_failed: shed-server returned HTTP 404",
            # HostFailure.displayMessage in the newer mac app (see the shed.delete row)
            Dialect.MAC: "error internal: shed-server returned HTTP 404",
        },
    ),
    (
        "screenshot --out x.png --scale 2",
        "app.screenshot",
        {"scale": 2},
        {Dialect.TAURI: "png", Dialect.MAC: "png"},
    ),
    (
        "screenshot --scale 0",
        "app.screenshot",
        {"scale": 0},
        {Dialect.TAURI: "png", Dialect.MAC: "error invalid-param: scale must be 1 or 2, got 0"},
    ),
    (
        "raw identify --param bogus=1",
        "identify",
        {"bogus": 1},
        {Dialect.TAURI: "platform", Dialect.MAC: "error unknown-field: unknown params: bogus"},
    ),
    (
        "raw sheds.list --param host=nowhere",
        "sheds.list",
        {"host": "nowhere"},
        {Dialect.TAURI: "host_errors", Dialect.MAC: {"sheds": []}},
    ),
    (
        "raw shed.start --param name=3",
        "shed.start",
        {"name": 3},
        {Dialect.TAURI: "error bad_request: missing 'name'", Dialect.MAC: "invalid-param"},
    ),
    (
        "raw create.status --param create_id=abc",
        "create.status",
        {"create_id": "abc"},
        {
            Dialect.TAURI: {"state": "unknown"},
            Dialect.MAC: "error not-found: no create with id abc",
        },
    ),
    (
        "shed stop web --host nowhere",
        "shed.stop",
        {"name": "web", "host": "nowhere"},
        {
            Dialect.TAURI: "error action_failed: no configured host: nowhere",
            Dialect.MAC: "error not-found: no configured host named nowhere",
        },
    ),
    (
        "shed delete nope --host prod",
        "shed.delete",
        {"name": "nope", "host": "prod"},
        {
            Dialect.TAURI: "error action_failed: shed-server returned HTTP 404",
            # the newer mac app words ShedError by HostFailure.displayMessage (charliek/shed
            # desktop/Sources/ShedKit/IPC/IPCServer.swift@1cea187; v0.0.14: BadStatus(...))
            Dialect.MAC: "error internal: shed-server returned HTTP 404",
        },
    ),
    (
        "raw shed.reset",
        "shed.reset",
        {},
        {Dialect.TAURI: "error bad_request: missing 'name'", Dialect.MAC: "invalid-param"},
    ),
    (
        "raw no.such --param a=1",
        "no.such",
        {"a": 1},
        {
            Dialect.TAURI: "error unknown_op: unknown op: no.such",
            Dialect.MAC: "error unknown-op: no such op: no.such",
        },
    ),
]


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("case", COMMANDS, ids=[c[0] for c in COMMANDS])
async def test_shedctl_command(
    short_socket_dir: Path,
    dialect: Dialect,
    case: tuple[str, str, dict[str, Any], dict[Dialect, Any]],
) -> None:
    """Each shedctl command gets the answer the real app gives (see test_fidelity for sources)."""
    _command, op, params, expected = case
    want = expected[dialect]
    async with running(short_socket_dir, dialect, model=_model()) as server:
        ok, value = await shedctl(server.path, op, params)
    if isinstance(want, dict):
        assert (ok, value) == (True, want)
    elif want.startswith("error "):
        assert (ok, value) == (False, want)
    elif ok:
        assert want in value
    else:
        assert value.startswith(f"error {want}: ")


async def test_shedctl_screenshot_out_decodes_png(short_socket_dir: Path) -> None:
    """``screenshot --out F``: ``result.png`` decodes as standard base64 to a PNG; ``width`` and
    ``height`` are unsigned integers (main.rs:225-237@5a762e8), in both dialects."""
    for dialect in Dialect:
        async with running(short_socket_dir, dialect, model=_model()) as server:
            ok, result = await shedctl(server.path, "app.screenshot", {"scale": 2})
        assert ok
        png = base64.b64decode(result["png"], validate=True)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        assert isinstance(result["width"], int)
        assert result["width"] >= 0
        assert isinstance(result["height"], int)
        assert result["height"] >= 0


async def test_shedctl_against_v0_0_14_tauri(short_socket_dir: Path) -> None:
    """``--release 0.0.14``: shedctl's own release answers as its app did.

    ``ipc.rs:116-125,188-266@5a762e8`` (``identify_payload``, ``dispatch``).
    """
    async with running(
        short_socket_dir, Dialect.TAURI, model=_model(), release=Release.V0_0_14
    ) as server:
        assert await shedctl(server.path, "sheds.list", {}) == (
            True,
            {
                "sheds": [
                    {
                        "host": "prod",
                        "name": "web",
                        "status": "running",
                        "backend": None,
                        "repo": None,
                        "image": None,
                        "image_digest": None,
                        "local_dir": None,
                        "ip_address": None,
                        "cpus": None,
                        "memory_mb": None,
                        "created_at": None,
                        "started_at": None,
                        "active_namespaces": [],
                    }
                ]
            },
        )
        ok, dump = await shedctl(server.path, "dashboard.dump", {})
        assert ok
        assert set(dump) == {"rows"}
        ok, ident = await shedctl(server.path, "identify", {})
        assert ok
        assert "broker_mode" not in ident
        assert await shedctl(server.path, "machines.list", {}) == (
            False,
            "error unknown_op: unknown op: machines.list",
        )


async def test_client_sheds_list_typed_rows(short_socket_dir: Path) -> None:
    """``AsyncDesktopClient.sheds_list`` decodes each dialect's rows into its Struct."""
    from shedproto.clients.desktop import AsyncDesktopClient
    from shedproto.desktop import types as o

    for dialect, row_type in ((Dialect.TAURI, o.TauriShed), (Dialect.MAC, o.MacShed)):
        async with (
            running(short_socket_dir, dialect, model=_model()) as server,
            await AsyncDesktopClient.connect(server.path) as client,
        ):
            listing = await client.sheds_list()
        assert [type(r) for r in listing.sheds] == [row_type]
        assert (listing.sheds[0].host, listing.sheds[0].name) == ("prod", "web")


async def test_shedctl_shed_action_with_no_configured_host(short_socket_dir: Path) -> None:
    """``shed start web`` with no server configured: Tauri ``action_failed`` ``no configured
    host`` (backend.rs:156-161@5a762e8), mac ``not-found`` ``no configured host``
    (AppModel.swift:848-857@5a762e8)."""
    expected = {
        Dialect.TAURI: "error action_failed: no configured host",
        Dialect.MAC: "error not-found: no configured host",
    }
    for dialect in Dialect:
        async with running(short_socket_dir, dialect, model=DesktopModel()) as server:
            assert await shedctl(server.path, "shed.start", {"name": "web"}) == (
                False,
                expected[dialect],
            )
