"""The oracle's mutation campaign (issue 16): how often does ``groupspec validate`` name a
broker or client bug, and does it stay quiet on the unmutated reference?

    python -m bench.oracle_eval                      # the full campaign; rewrites docs/oracle-eval.md
    python -m bench.oracle_eval --quick              # a few mutants and seeds, no files written
    python -m bench.oracle_eval --mutants a,b --runs 3 --seeds 20 --json /tmp/o.json
    python -m bench.oracle_eval --from-json bench/results/oracle_eval.json   # re-render the table only

Each run is one simulated group (:func:`groupspec.pipeline.generate.group_scenario`: eager,
cooperative or static members, 2-4 of them, one or two topics, and a random fault schedule:
crash, clean close and rejoin, GC pause, slow poll, scale-out, static restart, coordinator
failover; and this campaign's own patterns, :data:`ROTATION`: a zombie's close, a crash
whose session outlives the rebalance timeout before a member joins, slowed messages while
two members join, a static restart then a failover, the static leader's restart, a static
restart while the group rebalances or waits for the leader's assignment, a member paused
past its session just after its JoinGroup), simulated with one mutant (:mod:`bench.mutants`) in place. The trace keeps only
what a recorder in front of the broker would see: the exchanges and the fetches, not the
reference's records or timer events, renumbered as one file. The unmutated reference then
validates it. A mutant is *caught* when some run of it is a violation; *exercised* when its
bug changed something in some run (a mutant never exercised cannot be caught, and counts as
missed). The baseline runs the unmutated model on ``--seeds`` scenarios and must give no
violation.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.mutants import Mutant, Prober, all_mutants
from groupspec.pipeline.generate import FAULTS, group_scenario
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.sim.render import broker_config
from groupspec.sim.runner import Simulation
from groupspec.sim.scenario import parse_scenario
from groupspec.trace import events as ev
from groupspec.trace.jsonl import TraceWriter
from groupspec.validate import validate_bytes

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "oracle-eval.md"
#: the CI profile: one mutant of each kind, few seeds
QUICK_MUTANTS = ("commit-accepts-stale-generation", "join-never-waits", "eager-consumes-across-rebalance",
                 "heartbeats-after-fencing")


def _kind(data: dict[str, Any]) -> str:
    if data["defaults"].get("group_protocol") == "consumer":
        return "consumer"
    if any(mem.get("static") for mem in data["members"]):
        return "static"
    return "cooperative" if "cooperative-sticky" in data["defaults"]["assignors"] else "eager"


#: a mutant's runs cycle through these fault patterns (of group_scenario's FAULTS), so each
#: mutant meets zombies (a pause past the session timeout), slow pollers, departures,
#: arrivals and coordinator moves
ROTATION: tuple[tuple[str, ...], ...] = (
    ("pause",), ("slow-poll",), ("crash", "close-rejoin"), ("scale-out", "pause"),
    ("static-restart", "slow-poll"), ("failover", "crash"), ("zombie-close",),
    ("crash-then-join",), ("late-sync",), ("static-restart-failover",), ("leader-static-restart",),
    ("static-restart-in-rebalance",), ("static-restart-in-sync",), ("pause-before-rejoin",),
)

#: fault patterns of this campaign only, built on group_scenario's: ``zombie-close`` is a
#: member paused past its session timeout (the coordinator removes it) that closes as it
#: resumes, so its LeaveGroup names an id the coordinator no longer knows
ZOMBIE_CLOSE = "zombie-close"
#: the first member (the leader, as a rule) crashes with a session timeout (30 s) longer
#: than the rebalance timeout (max.poll.interval.ms, 8 s), then a member joins: the join
#: phase can only end at the rebalance timeout, which removes the crashed member and so
#: elects another leader among the members that rejoined (GroupMetadataManager
#: classicGroupJoin's join timer, completeClassicGroupJoin; ClassicGroup
#: maybeElectNewJoinedLeader). Without it, the rebalance timeout and the choice of a new
#: leader are never what ends a join phase (a crashed member's session expires first).
CRASH_THEN_JOIN = "crash-then-join"
#: messages slowed (0.3 to 1.5 s each way) while two members join a second or two apart: a
#: follower's SyncGroup can reach the coordinator after the second JoinGroup has started
#: the next rebalance (SyncGroup in PreparingRebalance: REBALANCE_IN_PROGRESS)
LATE_SYNC = "late-sync"
#: a static member restarts (a new member id, no rebalance: Stable, same protocol) and the
#: coordinator then moves: the group reloaded from the log must know the new member id
#: (KAFKA-10284)
STATIC_RESTART_FAILOVER = "static-restart-failover"
#: the static leader (the first member) restarts with a new member id while the group is
#: Stable: no rebalance, and the JoinGroup answer must tell it it is still the leader
#: (KIP-814, KAFKA-13435); group_scenario restarts a follower only
LEADER_STATIC_RESTART = "leader-static-restart"
#: a static follower restarts (a JoinGroup without a member id for its group.instance.id)
#: while the group rebalances for a static member that joins: it crashes from just before to
#: just after the joiner's JoinGroup and comes back within the rebalance timeout, so its
#: JoinGroup reaches the coordinator in PreparingRebalance (the join phase waits for it),
#: where the member id must be replaced all the same (KAFKA-8500); group_scenario restarts a
#: member of a Stable group only
STATIC_RESTART_IN_REBALANCE = "static-restart-in-rebalance"
#: a static follower restarts while the group is in CompletingRebalance: the join phase for
#: a static member that joins has ended and the leader has not sent its assignment yet,
#: held back by a GC pause of the leader that begins just after its JoinGroup leaves. The
#: restart's JoinGroup must start a new rebalance (KAFKA-9801). The times come from a probe
#: run of the scenario without the pause and the restart (when the leader sent its
#: JoinGroup, when the join phase ended); the window is otherwise a few milliseconds wide
STATIC_RESTART_IN_SYNC = "static-restart-in-sync"
#: a member joins; a follower pauses (GC) just after sending its JoinGroup, past the end of
#: the join phase and a session timeout more: the coordinator removes it, so the SyncGroup
#: it sends on resuming is answered UNKNOWN_MEMBER_ID, and it must give up its partitions
#: before it rejoins (ConsumerCoordinator.onJoinPrepare; KAFKA-12983). The pause's time
#: comes from a probe run of the scenario without it
PAUSE_BEFORE_REJOIN = "pause-before-rejoin"


def _zombie_close(data: dict[str, Any], rng: random.Random) -> None:
    pause = next(f for f in data["faults"] if f["kind"] == "pause")
    pause["duration_ms"] = 2 * data["defaults"]["session_timeout_ms"]
    data["faults"] = [pause, {"at_ms": pause["at_ms"] + pause["duration_ms"], "kind": "close",
                              "member": pause["member"]}]


def _crash_then_join(data: dict[str, Any], rng: random.Random) -> None:
    join = next(f for f in data["faults"] if f["kind"] == "join")
    data["defaults"].update(session_timeout_ms=30_000, max_poll_interval_ms=8_000)
    first = data["members"][0]["name"]
    crash = {"at_ms": join["at_ms"] - rng.randint(1, 4) * 500, "kind": "crash", "member": first}
    data["faults"] = [crash, join]
    data["until_ms"] = max(data["until_ms"], join["at_ms"] + 40_000)


def _late_sync(data: dict[str, Any], rng: random.Random) -> None:
    join = next(f for f in data["faults"] if f["kind"] == "join")
    second = f"y{len(data['members'])}"
    static = any(mem.get("static") for mem in data["members"])
    data["members"].append({"name": second, "start_ms": None, **({"static": True} if static else {})})
    slow = {"at_ms": join["at_ms"] - 1000, "kind": "delay",
            "delay_ms": rng.choice((1000, 1500, 2000)), "duration_ms": 25_000}
    data["faults"] = [slow, join, {"at_ms": join["at_ms"] + rng.randint(4, 18) * 500, "kind": "join",
                                   "member": second}]
    data["until_ms"] = max(data["until_ms"], join["at_ms"] + 40_000)


def _static_restart_failover(data: dict[str, Any], rng: random.Random) -> None:
    restart = next(f for f in data["faults"] if f["kind"] == "static_restart")
    failover = {"at_ms": restart["at_ms"] + restart["downtime_ms"] + rng.randint(3, 8) * 1000,
                "kind": "failover"}
    data["faults"] = [restart, failover]
    data["until_ms"] = max(data["until_ms"], failover["at_ms"] + 20_000)


def _leader_static_restart(data: dict[str, Any], rng: random.Random) -> None:
    restart = next(f for f in data["faults"] if f["kind"] == "static_restart")
    restart["member"] = data["members"][0]["name"]
    data["faults"] = [restart]


def _static_restart_in_rebalance(data: dict[str, Any], rng: random.Random) -> None:
    restart = next(f for f in data["faults"] if f["kind"] == "static_restart")
    joiner = f"y{len(data['members'])}"
    data["members"].append({"name": joiner, "start_ms": None, "static": True})
    join_at = restart["at_ms"]
    restart["at_ms"] = join_at + rng.randint(-2, 2) * 500
    restart["downtime_ms"] = rng.choice((1000, 2000, 3000))
    data["faults"] = [{"at_ms": join_at, "kind": "join", "member": joiner}, restart]


def _static_restart_in_sync(data: dict[str, Any], rng: random.Random) -> None:
    restart = next(f for f in data["faults"] if f["kind"] == "static_restart")
    joiner = f"y{len(data['members'])}"
    data["members"].append({"name": joiner, "start_ms": None, "static": True})
    join_at = restart["at_ms"]
    data["faults"] = [{"at_ms": join_at, "kind": "join", "member": joiner}]
    leader = data["members"][0]["name"]
    data["defaults"]["poll_interval_ms"] = POLL_INTERVAL_MS  # as the run will have it
    probe = Simulation(parse_scenario(data, "probe")).run()
    joins = [e for e in probe.trace if isinstance(e, ev.WireExchange) and isinstance(e.response, m.JoinGroupResponse)
             and e.response.error is Error.NONE and e.sent_ms >= join_at and e.received_ms is not None]
    first_gen = min((e.response.generation_id for e in joins if isinstance(e.response, m.JoinGroupResponse)),
                    default=None)
    mine = [e for e in joins if isinstance(e.response, m.JoinGroupResponse) and e.response.generation_id == first_gen]
    led = [e for e in mine if e.client_id == leader]
    if not led:
        return  # the join phase did not go as probed: the plain scale-out
    sent = int(led[0].sent_ms)
    done = int(min(e.received_ms for e in mine if e.received_ms is not None))
    held = done - sent + rng.choice((3000, 4000, 5000))
    follower = data["members"][1]["name"]
    data["faults"] += [
        {"at_ms": sent + 1, "kind": "pause", "member": leader, "duration_ms": held},
        {"at_ms": done + rng.randint(0, 4) * 100, "kind": "static_restart", "member": follower,
         "downtime_ms": rng.choice((300, 600, 1000))},
    ]


def _pause_before_rejoin(data: dict[str, Any], rng: random.Random) -> None:
    join = next(f for f in data["faults"] if f["kind"] == "join")
    data["faults"] = [join]
    follower = data["members"][1]["name"]
    data["defaults"]["poll_interval_ms"] = POLL_INTERVAL_MS  # as the run will have it
    probe = Simulation(parse_scenario(data, "probe")).run()
    joined = next((e for e in probe.trace if isinstance(e, ev.WireExchange) and e.client_id == follower
                   and e.sent_ms >= join["at_ms"] and isinstance(e.response, m.JoinGroupResponse)
                   and e.response.error is Error.NONE and e.received_ms is not None), None)
    if joined is None or joined.received_ms is None:
        return  # the rebalance went as it did not in the probe: the plain scale-out
    session = int(data["defaults"]["session_timeout_ms"])
    data["faults"].append({"at_ms": int(joined.sent_ms) + 1, "kind": "pause", "member": follower,
                           "duration_ms": int(joined.received_ms - joined.sent_ms) + session
                           + rng.choice((2000, 4000, 6000))})


#: pattern -> (the group_scenario faults it starts from, how it rewrites that scenario)
_BUILD: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any], random.Random], None]]] = {
    ZOMBIE_CLOSE: (("pause",), _zombie_close),
    CRASH_THEN_JOIN: (("scale-out",), _crash_then_join),
    LATE_SYNC: (("scale-out",), _late_sync),
    STATIC_RESTART_FAILOVER: (("static-restart",), _static_restart_failover),
    LEADER_STATIC_RESTART: (("static-restart",), _leader_static_restart),
    STATIC_RESTART_IN_REBALANCE: (("static-restart",), _static_restart_in_rebalance),
    STATIC_RESTART_IN_SYNC: (("static-restart",), _static_restart_in_sync),
    PAUSE_BEFORE_REJOIN: (("scale-out",), _pause_before_rejoin),
}
#: the patterns built here rather than drawn by group_scenario
_OWN_PATTERNS = frozenset(_BUILD)
#: the patterns that need static members: those built on a static restart, which
#: group_scenario draws for static groups only
_STATIC_ONLY = frozenset(p for p, (faults, _) in _BUILD.items() if "static-restart" in faults)


POLL_INTERVAL_MS = 500


def _to_consumer_protocol(data: dict[str, Any]) -> None:
    """The scenario with KIP-848 members: the broker assigns, with the members' own session
    timeout and heartbeat interval as its consumer-group settings."""
    d = data["defaults"]
    d["group_protocol"] = "consumer"
    coord = data.setdefault("coordinator", {})
    coord["consumer_group_session_timeout_ms"] = d.get("session_timeout_ms", 45_000)
    coord["consumer_group_heartbeat_interval_ms"] = d.get("heartbeat_interval_ms", 5_000)


def applicable(pattern: tuple[str, ...], protocols: Sequence[str] | None) -> bool:
    """Whether runs of ``protocols`` can have fault pattern ``pattern`` (a static member's
    restart needs static members)."""
    return not (pattern[0] in _STATIC_ONLY and protocols is not None and "static" not in protocols)


def scenario_data(seed: int, protocols: Sequence[str] | None = None,
                  faults: tuple[str, ...] = FAULTS, manual_commit: bool = False) -> dict[str, Any]:
    """Seed ``seed``'s random group scenario (faults drawn from ``faults``), redrawn from
    the same generator until its protocol is one of ``protocols``."""
    rng = random.Random(seed)
    own = next((f for f in faults if f in _OWN_PATTERNS), None)
    kip848 = protocols is not None and "consumer" in protocols
    if own is not None and not applicable((own,), protocols):
        raise ValueError(f"fault pattern {own} needs static members; protocols {protocols}")
    while True:
        data = group_scenario(f"g{seed}", rng, _BUILD[own][0] if own else faults)
        if kip848:
            _to_consumer_protocol(data)
        if own in _STATIC_ONLY and _kind(data) != "static":
            continue  # (a static member's restart: static groups only)
        if protocols is None or _kind(data) in protocols:
            break
    if own:
        _BUILD[own][1](data, rng)
    if manual_commit:
        data["defaults"]["enable_auto_commit"] = False
    # a poll (and its Fetch) every 500 ms rather than 100: five times fewer events, the
    # same protocol (rejoins happen at the next poll)
    data["defaults"]["poll_interval_ms"] = POLL_INTERVAL_MS
    return data


@dataclasses.dataclass
class Run:
    seed: int
    protocol: str
    verdict: str
    rule: str
    side: str
    hits: int
    seconds: float
    error: str = ""


def wire_trace(trace: list[ev.Event], broker_config: dict[str, int] | None = None) -> bytes:
    """What a recorder would have written: exchanges, fetches and metadata, renumbered (and
    the broker settings the wire does not show, as a recording made with them given)."""
    out = io.StringIO()
    w = TraceWriter(out, source="simulator", broker_config=broker_config)
    for e in trace:
        if isinstance(e, ev.WireExchange | ev.FetchEvent | ev.MetadataEvent):
            w.write(dataclasses.replace(e, seq=w.next_seq()))
    return out.getvalue().encode()


#: a run (simulation and validation) that takes longer is stopped and counted as "timeout"
RUN_TIMEOUT_S = 60.0


class RunTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise RunTimeout(f"run stopped after {RUN_TIMEOUT_S:.0f} s")


def run_one(mutant: Mutant | None, seed: int, index: int | None = None) -> Run:
    """One run: the baseline (``mutant`` None) draws from every fault pattern; a mutant's
    ``index``-th run from :data:`ROTATION`. At most :data:`RUN_TIMEOUT_S` seconds."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, RUN_TIMEOUT_S)
    try:
        return _run_one(mutant, seed, index)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _run_one(mutant: Mutant | None, seed: int, index: int | None) -> Run:
    own = [p for p in ROTATION if p[0] in _OWN_PATTERNS]
    if mutant is None and seed % len(ROTATION) < len(own):
        # the baseline meets this campaign's own patterns too, not only group_scenario's
        data = scenario_data(seed, None, own[seed % len(ROTATION)])
    elif mutant is None and seed % 5 == 1:
        # and KIP-848 members, one seed in five
        data = scenario_data(seed, ("consumer",))
    elif mutant is None or index is None:
        data = scenario_data(seed, mutant.protocols if mutant else None)
    else:
        rotation = [p for p in mutant.patterns or ROTATION if applicable(p, mutant.protocols)]
        data = scenario_data(seed, mutant.protocols, rotation[index % len(rotation)])
    sc = parse_scenario(data, f"seed-{seed}")
    before = mutant.hits if mutant else 0
    t0 = time.perf_counter()
    try:
        if mutant is None:
            # even seeds: plain clients; odd seeds: clients that also send stale requests
            probe = seed % 2 and _kind(data) != "consumer"  # Prober speaks the classic protocol
            result = Simulation(sc, consumer_factory=Prober if probe else None).run()
        else:
            with mutant.applied():
                sim = Simulation(sc, consumer_factory=mutant.consumer_factory())
                coordinator = mutant.coordinator(sc.coordinator)
                if coordinator is not None:
                    # the topics the simulation gave its own coordinator (KIP-848 groups)
                    coordinator.set_topics(sim.coordinator.state.topics.values())
                    sim.coordinator = coordinator
                result = sim.run()
        report = validate_bytes(wire_trace(result.trace, broker_config(sc.coordinator)), f"seed-{seed}")
    except RunTimeout as e:
        return Run(seed, _kind(data), "timeout", "", "", (mutant.hits if mutant else 0) - before,
                   time.perf_counter() - t0, str(e))
    except Exception as e:  # a mutant that breaks the model itself: reported, not fatal
        return Run(seed, _kind(data), "error", "", "", (mutant.hits if mutant else 0) - before,
                   time.perf_counter() - t0, f"{type(e).__name__}: {e}")
    verdict = report.worst()
    rule = side = ""
    for g in report.groups:
        if g.violation is not None:
            rule, side = g.violation.rule, g.violation.side
            break
        if g.divergence is not None and not rule:
            rule, side = g.divergence.rule, g.divergence.side
    return Run(seed, _kind(data), verdict, rule, side, (mutant.hits if mutant else 0) - before,
               time.perf_counter() - t0)


