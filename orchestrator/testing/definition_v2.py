"""A second lifecycle definition, for tests of pinning and migration: v1 without the
step that ingests the approved SoA, with a migration from v1 that moves a run standing
there to the evidence analysis. Importing this module ships nothing (see
`orchestrator.testing.ship_definition_v2`)."""

from __future__ import annotations

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definitions import V1, Migration

V2 = V1.derive(
    2,
    omit=(Step.INGEST_SOA,),
    migrations=(Migration(1, {Step.INGEST_SOA: Step.RUN_EVIDENCE_ANALYSIS}),),
    description="v1 without ingesting the approved SoA.",
)
