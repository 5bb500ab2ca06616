"""One error tree: every exception the product defines derives from FleetError, and the
drawing in orchestrator.contracts.errors names each of them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import orchestrator
import workers
from orchestrator.contracts import errors
from orchestrator.contracts.errors import FleetError

#: Not imported here: entry points, migrations, Flower's config file (it refuses to load
#: without credentials), and orchestrator.testing, whose worker hooks change the process
#: they are imported into (instant jobs, held jobs, a second definition).
SKIPPED = ("__main__", ".migrations.", "flowerconfig", "orchestrator.testing")


def defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in (orchestrator, workers):
        for module_info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            name = module_info.name
            if any(part in name for part in SKIPPED):
                continue
            module = importlib.import_module(name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, BaseException) and cls.__module__ == name:
                    found[f"{name}.{cls.__name__}"] = cls
    return found


def test_every_exception_is_in_the_one_tree_and_its_drawing() -> None:
    found = defined_exceptions()
    assert len(found) > 30  # the walk saw the whole product
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, FleetError))
    assert not outside, f"not under FleetError: {outside}"
    drawing = errors.__doc__ or ""
    undrawn = sorted(name for name, cls in found.items() if cls.__name__ not in drawing)
    assert not undrawn, f"missing from the drawing in orchestrator/contracts/errors.py: {undrawn}"
    names = [cls.__name__ for cls in found.values()]
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"two exceptions share a name: {twice}"
