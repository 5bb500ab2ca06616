"""Every problem code the API answers, explained: the page each problem's `type` names.

A problem's `type` is `/problems/{code}`; `GET /problems/{code}` serves the entry below,
`GET /problems` all of them. A code the API can answer must be listed here (a test reads
the sources for codes and checks).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProblemType:
    code: str
    status: int
    title: str
    meaning: str
    remedy: str


def _entries(*items: tuple[str, int, str, str, str]) -> dict[str, ProblemType]:
    return {
        code: ProblemType(code, status, title, meaning, remedy)
        for code, status, title, meaning, remedy in items
    }


PROBLEMS = _entries(
    (
        "unauthenticated",
        401,
        "No API key",
        "The request carried no `Authorization: Bearer <key>` header.",
        "Send an API key created with `lifecycle apikey create`.",
    ),
    (
        "invalid_api_key",
        401,
        "Unknown or revoked API key",
        "The key is not one the fleet issued, or it was revoked.",
        "Ask an operator for a valid key (`lifecycle apikey list` shows which are active).",
    ),
    (
        "insufficient_scope",
        403,
        "The key lacks a scope",
        "The key is valid but lacks the scope this request needs (`required_scopes` names it).",
        "Use a key with that scope, or ask an operator to create one.",
    ),
    (
        "forbidden",
        403,
        "Forbidden",
        "The request is not allowed.",
        "Check the key's scopes and organizations.",
    ),
    (
        "not_found",
        404,
        "Not found",
        "The resource does not exist, or belongs to another tenant or organization (both "
        "answer the same, so ids of other tenants reveal nothing).",
        "Check the id and that the key's tenant and organizations include it.",
    ),
    (
        "method_not_allowed",
        405,
        "Method not allowed",
        "The path exists but not with this HTTP method.",
        "See `/docs` for the methods.",
    ),
    (
        "not_acceptable",
        406,
        "Not acceptable",
        "The API cannot answer in a media type the `Accept` header allows.",
        "Accept `application/json` (and `application/problem+json` for errors).",
    ),
    (
        "conflict",
        409,
        "Conflict",
        "The request conflicts with the resource's state.",
        "Read the resource again and retry.",
    ),
    (
        "idempotency_conflict",
        409,
        "Idempotency key reused for another request",
        "The idempotency key was used before with a different request; the first one stands "
        "and this one was not applied.",
        "Use a new key for a new request; repeat a request only with its own key.",
    ),
    (
        "idempotency_in_progress",
        409,
        "Request with this key still running",
        "A request with the same `Idempotency-Key` is still being handled.",
        "Retry after a moment: the first request's response will be replayed.",
    ),
    (
        "active_run_exists",
        409,
        "The assessment already has an active run",
        "An assessment runs one lifecycle at a time.",
        "Follow the active run, or cancel it before starting another.",
    ),
    (
        "concurrent_update",
        409,
        "The run changed meanwhile",
        "The run was updated by someone else between reading and writing it.",
        "Retry the request.",
    ),
    (
        "gate_not_ready",
        409,
        "The gate is not ready for an approval",
        "The draft has rows nobody decided (SoA rows without a reviewer-set implementation "
        "status, POA&M items without an owner) and the gate's policy asks for decisions "
        "first; or the report rests on an input nobody approved. `readiness` says how many "
        "rows and which, and which inputs. Nothing was recorded.",
        "Set the rows by amendment (one amendment can change every row a filter selects, "
        'e.g. `{"filter": {"undecided": true}, ...}`), or approve the inputs named; '
        "`GET /api/v1/workflows/{id}/gates` shows what is still undecided.",
    ),
    (
        "fedramp_settings_missing",
        409,
        "The export names no real system for FedRAMP",
        "An OSCAL export was asked for FedRAMP (`fedramp=true`), but the report was drafted "
        "while the SSP link or the system id setting was empty or a placeholder (an "
        "example address, 'TBD', an all-zero id). `settings` names each one; nothing was "
        "sent.",
        "Set `LIFECYCLE_OSCAL_SSP_HREF` and `LIFECYCLE_OSCAL_SYSTEM_ID` to the system's own "
        "values, then draft the report again (`POST /api/v1/workflows/{id}/new-version`).",
    ),
    (
        "payload_too_large",
        413,
        "Request body too large",
        "The body is larger than `LIFECYCLE_API_MAX_BODY_BYTES` (uploads excepted).",
        "Send a smaller body.",
    ),
    (
        "document_too_large",
        413,
        "Document too large",
        "The upload crossed `LIFECYCLE_MAX_DOCUMENT_BYTES`; it was refused as soon as it did, "
        "and nothing was stored.",
        "Split the document, or ask an operator to raise the limit.",
    ),
    (
        "unsupported_media_type",
        415,
        "Unsupported media type",
        "The request's or the document's media type is not one the API takes.",
        "Upload PDF, DOCX, XLSX, HTML, Markdown, CSV or plain text; send JSON bodies as "
        "`application/json`.",
    ),
    (
        "validation_failed",
        422,
        "The request does not match the schema",
        "A field is missing, unknown or out of range; `errors` lists each one with its location.",
        "Fix the fields named in `errors` (the schema is at `/docs`).",
    ),
    (
        "invalid_input",
        422,
        "Invalid input",
        "The request is well formed but a value cannot be used (the detail says which).",
        "Fix the value the detail names.",
    ),
    (
        "signal_rejected",
        422,
        "Signal rejected by the lifecycle",
        "The signal was recorded but is invalid for the run now (wrong approval event, "
        "version, role or step); its fate is `rejected` with the reason, and the run did not "
        "change.",
        "Read the reason and the run's state; send a valid signal.",
    ),
    (
        "role_not_held",
        422,
        "Approver role not held",
        "The approval named a role the key's principal was never granted, or the principal "
        "holds no role at all. Roles are granted by an admin, never claimed in a request.",
        "Leave `approver_role` out to act in the roles you hold, or ask an admin to grant the "
        "role (`celery -A orchestrator lifecycle role grant` or `POST /api/v1/roles/grant`).",
    ),
    (
        "unknown_framework",
        422,
        "Unknown framework",
        "`framework_selected` named a framework the run's pinned control catalogues do not "
        "have; nothing was recorded. `unknown` lists the names refused, `suggestions` the "
        "close matches for each, `available` every framework the run can be scoped to.",
        'Send a name from `available` (versions count: "ISO/IEC 27001:2022", "PCI DSS '
        '4.0"); `GET /api/v1/frameworks` lists them, or import the catalogue that has it '
        "(`lifecycle catalog import`).",
    ),
    (
        "unknown_category",
        422,
        "Unknown category",
        "`framework_selected` chose a category its framework does not have, or chose "
        "categories for frameworks without any; nothing was recorded.",
        "Choose from the framework's `categories` (`GET /api/v1/frameworks`); SOC 2 has "
        "Security (always in scope), Availability, Processing Integrity, Confidentiality "
        "and Privacy.",
    ),
    (
        "date_in_past",
        422,
        "Date already past",
        "A date that must lie ahead has passed: an evidence request's due date before "
        "today, or its link's expiry before now. Nothing was recorded.",
        "Send today's date or a later one (the schema states the format; only the server "
        "knows today).",
    ),
    (
        "invalid_cursor",
        422,
        "Cursor not issued by the API",
        "The `cursor` has the alphabet of a cursor but is not one a listing answered.",
        "Pass back the `next_cursor` of the previous page, unchanged; leave it out for the "
        "first page.",
    ),
    (
        "already_on_roster",
        422,
        "Already on the roster",
        "Another person on the assessment's roster has this email or principal id; nothing "
        "was recorded. The detail names them.",
        "Change that person's entry (`PUT .../roster/{personId}`) instead of adding them again.",
    ),
    (
        "dates_out_of_order",
        422,
        "Dates out of order",
        "Two dates of the request are in the wrong order (a document expiring on or before "
        "the day it takes effect). Nothing was recorded.",
        "Send the later date after the earlier one.",
    ),
    (
        "document_refused",
        422,
        "Document refused",
        "The upload is empty, or its content is no type the readers take (the type is "
        "decided from the bytes, whatever the name or declared type says); `reason` names "
        "the document code. Nothing was stored.",
        "Upload PDF, DOCX, XLSX, HTML, Markdown, CSV or plain text, with content.",
    ),
    (
        "origin_run_refused",
        422,
        "Run not one this start may follow",
        "A reassessment, retry or replay names in `origin_ref` a run of another assessment, "
        "or one not finished as it needs (a reassessment: completed; a retry: cancelled).",
        "Name a finished run of the same assessment (`GET /api/v1/workflows?assessmentId=`).",
    ),
    (
        "approval_policy_refused",
        422,
        "Approval policy contradicts itself",
        "A gate's approval policy cannot hold: an N-of-M policy requires more approvals than "
        "it names approvers (the schema states the rest: approvers distinct, and named for "
        "every mode but `single`). Nothing was started.",
        "Name at least `required` approvers, or lower `required`.",
    ),
    (
        "carry_over_refused",
        422,
        "Carry-over from another organization",
        "`carry_over_from` names an assessment of another organization than the new one's: "
        "an assessment carries over only its own organization's approved rows.",
        "Name an earlier assessment of the same `organization_id`, or leave it out.",
    ),
    (
        "separation_of_duties",
        422,
        "Risk owner cannot accept the risk",
        "The residual risk of a risk in the register was to be accepted by the risk's own "
        "owner. ISO/IEC 27001 6.1.3 asks the risk owners to approve the treatment plan and "
        "accept residual risk; the product keeps acceptance with another person, who has "
        "the authority for it. Nothing was recorded.",
        "Ask another person with the `approve` scope to accept it, or change the owner first.",
    ),
    (
        "risk_proposal_decided",
        409,
        "Risk proposal already decided",
        "A risk a gap finding proposed was already accepted, merged or rejected: a proposal "
        "is decided once. The response names how it was `decided` and, when accepted or "
        "merged, its `risk_id`. Nothing was recorded.",
        "Read the proposal again (`GET /api/v1/risk-proposals/{id}`); revise the risk it "
        "led to in the register instead.",
    ),
    (
        "unknown_catalogue_id",
        422,
        "Not in the current catalogues",
        "A risk named an SCF control id, a framework or a framework requirement id that the "
        "catalogues a run starting now would pin do not have. The response names it "
        "(`unknown_controls`, or `framework` and `requirement_id`). Nothing was recorded.",
        "Use ids as the catalogue writes them (`GET /api/v1/catalogs`, `lifecycle framework "
        "show`), or import the catalogue version that has them.",
    ),
    (
        "nothing_to_reopen",
        409,
        "No approved SoA to re-open",
        "A catalogue diff or adoption needs the assessment's approved SoA: its rows are what "
        "a new catalogue version re-opens.",
        "Approve the SoA first; until then the run uses the catalogue it was started with.",
    ),
    (
        "reassessment_not_failed",
        409,
        "The reassessment did not fail",
        "Only a failed reassessment can be retried: a pending one is being evaluated, an "
        "evaluated one is done. The same Idempotency-Key again answers the first retry.",
        "Read the reassessment: its `status` says where it is; retry only when it is `failed`.",
    ),
    (
        "gate_not_waiting",
        409,
        "The run does not wait at this gate",
        "A review is claimed while its gate waits for a decision; the run is at another "
        "step now, before the gate or past it.",
        "Read the run's `current_step`; claim the review of the gate it waits at.",
    ),
    (
        "handoff_conflict",
        409,
        "Handoff taken by someone else",
        "The handoff was resolved already, another operator holds its claim, or it was "
        "claimed again after the fence this request names; nothing was changed. The detail "
        "names who resolved or holds it.",
        "Read the handoff (`GET /api/v1/handoffs/{id}`): if resolved, there is nothing left "
        "to do; if claimed, wait for the claim to lapse or ask its holder.",
    ),
    (
        "invalid_idempotency_key",
        422,
        "Invalid idempotency key",
        "The `Idempotency-Key` header is empty, too long or not printable.",
        "Send 1 to 256 printable characters.",
    ),
    (
        "idempotency_key_mismatch",
        422,
        "Two different idempotency keys",
        "The `Idempotency-Key` header and the body's `idempotency_key` disagree.",
        "Send one of them, or the same value in both.",
    ),
    (
        "unexpected_field",
        422,
        "Unexpected form field",
        "The upload has a form field other than `file`.",
        "Send one multipart part named `file`.",
    ),
    (
        "too_many_files",
        422,
        "More than one file",
        "An upload takes one document.",
        "Upload documents one request at a time.",
    ),
    (
        "file_missing",
        422,
        "No file part",
        "The upload has no `file` part.",
        "Send the document as the multipart part `file`.",
    ),
    (
        "malformed_multipart",
        400,
        "Malformed multipart body",
        "The multipart body could not be read (bad boundary, headers too large, ended early).",
        "Send a well-formed `multipart/form-data` body.",
    ),
    (
        "client_disconnected",
        400,
        "Upload ended early",
        "The client closed the connection before the body was complete; nothing was stored.",
        "Upload again.",
    ),
    (
        "bad_request",
        400,
        "Bad request",
        "The request could not be understood.",
        "Check the method, path, headers and body.",
    ),
    (
        "lifecycle_error",
        400,
        "Lifecycle error",
        "The request was refused (the detail says why).",
        "Read the detail.",
    ),
    (
        "http_error",
        400,
        "HTTP error",
        "An HTTP-level error without a more specific code.",
        "Read the status and the detail.",
    ),
    (
        "review_claimed",
        409,
        "Review claimed by another reviewer",
        "Another reviewer claimed this gate's review in the console and the claim has not "
        "lapsed; the problem names who and until when.",
        "Wait for them to release it or for the claim to lapse (LIFECYCLE_CONSOLE_CLAIM_TTL_S), "
        "or ask them.",
    ),
    (
        "link_refused",
        410,
        "Link expired or revoked",
        "The evidence request's link passed its expiry or the assessor revoked it; it "
        "accepts no upload.",
        "Ask the assessor who sent it for a new request.",
    ),
    (
        "rate_limited",
        429,
        "Too many uploads",
        "The evidence request's link took its limit of uploads for the last hour.",
        "Wait, then send the file again.",
    ),
    (
        "database_busy",
        503,
        "Database busy",
        "The embedded SQLite database stayed busy (another writer held its one write lock) "
        "for longer than the busy timeout, retries included; nothing of the request was "
        "stored.",
        "Send the request again (with the same Idempotency-Key it acts once); raise "
        "LIFECYCLE_DATABASE_BUSY_TIMEOUT_S, or use PostgreSQL, if it recurs.",
    ),
    (
        "internal_error",
        500,
        "Internal error",
        "Something failed unexpectedly. Details are only in the server's log, under the "
        "response's trace id; nothing partial was stored.",
        "Retry later; report the `X-Trace-Id` to an operator if it persists.",
    ),
)
