"""Every error the product raises, as one tree under `FleetError`.

The errors a caller can act on are `LifecycleError`s, each with a stable `code` and an
HTTP status (the API maps them to problem details); they are defined here. The others
are defined beside the code that raises them, and derive from `FleetError` (and, where
callers catch them as such, from the built-in they refine). A test keeps this drawing
equal to the classes.

    FleetError
    ├── LifecycleError                       a caller can act on it: code, HTTP status
    │   ├── NotFound
    │   ├── InvalidInput
    │   │   ├── RoleNotHeld
    │   │   ├── UnknownFrameworkSelected
    │   │   ├── UnknownCategorySelected
    │   │   ├── DateInPast                   a date that must lie ahead has passed
    │   │   ├── InvalidCursor                a listing's cursor the API did not issue
    │   │   ├── DatesOutOfOrder              a date before the one it must follow
    │   │   ├── DocumentRefused              a document's content is no type the readers take
    │   │   ├── OriginRunRefused             the run a start follows is not one it may follow
    │   │   ├── CarryOverRefused             a carry-over from another organization's assessment
    │   │   ├── AlreadyOnRoster              a person the roster already holds
    │   │   ├── PolicyRefused                an approval policy its own fields contradict
    │   │   ├── SeparationOfDuties           a risk's owner accepting its residual risk
    │   │   └── UnknownCatalogueId           a control or requirement id the catalogues lack
    │   ├── IdempotencyConflict
    │   ├── IdempotencyInProgress            its first request is still being handled
    │   ├── ActiveRunExists
    │   ├── ConcurrentUpdate
    │   ├── DatabaseBusy
    │   ├── SignalRejected
    │   ├── GateNotWaiting                   a review claimed while the run waits elsewhere
    │   ├── GateNotReady
    │   ├── NothingToReopen                  no approved SoA for a catalogue change to re-open
    │   ├── FedrampSettingsMissing           an OSCAL export for FedRAMP with placeholders
    │   ├── ReassessmentNotFailed            a retry of a reassessment that did not fail
    │   ├── HandoffConflict
    │   ├── ReviewClaimed
    │   ├── LinkRefused                      an evidence request's link expired or revoked
    │   ├── TooManyAttempts                  too many uploads through one link
    │   └── RiskProposalDecided              a risk proposal decided a second time
    ├── catalogues (orchestrator.catalog)
    │   ├── CatalogLookupError               LookupError
    │   ├── CatalogNotFound                  LookupError
    │   ├── NoScfCatalog                     LookupError
    │   ├── UnknownFramework                 ValueError
    │   ├── UnknownCategory                  ValueError
    │   ├── WorkbookFormatError              ValueError
    │   ├── CatalogFileError                 ValueError
    │   ├── OscalFormatError                 ValueError
    │   └── CatalogConflict                  ValueError
    ├── documents and models
    │   ├── DocumentError                    a document refused, with its code
    │   ├── ChannelClosed, ChannelTimeout    the parser sandbox's pipe (workers.ingestion)
    │   └── ModelUnavailable                 RuntimeError: an optional model not installed
    ├── jobs (orchestrator.jobs)
    │   ├── JobFailure                       a job body's failure, retryable or not
    │   ├── PrepareAgain                     the job's input changed: prepare again
    │   ├── JobNotRun                        celery's Ignore: a delivery not to run
    │   └── JobFailedForGood                 no attempts left
    │       └── JobAlreadyFailed                 its outcome was recorded before
    ├── the engine and its storage
    │   ├── RegistrationError                LookupError: a handler missing or registered twice
    │   ├── ComputeUnderWriteLock            RuntimeError: heavy work inside a write
    │   ├── ReplayDiverged                   AssertionError: a replay left the record
    │   └── HistoryMismatch                  AssertionError: a golden history changed
    └── edges
        ├── InvalidSignature                 ValueError: a webhook signature
        ├── AddressRefused                   an outbound address not allowed
        ├── NotConnected                     an outbound request not sent
        ├── FlowerAuthError                  ValueError: Flower's credentials
        ├── ApiProblem                       an HTTP problem response
        ├── BodyTooLarge                     an HTTPException: 413 before parsing
        ├── SignInRequired, PageError        console pages
        └── RunStalled                       TimeoutError: a demo run that stopped moving
"""

from __future__ import annotations

from typing import Any


class FleetError(Exception):
    """The root of every error the product raises."""


class LifecycleError(FleetError):
    code = "lifecycle_error"
    http_status = 400

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(LifecycleError):
    code = "not_found"
    http_status = 404


class InvalidInput(LifecycleError):
    code = "invalid_input"
    http_status = 422


class IdempotencyConflict(LifecycleError):
    """The idempotency key was used before with a different request."""

    code = "idempotency_conflict"
    http_status = 409


class IdempotencyInProgress(LifecycleError):
    """A request with this idempotency key is still being handled."""

    code = "idempotency_in_progress"
    http_status = 409


class ActiveRunExists(LifecycleError):
    code = "active_run_exists"
    http_status = 409


class ConcurrentUpdate(LifecycleError):
    """The run changed under us (version mismatch); the caller retries."""

    code = "concurrent_update"
    http_status = 409


