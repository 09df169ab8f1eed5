"""Small traces get verdicts (issue 16, item 6): a divergence in a few dozen exchanges is
decided within the search bound. The search does not move a request that changes nothing
in the coordinator (OffsetFetch, ...) ahead of others when another exchange diverged, nor a
SyncGroup when only a change of members, generation or rebalance state explains the
broker's answer; it tries commuting requests (followers' SyncGroups) only in send order
(partial-order reduction); it abandons a choice point in a state it has already explored;
a small group's budget grows with its size; each group reports the budget it used."""

from __future__ import annotations

import io
import itertools
import json

import pytest

from groupspec.cli.simulate import bundled_scenarios
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.validate import INCONCLUSIVE, VIOLATION, ReplayConfig, replay, validate_bytes


def _small_trace(members: int = 5) -> bytes:
    """Five members joining at once (47 exchanges), one follower's SyncGroup answered
    REBALANCE_IN_PROGRESS where the group was completing its rebalance."""
    data = apply_overrides(json.loads(bundled_scenarios()["default"]), members=members, until_ms=20_000)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), "small.json")), out)
    objs = [json.loads(line) for line in out.getvalue().splitlines()]
    syncs = [o for o in objs if o["kind"] == "exchange" and o["api"] == "SyncGroup"
             and o["response"] and o["response"]["error"] == "NONE"]
    assert len(syncs) >= 4 and sum(o["kind"] == "exchange" for o in objs) < 12 * members
    syncs[len(syncs) // 2]["response"]["error"] = "REBALANCE_IN_PROGRESS"
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


BUDGET = ReplayConfig(budget=600, max_divergences=1)


def test_a_small_trace_is_decided_within_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "PER_EXCHANGE_BUDGET", 0)  # the configured budget alone
    [g] = validate_bytes(_small_trace(), config=BUDGET).groups
    assert g.verdict == VIOLATION, g.missing
    assert g.violation is not None and g.violation.rule == "SyncPropagatesLeaderAssignment"
    assert g.search_budget == 600 and 0 < g.search_used <= 600


def test_without_the_pruning_the_bound_is_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "PER_EXCHANGE_BUDGET", 0)
    monkeypatch.setattr(replay, "_NO_EFFECT", frozenset())
    monkeypatch.setattr(replay, "_NO_MEMBERSHIP_EFFECT", frozenset())
    monkeypatch.setattr(replay.Replayer, "_commute", lambda self, b, i, j: False)
    [g] = validate_bytes(_small_trace(), config=BUDGET).groups
    # the broker's divergence is left undecided; the verdict itself may still be a violation
    # by the client rules (the simulated follower fetches on as if its SyncGroup had succeeded)
    broker = [d for d in g.divergences if d.side == "broker"]
    assert broker and not broker[0].definite and "search bound" in broker[0].undecided_because
    assert g.verdict == INCONCLUSIVE or (g.violation is not None and g.violation.side == "client")


def test_states_already_explored_are_not_explored_again(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _small_trace()
    config = ReplayConfig(budget=5_000, max_divergences=1)
    # without the partial-order reduction and the SyncGroup pruning, which remove most of
    # the repeated states before the memo sees them
    monkeypatch.setattr(replay.Replayer, "_commute", lambda self, b, i, j: False)
    monkeypatch.setattr(replay, "_NO_MEMBERSHIP_EFFECT", frozenset())
    [with_memo] = validate_bytes(raw, config=config).groups
    counter = itertools.count()
    monkeypatch.setattr(replay.Replayer, "_fingerprint", lambda self, b: next(counter).to_bytes(8, "big"))
    [without] = validate_bytes(raw, config=config).groups
    assert with_memo.verdict == without.verdict == VIOLATION
    assert with_memo.search_used < without.search_used


def test_six_members_are_decided_with_the_default_budget() -> None:
    """Six members (59 exchanges): followers' SyncGroups commute, so only their send order
    is tried (partial-order reduction), and a small group's budget grows with its size;
    together the broker's divergence is decided, not left to the bound."""
    [g] = validate_bytes(_small_trace(6)).groups
    broker = [d for d in g.divergences if d.side == "broker"]
    assert broker and broker[0].definite, broker
    assert g.violation is not None and g.violation.rule == "SyncPropagatesLeaderAssignment"
    assert g.search_used <= g.search_budget == replay.PER_EXCHANGE_BUDGET * g.exchanges


def test_without_commuting_syncgroups_six_members_hit_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay.Replayer, "_commute", lambda self, b, i, j: False)
    monkeypatch.setattr(replay, "_NO_MEMBERSHIP_EFFECT", frozenset())
    [g] = validate_bytes(_small_trace(6)).groups
    broker = [d for d in g.divergences if d.side == "broker"]
    assert broker and not broker[0].definite and "search bound" in broker[0].undecided_because
