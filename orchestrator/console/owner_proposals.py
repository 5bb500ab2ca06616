"""How a row's proposed owner reads while nobody has set one: the person (or role) and
where the proposal came from, so a reviewer confirming it sees what it rests on.

"proposed from the roster: Dana Whitfield (their title is CISO, who usually runs SCF
GOV)", "proposed from the document's stated owner: Lee Park (owner of policy.md, on the
roster)", "fallback: no owner stated; the role CISO proposed (...)".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.contracts.owner_sources import OwnerOrigin, read_source


def owner_proposal(row: Mapping[str, Any]) -> str:
    name = str(row.get("proposed_owner") or "").strip()
    said = str(row.get("proposed_owner_source") or "").strip()
    source = read_source(said)
    if source is None:  # words of no known origin: shown as they are
        return f"proposed: {name}" + (f" ({said})" if said else "")
    if source.origin is OwnerOrigin.ROSTER:
        return f"proposed from the roster: {name} ({source.detail})"
    if source.origin is OwnerOrigin.DOCUMENT:
        where = {True: ", on the roster", False: ", not on the roster", None: ""}
        return (
            f"proposed from the document's stated owner: {name} "
            f"(owner of {source.detail}{where[source.on_roster]})"
        )
    return f"fallback: no owner stated; the role {name} proposed ({source.detail})"
