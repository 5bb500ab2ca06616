"""What counts as a placeholder SSP link or system id: an export for FedRAMP is refused
while one stands, and the exports write a marked placeholder instead of it."""

from __future__ import annotations

import pytest

from orchestrator.contracts.fedramp_settings import SSP_HREF, SYSTEM_ID, placeholder, refusal

PLACEHOLDERS = [
    "",
    "   ",
    "https://example.com/ssp.json",
    "https://www.example.org/oscal/ssp.xml",
    "https://ssp.example/ssp.json",
    "placeholder",
    "./PLACEHOLDER-ssp.json",
    "TBD",
    "to-do: TODO",
    "changeme",
    "N/A",
    "00000000-0000-0000-0000-000000000000",
    "11111111-1111-1111-1111-111111111111",
    "0000000000",
]
REAL = [
    "https://fedramp.acme.gov/oscal/ssp.json",
    "../ssp/acme-ssp.xml",
    "F1603047866",
    "8101e04d-8305-4e73-bb95-6b59f645b143",
    "https://repo.acme.io/ssp.json#tbdx",
]


@pytest.mark.parametrize("value", PLACEHOLDERS)
def test_placeholders_are_told_apart_with_the_reason(value: str) -> None:
    assert placeholder(value) is not None


@pytest.mark.parametrize("value", REAL)
def test_real_values_stand(value: str) -> None:
    assert placeholder(value) is None
    assert refusal(SSP_HREF, value) is None


def test_a_refusal_names_the_setting_and_its_variable() -> None:
    said = refusal(SYSTEM_ID, "TBD")
    assert said is not None
    assert said.startswith("oscal_system_id (LIFECYCLE_OSCAL_SYSTEM_ID)")
    assert "'TBD' stands for a value not yet known" in said
