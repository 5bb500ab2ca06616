"""What a Redis message costs the process that sends or takes it: kombu's transport,
which builds a Redis client per command, against orchestrator.engine.redis_transport
(one client per channel).

Each round publishes `--messages` messages to a fresh queue, then takes and acks each
(as a worker does: the unacked index written, then cleared), timing the process's CPU.
Rounds alternate between the two transports; the medians and their ratio are printed.

    python -m bench.redis_transport --broker-url redis://127.0.0.1:6379/14
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from kombu import Connection, Exchange, Queue

from bench.record import add_record_flag, record_if_asked
from orchestrator.engine import redis_transport

TRANSPORTS = {
    "kombu": redis_transport.KOMBU,
    "one client per channel": redis_transport.ONE_CLIENT_PER_CHANNEL,
}


def _round(url: str, messages: int) -> tuple[float, float]:
    """CPU µs per publish, and per take and ack."""
    name = f"bench-transport-{uuid.uuid4().hex[:8]}"
    queue = Queue(name, Exchange(name), routing_key=name)
    with Connection(url) as connection:
        producer = connection.Producer(serializer="json")
        producer.publish({"n": -1}, exchange=queue.exchange, routing_key=name, declare=[queue])
        began = time.process_time()
        for n in range(messages):
            producer.publish({"n": n}, exchange=queue.exchange, routing_key=name)
        publish = time.process_time() - began
        with connection.SimpleQueue(queue) as simple:
            simple.get(timeout=10).ack()  # the declaring message
            began = time.process_time()
            for _ in range(messages):
                simple.get(timeout=10).ack()
            take = time.process_time() - began
            simple.queue.delete()
    return publish / messages * 1e6, take / messages * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    add_record_flag(parser)
    args = parser.parse_args()
    figures: dict[str, list[tuple[float, float]]] = {label: [] for label in TRANSPORTS}
    for _ in range(args.rounds):
        for label, path in TRANSPORTS.items():
            redis_transport.install(path)
            figures[label].append(_round(args.broker_url, args.messages))
    redis_transport.install()
    medians = {
        label: (
            statistics.median(p for p, _ in rounds),
            statistics.median(t for _, t in rounds),
        )
        for label, rounds in figures.items()
    }
    print(f"{args.messages} messages per round, {args.rounds} rounds per transport (medians)")
    print(f"{'transport':<24} {'publish, CPU µs':>16} {'take + ack, CPU µs':>19}")
    for label, (publish, take) in medians.items():
        print(f"{label:<24} {publish:>16.1f} {take:>19.1f}")
    (kp, kt), (op, ot) = medians["kombu"], medians["one client per channel"]
    print(f"{'ratio (kombu / ours)':<24} {kp / op:>16.2f} {kt / ot:>19.2f}")
    record_if_asked(
        args,
        "redis_transport",
        [
            ("publish CPU, kombu / one client per channel", kp / op, "x"),
            ("take and ack CPU, kombu / one client per channel", kt / ot, "x"),
            ("publish, one client per channel", op, "µs CPU"),
            ("take and ack, one client per channel", ot, "µs CPU"),
            ("publish, kombu", kp, "µs CPU"),
            ("take and ack, kombu", kt, "µs CPU"),
        ],
    )


if __name__ == "__main__":
    main()
