"""Effects outside the database: their kinds, what undoes each, and the handoff vocabulary.

A run's effect outside the database (a report published to a tenant's export target, a
webhook that asked for an approval) is recorded before it is made and made at most once on
its own. When nobody can tell whether it happened, or it cannot be made, a person decides
at a handoff; when the version that made it is rejected, superseded or cancelled, the
kind's compensating effect undoes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EffectKind(StrEnum):
    EXPORT = "export"
    """A published draft (the report), POSTed to each of the tenant's export targets."""
    EXPORT_RETRACTION = "export_retraction"
    """Undoes a report export: the target is told to withdraw that publication."""
    APPROVAL_WITHDRAWAL = "approval_withdrawal"
    """Undoes an `approval.requested` webhook: its subscribers are told it was withdrawn."""


class EffectStatus(StrEnum):
    PENDING = "pending"
    """Recorded; due at `next_attempt_at`."""
    PERFORMING = "performing"
    """Claimed by a worker, its request possibly in flight (a lease bounds it)."""
    SUCCEEDED = "succeeded"
    """The target acknowledged it."""
    OUTCOME_UNKNOWN = "outcome_unknown"
    """The request was sent and no answer came: a handoff decides."""
    FAILED = "failed"
    """Refused by the target on every attempt: a handoff decides."""
    REFUSED = "refused"
    """Not made: the run's authority no longer allows it. A handoff decides."""
    CONFIRMED = "confirmed"
    """A person confirmed, with evidence, that it happened."""
    ABSENT = "absent"
    """A person confirmed that it did not happen (and nothing is to be made again)."""
    CANCELLED = "cancelled"
    """Given up: never made (again)."""
    COMPENSATED = "compensated"
    """It happened, and its compensating effect undid it."""

    @property
    def happened(self) -> bool:
        """Made outside (acknowledged or confirmed), so there is something to undo."""
        return self in (EffectStatus.SUCCEEDED, EffectStatus.CONFIRMED)


class HandoffReason(StrEnum):
    OUTCOME_UNKNOWN = "outcome_unknown"
    """The request may or may not have been acted on (a timeout after it was sent)."""
    EFFECT_FAILED = "effect_failed"
    """The target refused it on every attempt; it did not happen."""
    AUTHORITY_REVOKED = "authority_revoked"
    """The run's authority was revoked; it was not made."""


class HandoffAction(StrEnum):
    CONFIRM_EFFECT = "confirm_effect"
    """It happened (evidence says so): record it as made."""
    CONFIRM_ABSENT = "confirm_absent"
    """It did not happen: record that, and make it again when it is still wanted."""
    RETRY = "retry"
    """Make it again without knowing: only for idempotent effects or known failures."""
    CANCEL = "cancel"
    """Give it up: it is never made (again)."""


def allowed_actions(reason: HandoffReason, idempotent: bool) -> tuple[HandoffAction, ...]:
    """What a person may do at a handoff. A retry without knowing whether the effect
    happened is offered only when repeating it is harmless."""
    if reason is HandoffReason.OUTCOME_UNKNOWN:
        actions = [HandoffAction.CONFIRM_EFFECT, HandoffAction.CONFIRM_ABSENT]
        if idempotent:
            actions.append(HandoffAction.RETRY)
        return (*actions, HandoffAction.CANCEL)
    # Known not to have happened: trying again is safe; it may have been done by hand.
    return (HandoffAction.RETRY, HandoffAction.CONFIRM_EFFECT, HandoffAction.CANCEL)


@dataclass(frozen=True)
class EffectSpec:
    kind: EffectKind
    compensated_by: EffectKind | None
    """The effect that undoes this one (None: nothing to undo, or it is itself an undo)."""
    acts_for_starter: bool
    """Made on behalf of the run's starter: their authority is re-checked first."""
    idempotent: bool | None
    """Repeating it is harmless; None: the target declares it."""


EFFECT_SPECS: dict[EffectKind, EffectSpec] = {
    EffectKind.EXPORT: EffectSpec(EffectKind.EXPORT, EffectKind.EXPORT_RETRACTION, True, None),
    # Undoing is always allowed: it removes what the run put out, whoever holds it now.
    EffectKind.EXPORT_RETRACTION: EffectSpec(EffectKind.EXPORT_RETRACTION, None, False, True),
    # Receivers dedupe webhooks on their event id.
    EffectKind.APPROVAL_WITHDRAWAL: EffectSpec(EffectKind.APPROVAL_WITHDRAWAL, None, False, True),
}

#: Webhook events the run sent that a compensation withdraws, and the effect that does it.
WITHDRAWN_NOTIFICATIONS: dict[str, EffectKind] = {
    "approval.requested": EffectKind.APPROVAL_WITHDRAWAL,
}
