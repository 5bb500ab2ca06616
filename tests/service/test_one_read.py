"""`one_read()`: every read in the block joins one read transaction, begun at its first
read; a database error in it ends that transaction, so what follows (a retry) begins
another; a write inside still has its own transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from orchestrator.db.session import one_read, read_transaction, transaction


def test_the_reads_of_a_block_share_one_transaction(embedded: Path) -> None:
    with one_read() as shared:
        assert shared.begun == 0, "begun by the first read, not before"
        with read_transaction() as first:
            first.execute(text("SELECT 1"))
        with read_transaction() as second, one_read() as inner:
            assert second is first and inner is shared
        assert shared.begun == 1
    with read_transaction() as after:
        assert after is not first, "outside the block, a read is its own again"


def test_a_database_error_ends_the_shared_transaction(embedded: Path) -> None:
    with one_read() as shared:
        with pytest.raises(OperationalError), read_transaction() as session:
            session.execute(text("SELECT * FROM no_such_table"))
        with read_transaction() as again:
            assert again is not session
            assert again.execute(text("SELECT 1")).scalar() == 1
        assert shared.begun == 2


def test_a_write_inside_has_its_own_transaction(embedded: Path) -> None:
    with one_read(), read_transaction() as reading:
        with transaction() as writing:
            assert writing is not reading
            writing.execute(text("CREATE TABLE scratch (n INTEGER)"))
        assert reading.execute(text("SELECT 1")).scalar() == 1
