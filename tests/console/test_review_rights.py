"""Review work on one run waiting at its SoA gate, with a real in-process worker: claims
(taken, refused to another, renewed, released, lapsed, swept, taken over), comments (kept
with their version, audited, refused on a row that does not exist), separation of duties
said in words and lifted per gate by an admin (the run then counts the amender's
approval), the run page's polled fragment, and console pages for what no route answers."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.errors import GateNotWaiting, InvalidInput, ReviewClaimed
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import ApprovalEvent
from orchestrator.db.session import read_transaction
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.approval_rights import review_right
from orchestrator.service.producer import Actor, get_run
from orchestrator.service.queries import list_artifacts, list_audit
from orchestrator.service.review_claims import (
    claim_on,
    claim_review,
    release_lapsed_claims,
    release_review,
)
from orchestrator.service.review_comments import add_comment, list_comments
from tests.console.kit import Browser, key, text, wait_for
from tests.console.lifecycle_pages import decide_undecided, person, run_at_soa_wait
from tests.support.roles import grant

TENANT = "review-rights"
SOA = ArtifactKind.SOA
AMY = Actor(tenant_id=TENANT, actor_id="user:amy@rights")
BOB = Actor(tenant_id=TENANT, actor_id="user:bob@rights")


@pytest.fixture(scope="module")
def waiting(running: TestClient) -> tuple[str, uuid.UUID]:
    owner = person(running, TENANT, "read", "signal", principal="user:owner@rights")
    grant(AMY, "assessor")
    grant(BOB, "ciso")
    key("read", "approve", tenant=TENANT, principal=BOB.actor_id)  # bob may decide: a key
    return run_at_soa_wait(owner, TENANT, "Review rights")


@pytest.fixture
def clock() -> Iterator[list[timedelta]]:
    """The service's clock, moved forward by appending to the list."""
    ahead: list[timedelta] = [timedelta(0)]
    set_clock(lambda: datetime.now(UTC) + sum(ahead, timedelta(0)))
    yield ahead
    set_clock(None)


def _events(run_id: uuid.UUID, kind: str) -> list[dict[str, object]]:
    return [
        e.metadata
        for e in list_audit(AMY, run_id, limit=200).items
        if e.event_type == f"lifecycle_workflow_review_{kind}"
    ]


def test_a_claim_is_one_reviewers_until_it_lapses(
    waiting: tuple[str, uuid.UUID], clock: list[timedelta]
) -> None:
    _, run_id = waiting
    held = claim_review(AMY, run_id, SOA)
    assert held.claimed_by == AMY.actor_id and held.version == 1
    with pytest.raises(ReviewClaimed) as refused:
        claim_review(BOB, run_id, SOA)
    assert AMY.actor_id in refused.value.message
    clock.append(timedelta(minutes=10))
    renewed = claim_review(AMY, run_id, SOA)
    assert renewed.expires_at > held.expires_at, "the holder renews it"
    assert release_review(AMY, run_id, SOA) and claim_on(BOB, run_id, SOA) is None
    assert not release_review(AMY, run_id, SOA), "nothing left to release"

    claim_review(AMY, run_id, SOA)
    clock.append(timedelta(hours=1))  # past LIFECYCLE_CONSOLE_CLAIM_TTL_S (30 min)
    assert claim_on(BOB, run_id, SOA) is None, "a lapsed claim counts for nothing"
    assert release_lapsed_claims() == 1 and release_lapsed_claims() == 0
    claim_review(AMY, run_id, SOA)
    clock.append(timedelta(hours=1))
    taken = claim_review(BOB, run_id, SOA)
    assert taken.claimed_by == BOB.actor_id, "a lapsed claim is taken over"
    lapses = _events(run_id, "claim_lapsed")
    assert [m["claimed_by"] for m in lapses] == [AMY.actor_id, AMY.actor_id]
    assert "taken_over_by" not in lapses[0] and lapses[1]["taken_over_by"] == BOB.actor_id
    assert len(_events(run_id, "claimed")) == 5 and len(_events(run_id, "released")) == 1
    release_review(BOB, run_id, SOA)
    with pytest.raises(GateNotWaiting, match="does not wait for a scope decision"):
        claim_review(AMY, run_id, ArtifactKind.SCOPE)


