"""A NUL character in any text field is refused with 422 naming the field (SQLite here; the
same on PostgreSQL in test_api_postgres), by the HTTP API and the Python producer alike."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.service.approval_events import record_approval
from orchestrator.service.operations import block_run, cancel_run
from orchestrator.service.producer import create_assessment, send_signal, start_lifecycle
from tests.api.conftest import Api
from tests.api.nul_text import (
    NUL,
    assert_lone_surrogate_refused_everywhere,
    assert_nul_refused_everywhere,
)

OWNER = Actor("tenant-nul", "user:owner")


def no_kick(_: uuid.UUID) -> None:
    """Nothing runs the coordinator here."""


def test_the_api_refuses_nul_in_every_text_field(api: Api) -> None:
    assert_nul_refused_everywhere(api)


def test_the_api_refuses_a_lone_surrogate_in_every_text_field(api: Api) -> None:
    assert_lone_surrogate_refused_everywhere(api)


def _errors(caught: pytest.ExceptionInfo[InvalidInput]) -> list[object]:
    return [(error["loc"], error["type"]) for error in caught.value.details["errors"]]


def test_the_python_producer_refuses_nul_naming_the_field(embedded: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        create_assessment(OWNER, "org", f"FY{NUL}27")
    assert _errors(caught) == [(["name"], "nul_character")]
    assessment = create_assessment(OWNER, "org", "FY27")
    with pytest.raises(InvalidInput) as caught:
        start_lifecycle(OWNER, assessment.id, "start", trace_id=f"t{NUL}", kick=no_kick)
    assert _errors(caught) == [(["trace_id"], "nul_character")]
    with pytest.raises(InvalidInput) as caught:
        start_lifecycle(
            OWNER,
            assessment.id,
            "start",
            kick=no_kick,
            policies={"soa": {"mode": "single", "approvers": [f"user:{NUL}"]}},
        )
    assert _errors(caught) == [(["policies", "soa", "approvers", 0], "nul_character")]
    run = start_lifecycle(OWNER, assessment.id, "start", kick=no_kick).id

    with pytest.raises(InvalidInput) as caught:
        send_signal(
            OWNER, run, "framework_selected", "f1", payload={"framework": f"S{NUL}"}, kick=no_kick
        )
    assert _errors(caught) == [(("payload",), "nul_character")]
    with pytest.raises(InvalidInput) as caught:
        send_signal(
            OWNER, run, "framework_selected", f"f{NUL}", payload={"framework": "S"}, kick=no_kick
        )
    assert _errors(caught) == [(("idempotency_key",), "nul_character")]
    for command in (cancel_run, block_run):
        with pytest.raises(InvalidInput) as caught:
            command(OWNER, run, reason=f"r{NUL}", idempotency_key="c1", kick=no_kick)
        assert _errors(caught) == [(("payload",), "nul_character")]
    with pytest.raises(InvalidInput) as caught:
        record_approval(OWNER, run, "soa", 1, decision="rejected", comment=f"c{NUL}", kick=no_kick)
    assert _errors(caught) == [(["comment"], "nul_character")]
