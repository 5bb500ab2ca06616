"""`lifecycle` on the command line (also `python -m orchestrator`): the same click app as
`celery -A orchestrator lifecycle`."""

from __future__ import annotations

import logging
import sys

from orchestrator.cli.group import lifecycle


def main(argv: list[str] | None = None) -> int:
    """Run the command; return its exit status (0 done, 1 refused or failed, 2 usage)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        lifecycle.main(args=argv, prog_name="lifecycle")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
