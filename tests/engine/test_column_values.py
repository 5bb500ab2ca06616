"""Every value the code writes into a bounded column fits it: in the models (no service
needed) and in the schema the migrations make on PostgreSQL, which, unlike SQLite, refuses
a longer value."""

from __future__ import annotations

import importlib

from sqlalchemy import String, create_engine, text

from orchestrator.db.models import Base
from tests.engine.column_values import CLOSED_SET_NAMES, WRITTEN
from tests.engine.test_migrations import MODEL_MODULES


def _bounded() -> dict[tuple[str, str], int]:
    for module in MODEL_MODULES:
        importlib.import_module(module)
    return {
        (table.name, column.name): column.type.length
        for table in Base.metadata.tables.values()
        for column in table.columns
        if isinstance(column.type, String) and column.type.length
    }


def _too_long(lengths: dict[tuple[str, str], int]) -> list[tuple[str, str, str, int]]:
    return [
        (table, column, str(value), lengths[table, column])
        for (table, column), values in WRITTEN.items()
        for value in values
        if len(str(value)) > lengths[table, column]
    ]


def test_every_closed_set_column_lists_what_is_written_there() -> None:
    bounded = _bounded()
    unlisted = [key for key in bounded if key[1] in CLOSED_SET_NAMES and key not in WRITTEN]
    assert unlisted == []
    assert set(WRITTEN) <= set(bounded), "each listed column is a bounded column"


def test_every_value_written_fits_its_column_in_the_models() -> None:
    assert _too_long(_bounded()) == []


def test_every_value_written_fits_its_column_on_postgresql(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT table_name, column_name, character_maximum_length "
                "FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND character_maximum_length IS NOT NULL"
            )
        ).all()
    engine.dispose()
    lengths = {(table, column): int(length) for table, column, length in rows}
    assert set(WRITTEN) <= set(lengths), "each listed column is bounded in the schema"
    assert _too_long(lengths) == []
