"""Validate values against upstream JSON Schemas with the ``jsonschema`` library.

The draft comes from the document's ``$schema`` (2020-12 when absent); the
document itself is checked first, so a broken schema fails loudly instead of
accepting everything. ``pointer`` selects a sub-schema (``/schemas/request``)
while ``$ref``\\ s keep resolving against the whole document.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

__all__ = ["problems", "schema_validator"]


def schema_validator(document: dict[str, Any], pointer: str = "") -> Validator:
    """Return a validator for ``document`` (or its sub-schema at the JSON ``pointer``).

    Raises ``jsonschema.SchemaError`` when the document is not a valid schema.
    """
    cls = validator_for(document, default=Draft202012Validator)
    cls.check_schema(document)
    schema = {**document, "$ref": f"#{pointer}"} if pointer else document
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def problems(validator: Validator, value: Any) -> list[str]:
    """Return every violation of the validator's schema by ``value`` as ``path: message``."""
    return sorted(f"{error.json_path}: {error.message}" for error in validator.iter_errors(value))