def test_comments_stay_with_their_version_and_row(waiting: tuple[str, uuid.UUID]) -> None:
    _, run_id = waiting
    [draft] = list_artifacts(AMY, run_id, SOA.value)[:1]
    assert draft.version == 1
    on_draft = add_comment(AMY, run_id, SOA, 1, "  Who owns access reviews?  ")
    with pytest.raises(InvalidInput, match="has no row 'NOPE-1'"):
        add_comment(AMY, run_id, SOA, 1, "about a row", row="NOPE-1")
    with pytest.raises(InvalidInput, match="1 to 4000 characters"):
        add_comment(AMY, run_id, SOA, 1, "   ")
    thread = list_comments(BOB, run_id, SOA)
    assert [(c.body, c.version, c.row) for c in thread] == [("Who owns access reviews?", 1, None)]
    [said] = _events(run_id, "commented")
    assert said["comment_id"] == on_draft.id and said["excerpt"] == "Who owns access reviews?"


def _principal(actor: Actor, *scopes: Scope) -> Principal:
    return Principal("k", actor.tenant_id, actor.actor_id, frozenset(scopes), None)


def test_an_admin_lets_the_amender_approve_a_gate(
    running: TestClient, waiting: tuple[str, uuid.UUID]
) -> None:
    run_url, run_id = waiting
    amy = person(running, TENANT, "read", "approve", principal=AMY.actor_id)
    assert decide_undecided(amy, TENANT, run_url, run_id, "soa", 1)  # amy amends: v2
    run = get_run(AMY, run_id)
    v2 = next(a.id for a in list_artifacts(AMY, run_id, SOA.value) if a.version == 2)
    right = review_right(_principal(AMY, Scope.APPROVE), run, SOA, v2)
    assert right.separation and not right.roles
    assert [(o.principal, o.roles) for o in right.others] == [(BOB.actor_id, ("ciso",))]

    admin = Browser(TestClient(running.app))
    admin.sign_in(key("admin", tenant=TENANT, principal="user:admin@rights"))
    changed = admin.post(
        "/console/settings/gates/soa",
        {"amender_may_approve": "yes", "reason": "a team of one this quarter"},
        from_page="/console/settings/gates",
    )
    assert "soa: whoever amended a draft may approve it" in text(
        admin.get(changed.headers["location"])
    )
    assert review_right(_principal(AMY, Scope.APPROVE), run, SOA, v2).roles == ("assessor",)

    review_url = f"{run_url}/artifacts/soa?version=2"
    page = amy.get(review_url).text
    form_key = re.search(r'name="key" value="([^"]+)"', page[page.index('id="decide"') :])
    assert form_key, "the decision form is offered to the amender now"
    amy.post(
        f"{run_url}/artifacts/soa/decision",
        {"key": form_key.group(1), "version": "2", "decision": "approved", "role": "assessor"},
        from_page=review_url,
    )
    wait_for(lambda: get_run(AMY, run_id).current_step != "wait_for_soa_approval", "the gate open")
    with read_transaction() as session:
        event = (
            session.query(ApprovalEvent)
            .filter_by(run_id=run_id, artifact_kind="soa", artifact_version=2)
            .one()
        )
        assert event.approver_id == AMY.actor_id and event.amender_waiver is True


def test_the_run_page_polls_only_what_changed(
    running: TestClient, waiting: tuple[str, uuid.UUID]
) -> None:
    run_url, run_id = waiting
    reader = person(running, TENANT, "read", principal="user:reader@rights")
    still = "wait_for_gap_approval"  # where the run rests after the SoA gate opened
    wait_for(lambda: get_run(AMY, run_id).current_step == still, "the run at rest")
    page = reader.get(run_url).text
    token = re.search(r'data-token="([^"]+)"', page)
    assert token
    unchanged = reader.get(f"{run_url}/live?since={token.group(1)}")
    assert unchanged.status_code == 204 and unchanged.content == b""
    moved = reader.get(f"{run_url}/live?since=an-older-token")
    assert moved.status_code == 200
    assert all(f'id="live-{part}"' in moved.text for part in ("now", "act", "steps", "documents"))
