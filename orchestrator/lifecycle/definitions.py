"""Lifecycle definitions: versioned, content-hashed, pinned by every run for its life.

A definition is the lifecycle's shape: which of the spec's steps run and in what order,
the gates before each, the job kind of each job step, the default signoff policy of each
gate, and the drafts published outside when they are made. A step means the same in
every definition (its kind, what completes it, what it awaits or drafts); a definition
chooses which steps run and how they are guarded.

A deployment ships the definitions in `_shipped` (`ship()` adds one); new runs pin the
newest. A run keeps its pin for life, so a deployment that ships v2 beside v1 runs new
runs on v2 and old ones on v1. A run whose pin this deployment does not ship fails with
that reason (unless the pin is newer than anything shipped: that is a worker not yet
upgraded, so the run waits for one that is); an operator may move it to a shipped
definition that declares a migration from its own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Protocol

from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    APPROVED_ANY_TIME,
    APPROVED_KINDS,
    STEP_SPECS,
    StepSpec,
)
from orchestrator.lifecycle.policies import DEFAULT_POLICY, GatePolicy

#: What each step is, in every definition (its kind, signals, artifact).
_VOCABULARY = STEP_SPECS


def _frozen(mapping: Mapping[Any, Any] | None = None) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Migration:
    """A run on `from_version` may move to the definition declaring this. `steps` says
    where a run standing at a step of the old definition stands in the new one; a step
    not named stands where it is (and must exist in the new definition)."""

    from_version: int
    steps: Mapping[Step, Step] = field(default_factory=_frozen)


@dataclass(frozen=True)
class LifecycleDefinition:
    version: int
    steps: tuple[StepSpec, ...]
    default_policies: Mapping[ArtifactKind, GatePolicy] = field(default_factory=_frozen)
    """Signoff policy of a gate when the start request sets none."""
    publishes: frozenset[ArtifactKind] = frozenset()
    """Drafts published to the tenant's export targets when they are made."""
    migrations: tuple[Migration, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem is not None:
            raise ValueError(f"definition v{self.version}: {problem}")

    @property
    def label(self) -> str:
        return f"v{self.version}"

    @cached_property
    def by_step(self) -> Mapping[Step, StepSpec]:
        return MappingProxyType({spec.step: spec for spec in self.steps})

    def has(self, step: Step) -> bool:
        return step in self.by_step

    def spec(self, step: Step) -> StepSpec:
        return self.by_step[step]

    def next(self, step: Step) -> Step | None:
        order = [spec.step for spec in self.steps]
        position = order.index(step) + 1
        return order[position] if position < len(order) else None

    def policy(self, kind: ArtifactKind) -> GatePolicy:
        return self.default_policies.get(kind, DEFAULT_POLICY)

    def migration_from(self, version: int) -> Migration | None:
        return next((m for m in self.migrations if m.from_version == version), None)

    def content(self) -> dict[str, Any]:
        """Everything a run's behaviour rests on (migrations and wording are not)."""
        approvable = sorted(set(APPROVED_KINDS) & self.produced())
        return {
            "steps": [
                {
                    "step": spec.step.value,
                    "kind": spec.kind.value,
                    "job_kind": spec.job_kind.value if spec.job_kind else None,
                    "requires_approved": [kind.value for kind in spec.requires_approved],
                }
                for spec in self.steps
            ],
            "policies": {kind.value: self.policy(kind).to_json() for kind in approvable},
            "publishes": sorted(kind.value for kind in self.publishes),
        }

    @cached_property
    def content_hash(self) -> str:
        encoded = json.dumps(self.content(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(encoded).hexdigest()

    def produced(self) -> frozenset[ArtifactKind]:
        return frozenset(spec.produces for spec in self.steps if spec.produces is not None)

    def derive(
        self,
        version: int,
        *,
        omit: Iterable[Step] = (),
        gates: Mapping[Step, tuple[ArtifactKind, ...]] | None = None,
        job_kinds: Mapping[Step, JobKind] | None = None,
        default_policies: Mapping[ArtifactKind, GatePolicy] | None = None,
        publishes: frozenset[ArtifactKind] | None = None,
        migrations: tuple[Migration, ...] = (),
        description: str = "",
    ) -> LifecycleDefinition:
        """The next definition: this one with steps left out, gates or job kinds changed."""
        left_out, gates, job_kinds = set(omit), gates or {}, job_kinds or {}
        steps = tuple(
            replace(
                spec,
                requires_approved=gates.get(spec.step, spec.requires_approved),
                job_kind=job_kinds.get(spec.step, spec.job_kind),
            )
            for spec in self.steps
            if spec.step not in left_out
        )
        return LifecycleDefinition(
            version,
            steps,
            _frozen(self.default_policies if default_policies is None else default_policies),
            self.publishes if publishes is None else publishes,
            migrations,
            description,
        )


def _problem(definition: LifecycleDefinition) -> str | None:
    order = [spec.step for spec in definition.steps]
    checks = (
        (definition.version >= 1, "versions start at 1"),
        (order == sorted(set(order), key=STEP_ORDER.index), "steps must be distinct, in order"),
        (
            order[:1] == [Step.VALIDATE_ASSESSMENT] and order[-1:] == [Step.CLOSE_ASSESSMENT],
            "the first step validates the assessment and the last closes it",
        ),
    )
    for holds, problem in checks:
        if not holds:
            return problem
    return _step_problem(definition) or _migration_problem(definition)


def _step_problem(definition: LifecycleDefinition) -> str | None:
    produced = definition.produced()
    for spec in definition.steps:
        same = replace(spec, requires_approved=(), job_kind=None)
        usual = replace(_VOCABULARY[spec.step], requires_approved=(), job_kind=None)
        if same != usual:
            return f"{spec.step.value} must keep its kind, signals and artifact"
        if spec.kind is StepKind.JOB and spec.job_kind is None:
            return f"job step {spec.step.value} needs a job kind"
        missing = [
            kind.value
            for kind in spec.requires_approved
            if kind not in produced
            or (kind not in APPROVED_ANY_TIME and not definition.has(APPROVAL_WAIT_FOR[kind]))
        ]
        if missing:
            return f"the gate of {spec.step.value} needs {', '.join(missing)}, never approved"
    for kind, wait in APPROVAL_WAIT_FOR.items():
        if definition.has(wait) and kind not in produced:
            return f"{wait.value} waits for a {kind.value} draft that no step makes"
    if not definition.publishes <= produced:
        return "it publishes drafts that no step makes"
    return None


def _migration_problem(definition: LifecycleDefinition) -> str | None:
    for migration in definition.migrations:
        for old, new in migration.steps.items():
            if not definition.has(new):
                return f"its migration maps {old.value} to {new.value}, not one of its steps"
            if _VOCABULARY[old].kind is not _VOCABULARY[new].kind:
                return f"its migration maps {old.value} to {new.value}, a step of another kind"
    return None


# --- what this deployment ships ---------------------------------------------------------

V1 = LifecycleDefinition(
    1,
    tuple(STEP_SPECS.values()),
    publishes=frozenset({ArtifactKind.REPORT}),
    description="The spec's 20 steps and five gates; the report draft is published.",
)

_shipped: dict[int, LifecycleDefinition] = {V1.version: V1}


def ship(definition: LifecycleDefinition) -> None:
    """Ship a definition in this process (new runs pin the newest). A version ships with
    one content: shipping other content under a shipped version is refused."""
    known = _shipped.get(definition.version)
    if known is not None and known.content_hash != definition.content_hash:
        raise ValueError(f"{definition.label} is shipped already with other content")
    _shipped[definition.version] = definition


def retire(version: int) -> None:
    """Stop shipping a version: runs pinned to it fail, or migrate."""
    if len(_shipped) == 1 and version in _shipped:
        raise ValueError("a deployment ships at least one definition")
    _shipped.pop(version, None)


def shipped() -> tuple[LifecycleDefinition, ...]:
    return tuple(_shipped[version] for version in sorted(_shipped))


def current() -> LifecycleDefinition:
    """The definition new runs pin."""
    return _shipped[max(_shipped)]


def find(version: int) -> LifecycleDefinition | None:
    return _shipped.get(version)


class Pinned(Protocol):
    @property
    def definition_version(self) -> int: ...

    @property
    def definition_hash(self) -> str | None: ...


def unavailable(pin: Pinned) -> str | None:
    """Why a run cannot run on its pinned definition here; None when it can."""
    definition = _shipped.get(pin.definition_version)
    label = f"v{pin.definition_version}"
    if definition is None:
        versions = ", ".join(d.label for d in shipped())
        return f"lifecycle definition {label} is not shipped (this deployment ships {versions})"
    if pin.definition_hash is not None and pin.definition_hash != definition.content_hash:
        return (
            f"lifecycle definition {label} changed since the run pinned it "
            f"({pin.definition_hash[:12]} pinned, {definition.content_hash[:12]} shipped)"
        )
    return None


def not_yet_shipped(pin: Pinned) -> bool:
    """The pin is newer than every shipped definition: a deployment still rolling out."""
    return pin.definition_version > max(_shipped)


def of(pin: Pinned) -> LifecycleDefinition:
    """The run's definition (decide() has checked that it is available)."""
    return _shipped[pin.definition_version]
