"""Catalogue tests: the official SCF workbook and NIST OSCAL files from shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

#: Real catalogue files written by others, beside the repository (never committed).
SHARED_CATALOGS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "catalogs"
SCF_2022_3 = SHARED_CATALOGS / "scf" / "SCF_2022.3.xlsx"
NIST_DIR = SHARED_CATALOGS / "nist"


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(
            f"real catalogue file not found at {path} (it lives beside the "
            "repository, in shared/data, and is never committed)"
        )
    return path


@pytest.fixture(scope="session")
def scf_workbook_path() -> Path:
    return _require(SCF_2022_3)


@pytest.fixture(scope="session")
def nist_dir() -> Path:
    return _require(NIST_DIR)
