"""Runs parsers in a separate, persistent process with a per-document time limit.

The process is started once and reused (a request costs a pipe round trip, not a
process start). When a parse runs past its limit the process is killed and the next
document gets a fresh one; when it dies (a crash in a native parser, out of memory)
the document fails with PARSER_CRASHED. The worker itself never runs parser code.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.config.settings import get_settings
from orchestrator.db.compute_guard import computing
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.parse import ParsedDocument
from workers.ingestion.protocol import (
    ChannelClosed,
    ChannelTimeout,
    document_from_wire,
    read_frame,
    write_frame,
)

_ROOT = Path(__file__).resolve().parents[2]
Parsed = ParsedDocument | DocumentError
_FRAME_OVERHEAD = 16 * 1024 * 1024


class ParserSandbox:
    def __init__(self, limits: IngestionLimits | None = None) -> None:
        self.limits = limits or get_settings().ingestion
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.started = 0
        """How many parser processes this sandbox has started (1 while all goes well)."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def parse(self, path: Path, media_type: str) -> ParsedDocument:
        """Parse one file in the parser process; raises its DocumentError."""
        with self.parsing([(path, media_type)]) as outcomes:
            (outcome,) = outcomes
        if isinstance(outcome, DocumentError):
            raise outcome
        return outcome

    def parsing(self, files: Sequence[tuple[Path, str]]) -> Parsing:
        """`with sandbox.parsing(files) as outcomes:` each file's document or DocumentError,
        in order. The sandbox is this block's alone; leaving it, however (an exception in
        the caller's loop included), gives the sandbox back ready for the next job."""
        computing("parsing")
        return Parsing(self, files)

    def _pipeline(self, files: Sequence[tuple[Path, str]]) -> Generator[Parsed, None, None]:
        """Parse files in order, yielding each one's document or DocumentError.

        Runs only inside `Parsing`, which holds the lock and always closes this generator.
        One request stays queued ahead: the parser works on the next file while the
        caller chunks and stores this one. A process that dies is replaced and the
        file tried once more (it may have died of something else); twice is the file's
        fault. A timeout is not retried.
        """
        requests = [self._request(path, media_type) for path, media_type in files]
        sent = received = 0
        try:
            for index, request in enumerate(requests):
                while sent < min(index + 2, len(requests)):
                    # With a reply outstanding, a dead process must not be replaced
                    # here: the outstanding reply would then be read from the new one.
                    if not self._send(requests[sent], may_restart=sent == received):
                        break
                    sent += 1
                process = self._process
                outcome = self._outcome(request)
                received = index + 1
                if self._process is not process:
                    sent = received  # the queued request went down with the process
                yield outcome
        finally:
            if sent > received:
                self._stop()  # abandoned part-way: a reply is still in the pipe

    def _outcome(self, request: dict[str, Any]) -> Parsed:
        try:
            return _decode(self._receive())
        except DocumentError as error:
            if error.code is not DocumentErrorCode.PARSER_CRASHED:
                return error
        try:
            self._send(request)
            return _decode(self._receive())
        except DocumentError as error:
            return error

    def _request(self, path: Path, media_type: str) -> dict[str, Any]:
        return {
            "path": str(path),
            "media_type": media_type,
            "limits": self.limits.model_dump(mode="json"),
        }

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _send(self, request: dict[str, Any], *, may_restart: bool = True) -> bool:
        """Queue a request; False when the process is dead and may not be replaced."""
        # A process that died while idle (killed from outside) is replaced once.
        for attempt in (1, 2):
            if self._process is None and not may_restart:
                return False
            process = self._ensure()
            assert process.stdin is not None
            try:
                write_frame(process.stdin.fileno(), request)
                return True
            except OSError:  # BrokenPipeError: the process is gone
                if not may_restart:
                    return False
                self._stop()
                if attempt == 2:
                    raise
        return False

    def _receive(self) -> dict[str, Any]:
        process = self._process
        if process is None:
            raise DocumentError(
                DocumentErrorCode.PARSER_CRASHED, "the parser process was gone before it answered"
            )
        assert process.stdout is not None
        deadline = time.monotonic() + self.limits.parse_timeout_s
        max_bytes = self.limits.max_text_chars * 4 + _FRAME_OVERHEAD
        try:
            reply = read_frame(process.stdout.fileno(), deadline, max_bytes)
        except ChannelTimeout:
            self._stop()
            raise DocumentError(
                DocumentErrorCode.PARSE_TIMEOUT,
                f"parsing took longer than {self.limits.parse_timeout_s:g} s and was stopped",
            ) from None
        except (ChannelClosed, json.JSONDecodeError, ValueError):
            status = self._stop()
            raise DocumentError(
                DocumentErrorCode.PARSER_CRASHED, f"the parser process died ({_describe(status)})"
            ) from None
        except BaseException:
            self._stop()  # interrupted mid-reply (a task time limit): the channel is unusable
            raise
        if process.poll() is not None:
            self._stop()  # it answered, then exited (e.g. after running out of memory)
        assert isinstance(reply, dict)
        return reply

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        options = {
            "memory_bytes": self.limits.parser_memory_bytes,
            "plugins": self.limits.reader_plugins,
        }
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH")]))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "workers.ingestion.sandbox_child", json.dumps(options)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        self.started += 1
        return self._process

    def _stop(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        return process.wait()


class Parsing:
    """The sandbox held for one batch of files: the lock is taken on entry and released
    on exit, never by a suspended generator, so an abandoned batch cannot keep it."""

    def __init__(self, sandbox: ParserSandbox, files: Sequence[tuple[Path, str]]) -> None:
        self._sandbox = sandbox
        self._files = files
        self._outcomes: Generator[Parsed, None, None] | None = None

    def __enter__(self) -> Iterator[Parsed]:
        self._sandbox._lock.acquire()
        outcomes = self._outcomes = self._sandbox._pipeline(self._files)
        return outcomes

    def __exit__(self, *exc: object) -> None:
        try:
            if self._outcomes is not None:
                self._outcomes.close()  # runs its cleanup: a reply still in flight kills it
        finally:
            self._outcomes = None
            self._sandbox._lock.release()


def _decode(reply: dict[str, Any]) -> ParsedDocument:
    if not reply.get("ok"):
        raise DocumentError(DocumentErrorCode(reply["code"]), str(reply["message"]))
    return document_from_wire(reply)


def _describe(status: int | None) -> str:
    if status is not None and status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


_shared: ParserSandbox | None = None
_shared_lock = threading.Lock()


def shared_sandbox() -> ParserSandbox:
    """One parser process per worker process, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ParserSandbox()
        return _shared


def reset_shared_sandbox() -> None:
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.close()
        _shared = None
