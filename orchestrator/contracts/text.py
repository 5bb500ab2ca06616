"""Text a database can store: no NUL character and no lone surrogate, anywhere in a value.

PostgreSQL refuses U+0000 in text and JSON; SQLite keeps it and truncates it in places.
A lone surrogate (U+D800-U+DFFF, which JSON's `\ud800` escape can spell) is no Unicode
character: no UTF-8 text holds it, so no database stores it (I-JSON, RFC 7493, refuses
it too). Either way it is bad input, so it is refused at the boundary with the field
named, the same on both databases, before anything is stored. One validator serves every
field: `NulFree` checks a string, or every key and string inside a JSON-like value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from orchestrator.contracts.errors import InvalidInput

NUL = "\x00"
_SURROGATE = re.compile("[\ud800-\udfff]")
Path = tuple[str | int, ...]


def _unstorable(text: str) -> bool:
    return NUL in text or _SURROGATE.search(text) is not None


def _first_unstorable(value: Any) -> tuple[Path, str] | None:
    """The first text inside `value` a database cannot store, and where it is (() for the
    value itself, a key's own path for a key)."""
    if isinstance(value, str):
        return ((), value) if _unstorable(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _unstorable(key):
                return (key,), key
            inner = _first_unstorable(item)
            if inner is not None:
                return (key, *inner[0]), inner[1]
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            inner = _first_unstorable(item)
            if inner is not None:
                return (index, *inner[0]), inner[1]
    return None


def _kind(text: str) -> str:
    """The error type the API names for the text found."""
    return "nul_character" if NUL in text else "lone_surrogate"


def _message(path: Path, kind: str = "nul_character") -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    # A key holding a lone surrogate is named with its escape: the message must be text.
    where = _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", where)
    what = (
        "the NUL character (U+0000)"
        if kind == "nul_character"
        else "a lone surrogate (U+D800-U+DFFF), which is no Unicode character"
    )
    return f"must not contain {what}{' at ' + where if where else ''}"


def _refuse_nul(value: Any) -> Any:
    found = _first_unstorable(value)
    if found is not None:
        path, kind = found[0], _kind(found[1])
        raise PydanticCustomError(kind, _message(path, kind).replace("{", "{{").replace("}", "}}"))
    return value


NulFree = AfterValidator(_refuse_nul)
"""Add to any field's Annotated type: its value may hold no NUL, however deep."""

#: The no-NUL rule as JSON Schema states it (regex text; `\u0000` is NUL in ECMA and Python).
NUL_FREE_PATTERN = r"^[^\u0000]*$"
#: Whitespace as the server strips it (`str.isspace`), spelled out: `\s` means other sets
#: in ECMA, Rust (pydantic) and Python regexes, so a value one calls blank another took.
SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: "Not blank": a character the server would not strip. The pattern of such fields.
NOT_BLANK = rf"[^{SPACE}]"
#: Nothing but whitespace (or nothing): what the server strips to nothing.
BLANK = rf"^[{SPACE}]*$"
#: The same, the no-NUL rule folded in (a schema has one pattern).
_NUL_FREE_NOT_BLANK = rf"^[^\u0000]*[^{SPACE}\u0000][^\u0000]*$"


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
        elif pattern == NOT_BLANK:
            schema["pattern"] = _NUL_FREE_NOT_BLANK
        # Other patterns here are anchored character classes that admit no NUL already.
        return schema


StatesNulFree = _NulFreeSchema()
"""Add after `NulFree`; a pattern of the kind goes before both (as `StringConstraints`),
or the JSON Schema of an optional field loses it."""

Text = Annotated[str, NulFree, StatesNulFree]

#: The name under which the OpenAPI document defines a JSON value with no NUL anywhere.
NUL_FREE_JSON = "NulFreeJson"
_NUL_FREE_JSON_REF = {"$ref": f"#/components/schemas/{NUL_FREE_JSON}"}
#: Every value of an object, whatever its key, is a NUL-free JSON value. Said with
#: `patternProperties` (the empty pattern matches every key) rather than
#: `additionalProperties`: client generators read such an object as a free-form one,
#: where a recursive value type in `additionalProperties` makes them drop the operation.
_EVERY_VALUE_NUL_FREE = {"": _NUL_FREE_JSON_REF}
#: A JSON value whose keys and strings hold no NUL, at any depth (recursive).
NUL_FREE_JSON_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "pattern": NUL_FREE_PATTERN},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": "array", "items": _NUL_FREE_JSON_REF},
        {
            "type": "object",
            "propertyNames": {"pattern": NUL_FREE_PATTERN},
            "patternProperties": _EVERY_VALUE_NUL_FREE,
        },
    ],
    "description": "A JSON value with no NUL character (U+0000) in any key or string.",
}


class _NulFreeObjectSchema:
    """Writes `NulFree`'s rule into a free-form object's JSON Schema: keys and every value
    at any depth (the OpenAPI document defines `NulFreeJson`)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["propertyNames"] = {"pattern": NUL_FREE_PATTERN}
        schema.pop("additionalProperties", None)
        schema["patternProperties"] = dict(_EVERY_VALUE_NUL_FREE)
        return schema


StatesNulFreeObject = _NulFreeObjectSchema()
"""Add after `NulFree` on a `dict[str, Any]` field."""


def require_nul_free(**fields: Any) -> None:
    """The same check for plain function arguments (the Python producer): InvalidInput
    naming each field that holds a NUL, with its location inside the value."""
    errors = []
    for name, value in fields.items():
        found = _first_unstorable(value)
        if found is not None:
            path, kind = found[0], _kind(found[1])
            errors.append({"loc": [name, *path], "msg": _message(path, kind), "type": kind})
    if errors:
        names = ", ".join(str(error["loc"][0]) for error in errors)
        raise InvalidInput(
            f"{names}: text must not contain the NUL character (U+0000) nor a lone "
            "surrogate (U+D800-U+DFFF)",
            errors=errors,
        )
