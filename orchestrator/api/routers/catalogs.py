"""Control catalogues and frameworks (read-only): what an assessment can be scoped to."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from orchestrator.api.auth import Reader
from orchestrator.api.problems import problem_responses
from orchestrator.catalog import service
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.text import Text

router = APIRouter(
    prefix="/api/v1", tags=["catalogs"], responses=problem_responses(401, 403, 404, 422)
)

FrameworkId = Annotated[uuid.UUID, Path(alias="frameworkId")]


class CatalogItem(BaseModel):
    id: uuid.UUID
    kind: str
    name: str
    version: str
    source_name: str
    sha256: str
    licence: str
    attribution: str
    shipped: bool
    current: bool
    controls: int
    frameworks: int


class CatalogRef(BaseModel):
    id: uuid.UUID
    name: str
    version: str


class CategoryItem(BaseModel):
    id: str
    name: str
    always_in_scope: bool


class FrameworkItem(BaseModel):
    id: uuid.UUID
    name: str
    version: str
    kind: str
    aliases: list[str]
    catalog: CatalogRef
    requirements: int
    linked_controls: int
    categories: list[CategoryItem] = Field(
        default_factory=list,
        description="Where the framework groups its requirements (SOC 2): the categories "
        "a framework selection may choose; those always in scope need no choice",
    )


class RequirementItem(BaseModel):
    requirement_id: str
    title: str
    controls: list[str]
    category: str | None = None


class Catalogs(BaseModel):
    items: list[CatalogItem]


class Frameworks(BaseModel):
    items: list[FrameworkItem]


class FrameworkRequirements(FrameworkItem):
    items: list[RequirementItem]


@router.get(
    "/catalogs",
    response_model=Catalogs,
    summary="List catalogue versions",
    description="The shipped SCF workbook and every imported version, with licence "
    "and attribution. `current` versions are what a run starting now pins.",
)
def catalogs(principal: Reader) -> Catalogs:
    return Catalogs.model_validate({"items": [c.as_dict() for c in service.list_catalogs()]})


@router.get(
    "/frameworks",
    response_model=Frameworks,
    summary="List frameworks",
    description="Frameworks of the current catalogue versions (or of the version "
    'named by `catalog`: an id, "NAME VERSION" or a version).',
)
def frameworks(
    principal: Reader, catalog: Annotated[Text | None, Query(max_length=300)] = None
) -> Frameworks:
    try:
        items = service.list_frameworks(catalog)
    except service.CatalogLookupError as error:
        raise NotFound(str(error)) from error
    return Frameworks.model_validate({"items": items})


@router.get(
    "/frameworks/{frameworkId}/requirements",
    response_model=FrameworkRequirements,
    summary="A framework's requirements",
    description="Every requirement with the SCF controls the crosswalk links it to.",
)
def requirements(principal: Reader, framework_id: FrameworkId) -> FrameworkRequirements:
    try:
        shown = service.show_framework(str(framework_id))
    except service.CatalogLookupError as error:
        raise NotFound(str(error)) from error
    return FrameworkRequirements.model_validate(shown)
