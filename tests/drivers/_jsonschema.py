"""A small JSON Schema (draft-07 subset) checker for codex's generated schemas.

It covers what ``codex app-server generate-json-schema`` emits: local
``$ref``, ``type``, ``enum``, ``const``, ``required``, ``properties``,
``additionalProperties``, ``items``, ``oneOf``/``anyOf``/``allOf`` and
numeric ``minimum``. Formats are not checked. It returns the problems found,
with their JSON paths, instead of raising on the first.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[kind])


class Schema:
    """One schema document; :meth:`problems` checks a value against it (or a sub-schema)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def _resolve(self, ref: str) -> dict[str, Any]:
        assert ref.startswith("#/"), ref
        node: Any = self.document
        for part in ref[2:].split("/"):
            node = node[part]
        return dict(node)

    def problems(self, value: Any, schema: Any = None, path: str = "$") -> list[str]:
        """Return every violation of ``schema`` (default: the whole document) by ``value``."""
        node = self.document if schema is None else schema
        if node is True or node == {}:
            return []
        if node is False:
            return [f"{path}: no value allowed"]
        if "$ref" in node:
            return self.problems(value, self._resolve(node["$ref"]), path)
        found: list[str] = []
        kinds = node.get("type")
        if kinds is not None:
            options = kinds if isinstance(kinds, list) else [kinds]
            if not any(_is(value, kind) for kind in options):
                return [f"{path}: expected {options}, got {type(value).__name__}"]
        if "enum" in node and value not in node["enum"]:
            found.append(f"{path}: {value!r} not in {node['enum']}")
        if "const" in node and value != node["const"]:
            found.append(f"{path}: {value!r} != {node['const']!r}")
        if isinstance(value, (int, float)) and "minimum" in node and value < node["minimum"]:
            found.append(f"{path}: {value} < {node['minimum']}")
        if isinstance(value, dict):
            found += [
                f"{path}: missing {key}" for key in node.get("required", []) if key not in value
            ]
            properties = node.get("properties", {})
            extra = node.get("additionalProperties", True)
            for key, item in value.items():
                if key in properties:
                    found += self.problems(item, properties[key], f"{path}.{key}")
                elif extra is False:
                    found.append(f"{path}: unexpected {key}")
                elif isinstance(extra, dict):
                    found += self.problems(item, extra, f"{path}.{key}")
        if isinstance(value, list) and isinstance(node.get("items"), dict):
            for index, item in enumerate(value):
                found += self.problems(item, node["items"], f"{path}[{index}]")
        for sub in node.get("allOf", []):
            found += self.problems(value, sub, path)
        for key in ("oneOf", "anyOf"):
            if key in node:
                branches = [self.problems(value, sub, path) for sub in node[key]]
                matching = [b for b in branches if not b]
                if not matching:
                    best = min(branches, key=len)
                    found.append(f"{path}: matches no {key} branch (closest: {best[:3]})")
                elif key == "oneOf" and len(matching) > 1:
                    found.append(f"{path}: matches {len(matching)} oneOf branches")
        return found
