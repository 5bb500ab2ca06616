"""Every field of every console form refuses a NUL character with a 422 page naming it,
never a 500 and never acting: found two ways, so a new form is covered without a word here.

- The pages: a run taken to its SoA wait (review forms), an evidence request, a document's
  judgement; every console page linked from them is read, each <form> parsed, and for
  each named field the form is sent as the page would send it, with a NUL in that field.
- The routes: each console route's declared query and form fields (and the CSRF token
  every posted form carries), one request each with a NUL there.
"""

from __future__ import annotations

import uuid
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urljoin, urlsplit

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from httpx2 import Response
from starlette.routing import Match

from orchestrator.console.app import routers
from orchestrator.contracts.identity import Actor
from orchestrator.service.evidence_requests import list_requests
from orchestrator.service.producer import get_run
from tests.console.kit import text
from tests.console.lifecycle_pages import person, run_at_soa_wait
from tests.support.roles import grant

NUL = "\x00"
TENANT = "tenant-nul-walk"
PRINCIPAL = "user:walker@nul.example"
#: Inputs that carry no text of their own.
_NO_TEXT = {"file", "submit", "button", "reset", "image"}


@dataclass
class Form:
    page: str
    action: str
    method: str
    multipart: bool
    fields: list[tuple[str, str]] = field(default_factory=list)
    """What the page would send: (name, value), checked boxes and chosen options only."""
    names: set[str] = field(default_factory=set)
    """Every field that can carry text, sent or not."""


