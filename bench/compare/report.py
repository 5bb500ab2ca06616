"""The comparison table: printed, and with --record kept as bench/results/compare.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench.compare.machine import Machine
from bench.compare.profile import Profile, is_project_frame
from bench.compare.results import PhaseResult, round_ratios
from bench.compare.waiting import LoadFigures
from bench.compare.waiting_phase import TARGET as WAITING_TARGET
from bench.compare.waiting_phase import WaitingResult


@dataclass
class RabbitPhase:
    """The fleet's rounds on RabbitMQ (quorum queues, publisher confirms)."""

    version: str
    fleet: PhaseResult


@dataclass
class Report:
    machine: Machine
    runs: int
    repeat: int
    floor: PhaseResult
    fleet: PhaseResult
    peer: PhaseResult | None
    waiting: list[WaitingResult]
    profiles: list[Profile] = field(default_factory=list)
    floor_single_hop_ms: float = math.nan
    peer_version: str = ""
    warmup: int = 0
    fair_peer: PhaseResult | None = None
    """The peer with each step writing what the fleet writes per applied signal."""
    on_rabbitmq: RabbitPhase | None = None

    def peers(self) -> list[tuple[str, PhaseResult]]:
        both = [("peer", self.peer), ("fair peer", self.fair_peer)]
        return [(label, phase) for label, phase in both if phase is not None]


def _f(value: float, digits: int = 2) -> str:
    return (
        "—"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:,.{digits}f}"
    )


def _row(label: str, phase: PhaseResult, latency_label: str = "") -> str:
    rss = " / ".join(f"{v:.0f}" for v in phase.peak_rss_mb.values())
    has_db = phase.signals > 0
    return (
        "| "
        + " | ".join(
            [
                label,
                _f(phase.lifecycles_per_s),
                _f(phase.transitions_per_s, 1),
                f"{_f(phase.latency_ms(50), 1)} / {_f(phase.latency_ms(99), 1)}{latency_label}",
                f"{_f(phase.per_signal('tx'))} ({_f(phase.per_signal('wtx'))})" if has_db else "—",
                _f(phase.per_signal("stmt"), 1) if has_db else "—",
                _f(phase.per_signal("tx", "all_sql")) if has_db else "—",
                rss,
            ]
        )
        + " |"
    )


def _verdict(ok: bool) -> str:
    return "met" if ok else "not met"


_CPU_OF = ("worker_cpu_s", "driver_cpu_s", "database_cpu_s", "broker_cpu_s")


def _all_cpu_ms(phase: PhaseResult) -> float:
    return sum(phase.cpu_ms_per_lifecycle(name) for name in _CPU_OF)


def _ratios(r: Report) -> list[str]:
    fleet, floor = r.fleet, r.floor
    lines = []
    targets = {"fair peer": 1.5, "peer": 1.0}
    for label, peer in r.peers():
        ratio = fleet.lifecycles_per_s / peer.lifecycles_per_s
        cpu = _all_cpu_ms(fleet) / _all_cpu_ms(peer)
        pairs = ", ".join(f"{x:.2f}" for x in round_ratios(fleet, peer))
        lines.append(
            f"- fleet / {label}, lifecycles/s: **{ratio:.2f}** "
            f"(target ≥ {targets[label]}: {_verdict(ratio >= targets[label])}); "
            f"round by round {pairs}; CPU per lifecycle, all processes: {cpu:.2f}"
        )
    if r.on_rabbitmq is not None:
        rabbit = r.on_rabbitmq.fleet
        lines.append(
            f"- fleet on RabbitMQ / on Redis, lifecycles/s: "
            f"**{rabbit.lifecycles_per_s / fleet.lifecycles_per_s:.2f}**; CPU per lifecycle, "
            f"all processes: {_all_cpu_ms(rabbit) / _all_cpu_ms(fleet):.2f}; completion → "
            f"next dispatch p50 {_f(rabbit.latency_ms(50), 1)} against "
            f"{_f(fleet.latency_ms(50), 1)} ms"
        )
    for w in r.waiting:
        pairs = ", ".join(f"{x:.2f}" for x in w.pair_ratios())
        lines.append(
            f"- fleet with {w.count:,} runs waiting / without, rounds alternated: "
            f"**{w.ratio:.2f}** (target ≥ {WAITING_TARGET}: "
            f"{_verdict(w.ratio >= WAITING_TARGET)}); round by round {pairs}"
        )
    lines.append(
        f"- fleet / floor, lifecycles/s: "
        f"**{fleet.lifecycles_per_s / floor.lifecycles_per_s:.3f}**; transitions/s: "
        f"{fleet.transitions_per_s / floor.transitions_per_s:.3f}"
    )
    hop = floor.latency_ms(50)
    ratio = fleet.latency_ms(50) / hop
    lines.append(
        f"- fleet completion → next dispatch p50 / floor hop p50 (same load): "
        f"**{ratio:.1f}** (target ≤ 2: {_verdict(ratio <= 2)}); / one hop of a "
        f"single chain ({_f(r.floor_single_hop_ms, 1)} ms): "
        f"{fleet.latency_ms(50) / r.floor_single_hop_ms:.1f}"
    )
    lines.append(
        f"- fleet completion → next dispatch, split: → coordinator's transaction "
        f"begins {_f(fleet.extra_ms('decide_ms', 50), 1)} ms p50 "
        f"({_f(fleet.extra_ms('decide_ms', 99), 1)} p99); then → message published "
        f"{_f(fleet.extra_ms('publish_after_decide_ms', 50), 1)} ms p50 "
        f"({_f(fleet.extra_ms('publish_after_decide_ms', 99), 1)} p99)"
    )
    tx = fleet.per_signal("tx")
    calls = sum(x.orchestrator_sql["calls"] for x in fleet.rounds) / max(fleet.signals, 1)
    lines.append(
        f"- coordinator database transactions per applied signal: **{tx:.2f}** "
        f"(target ≤ 1: {_verdict(tx <= 1)}), of which writing "
        f"{fleet.per_signal('wtx'):.2f}; coordinator calls per applied signal "
        f"{calls:.2f} (a call applies every pending signal of its run)"
    )
    return lines


