"""The simulator on its bundled scenarios, a broken client, and bad input."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.client.classic.consumer import Consumer, Outgoing
from groupspec.client.config import ConsumerConfig
from groupspec.protocol.consumer_protocol import Assignment
from groupspec.sim.render import write_trace
from groupspec.sim.runner import Simulation, SimulationResult, simulate
from groupspec.sim.scenario import (
    ScenarioError,
    apply_overrides,
    load_scenario_text,
    parse_fault_spec,
    parse_scenario,
)
from groupspec.trace.jsonl import read_events

BUNDLED = bundled_scenarios()


def run(name: str, factory: Callable[[ConsumerConfig, int, Callable[[], int]], Consumer] | None = None) -> SimulationResult:
    return simulate(load_scenario_text(BUNDLED[name], f"{name}.json"), consumer_factory=factory)


def lines(res: SimulationResult, who: str | None = None, start: int = 0, end: int = 10**12) -> list[str]:
    return [e.what for e in res.timeline if start <= e.at_ms <= end and (who is None or e.who == who)]


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_scenarios_are_all_green(name: str) -> None:
    res = run(name)
    assert res.ok, [v for v in res.verdicts if not v.ok]
    assert {v.name for v in res.verdicts} >= {"NoConcurrentOwnersInv", "OneOwnerPerGenerationInv", "LivenessProp"}


def test_default_scenario_story() -> None:
    res = run("default")
    # c2 crashes at 30 s and is removed one session timeout after its last heartbeat.
    removed = [e for e in res.timeline if e.what.startswith("removed c2")]
    assert removed and 30_000 + 7_000 <= removed[0].at_ms <= 30_000 + 10_000
    assert "session timeout expired" in removed[0].what
    assert any(w.startswith("generation 2") for w in lines(res, "coordinator", removed[0].at_ms))
    # The static member's restart (70 s .. 74 s) causes no rebalance.
    assert not [w for w in lines(res, "coordinator", 70_000, 109_999) if "PreparingRebalance" in w]
    assert any("replaced by" in w for w in lines(res, "coordinator", 70_000, 80_000))
    # c5 joins: cooperative revocation, then the follow-up generation hands the partitions over.
    after = lines(res, None, 110_000)
    assert any("cooperative revocation" in w for w in after)
    assert any(w.startswith("assigned") for w in lines(res, "c5"))
    assert res.metrics["final_generation"] == 4


def test_liveness_bound_holds_and_is_derived_from_timeouts() -> None:
    sc = load_scenario_text(BUNDLED["default"], "default.json")
    sim = Simulation(sc)
    res = sim.run()
    live = next(v for v in res.verdicts if v.name == "LivenessProp")
    assert live.ok
    cfg = sc.members[0].config
    assert sim.liveness_bound_ms() >= cfg.session_timeout_ms + 2 * cfg.max_poll_interval_ms
    assert sim.converged_at is not None and sim.converged_at - sim.last_fault_ms <= sim.liveness_bound_ms()


def test_liveness_fails_when_the_group_never_settles() -> None:
    data = json.loads(BUNDLED["default"])
    data["until_ms"] = 110_500  # stop in the middle of c5's rebalance
    res = simulate(parse_scenario(data, "cut"))
    assert not next(v for v in res.verdicts if v.name == "LivenessProp").ok


class NoRevokeConsumer(Consumer):
    """Broken on purpose: a cooperative consumer that reports revoked partitions as given up
    (they leave its subscription's owned partitions) but goes on holding them."""

    ghosts: set[tuple[str, int]]

    def _on_join_complete(self, assignment: Assignment, now: int) -> list[Outgoing]:
        before = set(self.owned)
        out = super()._on_join_complete(assignment, now)
        self.ghosts = getattr(self, "ghosts", set()) | (before - self.owned)
        self.owned |= self.ghosts
        return out

    def _metadata_for(self, assignor_name: str) -> bytes:
        owned, self.owned = self.owned, self.owned - getattr(self, "ghosts", set())
        try:
            return super()._metadata_for(assignor_name)
        finally:
            self.owned = owned


def test_a_consumer_that_does_not_revoke_fails_the_concurrent_owners_verdict() -> None:
    res = run("default", NoRevokeConsumer)
    verdict = next(v for v in res.verdicts if v.name == "NoConcurrentOwnersInv")
    assert not verdict.ok and "held by" in verdict.detail
    assert not res.ok


def test_eager_scenario_revokes_everything() -> None:
    res = run("eager")
    assert any("eager rebalance" in w for w in lines(res, "c1"))
    assert res.ok


def test_zombie_is_not_counted_as_owner_but_loses_its_partitions() -> None:
    res = run("zombie")
    assert res.ok
    # c2 wakes past both its session and its poll timeout: the heartbeat thread checks the
    # session first and looks the coordinator up; the application's poll resets the poll
    # timer meanwhile, so no poll-timeout LeaveGroup follows; the fenced generation's
    # partitions are lost before c2 rejoins
    c2 = lines(res, "c2")
    gone = next(i for i, w in enumerate(c2) if w.startswith("coordinator_lost: no heartbeat response"))
    assert any(w.startswith("lost") and "generation lost" in w for w in c2[gone + 1:])
    assert not any("left: consumer poll timeout" in w for w in c2)
    # c3 heartbeats on while its poll stalls: its thread leaves at the poll timeout (the
    # generation reset by maybeLeaveGroup, the partitions lost at the next poll's rejoin)
    c3 = lines(res, "c3")
    left = next(i for i, w in enumerate(c3) if "left: consumer poll timeout" in w)
    assert any(w.startswith("lost") and "generation lost" in w for w in c3[left + 1:])


def test_delayed_imbalance_holds_partitions_until_the_delay_expires() -> None:
    res = run("delayed-imbalance")
    assert res.ok
    # c3's partitions go nowhere at its removal, and to the newcomer c4 only after the delay.
    gen2 = next(e for e in res.timeline if e.what.startswith("generation 2"))
    assert not [e for e in res.timeline if e.what.startswith("assigned") and gen2.at_ms <= e.at_ms < 45_000]
    c4 = next(e for e in res.timeline if e.who == "c4" and e.what.startswith("assigned"))
    assert c4.at_ms >= gen2.at_ms + 30_000


def test_scenario_errors_name_the_place() -> None:
    data = json.loads(BUNDLED["default"])
    data["faults"].append({"at_ms": 5, "kind": "explode", "member": "c1"})
    with pytest.raises(ScenarioError, match=r"x\.json: faults\[3\]\.kind: unknown fault 'explode'"):
        parse_scenario(data, "x.json")
    data["faults"][-1] = {"at_ms": 5, "kind": "crash", "member": "c9"}
    with pytest.raises(ScenarioError, match=r"faults\[3\]\.member: unknown member 'c9'"):
        parse_scenario(data, "x.json")
    data["faults"].pop()
    data["members"][0]["session_timeout_ms"] = 1_000
    with pytest.raises(ScenarioError, match=r"members\[0\]: .*heartbeat"):
        parse_scenario(data, "x.json")
    with pytest.raises(ScenarioError, match=r"y\.json: line 1 column 2: not valid JSON"):
        load_scenario_text("{oops", "y.json")
    with pytest.raises(ScenarioError, match="KIND@MS"):
        parse_fault_spec("crash")
    assert parse_fault_spec("pause@5:member=c1,duration_ms=9") == {
        "at_ms": 5, "kind": "pause", "member": "c1", "duration_ms": 9}


def test_trace_is_readable_as_format_v1() -> None:
    res = run("failover")
    buf = io.StringIO()
    n = write_trace(res, buf)
    events = list(read_events(io.StringIO(buf.getvalue()), "t.jsonl"))
    assert n > 0 and len(events) == n + 1
    assert not [e for e in events if type(e).__name__ == "TraceLineError"]


def test_cli_default_prints_green_verdicts(capsys: Any) -> None:
    assert main(["simulate"]) == 0
    out = capsys.readouterr().out
    assert "PASS  NoConcurrentOwnersInv" in out and "FAIL" not in out and "all invariants hold" in out


def test_cli_help_documents_faults(capsys: Any) -> None:
    assert main(["simulate", "--help"]) == 0
    out = capsys.readouterr().out
    for kind in ("crash@MS", "pause@MS", "slow_poll@MS", "static_restart@MS", "failover@MS",
                 "delay@MS", "loss@MS", "new_topic@MS", "add_partitions@MS"):
        assert kind in out


def test_cli_overrides_and_errors(capsys: Any, tmp_path: Any) -> None:
    trace = tmp_path / "t.jsonl"
    code = main(["simulate", "--protocol", "eager", "--members", "3", "--no-faults",
                 "--fault", "crash@20000:member=c2", "--until", "80000", "--trace", str(trace), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["ok"] and trace.read_text().startswith('{"kind":"header"')
    assert any("eager rebalance" in e["what"] for e in out["timeline"])
    assert main(["simulate", "--fault", "crash@1:member=zz"]) == 2
    # the bad member is blamed on the option that named it, not on the bundled file
    assert "error: --fault[0].member: unknown member 'zz'" in capsys.readouterr().err
    assert main(["simulate", "--protocol", "cooperative", "--assignor", "range"]) == 2
    assert main(["simulate", "no-such-scenario"]) == 2


def test_former_leader_does_not_rejoin_forever_after_partition_growth() -> None:
    # Found by a random fault sweep: c1 led generation 1, was removed while paused, and
    # rejoined as a follower; it must drop its leader metadata snapshot, or every poll
    # after a topic's growth asks for another rebalance.
    data = apply_overrides(
        json.loads(BUNDLED["default"]), until_ms=250_000, replace_faults=True,
        faults=[parse_fault_spec(s) for s in (
            "slow_poll@32398:member=c1,duration_ms=23172", "failover@43013",
            "pause@51781:member=c1,duration_ms=48722", "add_partitions@68780:topic=orders,partitions=8")],
    )
    res = simulate(parse_scenario(data, "regression"))
    assert res.ok
    assert res.metrics["final_generation"] <= 6


def test_crash_makes_records_processed_twice_with_auto_commit_fewer_with_manual_commit() -> None:
    counts = {}
    for auto in (True, False):
        data = json.loads(BUNDLED["default"])
        data["defaults"]["enable_auto_commit"] = auto
        data["until_ms"] = 60_000  # through c2's crash and the rebalance after it
        data["faults"] = data["faults"][:1]
        res = simulate(parse_scenario(data, "commit"))
        assert res.ok
        counts[auto] = res.metrics["records_processed_twice"]
    assert counts[True] > 0 and counts[False] < counts[True]
