"""One run of a sweep as a simulator scenario (groupspec.sim.scenario).

Members ``c1..cN`` start 100 ms apart and form the group behind the coordinator's initial
rebalance delay; they share one topic ``events`` with the cell's partition count. The churn
pattern becomes faults from ``start_ms`` on. The seed moves the churn in time (up to
``jitter_ms`` per event) and picks who is hit (the restart order; the member that crashes
or flaps, never c1, which usually leads: in the client model a new leader starts without
the KIP-415 state, so a leader crash would hide the delay). The schedule depends on the
churn pattern, group size and seed only, so every strategy of a sweep meets the same churn.

The simulated clock stops ``settle_ms`` after the churn's last event plus one session
timeout and the KIP-415 delay, time enough to notice a dead member and settle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from groupspec.pipeline.config import PROTOCOLS, RunSpec
from groupspec.sim.scenario import Scenario, apply_overrides, parse_scenario

TOPIC = "events"


@dataclass(frozen=True)
class BuiltScenario:
    scenario: Scenario
    #: the first churn event: rebalances from here on are the churn's, earlier ones formed the group
    churn_start_ms: int
    #: the last churn event (a member back, the last pause over)
    churn_end_ms: int


def _faults(run: RunSpec, members: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(faults, extra members) of the run's churn pattern."""
    cell = run.cell
    s = run.settings.churn[cell.churn]
    rng = random.Random(f"{cell.churn}/{cell.group_size}/{run.seed}")

    def jitter() -> int:
        return rng.randint(0, s["jitter_ms"])

    start = s["start_ms"]
    faults: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    if cell.churn == "rolling-restart":
        order = rng.sample(members, len(members))
        for i, who in enumerate(order):
            t = start + i * s["interval_ms"] + jitter()
            faults.append({"at_ms": t, "kind": "close", "member": who})
            faults.append({"at_ms": t + s["downtime_ms"], "kind": "join", "member": who})
    elif cell.churn in ("crash", "crash-restart"):
        who = rng.choice(members[1:])
        t = start + jitter()
        faults.append({"at_ms": t, "kind": "crash", "member": who})
        if cell.churn == "crash-restart":
            faults.append({"at_ms": t + s["restart_after_ms"], "kind": "join", "member": who})
    elif cell.churn == "scale-out":
        t = start + jitter()
        for k in range(s["count"]):
            name = f"c{len(members) + k + 1}"
            extra.append({"name": name, "start_ms": None})
            faults.append({"at_ms": t + k * s["stagger_ms"], "kind": "join", "member": name})
    elif cell.churn == "flapping":
        who = rng.choice(members[1:])
        for k in range(s["times"]):
            t = start + k * s["period_ms"] + jitter()
            faults.append({"at_ms": t, "kind": "pause", "member": who, "duration_ms": s["pause_ms"]})
    else:  # config.CHURNS lists the patterns; a new one needs a branch here
        raise ValueError(f"unknown churn pattern {cell.churn!r}")
    return faults, extra


def build_scenario(run: RunSpec) -> BuiltScenario:
    cell = run.cell
    st = run.settings
    names = [f"c{i + 1}" for i in range(cell.group_size)]
    faults, extra = _faults(run, names)
    start = min(f["at_ms"] for f in faults)
    end = max(f["at_ms"] + f.get("duration_ms", 0) for f in faults)
    session = int(st.consumer.get("session_timeout_ms", 10_000))
    data: dict[str, Any] = {
        "name": run.run_id,
        "description": f"sweep run {run.run_id}",
        "group_id": "sweep",
        "seed": run.seed,
        "until_ms": end + session + cell.delay_ms + st.settle_ms,
        "topics": {TOPIC: cell.partitions},
        "defaults": {**st.consumer, "scheduled_rebalance_max_delay_ms": cell.delay_ms},
        "members": [{"name": n, "start_ms": i * 100} for i, n in enumerate(names)] + extra,
        "coordinator": dict(st.coordinator),
        "network": {"delay_ms": st.network_delay_ms},
        "faults": faults,
    }
    base, static, _ = PROTOCOLS[cell.protocol]
    if base == "consumer":
        # KIP-848: the broker assigns with the server-side assignor the members ask for, and
        # sets the session timeout and heartbeat interval; unless the sweep says otherwise,
        # they are the classic members' own, so the protocols are compared like for like
        data["defaults"]["remote_assignor"] = cell.assignor
        coord = data["coordinator"]
        coord.setdefault("consumer_group_session_timeout_ms", st.consumer.get("session_timeout_ms", 45_000))
        coord.setdefault("consumer_group_heartbeat_interval_ms", st.consumer.get("heartbeat_interval_ms", 5_000))
        data = apply_overrides(data, static=static, group_protocol="consumer")
    else:
        data = apply_overrides(data, protocol=base, assignor=cell.assignor, static=static)
    return BuiltScenario(parse_scenario(data, run.run_id), start, end)
