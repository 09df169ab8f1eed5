"""A heartbeat reaching a coordinator that is still loading the group after a move is
answered NONE without touching the group (GroupCoordinatorService.heartbeat, the
COORDINATOR_LOAD_IN_PROGRESS branch). The replay allows that for the first requests on the
new coordinator (nothing handled there yet shows that the load has finished), and only
then: a later heartbeat answered NONE against the group's state is still a violation."""

from __future__ import annotations

import io
import json
from typing import Any

from groupspec.cli.simulate import bundled_scenarios
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import load_scenario_text
from groupspec.validate import validate_bytes


def _failover_trace() -> list[dict[str, Any]]:
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(bundled_scenarios()["failover"], "failover.json")), out)
    return [json.loads(line) for line in out.getvalue().splitlines() if line]


def _answered_none_with_a_wrong_generation(drop_commits: bool) -> tuple[bytes, dict[str, Any]]:
    """What a recorder sees of the run (exchanges only), with the ``nth`` heartbeat after the
    first heartbeat after the first coordinator move sent with a generation the group never
    had and still answered NONE (as a loading coordinator answers). With ``drop_commits``,
    the offset commits between the move and that heartbeat (answered NONE by the new
    coordinator: the load had finished) are left out, so that nothing shows it."""
    objs = _failover_trace()
    ex = [o for o in objs if o["kind"] == "exchange"]
    moved = next(o for o in ex if o["response"] is not None and o["response"].get("error") == "NOT_COORDINATOR")
    after = [o for o in ex if o["api"] == "Heartbeat" and o["sent_ms"] > moved["received_ms"]
             and o["response"]["error"] == "NONE"]
    hb = after[0]
    hb["request"]["generation_id"] += 5
    keep = [objs[0]] + [o for o in ex if not (drop_commits and o["api"].startswith("Offset")
                                              and moved["received_ms"] < o["sent_ms"] < hb["sent_ms"])]
    for seq, o in enumerate(keep):
        o["seq"] = seq
    return "".join(json.dumps(o) + "\n" for o in keep).encode(), hb


def _broker_findings(raw: bytes) -> list[Any]:
    return [d for g in validate_bytes(raw).groups for d in g.divergences if d.side == "broker"]


def test_the_first_heartbeat_on_a_loading_coordinator_may_be_answered_none() -> None:
    raw, _ = _answered_none_with_a_wrong_generation(drop_commits=True)
    assert _broker_findings(raw) == []


def test_a_heartbeat_after_the_load_finished_is_judged_against_the_group() -> None:
    raw, hb = _answered_none_with_a_wrong_generation(drop_commits=False)
    found = _broker_findings(raw)
    assert any(d.seq == hb["seq"] and d.rule == "HeartbeatGenerationCheck" for d in found), found