class DatabaseBusy(LifecycleError):
    """The database stayed busy (SQLite's one write lock held elsewhere) for longer than
    the busy timeout, retries included. Nothing of the request was stored."""

    code = "database_busy"
    http_status = 503


class SignalRejected(LifecycleError):
    """The signal was recorded but is invalid for this run (the reason says why)."""

    code = "signal_rejected"
    http_status = 422


class RoleNotHeld(InvalidInput):
    """An approval named a role its principal was never granted (or holds no role at all)."""

    code = "role_not_held"


class UnknownFrameworkSelected(InvalidInput):
    """A framework_selected signal names a framework the run's catalogues do not have;
    nothing is recorded. Details list the available frameworks and the close matches."""

    code = "unknown_framework"


class UnknownCategorySelected(InvalidInput):
    """A framework_selected signal chose a category its framework does not have (or chose
    categories for frameworks without any); nothing is recorded."""

    code = "unknown_category"


class DateInPast(InvalidInput):
    """A date that must lie ahead (an evidence request's due date, its link's expiry) has
    passed: a rule on today's date, which no request schema can state."""

    code = "date_in_past"


class InvalidCursor(InvalidInput):
    """A listing's cursor that this API did not issue: the document states its alphabet,
    only the server can tell one it issued."""

    code = "invalid_cursor"


class AlreadyOnRoster(InvalidInput):
    """A person whose email or principal id another entry of the roster has: a rule
    against the roster's state, not the request's form."""

    code = "already_on_roster"


class DatesOutOfOrder(InvalidInput):
    """Two dates of one request in the wrong order (a document expiring before it takes
    effect): a comparison no request schema states."""

    code = "dates_out_of_order"


class DocumentRefused(InvalidInput):
    """An upload whose content is empty or no type the readers take; the type is decided
    from the bytes, so no request schema can state it. `reason` names the document code."""

    code = "document_refused"


class OriginRunRefused(InvalidInput):
    """A reassessment, retry or replay names a run it may not follow (another
    assessment's, or not finished as it needs): the server's state, not the request's form."""

    code = "origin_run_refused"


class CarryOverRefused(InvalidInput):
    """A new assessment carrying over from an assessment of another organization: the
    stored assessment's organization, not the request's form."""

    code = "carry_over_refused"


class PolicyRefused(InvalidInput):
    """An approval policy whose fields contradict each other (an N-of-M needing more
    approvals than it names approvers)."""

    code = "approval_policy_refused"


class SeparationOfDuties(InvalidInput):
    """A risk's residual risk accepted by the risk's own owner: acceptance needs another
    person, with the authority for it (ISO/IEC 27001 6.1.3 (f)); nothing is recorded."""

    code = "separation_of_duties"


class RiskProposalDecided(LifecycleError):
    """A risk proposal already accepted, merged or rejected was to be decided again: a
    proposal is decided once; the answer names its status (and its risk)."""

    code = "risk_proposal_decided"
    http_status = 409


class UnknownCatalogueId(InvalidInput):
    """A risk names an SCF control, a framework or a requirement the current catalogues
    do not have: catalogue data, not an enum a schema could state. Nothing is recorded."""

    code = "unknown_catalogue_id"


class NothingToReopen(LifecycleError):
    """A catalogue diff or adoption for an assessment without an approved SoA: there are
    no rows to re-open yet."""

    code = "nothing_to_reopen"
    http_status = 409


class FedrampSettingsMissing(LifecycleError):
    """An OSCAL export asked for FedRAMP whose SSP link or system id is a placeholder: the
    settings the report was drafted with. Details name each setting to set."""

    code = "fedramp_settings_missing"
    http_status = 409


class ReassessmentNotFailed(LifecycleError):
    """A retry of a reassessment that is not failed: only a failed one is sent again
    (a pending one is being evaluated, an evaluated one is done)."""

    code = "reassessment_not_failed"
    http_status = 409


class GateNotWaiting(LifecycleError):
    """A claim on a gate's review while the run does not wait at that gate: there is no
    decision to claim yet, or any more."""

    code = "gate_not_waiting"
    http_status = 409


class GateNotReady(LifecycleError):
    """An approval of a draft whose gate is not ready: rows nobody decided yet (where the
    gate's policy asks for decisions first), or a report resting on an unapproved input.
    Nothing is recorded; details say how many and which."""

    code = "gate_not_ready"
    http_status = 409


class HandoffConflict(LifecycleError):
    """Someone else resolved the handoff, holds its claim, or claimed it after the fence
    the caller names; nothing was changed."""

    code = "handoff_conflict"
    http_status = 409


class ReviewClaimed(LifecycleError):
    """Another reviewer holds an unexpired claim on this gate's review."""

    code = "review_claimed"
    http_status = 409


class LinkRefused(LifecycleError):
    """An evidence request's link that expired or was revoked: it takes nothing."""

    code = "link_refused"
    http_status = 410


class TooManyAttempts(LifecycleError):
    """Too many uploads through one link in a short time."""

    code = "rate_limited"
    http_status = 429
