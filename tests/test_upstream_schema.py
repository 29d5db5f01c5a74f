"""The JSON Schema validator the conformance tests use rejects what it must (not vacuous)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import SchemaError, ValidationError

from tests._upstream_schema import problems, schema_validator

DRAFT_07: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {"Id": {"type": "integer", "minimum": 0}},
    "type": "object",
    "required": ["id", "method"],
    "properties": {"id": {"$ref": "#/definitions/Id"}, "method": {"enum": ["ping"]}},
    "additionalProperties": False,
}

DRAFT_2020: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "schemas": {
        "request": {
            "$defs": {"Params": {"type": "object", "maxProperties": 1}},
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z]+$"},
                "params": {"$ref": "#/schemas/request/$defs/Params"},
            },
        }
    },
}


def test_an_invalid_instance_is_rejected_with_its_path() -> None:
    validator = schema_validator(DRAFT_07)
    assert problems(validator, {"id": 1, "method": "ping"}) == []
    found = problems(validator, {"id": -1, "method": "pong", "extra": True})
    assert len(found) == 3
    assert any(p.startswith("$.id:") for p in found)
    with pytest.raises(ValidationError):
        validator.validate({"method": "ping"})


def test_a_sub_schema_resolves_refs_against_the_whole_document() -> None:
    validator = schema_validator(DRAFT_2020, "/schemas/request")
    validator.validate({"id": "abc", "params": {"a": 1}})
    with pytest.raises(ValidationError, match="has too many properties"):
        validator.validate({"id": "abc", "params": {"a": 1, "b": 2}})
    with pytest.raises(ValidationError, match="does not match"):
        validator.validate({"id": "ABC"})
    with pytest.raises(ValidationError, match="required"):
        validator.validate({})


def test_a_broken_schema_fails_instead_of_accepting_everything() -> None:
    with pytest.raises(SchemaError):
        schema_validator({"type": "no-such-type"})
