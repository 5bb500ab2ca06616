"""The approvals' seals as OSCAL back-matter: one resource per sealed approval of a report
input, whose links carry the SHA-256 the approval recorded, so a reader can check that
the approved artifact and the evidence documents it cited are the ones they hold.

The first link is the approved artifact (its API path); its hash is the digest of the
artifact's content as canonical JSON (keys sorted, no spaces, UTF-8), which `lifecycle
verify RUN` recomputes. Each further link is a document version the content cited (its
file name; the hash of its bytes). An approval recorded before approvals were sealed has
no seal and no resource."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from workers.reporting.oscal_parts import NS, stable_uuid
from workers.reporting.render import ReportInput

CANONICAL = "canonical JSON (keys sorted, no spaces, UTF-8)"


def seal_resources(report: ReportInput) -> list[dict[str, Any]]:
    documents = {str(d.get("id")): d for d in report.documents}
    resources: list[dict[str, Any]] = []
    for entry in report.signoff:
        what = f"{entry.get('label')} v{entry.get('version')}"
        for approval in entry.get("approvals", []):
            sealed = approval.get("sealed")
            if not sealed:
                continue
            by, at = str(approval.get("approver_id")), str(approval.get("at"))
            cited = sorted(dict(sealed.get("cited_documents") or {}).items())
            resources.append(
                {
                    "uuid": stable_uuid(report.title, "seal", what, by, at),
                    "title": f"Approval of {what} by {by} ({at}): its seal",
                    "description": f"The SHA-256 the approval sealed: of the approved "
                    f"content, as {CANONICAL}, and of each of the {len(cited)} document "
                    "version(s) it cited. `lifecycle verify` recomputes them and names "
                    "anything changed since the approval.",
                    "props": [
                        {"name": "approved-artifact", "ns": NS, "value": what},
                        {"name": "approver", "ns": NS, "value": by},
                        {"name": "approval-time", "ns": NS, "value": at},
                    ],
                    "rlinks": [
                        _link(
                            f"/api/v1/workflows/{entry.get('run_id')}/artifacts/"
                            f"{entry.get('artifact_id')}",
                            "application/json",
                            str(sealed.get("content_sha256")),
                        ),
                        *(_document(i, digest, documents.get(i)) for i, digest in cited),
                    ],
                    "remarks": "The first link's hash is of the artifact's `content` as "
                    f"{CANONICAL}; each further link's is of the cited document's bytes.",
                }
            )
    return resources


def _document(document_id: str, digest: str, known: dict[str, Any] | None) -> dict[str, Any]:
    """A cited document version by its file name where it is one the assessment's people
    uploaded, else by its id."""
    if known is None:
        return _link(f"urn:uuid:{document_id}", None, digest)
    return _link(quote(str(known.get("filename"))), known.get("media_type"), digest)


def _link(href: str, media_type: Any, digest: str) -> dict[str, Any]:
    return {
        "href": href,
        "media-type": str(media_type) if media_type else None,
        "hashes": [{"algorithm": "SHA-256", "value": digest}],
    }
