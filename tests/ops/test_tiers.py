"""The suite's tiers: a plain run leaves the slow tiers out, `--tiers` chooses, naming
tests or choosing them by marker runs what was named, and slow files are scheduled first."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support import tiers


def _item(name: str, *markers: str) -> Any:
    return SimpleNamespace(name=name, keywords={name: 1, **dict.fromkeys(markers, 1)})


def _config(chosen: str, *, named: bool = False, markexpr: str = "") -> Any:
    deselected: list[Any] = []
    source = pytest.Config.ArgsSource.ARGS if named else pytest.Config.ArgsSource.TESTPATHS
    return SimpleNamespace(
        getoption=lambda _: chosen,
        args_source=source,
        option=SimpleNamespace(markexpr=markexpr),
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(items)),
        deselected=deselected,
    )


def _suite() -> list[Any]:
    return [
        _item("unit_a"),
        _item("fleet", "integration"),
        _item("broken_db", "integration", "faults"),
        _item("unit_b"),
        _item("hosts", "integration", "multihost"),
        _item("chromium", "browser"),
        _item("comply_drafts", "realdata"),
    ]


def test_a_test_belongs_to_its_first_slow_tier_or_else_to_integration_or_unit() -> None:
    assert tiers.tier_of({"integration": 1, "faults": 1}) == "faults"
    assert tiers.tier_of({"integration": 1}) == "integration"
    assert tiers.tier_of({"test_x": 1}) == "unit"
    assert tiers.tier_of({"realdata": 1}) == "realdata"


@pytest.mark.parametrize(
    ("chosen", "kept"),
    [
        ("fast", ["unit_a", "fleet", "unit_b"]),
        ("slow", ["broken_db", "hosts", "chromium", "comply_drafts"]),
        (
            "all",
            ["broken_db", "hosts", "chromium", "unit_a", "fleet", "unit_b", "comply_drafts"],
        ),
    ],
)
def test_tiers_choose_and_slow_files_come_first(chosen: str, kept: list[str]) -> None:
    items, config = _suite(), _config(chosen)
    tiers.pytest_collection_modifyitems(config, items)
    assert [i.name for i in items] == kept
    assert len(items) + len(config.deselected) == len(_suite())


@pytest.mark.parametrize("config", [_config("fast", named=True), _config("fast", markexpr="x")])
def test_named_or_marker_chosen_tests_run_whatever_their_tier(config: Any) -> None:
    items = _suite()
    tiers.pytest_collection_modifyitems(config, items)
    assert len(items) == len(_suite()) and not config.deselected
