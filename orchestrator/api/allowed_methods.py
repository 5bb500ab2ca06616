"""`Allow` as RFC 9110 means it: every method the resource at a path serves, whichever
route serves it. A 405 names them all (not only the first route's), and `OPTIONS` on a
path the app serves answers 204 with them."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Receive, Scope, Send

_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(app: ASGIApp, scope: Scope) -> list[str]:
    """The methods the app's routes serve at the scope's path (empty: no route there).
    Each method is tried against the routes as the router would, so included routers
    answer through their public `matches`."""
    routes: list[BaseRoute] = list(getattr(getattr(app, "router", None), "routes", ()))
    methods = {
        method
        for method in _METHODS
        if any(
            route.matches({**scope, "type": "http", "method": method})[0] is Match.FULL
            for route in routes
            if not isinstance(route, Mount)  # the console's own pages, outside the API
        )
    }
    if methods:
        methods.add("OPTIONS")
    return sorted(methods)


class OptionsMiddleware:
    """Answers `OPTIONS` for any path a route serves: 204, `Allow`, no body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            methods = allowed_methods(scope["app"], scope)
            if methods:
                await Response(status_code=204, headers={"Allow": ", ".join(methods)})(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)