def _round_times(r: Report) -> str:
    phases = [
        ("floor", r.floor),
        ("fleet", r.fleet),
        ("fleet on RabbitMQ", r.on_rabbitmq.fleet if r.on_rabbitmq else None),
        ("peer", r.peer),
        ("fair peer", r.fair_peer),
    ]
    for w in r.waiting:
        phases += [
            (f"fleet beside {w.count:,} waiting", w.absent),
            (f"fleet with {w.count:,} waiting", w.present),
        ]
    return (
        "Round wall times, s: "
        + "; ".join(
            f"{label} " + ", ".join(f"{x.elapsed_s:.1f}" for x in phase.rounds)
            for label, phase in phases
            if phase is not None
        )
        + "."
    )


def _cpu_lines(r: Report) -> list[str]:
    lines = [
        "| | workers | driver | PostgreSQL backends | broker (Redis; RabbitMQ's Erlang VM) "
        "| all | Celery messages |",
        "|---|---|---|---|---|---|---|",
    ]
    rabbit = [("fleet on RabbitMQ", r.on_rabbitmq.fleet)] if r.on_rabbitmq else []
    phases = [("floor", r.floor), ("fleet", r.fleet), *rabbit, *r.peers()]
    for label, phase in phases:
        lifecycles = sum(x.lifecycles for x in phase.rounds) or 1
        messages = sum(x.messages for x in phase.rounds) / lifecycles
        parts = [phase.cpu_ms_per_lifecycle(name) for name in _CPU_OF]
        broker = _f(parts[3], 0) if "peer" not in label else "—"
        lines.append(
            f"| {label} | {_f(parts[0], 0)} | {_f(parts[1], 0)} | {_f(parts[2], 0)} | "
            f"{broker} | {_f(sum(parts), 0)} | {_f(messages, 1) if messages else '—'} |"
        )
    return lines


def _load_table(w: WaitingResult) -> list[str]:
    absent, present = w.load_absent, w.load_present

    def reads(v: dict[str, int]) -> str:
        return (
            f"{v['xact_commit'] + v['xact_rollback']} tx, "
            f"{v['seq_scan']} seq scans reading {v['seq_tup_read']} rows, "
            f"{v['idx_scan']} index scans fetching {v['idx_tup_fetch']} rows"
        )

    def idle(load: LoadFigures) -> str:
        return f"{reads(load.idle.values)}, {1000 * load.idle.backend_cpu_s:.0f} ms PG CPU"

    def cycle(load: LoadFigures) -> str:
        wall = sum(s.wall_ms for s in load.sweeps.values())
        stmts = sum(s.statements for s in load.sweeps.values())
        return (
            f"{wall:.0f} ms, {stmts} statements, {reads(load.cycle.values)}, "
            f"{1000 * load.cycle.backend_cpu_s:.0f} ms PG CPU"
        )

    lines = [
        f"| | absent | {w.count:,} present |",
        "|---|---|---|",
        f"| idle fleet, {absent.idle_s:.0f} s | {idle(absent)} | {idle(present)} |",
        f"| one beat cycle ({len(absent.sweeps)} sweeps) | {cycle(absent)} | {cycle(present)} |",
    ]
    for name in absent.sweeps:
        a, p = absent.sweeps[name], present.sweeps[name]
        lines.append(
            f"| sweep `{name}`: ms, statements, PG CPU ms | {a.wall_ms:.1f}, "
            f"{a.statements}, {a.database_cpu_ms:.0f} | {p.wall_ms:.1f}, "
            f"{p.statements}, {p.database_cpu_ms:.0f} |"
        )

    def fleet(p: PhaseResult) -> str:
        statements = p.per_signal("stmt")
        return (
            f"{p.lifecycles_per_s:.2f}, {p.latency_ms(50):.0f}, "
            f"{p.cpu_ms_per_lifecycle('database_cpu_s'):.0f}, "
            f"{p.cpu_ms_per_lifecycle('worker_cpu_s'):.0f}, {statements:.1f}, "
            f"{p.extra_per_lifecycle('wal_bytes') / 1024:.0f}"
        )

    lines.append(
        "| fleet rounds, alternated: lifecycles/s (median), p50 dispatch ms, CPU ms per "
        "lifecycle of PostgreSQL and of the workers, coordinator statements per applied "
        f"signal, WAL kB per lifecycle | {fleet(w.absent)} | {fleet(w.present)} |"
    )
    return lines


