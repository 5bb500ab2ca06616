"""Text a database can store: no NUL character, anywhere in a value.

PostgreSQL refuses U+0000 in text and JSON; SQLite keeps it and truncates it in places.
Either way it is bad input, so it is refused at the boundary with the field named, the
same on both databases, before anything is stored. One validator serves every field:
`NulFree` checks a string, or every key and string inside a JSON-like value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

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

Text = Annotated[str, NulFree]


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
