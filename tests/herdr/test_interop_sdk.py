"""Interop: herdr-python-sdk 0.1.0 (PyPI, an independent protocol-22 SDK) against the server.

The SDK needs Python >= 3.12 and pydantic, neither a dependency of this
project, so the test runs it in a Python 3.13 subprocess from unpacked wheels
(the SDK and its dependencies in one directory) named by
``SHEDPROTO_HERDR_PYTHON_SDK`` (opt-in: without it the test skips; .ci/run sets it), e.g.::

    pip download --python-version 3.13 --only-binary=:all: -d /tmp/interop/sdk \
        herdr-python-sdk==0.1.0
    for w in /tmp/interop/sdk/*.whl; do unzip -oq "$w" -d /tmp/interop/herdr_sdk; done

It skips cleanly, saying why, when either is missing. Every method the SDK
exposes is called with the smallest params its models accept; each must end
in a result the SDK's own models validate or in a herdr error answer, never
in a protocol or transport failure. ``pane.graphics.stream`` streams a frame
and a file frame.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from shedproto.servers.herdr import HerdrServer

from ._interop import opted_in, python313

SDK_DIR = Path(os.environ.get("SHEDPROTO_HERDR_PYTHON_SDK", "/tmp/interop/herdr_sdk"))
PYTHON = python313() if opted_in("SHEDPROTO_HERDR_PYTHON_SDK", SDK_DIR, "herdr_sdk") else None

SCRIPT = r"""
import asyncio, enum, json, sys, typing, types
import pydantic
from herdr_sdk import client as named
from herdr_sdk import errors, models as m
from herdr_sdk._schema import PARAMETERS
from herdr_sdk._streams import GraphicsFrame

socket, pane_file = sys.argv[1], sys.argv[2]
IDS = {"pane_id": "w1:p1", "target_pane_id": "w1:p1", "workspace_id": "w1", "tab_id": "w1:t1",
       "target": "w1:p1", "terminal_id": "w1:p1", "source_pane_id": "w1:p1"}


def value(name, annotation):
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return value(name, args[0])
    if origin is typing.Annotated:
        return value(name, args[0])
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    if origin in (list, tuple, set):
        return []
    if origin is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return next(iter(annotation)).value
    if isinstance(annotation, type) and issubclass(annotation, pydantic.RootModel):
        return value(name, annotation.model_fields["root"].annotation)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return fill(annotation)
    if annotation is str:
        return IDS.get(name, "x")
    if annotation is bool:
        return False
    if annotation in (int, float):
        return 0
    return None


def fill(model):
    out = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            out[field.alias or name] = value(name, field.annotation)
    return out


HOLD = {"events.subscribe", "pane.graphics.stream", "server.stop", "server.live_handoff"}
SHORT = {"agent.wait", "events.wait", "pane.wait_for_output"}


async def main():
    client = named.AsyncHerdrClient(socket, timeout=20.0)
    await client.request("workspace.create", {"cwd": "/tmp", "focus": True})
    outcomes = {}
    for method, model in PARAMETERS.items():
        if method in HOLD:
            continue
        params = fill(model)
        if method in SHORT:
            params["timeout_ms"] = 200
        try:
            result = await client.request(method, params)
            kind = getattr(result, "type", type(result).__name__)
            outcomes[method] = str(getattr(kind, "value", kind))
        except errors.HerdrAPIError as exc:
            outcomes[method] = "error:" + str(getattr(exc, "code", exc))
        except pydantic.ValidationError as exc:
            outcomes[method] = "params-refused-by-sdk"
        except (errors.HerdrProtocolError, errors.HerdrTransportError) as exc:
            outcomes[method] = "FAILED:" + type(exc).__name__ + ":" + str(exc)
    fresh = await client.request("workspace.create", {"cwd": "/tmp"})  # the loop closed w1
    pane, workspace = fresh.root_pane.pane_id, fresh.workspace.workspace_id
    subscriptions = {"subscriptions": [{"type": "tab.created"}]}
    async with await client.request("events.subscribe", subscriptions) as events:
        await client.request("tab.create", {"workspace_id": workspace})
        async for event in events:
            outcomes["events.subscribe"] = str(getattr(event.event, "value", event.event))
            break
    stream = await client.request("pane.graphics.stream", {"pane_id": pane, "layer_id": "sdk"})
    frame = GraphicsFrame(format="rgba", image_width=1, image_height=1)
    await stream.send_frame(frame, b"\x01\x02\x03\x04")
    ack = await stream.send_file(frame, pane_file, sequence=5, revision=6)
    await stream.close()
    outcomes["pane.graphics.stream"] = [ack.sequence, ack.revision]
    await client.close()
    print(json.dumps(outcomes))


asyncio.run(main())
"""


@pytest.mark.skipif(
    PYTHON is None,
    reason="herdr-python-sdk is opt-in (SHEDPROTO_HERDR_PYTHON_SDK) and needs Python >= 3.13",
)
async def test_herdr_python_sdk_completes_every_method_it_exposes(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    assert PYTHON is not None
    pixels = tmp_path / "frame.rgba"
    pixels.write_bytes(b"\x00\x00\x00\xff")
    with anyio.fail_after(240):
        # the SDK is pinned to herdr 0.9.0 (its graphics stream left herdr in 0.9.2)
        server = HerdrServer(
            short_socket_dir / "herdr.sock", herdr_version="0.9.0", shell=["/bin/sh"], cwd="/tmp"
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            env = {**os.environ, "PYTHONPATH": str(SDK_DIR)}
            env.pop("HERDR_SOCKET_PATH", None)
            result = await anyio.run_process(
                [PYTHON, "-c", SCRIPT, str(path), str(pixels)], env=env, check=False
            )
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    outcomes: dict[str, object] = json.loads(result.stdout)
    failed = {m: o for m, o in outcomes.items() if str(o).startswith(("FAILED", "params"))}
    assert failed == {}
    assert outcomes["ping"] == "pong"
    assert outcomes["events.subscribe"] == "tab_created"
    assert outcomes["pane.graphics.stream"] == [5, 6]
    assert len(outcomes) >= 100  # every method the SDK exposes but stop and live handoff
