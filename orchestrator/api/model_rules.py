"""Rules across a request's fields, stated in its JSON Schema (`json_schema_extra`): the
server checks them in the model or the service, the document says the same, so a
generated client or fuzzer sends only what the server takes.

Each rule sits inside `allOf`: the same meaning, and generators (openapi-python-client)
keep one model for the request instead of a union of its branches."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from orchestrator.contracts import text

JsonSchema = dict[str, Any]
SchemaRule = Callable[[JsonSchema], None]

#: Text the server strips to nothing counts as absent; this is "something besides".
NOT_BLANK: JsonSchema = {"type": "string", "pattern": text.NOT_BLANK}
ABSENT: JsonSchema = {"anyOf": [{"type": "null"}, {"type": "string", "pattern": text.BLANK}]}
SET: JsonSchema = {"not": {"type": "null"}}


def _add(schema: JsonSchema, keyword: str, branches: list[JsonSchema]) -> None:
    schema.setdefault("allOf", []).append({keyword: branches})


def exactly_one_of(*names: str) -> SchemaRule:
    """One branch per field, it set and the others absent or null: exactly one holds."""

    def state(schema: JsonSchema) -> None:
        branches = [
            {
                "required": [chosen],
                "properties": {name: SET if name == chosen else {"type": "null"} for name in names},
            }
            for chosen in names
        ]
        _add(schema, "oneOf", branches)

    return state


def at_least_one_of(*names: str, text: bool = False) -> SchemaRule:
    """Some field of `names` set (and, for `text`, not blank: the server strips it)."""

    def state(schema: JsonSchema) -> None:
        branches = [
            {"required": [name], "properties": {name: NOT_BLANK if text else SET}} for name in names
        ]
        _add(schema, "anyOf", branches)

    return state


def depends_on(field: str, ref: str, needing: Mapping[str, JsonSchema]) -> SchemaRule:
    """`ref` is given, in the form `needing` says, exactly when `field` is one of the
    values `needing` maps (and absent or blank otherwise, as when `field` is left out)."""

    def state(schema: JsonSchema) -> None:
        branches: list[JsonSchema] = [
            {"properties": {field: {"not": {"enum": list(needing)}}, ref: ABSENT}}
        ]
        for value, form in needing.items():
            branches.append(
                {"required": [field, ref], "properties": {field: {"const": value}, ref: form}}
            )
        _add(schema, "oneOf", branches)

    return state


def required_for(field: str, values: list[str], ref: str, form: JsonSchema) -> SchemaRule:
    """`ref` is required, in the form `form` says, when `field` is one of `values`; for
    other values it is free."""

    def state(schema: JsonSchema) -> None:
        _add(
            schema,
            "oneOf",
            [
                {"properties": {field: {"not": {"enum": values}}}},
                {"required": [field, ref], "properties": {field: {"enum": values}, ref: form}},
            ],
        )

    return state
