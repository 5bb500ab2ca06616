"""The proposal rule: evidence found only where passages are specifically about enough of a
requirement's control families; otherwise weak, template, or nothing, each with a reason
in words (never a raw similarity)."""

from __future__ import annotations

import pytest

from orchestrator.knowledge.hybrid import Passage, Ranked
from workers.analysis.proposal import Checked, Proposal, propose
from workers.analysis.sections import non_normative

TITLES = {"IAC-07": "User Provisioning", "IAC-17": "Periodic Review", "BCD-11": "Data Backups"}


def _hit(document: str, heading: str = "Policy > Access", score: float = 1.0) -> Ranked:
    passage = Passage(
        chunk_id=f"{document}-{heading}",
        document_id=document,
        filename=document,
        heading_path=heading,
        text="Access is reviewed every quarter by the system owner.",
        page_start=None,
        page_end=None,
    )
    return Ranked(passage=passage, score=score, similarity=0.6, lexical_rank=1, dense_rank=1)


def _checked(document: str, **outcome: object) -> Checked:
    return Checked(hit=_hit(document), about="IAC-07", **outcome)  # type: ignore[arg-type]


def _name(control_id: str) -> str:
    return TITLES.get(control_id, "")


def test_specific_passages_for_each_family_are_evidence_found() -> None:
    checked = [
        _checked("access.md", specific=("IAC-07",)),
        _checked("review.md", specific=("IAC-17",)),
    ]
    judged = propose(checked, ["IAC-07", "IAC-07.1", "IAC-17"], _name)
    assert judged.proposal is Proposal.EVIDENCE_FOUND
    assert [h.passage.filename for h in judged.evidence] == ["access.md", "review.md"]
    assert judged.families == (2, 2)
    assert "IAC-07" in judged.reason and "IAC-17" in judged.reason
    assert "similarity" not in judged.reason


def test_one_family_of_a_broad_requirement_is_weak_and_names_what_is_missing() -> None:
    judged = propose(
        [_checked("access.md", specific=("IAC-07",))], ["IAC-07", "IAC-17", "BCD-11"], _name
    )
    assert judged.proposal is Proposal.WEAK_EVIDENCE
    assert "1 of its 3" in judged.reason and "IAC-17" in judged.reason
    assert judged.families == (1, 3)


def test_a_requirement_of_one_family_needs_only_that_family() -> None:
    judged = propose([_checked("backup.md", specific=("BCD-11",))], ["BCD-11"], _name)
    assert judged.proposal is Proposal.EVIDENCE_FOUND


def test_a_broad_requirement_needs_a_third_of_its_families() -> None:
    families = [f"F{n:02d}-01" for n in range(9)]
    two = [_checked(f"d{n}.md", specific=(f"F{n:02d}-01",)) for n in range(2)]
    three = [_checked(f"d{n}.md", specific=(f"F{n:02d}-01",)) for n in range(3)]
    assert propose(two, families, _name).proposal is Proposal.WEAK_EVIDENCE
    assert propose(three, families, _name).proposal is Proposal.EVIDENCE_FOUND


def test_a_non_normative_section_never_supports_on_its_own() -> None:
    boiler = _checked("access.md", specific=("IAC-07",), section="a purpose and scope section")
    judged = propose([boiler], ["IAC-07"], _name)
    assert judged.proposal is Proposal.NO_EVIDENCE_FOUND
    assert "purpose and scope" in judged.reason and judged.evidence == []


def test_close_but_not_specific_is_weak_in_an_assessors_words() -> None:
    near = _checked(
        "access.md",
        related=("IAC-17",),
        closest=("IAC-17", 8, 2),
        quote="Access is reviewed every quarter by the system owner.",
    )
    judged = propose([near], ["IAC-17"], _name)
    assert judged.proposal is Proposal.WEAK_EVIDENCE
    # The passage quoted, the practice named; ranks stay out of the reader's sentence.
    assert "\u201cAccess is reviewed every quarter by the system owner.\u201d" in judged.reason
    assert "IAC-17 Periodic Review" in judged.reason and "IAC-07 User Provisioning" in judged.reason
    assert "8th" not in judged.reason and "rank" not in judged.reason


def test_evidence_found_quotes_the_sentence_it_rests_on_and_names_the_practice() -> None:
    checked = [
        _checked("access.md", specific=("IAC-07",), quote="Accounts are provisioned on request."),
        _checked("review.md", specific=("IAC-17",), quote="Access is reviewed quarterly."),
    ]
    judged = propose(checked, ["IAC-07", "IAC-17"], _name)
    assert judged.proposal is Proposal.EVIDENCE_FOUND
    assert judged.reason.startswith(
        "access.md \u00a7 Policy > Access: \u201cAccounts are provisioned on request.\u201d "
        "states IAC-07 User Provisioning"
    )
    assert "review.md" in judged.reason and "2 of its 2 SCF control families" in judged.reason


