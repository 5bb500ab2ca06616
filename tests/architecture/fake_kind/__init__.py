"""A gated artifact kind, `vendor_review`, added the way a real one is, in four files:

- `facts.py`: its declaration, as it would stand in `ARTIFACTS`
  (orchestrator/contracts/artifact_registry.py);
- `drafting.py`: its drafting function, registered with `@drafts` (a module of
  workers/analysis);
- `console.py`: its console tables, amendment form and chart, each registered (a module
  of orchestrator/console);
- `registrations.py`: the imports of those two (lines in
  orchestrator/runtime/registrations.py).

Its names are also members of the lifecycle's enumerations and `StepSpec`s (the reference
documents' contract), which a test cannot extend; everything else (rewind's versioned
kinds, the report's inputs, labels and gates, the gate's readiness, the console) picks it
up from these files (tests/architecture/test_artifact_declarations.py).
"""
