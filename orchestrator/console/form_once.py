"""A console form that creates something acts once per rendering.

The page that shows the form mints a key (a hidden `key` field, `web.action_key`). The
first post under that key creates and records where its answer leads; a second post of
the same form (a reload of the answer, a double click, the back button) creates nothing
and is sent where the first one led. The record is the API's `Idempotency-Key` store
(`service.idempotency`), under a key of its own per form and tenant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.console.web import PageError
from orchestrator.contracts.errors import IdempotencyConflict, IdempotencyInProgress
from orchestrator.service.apikeys import Principal
from orchestrator.service.idempotency import StoredResponse, once, request_hash


@dataclass(frozen=True)
class Answered:
    location: str
    """Where the first post of the form led: a console URL."""
    replayed: bool
    """True when this post is the same form sent again: nothing was created."""


def created_once(
    principal: Principal,
    form: str,
    key: str,
    fields: Mapping[str, Any],
    create: Callable[[], str],
) -> Answered:
    """Run `create` (which answers the console URL to show) once per (tenant, form, key)."""

    def action() -> StoredResponse:
        return StoredResponse(303, {"location": create()}, {})

    fingerprint = request_hash("POST", f"/console/forms/{form}", dict(fields))
    try:
        outcome, replayed = once(
            principal.tenant_id, f"console-form:{form}:{key}", fingerprint, action
        )
    except IdempotencyConflict:
        raise PageError(
            409,
            "Form sent before",
            "This form was sent before with other values. Reload its page to fill in a new one.",
        ) from None
    except IdempotencyInProgress:
        raise PageError(
            409,
            "Form being handled",
            "This form is still being handled from its first sending: reload the page "
            "in a moment to see its result.",
        ) from None
    return Answered(str(outcome.body["location"]), replayed)
