"""Placeholders and prompts an author left to fill in, in any case and bracket style; links,
checkboxes, citations and values a baseline set are not placeholders."""

from __future__ import annotations

import pytest

from workers.analysis.adoption import judge_adoption, prompt_lines
from workers.analysis.templates import placeholders


@pytest.mark.parametrize(
    "text",
    [
        "[list the systems in scope]",
        "[job title] must take all steps",
        "Reviewed on [day/month/year].",
        "[Insert Date]",
        "[insert the company name]",
        "[Company Name] backs up data",
        "Dear [Name of Customer]:",
        "[City, State Zip Code]",
        "[person responsible for notifications, including title] notifies staff",
        "{{companyShortName}} performs backups",
        "${company_name}",
        "<Information System Abbreviation>",
        "<company name>",
        "<enter date>",
        "[Assignment: organization-defined personnel or roles]",
        "[ORGANIZATION]",
    ],
)
def test_a_prompt_is_a_placeholder(text: str) -> None:
    assert placeholders(text), text


@pytest.mark.parametrize(
    "text",
    [
        "See the [Access Policy](access.md) and [SANS](https://www.sans.org).",
        "A list of [approved vendors / contractors][1] is kept.",
        "[1]: approved-vendors.md",
        "[BAA]: hipaa-baa.md",
        "- [ ] rotate keys",
        "- [x] rotate keys",
        "- [X] rotate keys",
        "as shown in prior work [1] and [12]",
        "Reviews accounts [FedRAMP Assignment: at least annually]",
        "write to [security@acme.example](mailto:security@acme.example)",
        "published at <https://ocrportal.hhs.gov>",
        "line one<br>line two",
        "published at <the designated owner>",
        "format: {\\[sev\\]} {short description}",
    ],
)
def test_links_checkboxes_citations_and_set_values_are_not(text: str) -> None:
    assert placeholders(text) == [], text


def test_the_lowercase_prompts_an_assessor_listed_are_all_found() -> None:
    prompts = [
        "[list the critical services]",
        "[list of key tasks / SLAs]",
        "[job title]",
        "[day/month/year]",
        "[amount]",
        "[name of supplier/outsourcing partner]",
        "[set the maximum amount of time]",
        "[add/modify/remove authorizations in this section as necessary]",
    ]
    assert [p for p in prompts if not placeholders(f"i. {p} is responsible.")] == []


def test_instructions_to_the_author_and_empty_fields_are_prompts() -> None:
    lines = [
        "Describe how the system enforces least privilege.",
        "Enter the name of the system owner here.",
        "Provide a description of the boundary below.",
        "Insert the organization's logo",
        "Responsible Role:",
        "Parameter AC-2(a):",
        "Implementation Status (check all that apply): Implemented Planned",
        "What is the solution and how is it implemented?",
        "Part a",
        "Part b",
        "| task 1: | | |",
        "Access is reviewed every quarter by the system owner.",
    ]
    assert prompt_lines(lines) == [True] * 11 + [False]


def test_staff_steps_and_list_introductions_are_not_prompts() -> None:
    lines = [
        "1. Provide access only after the manager approves the request.",
        "Approved MFA methods include:",
        "- Push notification through the identity provider app",
        "Access reviews of production systems are performed each quarter:",
        "- by the system owner",
    ]
    assert prompt_lines(lines) == [False] * 5


def test_adoption_is_decided_for_the_whole_document() -> None:
    policy = [
        "Backups run nightly and are encrypted with AES-256.\nRestores are tested quarterly.",
        "Access is granted on least privilege.\nThe [job title] approves exceptions.",
        "Logs are kept for one year.\nAlerts page the on-call engineer.",
    ]
    judged = judge_adoption(policy)
    assert judged.adopted and "2 of 3 passages" not in judged.basis
    assert judged.prompt_lines == 1 and judged.lines == 6
    form = [
        "System Name:\nSystem Owner:\nDescribe how the system is backed up.",
        "Parameter AC-2(a):\nParameter AC-2(b):\nResponsible Role:",
        "Backups are encrypted.",  # one passage with no placeholder: still a template
    ]
    judged = judge_adoption(form)
    assert not judged.adopted and "every passage set aside" in judged.basis
