"""Catalogues and frameworks over HTTP, and framework choices checked at the door."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, Headers


def _pending_run(api: Api, owner: Headers) -> str:
    assessment = api.create_assessment(owner)
    response = api.start(owner, assessment["id"], "start")
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _select(api: Api, owner: Headers, run_id: str, payload: dict[str, Any], key: str) -> Any:
    return api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        headers={**owner, "Idempotency-Key": key},
        json={"type": "framework_selected", "payload": payload},
    )


def _framework_signals(api: Api, owner: Headers, run_id: str) -> list[dict[str, Any]]:
    response = api.client.get(f"/api/v1/workflows/{run_id}/signals", headers=owner)
    assert response.status_code == 200, response.text
    body = response.json()
    items = body["items"] if isinstance(body, dict) else body
    return [s for s in items if s["type"] == "framework_selected"]


def test_catalogs_list_the_shipped_workbook_with_its_licence(api: Api) -> None:
    reader = api.key("read")
    response = api.client.get("/api/v1/catalogs", headers=reader)
    assert response.status_code == 200, response.text
    [scf] = response.json()["items"]
    assert (scf["name"], scf["version"], scf["shipped"], scf["current"]) == (
        "Secure Controls Framework (SCF)",
        "2022.3",
        True,
        True,
    )
    assert scf["licence"] == "CC BY-ND 4.0" and scf["controls"] == 1090
    assert scf["attribution"].startswith("Secure Controls Framework (SCF), CC BY-ND 4.0")
    assert api.client.get("/api/v1/catalogs").status_code == 401


def test_frameworks_and_their_requirements(api: Api) -> None:
    reader = api.key("read")
    frameworks = api.client.get("/api/v1/frameworks", headers=reader).json()["items"]
    soc2 = next(f for f in frameworks if f["name"] == "SOC 2")
    assert (soc2["requirements"], soc2["linked_controls"]) == (61, 283)  # less P1.0-P3.0
    response = api.client.get(f"/api/v1/frameworks/{soc2['id']}/requirements", headers=reader)
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["items"]) == 61
    assert len({c for r in body["items"] for c in r["controls"]}) == 283
    cc61 = next(r for r in body["items"] if r["requirement_id"] == "CC6.1")
    assert cc61["controls"] and all("-" in c for c in cc61["controls"])
    missing = api.client.get(
        "/api/v1/frameworks/00000000-0000-0000-0000-000000000000/requirements", headers=reader
    )
    assert missing.status_code == 404
    unknown = api.client.get("/api/v1/frameworks", params={"catalog": "1999.1"}, headers=reader)
    assert unknown.status_code == 404


def test_an_unknown_framework_is_refused_with_suggestions_and_nothing_applied(api: Api) -> None:
    owner = api.key("signal", "read")
    run_id = _pending_run(api, owner)
    response = _select(api, owner, run_id, {"framework": "ISO 27001 2023"}, "f1")
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "unknown_framework"
    assert problem["unknown"] == ["ISO 27001 2023"]
    assert "ISO/IEC 27001:2022" in problem["suggestions"]["ISO 27001 2023"]
    assert {"SOC 2", "ISO/IEC 27001:2022", "PCI DSS 4.0", "GDPR"} <= set(problem["available"])
    several = _select(api, owner, run_id, {"frameworks": ["SOC 2", "Nope 42"]}, "f2")
    assert several.status_code == 422 and several.json()["unknown"] == ["Nope 42"]
    assert _framework_signals(api, owner, run_id) == []
    assert api.run(owner, run_id)["context"].get("framework") is None


def test_known_frameworks_are_accepted_by_name_and_version(api: Api) -> None:
    owner = api.key("signal", "read")
    run_id = _pending_run(api, owner)
    names = [
        "SOC 2",
        "ISO/IEC 27001:2022",
        "NIST CSF 1.1",
        "NIST SP 800-53 rev5 Moderate",
        "PCI DSS 4.0",
        "HIPAA",
        "GDPR",
    ]
    response = _select(api, owner, run_id, {"frameworks": names}, "ok")
    assert response.status_code == 202, response.text
    assert len(_framework_signals(api, owner, run_id)) == 1
