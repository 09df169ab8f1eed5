"""What the sweep reads from a simulation beyond its result, without changing groupspec.sim.

:class:`ProbedSimulation` is the runner with one addition: after each ownership check it
records how many partitions have no owner from that moment on, the step function whose
integral is the runner's ``partition_unowned_ms``. That lets a run's unavailability be split
by time window (each rebalance, the churn phase). :func:`probe` runs a scenario and returns
that record with the runner's assignment history and raw violations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from groupspec.sim.runner import Simulation, SimulationResult
from groupspec.sim.scenario import Scenario

TP = tuple[str, int]


class ProbedSimulation(Simulation):
    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        #: (from this time, this many partitions have no owner) until the next step
        self.unowned_steps: list[tuple[int, int]] = []

    def _check(self) -> None:
        super()._check()
        n = len(self.unowned_since)
        steps = self.unowned_steps
        if steps and steps[-1][0] == self.now:
            steps[-1] = (self.now, n)
            if len(steps) > 1 and steps[-2][1] == n:
                steps.pop()
        elif not steps or steps[-1][1] != n:
            steps.append((self.now, n))


@dataclass(frozen=True)
class Probe:
    result: SimulationResult
    #: (from_ms, partitions without an owner) steps, in time order
    unowned_steps: tuple[tuple[int, int], ...]
    #: when the simulated clock stopped
    end_ms: int
    #: generation -> owner (group.instance.id or member id) -> partitions received in SyncGroup
    history: Mapping[int, Mapping[str, frozenset[TP]]]
    #: every invariant violation the runner saw, as text starting with the invariant's name
    violations: tuple[str, ...]

    def unowned_ms(self, start: int, end: int) -> int:
        """Partition-milliseconds without an owner in [start, end)."""
        total = 0
        steps = self.unowned_steps
        for i, (t, n) in enumerate(steps):
            t_next = steps[i + 1][0] if i + 1 < len(steps) else self.end_ms
            lo, hi = max(t, start), min(t_next, end)
            if hi > lo:
                total += n * (hi - lo)
        return total

    def moves_by_generation(self) -> dict[int, int]:
        """Partitions each generation handed to an owner other than their previous one (the
        runner's ``partitions_moved``, split by generation)."""
        last: dict[TP, str] = {}
        out: dict[int, int] = {}
        for gen in sorted(self.history):
            moves = 0
            for who, parts in sorted(self.history[gen].items()):
                for tp in sorted(parts):
                    if last.get(tp, who) != who:
                        moves += 1
                    last[tp] = who
            out[gen] = moves
        return out

    def violation_counts(self) -> dict[str, int]:
        """Invariant name -> violations; a failed verdict with none recorded (LivenessProp)
        counts once."""
        counts: dict[str, int] = {}
        for v in self.violations:
            kind = v.split(" ", 1)[0].split(":", 1)[0]
            counts[kind] = counts.get(kind, 0) + 1
        for verdict in self.result.verdicts:
            if not verdict.ok and verdict.name not in counts:
                counts[verdict.name] = 1
        return counts


def probe(scenario: Scenario) -> Probe:
    sim = ProbedSimulation(scenario)
    result = sim.run()
    return Probe(
        result=result,
        unowned_steps=tuple(sim.unowned_steps),
        end_ms=sim.now,
        history={g: {k: frozenset(v) for k, v in a.items()} for g, a in sim.history.items()},
        violations=tuple(sim.violations),
    )
