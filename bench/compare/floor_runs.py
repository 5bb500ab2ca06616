"""Phase 1, the floor: N chains of `hops` Celery messages, as many chains at once as the
fleet runs lifecycles, across two worker processes with the fleet's thread counts."""

from __future__ import annotations

import statistics
import time
import uuid
from pathlib import Path

import redis

from bench.compare import floor_app as floor
from bench.compare.procs import broker_cpu_s, cpu_s, own_cpu_s, peak_rss_of
from bench.compare.results import PhaseResult, RoundFigures
from bench.compare.workers import BenchWorkers


def run_floor(
    env: dict[str, str],
    log_dir: Path,
    broker_url: str,
    chains: int,
    hops: int,
    repeat: int,
    concurrency: tuple[int, int],
    warmup: int = 1,
) -> tuple[PhaseResult, float]:
    """The floor's rounds, and the p50 of one hop when a single chain runs alone."""
    results = redis.Redis.from_url(broker_url)
    rounds: list[RoundFigures] = []
    with BenchWorkers(env, log_dir) as workers:
        # floor_a stands for the coordinator's worker, floor_b for the job worker.
        for queue, threads in zip(floor.QUEUES, concurrency, strict=True):
            workers.start_app(
                "bench.compare.floor_app", queue, role=f"floor-{queue}", concurrency=threads
            )
        pids = workers.pids()
        for _ in range(warmup):  # imports, pools, caches: not what is compared
            _one_round(results, chains, hops)
        for _ in range(repeat):
            cpu_before = {name: cpu_s(pid) for name, pid in pids.items()}
            driver_before, broker_before = own_cpu_s(), broker_cpu_s()
            rounds.append(_one_round(results, chains, hops))
            rounds[-1].worker_cpu_s = sum(
                cpu_s(pid) - cpu_before[name] for name, pid in pids.items()
            )
            rounds[-1].driver_cpu_s = own_cpu_s() - driver_before
            rounds[-1].broker_cpu_s = broker_cpu_s() - broker_before
        single = _one_round(results, 1, hops)
        rss = peak_rss_of(pids)
    return (
        PhaseResult.of("floor", rounds, rss, units_per_lifecycle=hops),
        statistics.median(single.latencies_ms),
    )


def _one_round(results: redis.Redis, chains: int, hops: int) -> RoundFigures:
    results.delete(floor.LATENCY_KEY, floor.DONE_KEY)
    began = time.perf_counter()
    for _ in range(chains):
        floor.send_hop(uuid.uuid4().hex, 1, hops)
    deadline = time.monotonic() + 300
    while results.llen(floor.DONE_KEY) < chains:
        if time.monotonic() > deadline:
            raise TimeoutError("floor chains did not finish")
        time.sleep(0.002)
    elapsed = time.perf_counter() - began
    latencies = [float(v) for v in results.lrange(floor.LATENCY_KEY, 0, -1)]
    return RoundFigures(
        lifecycles=chains,
        transitions=chains * hops,
        elapsed_s=elapsed,
        latencies_ms=latencies,
        messages=len(latencies),
        extra={"hop_p50_ms": statistics.median(latencies)},
    )
