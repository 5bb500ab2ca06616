"""The parser process: reads (path, media type) requests, answers with parsed documents
or typed errors. It runs hostile input, so it has its own memory limit and dies with
its parent; a hang or a crash here costs one document, never the worker."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


def _confine(memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform == "linux":
        # Best effort: EOF on stdin ends the loop anyway.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _answer(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The reply, and whether this process is still sound enough to continue."""
    from orchestrator.config.ingestion import IngestionLimits
    from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
    from workers.ingestion.protocol import document_to_wire
    from workers.ingestion.readers.registry import read_document

    limits = IngestionLimits.model_validate(request["limits"])
    try:
        parsed = read_document(Path(request["path"]), request["media_type"], limits)
        return document_to_wire(parsed), True
    except DocumentError as error:
        return {"ok": False, "code": error.code.value, "message": error.message}, True
    except MemoryError:
        pass  # answered below, once the traceback (and what the parser held) is freed
    except RecursionError:
        return {
            "ok": False,
            "code": DocumentErrorCode.CORRUPT_FILE.value,
            "message": "the document nests too deeply to parse",
        }, True
    except Exception as error:  # a parser library choking on malformed input
        detail = f"{type(error).__name__}: {error}"[:300]
        return {
            "ok": False,
            "code": DocumentErrorCode.CORRUPT_FILE.value,
            "message": f"the parser could not read the file ({detail})",
        }, True
    return {
        "ok": False,
        "code": DocumentErrorCode.TOO_LARGE.value,
        "message": "parsing needs more memory than the parser's limit "
        f"({limits.parser_memory_bytes // (1024 * 1024)} MiB)",
    }, False


def main() -> None:
    options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    # The protocol owns the original stdout; anything a library prints goes to stderr.
    channel_out = os.dup(1)
    os.dup2(2, 1)
    _confine(int(options.get("memory_bytes", 2 << 30)))

    from workers.ingestion.protocol import ChannelClosed, read_frame, write_frame
    from workers.ingestion.readers.registry import load_plugins

    load_plugins(options.get("plugins", []))
    while True:
        try:
            request = read_frame(0)
        except ChannelClosed:
            return
        reply, sound = _answer(request)
        write_frame(channel_out, reply)
        if not sound:
            return


if __name__ == "__main__":
    main()
