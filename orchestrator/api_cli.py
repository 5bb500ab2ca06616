"""`lifecycle apikey create|revoke|list` and `lifecycle api` (serve the HTTP API)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from orchestrator.errors import LifecycleError


def register_commands(commands: Any) -> None:
    """Add the API's subcommands to the `lifecycle` parser's subparsers."""
    apikey = commands.add_parser("apikey", help="create, revoke and list API keys")
    actions = apikey.add_subparsers(dest="apikey_command", required=True)
    create = actions.add_parser("create", help="create a key and print it once")
    create.add_argument("--tenant", required=True, help="the one tenant the key acts for")
    create.add_argument("--principal", required=True,
                        help="who acts with the key, e.g. user:ana@acme.example")
    create.add_argument("--scope", action="append", required=True, dest="scopes",
                        help="read, signal, approve, operate or admin (repeat, or comma-list)")
    create.add_argument("--organization", action="append", dest="organizations",
                        help="limit the key to this organization (repeat for more)")
    create.add_argument("--name", default="", help="a note saying what the key is for")
    create.set_defaults(handler=_create)
    revoke = actions.add_parser("revoke", help="revoke a key at once")
    revoke.add_argument("key_id")
    revoke.set_defaults(handler=_revoke)
    listing = actions.add_parser("list", help="list keys (never the keys themselves)")
    listing.add_argument("--tenant")
    listing.set_defaults(handler=_list)

    serve = commands.add_parser("api", help="serve the HTTP API with uvicorn")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.set_defaults(handler=_serve)


def _create(args: argparse.Namespace) -> int:
    from orchestrator.apikeys import create_key

    scopes = [s.strip() for item in args.scopes for s in item.split(",") if s.strip()]
    try:
        view, key = create_key(args.tenant, args.principal, scopes,
                               organizations=args.organizations, name=args.name)
    except LifecycleError as error:
        print(f"apikey create: {error.message}", file=sys.stderr)
        return 2
    print(f"key id:        {view.key_id}")
    print(f"tenant:        {view.tenant_id}")
    print(f"principal:     {view.principal}")
    print(f"scopes:        {', '.join(s.value for s in view.scopes)}")
    print(f"organizations: {', '.join(view.organizations) if view.organizations else 'all'}")
    print("The key is shown this once; store it now:")
    print(key)
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from orchestrator.apikeys import revoke_key

    try:
        view = revoke_key(args.key_id)
    except LifecycleError as error:
        print(f"apikey revoke: {error.message}", file=sys.stderr)
        return 2
    print(f"revoked {view.key_id} ({view.principal}, tenant {view.tenant_id}) "
          f"at {view.revoked_at}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from orchestrator.apikeys import list_keys

    for view in list_keys(args.tenant):
        state = f"revoked {view.revoked_at:%Y-%m-%d}" if view.revoked_at else "active"
        orgs = ",".join(view.organizations) if view.organizations else "*"
        print(f"{view.key_id}  {view.tenant_id:<20} {view.principal:<32} "
              f"{','.join(s.value for s in view.scopes):<28} orgs={orgs:<16} {state}"
              f"  {view.name}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    uvicorn.run("orchestrator.api:app", host=args.host, port=args.port,
                workers=args.workers, proxy_headers=True)
    return 0
