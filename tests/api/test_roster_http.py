"""An assessment's roster over HTTP on PostgreSQL: people added, changed and removed, each
change kept in its history; bad entries refused with the reason, nothing stored."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from orchestrator.contracts.identity import Actor
from orchestrator.service.roster import Person, add_person, roster
from tests.api.conftest import Api, Headers

pytestmark = pytest.mark.integration

DANA = {
    "name": "Dana Whitfield",
    "email": "Dana@Example.org",
    "roles": ["control_owner", "approver"],
    "title": "CISO",
    "domains": ["gov", "IAC"],
    "reason": "named at kick-off",
}


def _base(api: Api, tenant: str) -> tuple[Headers, str]:
    headers = api.key("signal", "read", tenant=tenant, principal=f"user:owner@{tenant}")
    assessment = api.create_assessment(headers)["id"]
    return headers, f"/api/v1/assessments/{assessment}/roster"


def _people(api: Api, headers: Headers, base: str) -> list[dict[str, Any]]:
    response = api.client.get(base, headers=headers)
    assert response.status_code == 200, response.text
    return list(response.json())


def test_people_are_added_changed_and_removed_and_every_change_is_kept(pg_api: Api) -> None:
    api = pg_api
    headers, base = _base(api, "roster-a")
    added = api.client.post(base, headers=headers, json=DANA)
    assert added.status_code == 201, added.text
    dana = added.json()
    assert (dana["email"], dana["domains"], dana["added_by"]) == (
        "dana@example.org",
        ["GOV", "IAC"],
        "user:owner@roster-a",
    )
    # FedRAMP's plan roles and the telephone number its assessment lead needs.
    second = {
        "name": "Lee Park",
        "principal": "user:lee@roster-a",
        "telephone": "+1 (202) 555-0143",
        "roles": ["isso", "csp_poc", "csp_end_of_testing_poc"],
    }
    lee = api.client.post(base, headers=headers, json=second)
    assert lee.status_code == 201, lee.text
    assert (lee.json()["telephone"], lee.json()["roles"]) == (
        "+1 (202) 555-0143",
        ["isso", "csp_poc", "csp_end_of_testing_poc"],
    )
    assert [p["name"] for p in _people(api, headers, base)] == ["Dana Whitfield", "Lee Park"]

    changed = api.client.put(
        f"{base}/{dana['id']}", headers=headers, json=DANA | {"roles": ["owner"], "title": None}
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["roles"], changed.json()["title"]) == (["owner"], None)
    removed = api.client.delete(f"{base}/{dana['id']}", headers=headers)
    assert removed.status_code == 204, removed.text
    assert [p["name"] for p in _people(api, headers, base)] == ["Lee Park"]

    history = api.client.get(f"{base}-history", headers=headers).json()
    assert [(e["action"], e["person"]["name"]) for e in history] == [
        ("added", "Dana Whitfield"),
        ("added", "Lee Park"),
        ("changed", "Dana Whitfield"),
        ("removed", "Dana Whitfield"),
    ]
    assert history[0]["reason"] == "named at kick-off"
    assert history[2]["person"]["roles"] == ["owner"]
    assert {e["actor_id"] for e in history} == {"user:owner@roster-a"}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"name": "No Contact", "roles": ["owner"]}, "needs an email or a principal id"),
        ({"name": "X", "email": "not-an-address", "roles": ["owner"]}, "not an email address"),
        ({"name": "X", "email": "x@example.org", "roles": ["auditor"]}, "roles"),
        ({"name": "X", "email": "x@example.org", "roles": []}, "roles"),
        (
            {"name": "X", "email": "x@example.org", "roles": ["owner"], "domains": ["identity"]},
            "three-letter codes",
        ),
        ({"name": " ", "email": "x@example.org", "roles": ["owner"]}, "name"),
        (
            {"name": "X", "email": "x@example.org", "roles": ["owner"], "telephone": "call me"},
            "telephone",
        ),
    ],
)
def test_a_bad_entry_is_refused_with_its_reason_and_nothing_is_stored(
    pg_api: Api, body: dict[str, Any], says: str
) -> None:
    api = pg_api
    headers, base = _base(api, "roster-b")
    response = api.client.post(base, headers=headers, json=body)
    assert 400 <= response.status_code < 500, response.text
    assert says in response.text
    assert _people(api, headers, base) == []
    assert api.client.get(f"{base}-history", headers=headers).json() == []


def test_the_same_person_twice_is_refused_and_the_service_agrees_with_http(pg_api: Api) -> None:
    api = pg_api
    headers, base = _base(api, "roster-c")
    assert api.client.post(base, headers=headers, json=DANA).status_code == 201
    again = api.client.post(base, headers=headers, json=DANA | {"name": "Dana W."})
    assert again.status_code == 422 and again.json()["code"] == "already_on_roster", again.text
    assert "Dana Whitfield is already on the roster" in again.json()["detail"]
    assessment = base.split("/")[-2]
    actor = Actor(tenant_id="roster-c", actor_id="user:script")
    added = add_person(
        actor,
        uuid.UUID(assessment),
        Person(name="Sam Ortiz", principal="user:sam", roles=["isso"]),
    )
    assert [p.name for p in roster(actor, added.assessment_id)] == ["Dana Whitfield", "Sam Ortiz"]
    assert [p["name"] for p in _people(api, headers, base)] == ["Dana Whitfield", "Sam Ortiz"]
    one = api.client.get(f"{base}/{added.id}", headers=headers)
    assert one.status_code == 200 and one.json()["principal"] == "user:sam", one.text


def test_another_tenant_neither_reads_nor_changes_the_roster(pg_api: Api) -> None:
    api = pg_api
    headers, base = _base(api, "roster-d")
    dana = api.client.post(base, headers=headers, json=DANA).json()
    other = api.key("signal", "read", tenant="roster-e", principal="user:x@roster-e")
    assert api.client.get(base, headers=other).status_code == 404
    assert api.client.post(base, headers=other, json=DANA).status_code == 404
    assert api.client.delete(f"{base}/{dana['id']}", headers=other).status_code == 404
    assert [p["name"] for p in _people(api, headers, base)] == ["Dana Whitfield"]
