"""The reverse check on the real SCF catalogue: a passage about backups ranks the backup
family among its own closest few of the whole catalogue; boilerplate ranks it nowhere near."""

from __future__ import annotations

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.knowledge.embedder import default_embedder
from workers.analysis.catalog_ranks import CatalogRanks, family
from workers.analysis.requirement_query import CatalogVectors

BACKUP = (
    "Data backups: production databases and file stores are backed up daily; backups are "
    "encrypted, kept offsite for 90 days, and a restore from backup is tested every quarter."
)
BOILERPLATE = (
    "Purpose and scope: this document applies to all employees, contractors and systems of "
    "the company, and is reviewed by management."
)


def test_a_specific_passage_ranks_its_family_first_and_boilerplate_does_not() -> None:
    catalog = shipped_catalog()
    embedder = default_embedder()
    vectors = CatalogVectors(catalog, embedder, None).vectors(c.id for c in catalog.controls)
    texts = [BACKUP, BOILERPLATE]
    ranks = CatalogRanks(catalog, vectors, texts, embedder.embed(texts))
    assert ranks.size == len({family(c.id) for c in catalog.controls})
    (backups,) = ranks.columns(["BCD-11", "BCD-11.1"])  # one family, one column
    assert min(ranks.dense[0, backups], ranks.lexical[0, backups]) <= 3
    assert max(ranks.dense[0, backups], ranks.lexical[0, backups]) <= 5
    assert ranks.closest()[0] == "BCD-11"
    # Boilerplate may share a word or two with it, never both ways: not even close.
    assert max(ranks.dense[1, backups], ranks.lexical[1, backups]) > 30
    assert family("VPM-06.3") == "VPM-06"