class _Forms(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.forms: list[Form] = []
        self.links: set[str] = set()
        self._select: str | None = None
        self._chosen: str | None = None
        self._first: str | None = None
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and a.get("href"):
            self.links.add(urljoin(self.page, a["href"]))
        elif tag == "form":
            self.forms.append(
                Form(
                    self.page,
                    urljoin(self.page, a.get("action") or self.page),
                    (a.get("method") or "get").lower(),
                    "multipart" in a.get("enctype", ""),
                )
            )
        elif not self.forms or "name" not in a:
            return
        elif tag == "input" and a.get("type", "text").lower() not in _NO_TEXT:
            kind = a.get("type", "text").lower()
            self.forms[-1].names.add(a["name"])
            if kind not in ("checkbox", "radio") or "checked" in a:
                self.forms[-1].fields.append((a["name"], a.get("value", "")))
        elif tag == "textarea":
            self._textarea, self._text = a["name"], ""
        elif tag == "select":
            self._select, self._chosen, self._first = a["name"], None, None
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            self._first = value if self._first is None else self._first
            self._chosen = value if "selected" in a else self._chosen

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self._textarea is not None:
            self.forms[-1].names.add(self._textarea)
            self.forms[-1].fields.append((self._textarea, self._text))
            self._textarea = None
        elif tag == "select" and self._select is not None:
            self.forms[-1].names.add(self._select)
            chosen = self._chosen if self._chosen is not None else self._first
            if chosen is not None:
                self.forms[-1].fields.append((self._select, chosen))
            self._select = None


def _crawl(client: TestClient, starts: list[str], per_page: int = 2) -> list[Form]:
    """The forms of every console page reachable from `starts` (GET only), each page (its
    path and query's names) read at most `per_page` times: a row page is like the next."""
    seen: set[str] = set()
    shapes: dict[tuple[str, ...], int] = {}
    queue = deque(starts)
    forms: list[Form] = []
    while queue:
        url = queue.popleft()
        parts = urlsplit(url)
        if url in seen or not parts.path.startswith("/console/"):
            continue
        seen.add(url)
        shape = (parts.path, *sorted({k for k, _ in parse_qsl(parts.query)}))
        if _route("get", parts.path, strict=False) is None or shapes.get(shape, 0) >= per_page:
            continue
        shapes[shape] = shapes.get(shape, 0) + 1
        page = client.get(url, follow_redirects=False)
        if page.status_code != 200 or "text/html" not in page.headers["content-type"]:
            continue
        parser = _Forms(str(page.url))
        parser.feed(page.text)
        forms += parser.forms
        queue.extend(sorted(link.split("#")[0] for link in parser.links))
    return forms


def _routes() -> list[APIRoute]:
    return [r for router in routers() for r in router.routes if isinstance(r, APIRoute)]


def _route(method: str, path: str, *, strict: bool = True) -> str | None:
    """The console route a request reaches: the walk sends each field once per route."""
    scope = {"type": "http", "method": method.upper(), "path": path}
    for route in _routes():
        if route.matches(scope)[0] is Match.FULL:
            return route.path
    assert not strict, f"{method} {path}: no console route takes what the page sends"
    return None


def _refused(response: Response, name: str) -> str | None:
    """None when the answer is the refusal the rule asks for, else what was wrong."""
    if response.status_code != 422:
        return f"answered {response.status_code}"
    if not response.headers["content-type"].startswith("text/html"):
        return "not a page"
    said = f"The {name.replace('_', ' ')} was not accepted: it must not contain the NUL"
    return None if said in text(response) else f"the page does not name it: {text(response)}"


def _send(client: TestClient, form: Form, name: str) -> Response:
    values = [(k, f"x{NUL}" if k == name else v) for k, v in form.fields]
    if name not in dict(form.fields):
        values.append((name, f"x{NUL}"))
    target = urlsplit(form.action)
    if form.method == "get":
        query: list[tuple[str, str | int | float | bool | None]] = [
            *parse_qsl(target.query),
            *values,
        ]
        return client.get(target.path, params=query, follow_redirects=False)
    files = {"unused": ("walk.md", b"# Walk\n", "text/markdown")} if form.multipart else None
    return client.post(
        target.path + (f"?{target.query}" if target.query else ""),
        data=dict(values),
        files=files,
        follow_redirects=False,
    )


Sent = set[tuple[str, str, str]]
Took = list[tuple[str, str, str, str]]


def _walk_forms(client: TestClient, forms: list[Form], sent: Sent) -> Took:
    """Each field of each form found, once per route: the form as its page sends it."""
    took: Took = []
    for form in forms:
        route = str(_route(form.method, urlsplit(form.action).path))
        for name in sorted(form.names - {n for m, r, n in sent if (m, r) == (form.method, route)}):
            sent.add((form.method, route, name))
            wrong = _refused(_send(client, form, name), name)
            if wrong:
                took.append((form.method, route, name, wrong))
    return took


def _walk_routes(client: TestClient, sent: Sent) -> Took:
    """Each route's declared query and form fields (and the CSRF token of a posted form)
    that no form on the pages carried: forms of another state or another person."""
    took: Took = []
    for route in _routes():
        url = route.path
        for param in route.dependant.path_params:
            url = url.replace("{" + param.name + "}", str(uuid.uuid4()))
        for method in sorted(m.lower() for m in route.methods or ()):
            names = {p.alias for p in route.dependant.query_params}
            names |= {p.alias for p in route.dependant.body_params}
            names |= {"csrf_token"} if method == "post" else set()
            for name in sorted(names - {n for m, r, n in sent if (m, r) == (method, route.path)}):
                sent.add((method, route.path, name))
                value = {name: f"x{NUL}"}
                response = (
                    client.get(url, params=value)
                    if method == "get"
                    else client.post(url, data=value)
                )
                wrong = _refused(response, name)
                if wrong:
                    took.append((method, route.path, name, wrong))
    return took


def test_every_field_of_every_console_form_refuses_nul(running: TestClient) -> None:
    actor = grant(Actor(TENANT, PRINCIPAL), "assessor")
    walker = person(running, TENANT, "admin", principal=PRINCIPAL)
    run_url, run_id = run_at_soa_wait(walker, TENANT, "NUL walk")
    assessment = get_run(actor, run_id).assessment_id
    requests_url = f"/console/assessments/{assessment}/evidence-requests"
    issued = walker.post(
        requests_url,
        {
            "recipient": "it@vendor.example",
            "requirements": "SOC 2 CC6.1",
            "instructions": "The access review.",
            "due_on": "2999-01-01",
        },
        from_page=requests_url,
    )
    assert issued.status_code == 201, text(issued)

    forms = _crawl(walker.client, [run_url, requests_url, "/console/queue"])
    actions = {urlsplit(form.action).path for form in forms}
    for wanted in (requests_url, "/judgement", "/decision", "/amend", "/comments", "/claim"):
        assert any(wanted in action for action in actions), f"the walk found no {wanted} form"
    sent: Sent = set()
    took = _walk_forms(walker.client, forms, sent)
    by_forms = len(sent)
    took += _walk_routes(walker.client, sent)

    print(f"console NUL walk: {by_forms} fields of forms on pages, {len(sent) - by_forms} more")
    assert by_forms >= 25 and len(sent) - by_forms >= 10, "the walk reaches the console's forms"
    assert took == [], f"these fields took a NUL: {took}"
    # Nothing a refused form asked for happened: still one request, no file uploaded.
    assert len(list_requests(actor, assessment)) == 1
    assert "walk.md" not in walker.get(f"/console/assessments/{assessment}").text
