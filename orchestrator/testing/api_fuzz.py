"""The producer API fuzzed from its own OpenAPI document (Schemathesis): every check on,
every phase (examples, coverage, fuzzing, and the stateful phase that follows the
document's links), a fixed seed and a bounded budget.

A finding is a check that failed on a case. The only findings excused are the business
rules a schema cannot state, each named below with its reason and recognised by the
problem `code` the server answers with; everything else counts.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema

#: Problem codes a schema-valid request may still earn, and why no schema can say so.
BUSINESS_RULES: Mapping[str, str] = {
    "date_in_past": "a due date or link expiry must lie ahead: it depends on today's date",
    "invalid_cursor": "a cursor is the server's opaque token; the document states its "
    "alphabet, only the server can tell one it issued",
    "idempotency_key_mismatch": "the Idempotency-Key header and the body's idempotency_key "
    "must agree: a rule across two parts of a request",
    "signal_rejected": "a signal valid in form is still judged against the run's state "
    "(its step, the approval event's version and roles)",
    "unknown_framework": "frameworks are the run's pinned catalogues' data, not an enum",
    "unknown_category": "categories belong to the framework chosen in the same request",
    "role_not_held": "roles are granted by an admin; the schema cannot know who holds one",
    "link_refused": "an evidence link revoked or expired answers 410: the resource's "
    "state, as a 404 is for an id that does not exist",
    "already_on_roster": "a roster names a person once (email or principal): the roster's state",
    "dates_out_of_order": "a document's expiry after the day it takes effect: a comparison "
    "between two fields",
    "origin_run_refused": "the run a reassessment, retry or replay follows must exist and "
    "be finished: the server's state",
    "carry_over_refused": "the assessment carried over from must be of the same "
    "organization: the stored assessment's, compared with a field of the request",
    "approval_policy_refused": "an N-of-M policy's `required` may not exceed its approvers: "
    "a comparison between a number and a list's length",
    "unknown_catalogue_id": "SCF control, framework and requirement ids are the current "
    "catalogues' data, not an enum",
    "separation_of_duties": "the acceptor of a risk must not be its owner: a comparison "
    "between the caller and the stored risk",
    "document_refused": "a document's type is decided from its bytes; the document can "
    "only say an upload is binary",
}

#: Problem codes an invalid request may earn before its body is read, and why: the
#: resource's state is judged first, as a 404 is for an id that does not exist.
STATE_BEFORE_BODY: Mapping[str, str] = {
    "link_refused": "a revoked or expired evidence link answers 410 whatever is sent to it",
}

#: Steps of one stateful scenario (Schemathesis's default is 6).
STATEFUL_STEPS = 20

#: Answers a schema-valid request gets by design while no worker consumes the queues.
UNREADY_BY_DESIGN = frozenset({"GET /readyz", "GET /health"})


@dataclass
class FuzzReport:
    cases: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    excused: Counter[str] = field(default_factory=Counter)
    excused_samples: dict[str, set[str]] = field(default_factory=dict)
    samples: dict[str, list[str]] = field(default_factory=dict)
    operations: set[str] = field(default_factory=set)
    #: The document's links the stateful phase applied ("source -> [status] name -> target"),
    #: and those of them whose target then answered 2xx: the id it carried was real.
    links_followed: set[str] = field(default_factory=set)
    links_answered: set[str] = field(default_factory=set)

    def lines(self) -> list[str]:
        out = [f"cases tried: {self.cases}", f"operations reached: {len(self.operations)}"]
        out.append(f"failures: {sum(self.failures.values())}")
        out += [f"  {kind}: {count}" for kind, count in sorted(self.failures.items())]
        for kind, samples in sorted(self.samples.items()):
            out += [f"  e.g. {kind}: {sample}" for sample in samples[:3]]
        out.append(
            f"links followed: {len(self.links_followed)}, answered 2xx: {len(self.links_answered)}"
        )
        out += [
            f"  {link}{'' if link in self.links_answered else ' (no 2xx)'}"
            for link in sorted(self.links_followed)
        ]
        out.append(f"business rules met (excused): {sum(self.excused.values())}")
        for code, count in sorted(self.excused.items()):
            out.append(f"  {code}: {count}")
            out += [f"    e.g. {sample}" for sample in sorted(self.excused_samples[code])]
        return out


def _problem(body: bytes | str | None) -> dict[str, Any]:
    try:
        decoded = json.loads(body or b"")
    except (ValueError, TypeError):
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _why(problem: Mapping[str, Any]) -> str:
    """The problem's first field error, or its detail: enough to find the rule refused."""
    errors = problem.get("errors") or []
    if errors and isinstance(errors[0], dict):
        first = errors[0]
        return f"{first.get('loc')}: {first.get('msg')}"
    return str(problem.get("detail") or "")


