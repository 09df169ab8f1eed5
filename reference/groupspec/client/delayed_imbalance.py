"""KIP-415 delayed imbalance resolution (``scheduled.rebalance.max.delay.ms``), leader side.

Kafka Connect's incremental cooperative assignor holds back the work of a member that
departed, for up to the delay, in case it comes back; members that joined meanwhile with
nothing assigned become candidates, and when the delay expires the held-back work goes to
them (or is dealt out as new work when there are none). Source:
connect/runtime/src/main/java/org/apache/kafka/connect/runtime/distributed/
IncrementalCooperativeAssignor.java, ``handleLostAssignments``, ``calculateDelay``,
``resetDelay``, ``candidateWorkersForReassignment``.

Here the "work" is partitions and a member is known by its group.instance.id, or its member
id when dynamic (Connect uses the worker's URL). Differences, on purpose:

* The state lives in the leader's consumer (as in Connect: a new leader starts without it).
* Held-back partitions are remembered explicitly (Connect derives them from its previous
  assignment); they stay unowned until the delay expires or a candidate is present at an
  expired delay.
* Only the leader schedules the follow-up rebalance (Connect tells every member the delay
  in its assignment); one rejoin is enough for the coordinator to start a rebalance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TP = tuple[str, int]


@dataclass
class DelayedImbalance:
    max_delay_ms: int
    previous: dict[str, set[TP]] = field(default_factory=dict)
    held: set[TP] = field(default_factory=set)
    scheduled_ms: int = 0
    candidates: set[str] = field(default_factory=set)

    def _reset(self) -> None:
        self.candidates.clear()
        self.scheduled_ms = 0
        self.held = set()

    def apply(
        self,
        now_ms: int,
        assignment: Mapping[str, set[TP]],
        owned: Mapping[str, set[TP]],
    ) -> tuple[dict[str, set[TP]], int]:
        """Adjust the inner assignor's ``assignment`` (member key -> partitions) given what
        each present member owns; return the final assignment and the delay after which
        the leader must rejoin (0: none)."""
        result = {k: set(v) for k, v in assignment.items()}
        members = set(result)
        departed = set(self.previous) - members
        lost = {tp for k in departed for tp in self.previous[k]} | self.held
        lost -= {tp for parts in owned.values() for tp in parts}
        delay = 0
        if not lost:
            self._reset()
        elif self.scheduled_ms <= 0 and not departed:
            pass  # nobody departed: missing work is simply new work
        elif self.max_delay_ms == 0:
            pass  # delays disabled: reassign at once
        elif self.scheduled_ms > 0 and now_ms >= self.scheduled_ms:
            present = sorted(self.candidates & members)
            if present:
                for k in result:
                    result[k] -= lost
                for i, tp in enumerate(sorted(lost)):
                    result[present[i % len(present)]].add(tp)
            self._reset()
        else:
            self.candidates |= {k for k in members if not owned.get(k)}
            if now_ms < self.scheduled_ms:
                delay = min(self.scheduled_ms - now_ms, self.max_delay_ms)  # calculateDelay
            else:
                delay = self.max_delay_ms
            self.scheduled_ms = now_ms + delay
            self.held = set(lost)
            for k in result:
                result[k] -= lost
        self.previous = {k: set(v) for k, v in result.items()}
        return result, delay
