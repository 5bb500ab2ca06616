"""kombu's in-memory transport for the embedded default, with a short wait per drain.

Celery's loop without an event hub (`celery.worker.loops.synloop`) asks the transport for
messages with a 2-second timeout and looks at the worker's stop flag only between those
waits; the in-memory transport spends the whole timeout polling. So stopping an embedded
worker (the end of `lifecycle demo`, of `lifecycle serve`, of a test's fleet) took 2-3 s
per worker thread. Here one drain waits at most `MAX_WAIT_S`: the loop comes round, sees
the flag and stops. Messages arrive as before; an idle loop only comes round more often.
Chosen for the embedded app alone through Celery's `broker_transport` setting.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import memory

#: Celery's `broker_transport` value that selects this transport.
SHORT_WAIT = f"{__name__}:Transport"
MAX_WAIT_S = 0.1


class Transport(memory.Transport):  # type: ignore[misc]
    # kombu's stubs give its two base classes different signatures; this is the virtual one's.
    def drain_events(  # type: ignore[override]
        self, connection: Any, timeout: float | None = None
    ) -> Any:
        wait = MAX_WAIT_S if timeout is None else min(timeout, MAX_WAIT_S)
        return super().drain_events(connection, timeout=wait)
