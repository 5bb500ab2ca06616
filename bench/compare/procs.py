"""Per-process figures: peak resident memory and CPU seconds (Linux /proc, psutil)."""

from __future__ import annotations

from pathlib import Path

import psutil


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the most resident memory the process ever had (not a sampled guess)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def peak_rss_of(pids: dict[str, int]) -> dict[str, float]:
    """Each named process's peak resident memory, MB."""
    return {name: peak_rss_mb(pid) for name, pid in pids.items()}


def cpu_s(pid: int) -> float:
    """CPU seconds of a process and its children so far."""
    try:
        process = psutil.Process(pid)
        total = sum(process.cpu_times()[:2])
        for child in process.children(recursive=True):
            total += sum(child.cpu_times()[:2])
    except psutil.Error:
        return 0.0
    return total


def own_cpu_s() -> float:
    times = psutil.Process().cpu_times()
    return times.user + times.system


#: The broker's processes by URL scheme: Redis, and RabbitMQ's Erlang VM.
BROKER_PROCESSES = {"redis": "redis-server", "amqp": "beam.smp"}


def broker_cpu_s(scheme: str = "redis") -> float:
    """CPU seconds of the local broker's processes so far (0 when none is visible)."""
    name = BROKER_PROCESSES[scheme]
    total = 0.0
    for process in psutil.process_iter(["name"]):
        if process.info["name"] == name:
            try:
                total += sum(process.cpu_times()[:2])
            except psutil.Error:
                continue
    return total
