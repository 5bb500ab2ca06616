"""Every free-text field of the OpenAPI schema refuses a NUL character with a 422 problem
naming it: the walk sends, for each string body property (or its items) and each string
query parameter, one request holding a NUL there, and finds the field in the errors.

The other required fields are left out: the 422 lists every field's error at once, and the
NUL field must be among them (a field that took the NUL would not be). Enumerations and
formatted strings (dates, ids) cannot carry free text and are skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from orchestrator.api import app
from tests.api.conftest import Api
from tests.api.nul_text import NUL

SCHEMA = app.openapi()
Case = tuple[str, str, str, str, Any]  # method, path, where ("body"/"query"), field, value


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = SCHEMA
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema)
    if "anyOf" in schema:
        return [v for option in schema["anyOf"] for v in _variants(option)]
    return [schema]


def _free_text(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and "enum" not in schema and "format" not in schema


def _nul_value(schema: dict[str, Any]) -> Any:
    """A value holding a NUL for a free-text schema (or a list of them), else None."""
    for variant in _variants(schema):
        if _free_text(variant):
            return f"x{NUL}"
        if variant.get("type") == "array":
            items = _variants(variant.get("items", {}))
            if any(_free_text(item) for item in items):
                return [f"x{NUL}"]
    return None


def _cases() -> Iterator[Case]:
    for path, operations in SCHEMA["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query":
                    continue
                value = _nul_value(parameter.get("schema", {}))
                if value is not None:
                    yield method, path, "query", parameter["name"], value
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            body = _resolve(content["application/json"]["schema"])
            for name, schema in body.get("properties", {}).items():
                value = _nul_value(schema)
                if value is not None:
                    yield method, path, "body", name, value


def _url(path: str, operation: dict[str, Any]) -> str:
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", str(uuid.uuid4()))
    return path


def test_every_free_text_field_of_the_schema_refuses_nul(api: Api) -> None:
    headers = api.key()
    cases = list(_cases())
    assert len(cases) >= 40, "the walk finds the schema's text fields"
    took: list[tuple[str, str, str]] = []
    for method, path, where, name, value in cases:
        url = _url(path, SCHEMA["paths"][path][method])
        if where == "query":
            response = api.client.request(method, url, headers=headers, params={name: value})
        else:
            response = api.client.request(method, url, headers=headers, json={name: value})
        errors = response.json().get("errors", []) if response.status_code == 422 else []
        if not any(error["loc"][:2] == [where, name] for error in errors):
            took.append((method, path, name))
        else:
            assert response.headers["content-type"] == "application/problem+json"
    assert took == [], f"these fields took a NUL: {took}"
