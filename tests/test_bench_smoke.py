"""The assignor benchmark's machinery on tiny groups: rows well-formed, moves counted right.

No timing is asserted: only that the numbers are there, and that the moves and minimums
the benchmark reports agree with a count made here from the results themselves.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import assignors as driver
from bench.common import (
    ASSIGNORS,
    IMPLS,
    SIZES,
    STICKY,
    CaseSpec,
    Event,
    Group,
    Result,
    Size,
    build_group,
    deal,
    measure,
    next_round,
    scenarios_for,
)

TINY = Size("tiny", 3, 2, 4)  # 8 partitions: 3 members get 3, 3, 2
ALL_CASES = [
    (impl, a, sc)
    for impl in IMPLS
    for a in ASSIGNORS
    for sc in (*scenarios_for(a), *(driver.NONUNIFORM if a in STICKY else ()))
]


def owners(result: Result) -> dict[tuple[str, int], str]:
    return {(t, p): mid for mid, parts in result.items() for t, ps in parts.items() for p in ps}


def recount(previous: Result, result: Result) -> int:
    before, after = owners(previous), owners(result)
    return sum(1 for tp, mid in before.items() if tp in after and after[tp] != mid)


def run(impl: str, assignor: str, scenario: str) -> tuple[list[Event], Result]:
    events: list[Event] = []
    results: list[Result] = []
    measure(CaseSpec(impl, assignor, TINY, scenario, runs=2), events.append, results)
    assert len(results) == 1
    return events, results[0]


def test_deal_is_a_balanced_assignment() -> None:
    ids = ["a", "b", "c"]
    dealt = deal(["t0", "t1"], 4, ids)
    got = owners(dealt)
    assert set(got) == {(t, p) for t in ("t0", "t1") for p in range(4)}
    assert sorted(sum(len(ps) for ps in parts.values()) for parts in dealt.values()) == [2, 3, 3]


@pytest.mark.parametrize(("impl", "assignor", "scenario"), ALL_CASES)
def test_measure_reports_well_formed_events(impl: str, assignor: str, scenario: str) -> None:
    events, result = run(impl, assignor, scenario)
    assert [e["event"] for e in events] == ["ready", "timed", "memory"]
    ready, timed, memory = events
    assert ready["prepare_s"] >= 0
    assert 1 <= len(timed["times_s"]) <= 2
    assert timed["best_s"] == min(timed["times_s"]) >= 0
    assert timed["valid"] is True and timed["problem"] is None
    assert memory["peak_bytes"] is None or memory["peak_bytes"] > 0
    assert timed["rss_delta_bytes"] is None or timed["rss_delta_bytes"] >= 0

    group = build_group(TINY, scenario)
    if scenario == "join-round2":
        # The benchmark ran round 1 itself; what it counted is from the owners before it.
        assert group.previous == build_group(TINY, "join").previous
    assert set(result) == {m.member_id for m in group.members}
    assigned = sum(len(ps) for parts in result.values() for ps in parts.values())
    assert timed["assigned"] == assigned
    if scenario == "nonuniform-reassign":
        # Members report groupspec sticky's fresh assignment; compare with those reports.
        assert timed["moves"] == recount(group.previous, result)
        assert (timed["min_moves"], timed["min_kind"]) == (0, "lower bound")
    else:
        assert timed["moves"] == recount(group.previous, result)
        assert timed["min_kind"] == "closed form"
    if assignor != "cooperative-sticky" or scenario != "join":
        assert assigned == TINY.partitions  # only a cooperative first round withholds


def test_minimums_are_the_closed_form() -> None:
    # leave: the middle member's 3 partitions must move, and nothing else has to.
    events, _ = run("groupspec", "sticky", "leave")
    assert events[1]["min_moves"] == 3
    assert events[1]["moves"] == 3
    # join: 8 partitions over 4 members is 2 each; the three owned 3, 3, 2: two must move.
    events, _ = run("groupspec", "sticky", "join")
    assert (events[1]["moves"], events[1]["min_moves"]) == (2, 2)
    # cooperative: round 1 withholds the two, round 2 hands them over.
    events, _ = run("groupspec", "cooperative-sticky", "join")
    assert (events[1]["moves"], events[1]["assigned"], events[1]["min_moves"]) == (0, 6, 2)
    events, _ = run("groupspec", "cooperative-sticky", "join-round2")
    assert (events[1]["moves"], events[1]["assigned"], events[1]["min_moves"]) == (2, 8, 2)
    # fresh: nothing was owned.
    events, _ = run("kafka-python", "sticky", "fresh")
    assert (events[1]["moves"], events[1]["min_moves"]) == (0, 0)


def test_next_round_reports_the_previous_result() -> None:
    group = build_group(TINY, "join")
    result: Result = {
        m.member_id: {"topic-0": (0,)} if i == 0 else {} for i, m in enumerate(group.members)
    }
    again: Group = next_round(group, result)
    assert again.previous == group.previous
    assert [m.owned for m in again.members] == [result[m.member_id] for m in group.members]
    assert all(m.generation >= 1 for m in again.members)


def test_rows_targets_and_readme_render() -> None:
    case = driver.Case("cooperative-sticky", SIZES["S1"], "join")
    gs = driver.run_case("groupspec", case, 60.0)  # through the worker subprocess
    assert gs["status"] == "ok", gs
    peer: dict[str, Any] = {"status": "timeout", "note": "did not finish in 60 s"}
    row = driver.make_row(case, gs, peer, 60.0)
    assert row["ratio"] is None and row["ratio_at_least"] == pytest.approx(60.0 / gs["best_s"])
    assert row["groupspec"]["moves_with_withheld"] == gs["moves"] + gs["unassigned"]
    assert gs["moves_with_withheld"] == gs["min_moves"]  # withheld partitions are the moves
    assert gs["bytes_per_partition"] == pytest.approx(gs["peak_bytes"] / 100)
    lines = driver.table([row])
    assert len(lines) == 3 and lines[2].count("|") == lines[0].count("|")
    report = {
        "command": "python -m bench.assignors --sizes S1",
        "started": "2000-01-01 00:00",
        "finished": "2000-01-01 00:01",
        "machine": driver.machine(),
        "load_start": [],
        "load_end": [],
        "peer_cap_s": 60.0,
        "rows": [row],
    }
    text = driver.readme(report)
    assert lines[2] in text and "## Targets" in text


def test_peer_skips_follow_timeouts() -> None:
    skips = driver.PeerSkips()
    small = driver.Case("sticky", SIZES["S3"], "fresh")
    skips.record(small, {"status": "timeout"})
    assert skips.reason(small) is None  # the same case is not skipped by its own timeout
    assert skips.reason(driver.Case("sticky", SIZES["S4"], "fresh")) is not None
    assert skips.reason(driver.Case("sticky", SIZES["S5"], "nonuniform-fresh")) is not None
    assert skips.reason(driver.Case("sticky", SIZES["S4"], "leave")) is None
    assert skips.reason(driver.Case("range", SIZES["S4"], "fresh")) is None
