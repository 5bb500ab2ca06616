"""`lifecycle` on the command line (also `python -m orchestrator`): the same click app as
`celery -A orchestrator lifecycle`."""

from __future__ import annotations

import logging
import sys

from orchestrator.cli.group import lifecycle
from orchestrator.observability.logs import configure_logging


def main(argv: list[str] | None = None) -> int:
    """Run the command; return its exit status (0 done, 1 refused or failed, 2 usage)."""
    # Text lines for people; a service a command starts (`lifecycle api`) replaces this
    # handler with its own, rather than adding a second one beside it. A host that set up
    # logging already (a test runner calling main) keeps its own, as basicConfig would.
    if not logging.getLogger().handlers:
        configure_logging(level=logging.WARNING, fmt="text")
    try:
        lifecycle.main(args=argv, prog_name="lifecycle")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
