"""The web console for reviewers and operators: server-rendered pages under /console.

The pages call the same service functions as the HTTP API (producer, operations, queries,
approval events, dead letters), with the same tenancy and scopes; nothing here calls the
API over HTTP.
"""

from orchestrator.console.app import install

__all__ = ["install"]
