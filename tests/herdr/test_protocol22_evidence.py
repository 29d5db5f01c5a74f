"""The reconstructed protocol-22 schema against its evidence, herdr-client 0.1.0.

herdr-client's ``generated_types.py`` was generated from herdr's protocol-22
schema; every def, field, required flag and literal set it carries must be in
the schema codegen builds from the delta (and nothing more). The module uses
Python 3.13 syntax, so a ``python3.13`` subprocess reads it with :mod:`ast`.
"""

from __future__ import annotations

import functools
import json
import subprocess
from typing import Any

import pytest

from tests._tools import load_tool
from tests.conftest import SHARED, requires_shared

from ._interop import CLIENT_DIR, CLIENT_READY, python313

codegen = load_tool("herdr_codegen")

SCHEMA_DIR = SHARED / "conformance" / "herdr"
PREFIX = {
    "request": "Request",
    "success_response": "Response",
    "error_response": "Error",
    "event": "Event",
}
"""herdr-client's name prefix per schema section (it skips ``subscription_event``)."""

READER = r"""
import ast, json, sys
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
out = {}
def literal(node):
    while isinstance(node, ast.Subscript) and ast.unparse(node.value) in (
        "Required", "NotRequired"
    ):
        node = node.slice
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Literal":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [e.value for e in elts]
    return None
for node in tree.body:
    if isinstance(node, ast.ClassDef):
        total = not any(k.arg == "total" and k.value.value is False for k in node.keywords)
        fields, tag = {}, None
        for st in node.body:
            if isinstance(st, ast.AnnAssign):
                text = ast.unparse(st.annotation)
                fields[st.target.id] = text.startswith("Required[") or (
                    total and not text.startswith("NotRequired[")
                )
                values = literal(st.annotation)
                if values and len(values) == 1 and st.target.id in ("type", "event", "op"):
                    tag = values[0]
        name = node.name
        if "Variant" in name and tag is not None:
            name = name.rsplit("Variant", 1)[0] + ":" + tag
        out[name] = {"fields": fields}
    elif isinstance(node, ast.TypeAlias):
        values = literal(node.value)
        if values is not None:
            out[node.name.id] = {"literal": values}
print(json.dumps(out))
"""


@functools.cache
def _client_types() -> dict[str, Any]:
    python = python313()
    assert python is not None
    source = CLIENT_DIR / "herdr_client" / "generated_types.py"
    done = subprocess.run(
        [python, "-c", READER, str(source)], capture_output=True, timeout=60, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _ours() -> dict[str, Any]:
    paths = [
        SCHEMA_DIR / "herdr-api.schema.json",
        SCHEMA_DIR / "herdr-api.protocol21.schema.json",
        codegen.DELTA_22,
    ]
    document = codegen.load_documents(paths)[-1][1]
    assert document["protocol"] == 22
    out: dict[str, Any] = {}
    for section, prefix in PREFIX.items():
        for name, body in document["schemas"][section].get("$defs", {}).items():
            members = body.get("oneOf")
            if members and all("properties" in m for m in members):
                for member in members:
                    _, tag = codegen._tag_of(member) or ("", "")
                    required = set(member.get("required", []))
                    out[f"{prefix}{name}:{tag}"] = {
                        "fields": {f: f in required for f in member["properties"]}
                    }
            elif "properties" in body:
                required = set(body.get("required", []))
                out[prefix + name] = {"fields": {f: f in required for f in body["properties"]}}
            elif "enum" in body:
                out[prefix + name] = {"literal": body["enum"]}
    return out


needs_client = pytest.mark.skipif(
    not CLIENT_READY or python313() is None,
    reason="herdr-client 0.1.0 is opt-in (SHEDPROTO_HERDR_CLIENT) and needs Python >= 3.13"
    " (see tests/herdr/_interop.py)",
)


@requires_shared
@needs_client
def test_every_protocol22_def_matches_herdr_client() -> None:
    client, ours = _client_types(), _ours()
    # what issue 26 added from herdr's own source, beyond herdr-client's pinned schema
    beyond = json.loads(codegen.DELTA_22.read_text(encoding="utf-8"))["beyond_herdr_client"]
    assert set(beyond["defs"]) <= set(ours)
    assert not set(beyond["defs"]) & set(client)
    for name, shape in ours.items():
        if name in beyond["defs"]:
            continue
        fields = shape.get("fields")
        if fields is not None and name in beyond["properties"]:
            extra = beyond["properties"][name]
            assert set(extra) <= set(fields)
            assert not set(extra) & set(client[name]["fields"])
            trimmed = {"fields": {f: r for f, r in fields.items() if f not in extra}}
            assert client.get(name) == trimmed, name
            continue
        assert client.get(name) == shape, name


@requires_shared
@needs_client
def test_herdr_client_has_no_def_the_reconstruction_lacks() -> None:
    client, ours = _client_types(), _ours()
    # herdr-client adds JSON helper aliases, per-variant aliases and the method union
    missing = {
        name
        for name, shape in client.items()
        if name not in ours and "fields" in shape and ":" not in name and "Variant" not in name
    }
    assert missing == set()
    unions = {name.split(":")[0] for name in client if ":" in name}
    assert unions <= {name.split(":")[0] for name in ours}


@needs_client
def test_delta_names_the_schema_herdr_client_pins() -> None:
    pinned = (CLIENT_DIR / "herdr_client" / "schema.py").read_text(encoding="utf-8")
    delta = json.loads(codegen.DELTA_22.read_text(encoding="utf-8"))
    target = delta["provenance"]["target"]
    assert "OFFICIAL_SCHEMA_PROTOCOL = 22" in pinned
    for quoted in ("f8e59221cbe5117f8f691a36affa374f5a986a9f", "226d4ecbd128d2e6bc84e4c8"):
        assert quoted in pinned
        assert quoted in target
