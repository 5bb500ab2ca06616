"""Where a proposed owner came from, in the words a draft keeps in `proposed_owner_source`:
the roster, the stated owner of a document the row cites, or a fallback (a role, when
nobody is named). The drafting workers write them with these functions; the console
reads them back (`read_source`) to say where each proposal came from. Drafts already
stored use the same words, so they read back too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class OwnerOrigin(StrEnum):
    ROSTER = "roster"
    DOCUMENT = "document"
    FALLBACK = "fallback"


_ROSTER = "roster: "
_DOCUMENT = "owner of the cited document "
_FALLBACK = "role, not a person: "
_ON_ROSTER, _OFF_ROSTER = " (on the roster)", " (not on the roster)"


def from_roster(reason: str) -> str:
    """A person the roster names, for `reason` ("owns the SCF IAC domain")."""
    return _ROSTER + reason


def from_document(document: str, *, on_roster: bool) -> str:
    """The owner `document` states, as the roster names them where they are on it."""
    return _DOCUMENT + document + (_ON_ROSTER if on_roster else _OFF_ROSTER)


def fallback(reason: str) -> str:
    """No person named anywhere: a role is proposed, for `reason`."""
    return _FALLBACK + reason


@dataclass(frozen=True)
class OwnerSource:
    origin: OwnerOrigin
    detail: str
    """The reason after the origin: "owns the SCF IAC domain", a document's name, ..."""
    on_roster: bool | None = None
    """For a document's owner: whether the roster names them."""


def read_source(source: str) -> OwnerSource | None:
    """The origin of a `proposed_owner_source`; None for words of no known origin."""
    if source.startswith(_ROSTER):
        return OwnerSource(OwnerOrigin.ROSTER, source.removeprefix(_ROSTER))
    if source.startswith(_FALLBACK):
        return OwnerSource(OwnerOrigin.FALLBACK, source.removeprefix(_FALLBACK))
    if source.startswith(_DOCUMENT):
        document = source.removeprefix(_DOCUMENT)
        for suffix, on_roster in ((_ON_ROSTER, True), (_OFF_ROSTER, False)):
            if document.endswith(suffix):
                return OwnerSource(OwnerOrigin.DOCUMENT, document.removesuffix(suffix), on_roster)
        return OwnerSource(OwnerOrigin.DOCUMENT, document)
    return None
