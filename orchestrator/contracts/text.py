"""Text a database can store: no NUL character, anywhere in a value.

PostgreSQL refuses U+0000 in text and JSON; SQLite keeps it and truncates it in places.
Either way it is bad input, so it is refused at the boundary with the field named, the
same on both databases, before anything is stored. One validator serves every field:
`NulFree` checks a string, or every key and string inside a JSON-like value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from orchestrator.contracts.errors import InvalidInput

NUL = "\x00"
Path = tuple[str | int, ...]


def nul_path(value: Any) -> Path | None:
    """Where a NUL is inside `value` (() for the value itself), or None when there is none."""
    if isinstance(value, str):
        return () if NUL in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                return (key,)
            inner = nul_path(item)
            if inner is not None:
                return (key, *inner)
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            inner = nul_path(item)
            if inner is not None:
                return (index, *inner)
    return None


def _message(path: Path) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    return f"must not contain the NUL character (U+0000){' at ' + where if where else ''}"


def _refuse_nul(value: Any) -> Any:
    path = nul_path(value)
    if path is not None:
        raise PydanticCustomError(
            "nul_character", _message(path).replace("{", "{{").replace("}", "}}")
        )
    return value


NulFree = AfterValidator(_refuse_nul)
"""Add to any field's Annotated type: its value may hold no NUL, however deep."""

#: The no-NUL rule as JSON Schema states it (regex text; `\u0000` is NUL in ECMA and Python).
NUL_FREE_PATTERN = r"^[^\u0000]*$"
#: A field's "not blank" pattern, the no-NUL rule folded in (a schema has one pattern).
_NOT_BLANK = r"\S"
_NUL_FREE_NOT_BLANK = r"^[^\u0000]*[^\s\u0000][^\u0000]*$"


class _NulFreeSchema:
    """Writes the no-NUL rule into a text field's JSON Schema, so the OpenAPI document
    states what `NulFree` refuses: a generated client or fuzzer knows it."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        pattern = schema.get("pattern")
        if pattern is None:
            schema["pattern"] = NUL_FREE_PATTERN
        elif pattern == _NOT_BLANK:
            schema["pattern"] = _NUL_FREE_NOT_BLANK
        # Other patterns here are anchored character classes that admit no NUL already.
        return schema


StatesNulFree = _NulFreeSchema()
"""Add after `NulFree`; a pattern of the kind goes before both (as `StringConstraints`),
or the JSON Schema of an optional field loses it."""

Text = Annotated[str, NulFree, StatesNulFree]


def require_nul_free(**fields: Any) -> None:
    """The same check for plain function arguments (the Python producer): InvalidInput
    naming each field that holds a NUL, with its location inside the value."""
    errors = []
    for name, value in fields.items():
        path = nul_path(value)
        if path is not None:
            errors.append({"loc": [name, *path], "msg": _message(path), "type": "nul_character"})
    if errors:
        names = ", ".join(str(error["loc"][0]) for error in errors)
        raise InvalidInput(
            f"{names}: text must not contain the NUL character (U+0000)", errors=errors
        )
