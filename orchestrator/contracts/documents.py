"""How a document is judged: the kinds it may be, and whether it was adopted."""

from __future__ import annotations

#: Documents that prescribe a practice, then records that show it operating.
DOCUMENT_KINDS = ("policy", "standard", "procedure", "plan", "record")
ADOPTED = "adopted"
#: A template or a blank form: none of its passages counts as evidence.
NOT_ADOPTED = "template_not_adopted"
ADOPTIONS = (ADOPTED, NOT_ADOPTED)

#: A document's life: the version in force, one a later version replaced, or one past its
#: expiry date. Only current documents are evidence.
CURRENT = "current"
SUPERSEDED = "superseded"
EXPIRED = "expired"
LIFE_STATUSES = (CURRENT, SUPERSEDED, EXPIRED)
