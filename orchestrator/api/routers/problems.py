"""`/problems/{code}`: the page a problem's `type` URI names, explaining that code.

Public (no key): it documents the API, like `/docs`. `GET /problems` lists every code.
"""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from orchestrator.api.problem_catalog import PROBLEMS, ProblemType
from orchestrator.api.problems import ApiProblem, problem_responses

router = APIRouter(prefix="/problems", tags=["problems"])

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;"
    "padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .2rem}"
    "dt{font-weight:600;margin-top:1rem}"
)


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>"
    )


def _text(value: str) -> str:
    """Escaped, with `backticks` as code."""
    parts = escape(value).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _entry(problem: ProblemType) -> str:
    return (
        f'<dt id="{problem.code}"><a href="/problems/{problem.code}">'
        f"<code>{problem.code}</code></a> ({problem.status}): {escape(problem.title)}"
        f"</dt><dd>{_text(problem.meaning)} <em>What to do:</em> "
        f"{_text(problem.remedy)}</dd>"
    )


@router.get("", response_class=HTMLResponse, summary="Every problem code, explained")
def index() -> HTMLResponse:
    entries = "".join(
        _entry(p) for p in sorted(PROBLEMS.values(), key=lambda p: (p.status, p.code))
    )
    return _page(
        "Problem codes",
        "<h1>Problem codes</h1><p>Errors are RFC 9457 problem "
        "details (<code>application/problem+json</code>); <code>type</code> links "
        f"here and <code>code</code> is stable.</p><dl>{entries}</dl>",
    )


@router.get(
    "/{code}",
    response_class=HTMLResponse,
    summary="One problem code, explained",
    responses=problem_responses(404),
)
def explain(code: str) -> HTMLResponse:
    problem = PROBLEMS.get(code)
    if problem is None:
        raise ApiProblem(404, "not_found", f"no problem code {code!r}; see /problems")
    return _page(
        f"{problem.code}: {problem.title}",
        f"<h1><code>{problem.code}</code></h1><p><strong>HTTP {problem.status}: "
        f"{escape(problem.title)}</strong></p><dl><dt>What it means</dt><dd>"
        f"{_text(problem.meaning)}</dd><dt>What to do</dt><dd>"
        f"{_text(problem.remedy)}</dd></dl>"
        '<p><a href="/problems">Every problem code</a></p>',
    )