#: Schemathesis's phases, in the order it runs them.
PHASES = ("examples", "coverage", "fuzzing", "stateful")


def config(
    seed: int,
    max_examples: int,
    headers: Mapping[str, str],
    phases: tuple[str, ...] = PHASES,
) -> SchemathesisConfig:
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise ValueError(f"no such phase: {', '.join(sorted(unknown))} (phases: {PHASES})")
    return SchemathesisConfig.from_dict(
        {
            "seed": seed,
            "headers": dict(headers),
            "generation": {"mode": "all", "max-examples": max_examples, "deterministic": True},
            "checks": {"enabled": True},
            "phases": {
                "examples": {"enabled": "examples" in phases},
                "coverage": {"enabled": "coverage" in phases},
                "fuzzing": {"enabled": "fuzzing" in phases},
                # Scenarios long enough to go from an assessment's creation through its
                # run to the signals and approvals, following the document's links only:
                # links Schemathesis infers from names guess wrong here (that the latest
                # run of an assessment created a moment ago exists), the document says.
                "stateful": {
                    "enabled": "stateful" in phases,
                    "max-steps": STATEFUL_STEPS,
                    "inference": {"algorithms": []},
                },
            },
        }
    )


def run(
    app: Any,
    document: dict[str, Any],
    *,
    headers: Mapping[str, str],
    seed: int,
    max_examples: int,
    max_seconds: int | None = None,
    phases: tuple[str, ...] = PHASES,
) -> FuzzReport:
    """Fuzz `app` (ASGI) from `document` in `phases`; the findings by check. Without
    `max_seconds`, only `max_examples` bounds the run: what it tries then depends on the
    seed alone, not on the machine's speed."""
    settings = config(seed, max_examples, headers, phases)
    if max_seconds is not None:
        settings.projects.override.max_time = max_seconds
    # A copy: Schemathesis rewrites the dict it is given (its links among them), and the
    # app answers every later caller with the same cached document.
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document), config=settings)
    schema.app = app
    report = FuzzReport()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            _record(report, event)
        elif isinstance(event, events.FatalError):
            raise event.exception
    return report


def _record(report: FuzzReport, event: events.ScenarioFinished) -> None:
    recorder = event.recorder
    for case_id, node in recorder.cases.items():
        report.cases += 1
        case = node.value
        label = case.operation.label
        report.operations.add(label)
        interaction = recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        transition = node.transition
        if transition is not None and node.is_transition_applied and not transition.is_inferred:
            report.links_followed.add(transition.id)
            if response is not None and 200 <= response.status_code < 300:
                report.links_answered.add(transition.id)
        for check in recorder.checks.get(case_id, []):
            if check.failure_info is None:
                continue
            name = check.name
            if name == "not_a_server_error" and label in UNREADY_BY_DESIGN:
                continue
            problem = _problem(response.content if response is not None else None)
            code = str(problem.get("code") or "")
            if (name == "positive_data_acceptance" and code in BUSINESS_RULES) or (
                name == "negative_data_rejection" and code in STATE_BEFORE_BODY
            ):
                report.excused[code] += 1
                report.excused_samples.setdefault(code, set()).add(f"{label}: {_why(problem)}")
                continue
            report.failures[name] += 1
            status = response.status_code if response is not None else "-"
            why = _why(problem) or (check.failure_info.failure.title if check.failure_info else "")
            via = f" (via {transition.id})" if transition is not None else ""
            sample = f"{label} -> {status} {code} {why}{via}".strip()
            samples = report.samples.setdefault(name, [])
            if sample not in samples:
                samples.append(sample)
