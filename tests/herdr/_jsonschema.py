"""A small JSON Schema (2020-12) validator for the keywords herdr's schemas use.

Supported: ``$ref`` (document-local), ``type`` (string or list), ``properties``,
``required``, ``additionalProperties``, ``items``, ``oneOf``, ``anyOf``,
``const``, ``enum``, ``minimum``, ``maximum``, ``pattern``, ``maxProperties``,
``propertyNames``. The project may not add a validator dependency; this is
enough for the schemas in ../shared/conformance/herdr and raises on any
keyword it does not know, so it cannot silently accept.
"""

from __future__ import annotations

import re
from typing import Any

IGNORED = {"$schema", "$defs", "title", "description", "default", "format", "examples"}
KNOWN = IGNORED | {
    "$ref", "type", "properties", "required", "additionalProperties", "items", "oneOf",
    "anyOf", "const", "enum", "minimum", "maximum", "pattern", "maxProperties",
    "propertyNames", "protocol", "schema_version", "schemas",
}  # fmt: skip


class SchemaValidationError(AssertionError):
    """The instance does not match the schema; the message names the JSON path."""


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    raise KeyError(kind)


def resolve(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def validate(document: dict[str, Any], schema: Any, value: Any, path: str = "$") -> None:
    """Raise :class:`SchemaValidationError` unless ``value`` matches ``schema``."""
    if schema is True:
        return
    if schema is False:
        raise SchemaValidationError(f"{path}: schema `false`")
    unknown = set(schema) - KNOWN
    if unknown:
        raise KeyError(f"unsupported keywords {unknown} at {path}")
    if "$ref" in schema:
        validate(document, resolve(document, schema["$ref"]), value, path)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, k) for k in kinds):
            raise SchemaValidationError(f"{path}: {value!r} is not of type {kinds}")
    if "const" in schema and value != schema["const"]:
        raise SchemaValidationError(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaValidationError(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaValidationError(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaValidationError(f"{path}: {value} > {schema['maximum']}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        raise SchemaValidationError(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, dict):
        _object(document, schema, value, path)
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            validate(document, schema["items"], item, f"{path}[{index}]")
    _combinators(document, schema, value, path)


def _object(document: dict[str, Any], schema: Any, value: dict[str, Any], path: str) -> None:
    for name in schema.get("required", []):
        if name not in value:
            raise SchemaValidationError(f"{path}: missing required {name!r}")
    props = schema.get("properties", {})
    for name, item in value.items():
        if name in props:
            validate(document, props[name], item, f"{path}.{name}")
        elif "additionalProperties" in schema:
            validate(document, schema["additionalProperties"], item, f"{path}.{name}")
        if "propertyNames" in schema:
            validate(document, schema["propertyNames"], name, f"{path}.<key {name}>")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        raise SchemaValidationError(f"{path}: more than {schema['maxProperties']} properties")


def _combinators(document: dict[str, Any], schema: Any, value: Any, path: str) -> None:
    if "anyOf" in schema:
        errors = []
        for option in schema["anyOf"]:
            try:
                validate(document, option, value, path)
            except SchemaValidationError as exc:
                errors.append(str(exc))
            else:
                break
        else:
            raise SchemaValidationError(f"{path}: no anyOf branch matched: {errors}")
    if "oneOf" in schema:
        matched = 0
        errors = []
        for option in schema["oneOf"]:
            try:
                validate(document, option, value, path)
            except SchemaValidationError as exc:
                errors.append(str(exc))
            else:
                matched += 1
        if matched != 1:
            raise SchemaValidationError(f"{path}: {matched} oneOf branches matched: {errors[:3]}")
