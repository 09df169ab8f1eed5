"""Whole-group properties under random fault schedules: the simulator runs the reference
coordinator with real consumer models (eager or cooperative, dynamic and static) while
Hypothesis chooses what goes wrong and when. After every run every verdict must hold:

- OneOwnerPerGenerationInv and NoConcurrentOwnersInv (no partition held by two current
  consumers at any instant, the KIP-429 guarantee for cooperative clients);
- the coordinator invariants (leader is a member, valid transitions, generations,
  no stale commit stored);
- LivenessProp: once the faults stop, the group is Stable with every subscribed partition
  owned within the bound the simulator derives from the timeouts.
"""

from __future__ import annotations

import dataclasses
from importlib import resources

from hypothesis import strategies as st

from groupspec.sim.runner import Simulation, SimulationResult, simulate
from groupspec.sim.scenario import Fault, Scenario, load_scenario_text

MEMBERS = ("c1", "c2", "c3", "s1")
#: faults come in this window; the scenario then runs long enough for the liveness bound
FAULT_WINDOW_MS = (8_000, 90_000)


def base_scenario() -> Scenario:
    text = (resources.files("groupspec.sim") / "scenarios" / "default.json").read_text()
    sc = load_scenario_text(text, "default.json")
    return dataclasses.replace(sc, faults=())


@st.composite
def faults(draw: st.DrawFn) -> Fault:
    at = draw(st.integers(*FAULT_WINDOW_MS))
    kind = draw(
        st.sampled_from(
            ["crash", "pause", "slow_poll", "static_restart", "close", "failover", "delay", "loss", "join"]
        )
    )
    member = draw(st.sampled_from(MEMBERS))
    if kind == "static_restart":
        return Fault(at, kind, member="s1", downtime_ms=draw(st.integers(500, 15_000)))
    if kind in ("pause", "slow_poll"):
        return Fault(at, kind, member=member, duration_ms=draw(st.integers(1_000, 40_000)))
    if kind == "delay":
        return Fault(at, kind, delay_ms=draw(st.integers(5, 2_000)), duration_ms=draw(st.integers(1_000, 20_000)))
    if kind == "loss":
        return Fault(at, kind, probability=draw(st.sampled_from([0.05, 0.2, 0.5])), duration_ms=draw(st.integers(1_000, 15_000)))
    if kind == "join":
        return Fault(at, kind, member="c5")
    if kind == "failover":
        return Fault(at, kind)
    return Fault(at, kind, member=member)


def scenario_with(faults_: list[Fault], eager: bool, seed: int) -> Scenario:
    """The base scenario with these faults (range assignors when ``eager``), run long
    enough after the last fault for the liveness bound."""
    sc = base_scenario()
    if eager:
        members = tuple(
            dataclasses.replace(ms, config=dataclasses.replace(ms.config, assignors=("range",)))
            for ms in sc.members
        )
        sc = dataclasses.replace(sc, members=members)
    ordered = tuple(sorted(faults_, key=lambda f: f.at_ms))
    sc = dataclasses.replace(sc, faults=ordered, seed=seed)
    probe = dataclasses.replace(sc, until_ms=0)
    bound = Simulation(probe).liveness_bound_ms()
    last = max((f.at_ms for f in ordered), default=0)
    return dataclasses.replace(sc, until_ms=last + bound + 10_000)


def run_with(faults_: list[Fault], eager: bool, seed: int) -> SimulationResult:
    return simulate(scenario_with(faults_, eager, seed))


def failed_verdicts(result: SimulationResult) -> list[str]:
    return [f"{v.name}: {v.detail}" for v in result.verdicts if not v.ok]