def test_only_a_set_aside_template_is_template_not_adopted() -> None:
    template = _checked("ssp.docx", specific=("IAC-07",), set_aside="a blank form")
    judged = propose([], ["IAC-07"], _name, [template])
    assert judged.proposal is Proposal.TEMPLATE_NOT_ADOPTED
    assert "a blank form" in judged.reason and judged.evidence == []


def test_nothing_on_the_subject_is_no_evidence_found_naming_what_the_closest_is_about() -> None:
    judged = propose([_checked("backup.md")], ["IAC-17"], _name)
    assert judged.proposal is Proposal.NO_EVIDENCE_FOUND
    assert "IAC-07 User Provisioning" in judged.reason


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("Access Policy > Purpose and Scope", "a purpose and scope section"),
        ("Policy > 1. Background", "a background section"),
        ("References", "a references section"),
        ("Backup Standard > Definitions", "a definitions section"),
        ("Acronyms", "an acronyms section"),
        ("Revision History", "a revision history section"),
        ("Table of Contents", "a table of contents section"),
    ],
)
def test_sections_about_the_document_are_non_normative(heading: str, kind: str) -> None:
    assert non_normative(heading, "Text of the section.") == kind


def test_a_practice_under_a_normative_heading_is_normative_whatever_its_parents() -> None:
    assert non_normative("Scope > Access Reviews", "Access is reviewed quarterly.") is None
    assert non_normative("Policy", "All laptops are encrypted with full-disk encryption.") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("NIST CSF Functions: Identify, Protect, Detect, Respond, Recover", "banner"),
        ("Access Control", "banner"),
        ("CC6.1 Logical access, CC6.2 user access and CC6.3 removal of access apply.", "ids"),
        ("- [Access policy](access.md)\n- [Backups](backup.md)\n- https://example.com/x", "links"),
    ],
)
def test_banners_requirement_lists_and_link_lists_state_no_practice(text: str, kind: str) -> None:
    found = non_normative("Policy > Overview", text)
    assert (
        found is not None
        and {"banner": "banner", "ids": "requirement ids"}.get(kind, "links") in found
    ), found


def test_a_short_sentence_stating_a_practice_is_normative() -> None:
    assert non_normative("Access", "Access rights are reviewed quarterly by the owner.") is None


def test_lists_of_policies_and_acronym_tables_are_non_normative_by_content() -> None:
    listed = "\n".join(
        ["- Access Control Policy", "- Change Management Policy", "- Backup Standard", "- BCP"]
        + ["- Incident Response Plan"]
    )
    assert non_normative("Related", listed) == "a list of other documents"
    acronyms = "MFA - Multi-Factor Authentication\nSSO - Single Sign On\n"
    acronyms += "VPN - Virtual Private Network\nSIEM - Security Information Event Management"
    assert non_normative("Terms used", acronyms) == "an acronym table"


@pytest.mark.parametrize(
    "text",
    [
        # A standard's control text in italics under its own heading, its source below.
        '> *"Confidentiality agreements should be identified, documented, regularly reviewed'
        ' and signed by personnel."*\n> \u2014 the standard, control 6.6',
        # The control's name in bold, then its text quoted in italics.
        "**Physical Entry**:\n\n> *Secure areas should be protected by appropriate entry "
        "controls to ensure that only authorised personnel are allowed access.*",
        '> "Equipment should be maintained correctly to ensure availability and integrity."',
    ],
)
def test_a_block_quote_of_a_standards_text_is_a_quotation_not_a_practice(text: str) -> None:
    assert non_normative("Policy > Control Reference", text) == (
        "a quotation of another text (a standard's own words), not a practice"
    )


def test_a_call_out_box_or_a_practice_beside_a_short_quote_may_state_a_practice() -> None:
    call_out = (
        "> **Systems specification**: the organisation authenticates every user through the"
        " identity provider listed below.\n>\n> | Function | System |"
    )
    assert non_normative("Authentication", call_out) is None
    practice = (
        "> *Cables should be protected from interception.*\n\nThe organisation routes all data"
        " cabling through locked conduits, inspects them every quarter and records each"
        " inspection in the facilities log."
    )
    assert non_normative("Cabling", practice) is None
