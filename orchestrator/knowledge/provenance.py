"""Who put a document in the knowledge base: people, or the orchestrator itself."""

from __future__ import annotations

#: `Document.uploaded_by` of documents the fleet writes (the approved SoA). They are
#: searchable, but never count as evidence that a control is implemented.
SYSTEM_UPLOADER = "system:orchestrator"