def campaign(mutants: list[Mutant], runs: int, seeds: int, first_seed: int = 1000,
             log: Any = None) -> dict[str, Any]:
    started = datetime.now(UTC)
    rows = []
    for mut in mutants:
        got = [run_one(mut, first_seed + i, i) for i in range(runs)]
        verdicts = Counter(r.verdict for r in got)
        rules = Counter(r.rule for r in got if r.verdict == "violation")
        row = {
            "mutant": mut.name, "side": mut.side, "expected": mut.expected, "description": mut.description,
            "runs": len(got), "exercised": sum(r.hits > 0 for r in got),
            "violation": verdicts["violation"], "inconclusive": verdicts["inconclusive"],
            "conforming": verdicts["conforming"], "error": verdicts["error"] + verdicts["timeout"],
            "rules": dict(rules.most_common()),
            "sides": dict(Counter(r.side for r in got if r.verdict == "violation")),
            "caught": verdicts["violation"] > 0,
            "errors": [r.error for r in got if r.error][:2],
        }
        rows.append(row)
        if log:
            log(f"{mut.name}: {'CAUGHT' if row['caught'] else 'missed'} "
                f"({row['violation']}/{row['runs']} violation, exercised {row['exercised']}, rules {row['rules']})")
    base = [run_one(None, i) for i in range(seeds)]
    if log:
        log(f"baseline: {dict(Counter(r.verdict for r in base))} over {len(base)} seeds")
    caught = sum(1 for r in rows if r["caught"])
    return {
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "mutants": rows,
        "caught": caught,
        "total": len(rows),
        "baseline": {
            "seeds": len(base),
            "verdicts": dict(Counter(r.verdict for r in base)),
            "violations": [dataclasses.asdict(r) for r in base if r.verdict in ("violation", "error")],
            "timeouts": [r.seed for r in base if r.verdict == "timeout"],
            "inconclusive": [r.seed for r in base if r.verdict == "inconclusive"],
        },
    }


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several runs' results as one: every mutant row, the baselines' runs added up."""
    rows = [r for p in parts for r in p["mutants"]]
    verdicts: Counter[str] = Counter()
    for p in parts:
        verdicts.update(p["baseline"]["verdicts"])
    return {
        "started": min(p["started"] for p in parts), "finished": max(p["finished"] for p in parts),
        "command": " && ".join(p.get("command", "python -m bench.oracle_eval") for p in parts),
        "mutants": rows, "caught": sum(1 for r in rows if r["caught"]), "total": len(rows),
        "baseline": {
            "seeds": sum(p["baseline"]["seeds"] for p in parts), "verdicts": dict(verdicts),
            "violations": [v for p in parts for v in p["baseline"]["violations"]],
            "inconclusive": [s for p in parts for s in p["baseline"]["inconclusive"]],
            "timeouts": [s for p in parts for s in p["baseline"].get("timeouts", [])],
        },
    }


def markdown(res: dict[str, Any], command: str) -> str:
    total, caught = res["total"], res["caught"]
    exercised = sum(1 for r in res["mutants"] if r["exercised"])
    caught_ex = sum(1 for r in res["mutants"] if r["exercised"] and r["caught"])
    b = res["baseline"]
    lines = [
        "# The oracle's mutation campaign",
        "",
        "<!-- Generated by `python -m bench.oracle_eval`; edit bench/oracle_eval.py or bench/mutants.py, not this file. -->",
        "",
        "Each mutant is a plausible broker or client bug put into the reference coordinator or "
        "client model in process (bench/mutants.py: a coordinator subclass rewriting answers, a "
        "patch held only while the simulator runs, or a consumer subclass). Each run simulates one "
        "random group with a fault schedule (`groupspec pipeline generate`'s scenarios), keeps what a "
        "recorder would see (exchanges and fetches; no reference records), and validates it with the "
        "unmutated reference. A mutant is caught when some run is a **violation**; *exercised* counts "
        "the runs in which the bug changed anything.",
        "",
        f"- command: `{command}`",
        f"- run: {res['started']} to {res['finished']} (UTC)",
        f"- **caught: {caught} of {total} mutants ({100 * caught / max(total, 1):.0f}%)**; of the "
        f"{exercised} mutants some run exercised, {caught_ex} caught ({100 * caught_ex / max(exercised, 1):.0f}%)",
        f"- unmutated baseline: {b['seeds']} seeds: {', '.join(f'{k} {v}' for k, v in sorted(b['verdicts'].items()))}"
        f"; **{len(b['violations'])} violation(s)**",
        "",
        "| mutant | side | rule expected | runs | exercised | violation / inconclusive / conforming | rule named (side) | caught |",
        "|---|---|---|---:|---:|---|---|---|",
    ]
    for r in res["mutants"]:
        named = ", ".join(f"{k} x{v}" for k, v in r["rules"].items()) or "-"
        sides = "/".join(sorted(r["sides"])) or "-"
        err = f" (+{r['error']} error or timeout)" if r["error"] else ""
        lines.append(
            f"| `{r['mutant']}` | {r['side']} | {r['expected']} | {r['runs']} | {r['exercised']} | "
            f"{r['violation']} / {r['inconclusive']} / {r['conforming']}{err} | {named} ({sides}) | "
            f"{'yes' if r['caught'] else '**no**'} |")
    lines += ["", "## Mutants", ""]
    lines += [f"- `{r['mutant']}` ({r['side']}): {r['description']}" for r in res["mutants"]]
    if b["violations"]:
        lines += ["", "## Baseline violations", ""]
        lines += [f"- seed {v['seed']} ({v['protocol']}): {v['verdict']} {v['rule']} {v['error']}" for v in b["violations"]]
    if b.get("timeouts"):
        lines += ["", f"Baseline seeds stopped at the {RUN_TIMEOUT_S:.0f} s limit: {', '.join(map(str, b['timeouts']))}."]
    if b["inconclusive"]:
        lines += ["", f"Baseline seeds left inconclusive: {', '.join(map(str, b['inconclusive']))}."]
    lines += [
        "",
        "## Reading the table",
        "",
        "- A missed mutant that was exercised is a hole in the oracle; one never exercised needs a "
        "scenario that reaches its bug. Timing mutants (a timer that never fires) wait for the "
        "replay's timing rules (issue 16 item 2), and the verdict lists one divergence per group "
        "until the replay carries on past the first (item 1).",
        "- `rule named` is the first violation's rule in each caught run; the expected rule may come "
        "second when an earlier consequence is named first.",
        "- A mutant's runs cycle through fault patterns: `group_scenario`'s (crash, close and rejoin, "
        "pause, slow poll, scale-out, static restart, failover) and this campaign's own "
        "(`zombie-close`, `crash-then-join`, `late-sync`, `static-restart-failover`, "
        "`leader-static-restart`, `static-restart-in-rebalance`, `static-restart-in-sync`, "
        "`pause-before-rejoin`; the last two time their faults from a probe run of the scenario; "
        "bench/oracle_eval.py `ROTATION`). A bug that only one pattern reaches runs on that pattern "
        "alone (`Mutant.patterns`); the baseline meets every pattern.",
        "- The `kafka-NNNNN-...` and `kip-394-...` mutants are bugs Apache Kafka's group coordinator "
        "or Java consumer had, each the behaviour before the JIRA issue named was fixed, put back into "
        "the reference: a trace of such a broker or client must be a violation.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.oracle_eval", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=20, help="runs (seeds) per mutant (default 20)")
    p.add_argument("--seeds", type=int, default=200, help="unmutated baseline seeds (default 200)")
    p.add_argument("--mutants", help="comma-separated mutant names (default: all)")
    p.add_argument("--quick", action="store_true", help="the CI profile: 4 mutants, 2 runs, 3 seeds; no files")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    p.add_argument("--out", type=Path, default=DOC, help="the Markdown table (default docs/oracle-eval.md)")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--baseline-only", action="store_true", help="run only the unmutated baseline")
    p.add_argument("--from-json", type=Path, nargs="+", metavar="JSON",
                   help="render the table from earlier --json results (mutant rows and baseline "
                        "runs of several files are put together) instead of running")
    args = p.parse_args(argv)
    mutants = all_mutants()
    if args.list:
        for mut in mutants:
            print(f"{mut.name:40s} {mut.side:7s} {mut.expected}")
        return 0
    if args.from_json:
        res = merge([json.loads(p.read_text(encoding="utf-8")) for p in args.from_json])
        args.out.write_text(markdown(res, res.get("command", "python -m bench.oracle_eval")), encoding="utf-8")
        print(f"caught {res['caught']} of {res['total']}; baseline {res['baseline']['verdicts']}")
        return 0 if not res["baseline"]["violations"] else 1
    names = args.mutants.split(",") if args.mutants else (list(QUICK_MUTANTS) if args.quick else None)
    if names is not None:
        known = {mut.name: mut for mut in mutants}
        bad = [n for n in names if n not in known]
        if bad:
            print(f"error: --mutants: unknown mutant(s) {', '.join(bad)}", file=sys.stderr)
            return 2
        mutants = [known[n] for n in names]
    if args.baseline_only:
        mutants = []
    runs, seeds = (2, 3) if args.quick else (args.runs, args.seeds)
    res = campaign(mutants, runs, seeds, log=lambda s: print(s, file=sys.stderr, flush=True))
    res["command"] = "python -m bench.oracle_eval" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    print(f"caught {res['caught']} of {res['total']}; baseline {res['baseline']['verdicts']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if not args.quick:
        args.out.write_text(markdown(res, res["command"]), encoding="utf-8")
    return 0 if not res["baseline"]["violations"] else 1


if __name__ == "__main__":
    sys.exit(main())
