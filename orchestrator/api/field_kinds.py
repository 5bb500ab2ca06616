"""One annotated type per kind of field the API shares (idempotency keys, cursors), each
stating in the OpenAPI document the rule the server enforces with the same constant, so
the document and the server cannot drift. Text's no-NUL rule lives with `Text`."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Header, Query
from pydantic import Field, StringConstraints

from orchestrator.contracts.text import NOT_BLANK, SPACE, NulFree, StatesNulFree, Text
from orchestrator.service.roles import ROLE_PATTERN

MAX_KEY_LENGTH = 256
#: 1 to 256 printable ASCII characters, no space at either end (servers strip those).
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]([\x20-\x7e]{0,254}[\x21-\x7e])?$"
IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)

#: A cursor is URL-safe base64 without padding, as `encode_cursor` issues it.
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{1,512}$"

# The key's pattern is checked by `check_key` (its own problem code), not by validation.
IdempotencyHeader = Annotated[
    Text | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=MAX_KEY_LENGTH,
        json_schema_extra={"pattern": IDEMPOTENCY_KEY_PATTERN},
        description="Makes the POST safe to retry: the same key and request give the same "
        "result; the same key with a different request is a 409. 1 to 256 printable "
        "ASCII characters (422 `invalid_idempotency_key` otherwise).",
    ),
]

IdempotencyKey = Annotated[
    Text,
    Field(
        min_length=1,
        max_length=MAX_KEY_LENGTH,
        json_schema_extra={"pattern": IDEMPOTENCY_KEY_PATTERN},
        description="1 to 256 printable ASCII characters; when the Idempotency-Key header "
        "is sent too, the same value (422 `idempotency_key_mismatch` otherwise).",
    ),
]

Cursor = Annotated[
    Text | None,
    Query(
        min_length=1,
        max_length=512,
        json_schema_extra={"pattern": CURSOR_PATTERN, "format": "cursor"},
        description="`next_cursor` of the previous page, unchanged (422 `invalid_cursor` "
        "for one the API did not issue).",
    ),
]

#: A calendar day as amendments take it (the rows keep it as text).
ISO_DAY_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"  # `\d` is any script's digit in Python
# On `X | None` a field's own pattern is enforced but left out of the JSON Schema, so
# each constrained kind carries its pattern inside the type.
IsoDay = Annotated[str, StringConstraints(pattern=ISO_DAY_PATTERN), NulFree, StatesNulFree]
RoleName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=NOT_BLANK), NulFree, StatesNulFree
]

#: A role to grant or revoke (or to map a group to): checked by `check_role` after
#: stripping, stated here.
GrantedRole = Annotated[
    Text,
    Field(
        min_length=1,
        max_length=64,
        json_schema_extra={"pattern": rf"^[{SPACE}]*{ROLE_PATTERN.pattern}[{SPACE}]*$"},
    ),
]
#: Why a grant, a revocation or a mapping was made.
AuditReason = Annotated[Text | None, Field(max_length=2000, description="Kept in the audit trail.")]