def _statements(r: Report) -> list[str]:
    lines = ["| per applied signal | statement (shape) |", "|---|---|"]
    for shape, n in r.fleet.top_statements(14):
        lines.append(f"| {n:.2f} | `{shape[:110].replace('|', '/')}` |")
    return lines


_PROFILE_OF = {
    "cpu": "Python CPU time (py-spy --gil)",
    "wall": "tasks' wall time, waits included (py-spy --idle, task bodies only)",
}


def _profiles(r: Report) -> list[str]:
    lines: list[str] = []
    for profile in r.profiles:
        if not profile.samples:
            continue
        own = ", ".join(f"{name} {pct:.0f}%" for name, pct in profile.top(profile.own, 8))
        project = [
            (n, pct) for n, pct in profile.top(profile.inclusive, 400) if is_project_frame(n)
        ][:12]
        lines.append(
            f"- **{profile.role}**, share of {_PROFILE_OF[profile.mode]}, "
            f"{profile.samples} samples. Self: {own}."
        )
        lines.append(
            "  Project functions on the stack (inclusive): "
            + ", ".join(f"{name} {pct:.0f}%" for name, pct in project)
            + "."
        )
    return lines


def render(r: Report) -> str:
    m = r.machine
    peer_label = f"peer: DBOS Transact {r.peer_version}".strip()
    parts = [
        f"Measured {m.describe()}.",
        "",
        f"N = {r.runs} lifecycles at once, {r.repeat} rounds after {r.warmup} uncounted "
        "warm-up round(s) per system: rates are the median round, "
        "the fleet's and the peers' rounds alternated, "
        "latencies are pooled over the rounds. Floor: N chains of 20 Celery hops. "
        "Latency: fleet and peer from a job's completion to the next job's dispatch; "
        "floor from one hop's send to the next task's start.",
        "",
        "| | lifecycles/s | transitions/s | completion → next dispatch, p50 / p99 ms | "
        "DB transactions per applied signal, orchestrator (writing) | statements per "
        "applied signal, orchestrator | DB transactions per applied signal, all processes "
        "| peak RSS per worker process, MB |",
        "|---|---|---|---|---|---|---|---|",
        _row("floor: bare Celery ping-pong", r.floor, " (one hop)"),
        _row("fleet", r.fleet),
    ]
    if r.on_rabbitmq is not None:
        parts.append(_row(f"fleet on RabbitMQ {r.on_rabbitmq.version}", r.on_rabbitmq.fleet))
    if r.peer is not None:
        parts.append(_row(peer_label, r.peer))
    if r.fair_peer is not None:
        parts.append(_row(f"fair {peer_label}, the fleet's writes in each step", r.fair_peer))
    for w in r.waiting:
        parts.append(_row(f"fleet, {w.count:,} other runs waiting", w.present))
    parts += [
        "",
        *_ratios(r),
        "",
        _round_times(r),
        "",
        "CPU milliseconds per lifecycle:",
        "",
        *_cpu_lines(r),
    ]
    for w in r.waiting:
        parts += [
            "",
            f"{w.count:,} runs waiting for approval ({w.rows:,} rows), absent and present:",
            "",
            *_load_table(w),
        ]
    parts += ["", "Coordinator statements per applied signal (fleet):", "", *_statements(r)]
    profile = _profiles(r)
    if profile:
        parts += [
            "",
            "Profile of the fleet's worker processes (py-spy, 100 Hz, one extra round per mode):",
            "",
            *profile,
        ]
    return "\n".join(parts) + "\n"
