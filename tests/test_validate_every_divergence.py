"""The replay goes on past a divergence (issue 16, item 1): a group's verdict lists every
divergence, each with whether it may follow from an earlier one; the headline names the
first cause (item 8: a broker numbering generations from 0 is told so)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.validate import CONFORMING, VIOLATION, ReplayConfig, validate_bytes, validate_path
from tests.test_validate_violations import dump, events, sim_trace

TANSU = (Path(__file__).resolve().parents[1] / "examples" / "conformance"
         / "tansu-eager-range-kafka-python.jsonl")


# Seqs below are those of the simulated eager story as trace v1.1 numbers it (its Fetch
# events take seqs too): 54 c2's SyncGroup, 153 a heartbeat of c2, 260, 729 and 1332
# heartbeats of c1 (renumbered when the classic client was aligned with Kafka's auto-commit
# timing and onJoinPrepare: 165, 272, 750, 1353 before; then 731 and 1336 until eager
# onJoinPrepare stopped fetching before its auto-commit: fewer Fetch events before them).
def _answer(text: str, changes: dict[int, str]) -> bytes:
    """The trace with the error of the exchanges at the given seqs replaced."""
    objs = events(text)
    for o in objs:
        if o["kind"] == "exchange" and o["seq"] in changes:
            o["response"]["error"] = changes[o["seq"]]
    return dump(objs).encode()


def test_the_unchanged_trace_has_no_divergence() -> None:
    [g] = validate_bytes(sim_trace("eager").encode()).groups
    assert g.verdict == CONFORMING and g.divergences == ()


def test_every_independent_divergence_is_listed() -> None:
    bad = _answer(sim_trace("eager"), {260: "ILLEGAL_GENERATION", 1332: "UNKNOWN_MEMBER_ID"})
    [g] = validate_bytes(bad).groups
    assert g.verdict == VIOLATION and g.violation is not None and g.violation.seq == 260
    # the simulated clients go on as if answered NONE, so the client rules name them too
    # (ClientStopsWhenFenced, ...); the broker's side is what this test is about
    broker = [d for d in g.divergences if d.side == "broker"]
    assert [(d.seq, d.rule) for d in broker] == [(260, "HeartbeatAnswer"), (1332, "HeartbeatAnswer")]
    assert all(d.definite and d.consequence_of is None for d in broker)
    assert [d.protocol_allows for d in broker] == [("Heartbeat NONE",), ("Heartbeat NONE",)]
    assert not g.divergences_truncated
    # the cap
    [g1] = validate_bytes(bad, config=ReplayConfig(max_divergences=1)).groups
    assert [d.seq for d in g1.divergences] == [260] and g1.divergences_truncated


def test_a_divergence_before_the_state_agrees_again_may_be_a_consequence() -> None:
    # the broker refused c2's SyncGroup (the reference accepted it: its state now differs),
    # then a heartbeat before the next completed join phase; one after it is independent
    bad = _answer(sim_trace("eager"), {54: "UNKNOWN_MEMBER_ID", 153: "ILLEGAL_GENERATION",
                                       729: "UNKNOWN_MEMBER_ID"})
    [g] = validate_bytes(bad).groups
    got = {d.seq: d.consequence_of for d in g.divergences if d.side == "broker"}
    assert got == {54: None, 153: 54, 729: None}
    assert g.violation is not None and g.violation.seq == 54


def test_a_broker_numbering_generations_from_zero_is_told_so() -> None:
    # Tansu's initial rebalance delay is Kafka's default, 3000 ms (docs/conformance.md): the
    # recording's header does not say so, so it is given here
    [g] = validate_path(TANSU, ReplayConfig(initial_delays_ms=(3000,))).groups
    assert g.verdict == VIOLATION and g.violation is not None
    v = g.violation
    assert (v.seq, v.rule) == (5, "GenerationStartsAtOne")
    assert "generation 0" in v.detail and "JoinWaitsForAllMembers" in v.detail
    # the join timing (the initial delay not extended) is listed too, at the same exchange;
    # after adopting Tansu's numbering the rest of the trace agrees but for the metadata
    # Tansu fetches back: null for the "" kafka-python committed (Kafka answers ""), and null
    # for the partitions with no offset yet (Kafka answers "" there too)
    assert {(d.seq, d.rule) for d in g.divergences} == {
        (5, "GenerationStartsAtOne"), (5, "JoinWaitsForAllMembers"), (7, "FetchReturnsCommitted"),
        (10, "FetchReturnsCommitted"), (21, "FetchReturnsCommitted")}
    [fetch] = [d for d in g.divergences if d.seq == 21]
    assert fetch.side == "broker" and "metadata of" in fetch.detail
    for d in g.divergences:
        if d.seq in (7, 10):
            assert d.side == "broker" and "no committed offset, answered metadata null" in d.detail, d.detail


def test_with_the_delay_unknown_the_one_that_explains_more_of_the_trace_is_assumed() -> None:
    """Both delays the validator tries diverge first at the same JoinGroup (Tansu numbers
    the generation 0); the rest of the trace decides between them. At 0 ms the join phase
    that Tansu ends when its first delay runs out is a join the broker read late, and only the
    numbering differs; at 3000 ms it is also a delay not extended. The first delay tried
    used to win such a tie, whatever followed (and an early divergence that both share,
    such as a read, then made every later join a divergence of its own)."""
    [g] = validate_path(TANSU).groups
    assert g.assumed["group.initial.rebalance.delay.ms"] == 0
    assert {(d.seq, d.rule) for d in g.divergences} == {
        (5, "GenerationStartsAtOne"), (7, "FetchReturnsCommitted"), (10, "FetchReturnsCommitted"),
        (21, "FetchReturnsCommitted")}


def _second_generation_numbered(gen: int) -> tuple[bytes, int]:
    """The eager scenario's trace cut after the JoinGroup answers of generation 2, their
    generation set to ``gen``; returns the trace and the first such exchange's seq."""
    objs = events(sim_trace("eager"))
    joins = [o for o in objs if o["kind"] == "exchange" and o["api"] == "JoinGroup"
             and o["response"]["error"] == "NONE" and o["response"]["generation_id"] == 2]
    for o in joins:
        o["response"]["generation_id"] = gen
    return dump([o for o in objs if o["seq"] <= joins[-1]["seq"]]).encode(), joins[0]["seq"]


def test_a_broker_skipping_a_generation_is_told_so() -> None:
    [g] = validate_bytes(_second_generation_numbered(2)[0]).groups
    assert g.verdict == CONFORMING, g
    raw, seq = _second_generation_numbered(3)
    [g] = validate_bytes(raw).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert (g.violation.seq, g.violation.rule) == (seq, "GenerationIncrements")
    assert "generation 3 where the reference's numbering gives 2" in g.violation.detail


def test_text_and_json_show_each_divergence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_bytes(_answer(sim_trace("eager"), {260: "ILLEGAL_GENERATION", 1332: "UNKNOWN_MEMBER_ID"}))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert " divergences, " in out and "- seq 260 (line" in out
    assert "- seq 1332 (line" in out and "HeartbeatAnswer [broker; decisive]" in out
    assert main(["validate", str(path), "--format", "json", "--max-divergences", "1"]) == 1
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    [g] = data["files"][0]["groups"]
    assert [d["seq"] for d in g["divergences"]] == [260] and g["divergences_truncated"]
    assert main(["validate", str(path), "--max-divergences", "0"]) == 2
    assert "--max-divergences" in capsys.readouterr().err


def test_a_generation_skipped_is_named_as_such() -> None:
    objs = events(sim_trace("eager"))
    joins = [o for o in objs if o["kind"] == "exchange" and o["api"] == "JoinGroup"
             and o["response"] and o["response"]["error"] == "NONE"
             and o["response"]["generation_id"] >= 2]
    joins[0]["response"]["generation_id"] += 3
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.violation is not None and g.violation.seq == joins[0]["seq"]
    assert g.violation.rule == "GenerationIncrements"
    assert "generation" in g.violation.detail


def test_a_read_both_delays_find_wrong_does_not_decide_the_delay() -> None:
    """A wire-fuzz recording against Kafka 4.1.2 (group.initial.rebalance.delay.ms not in its
    header) with one ListGroups entry changed, before the group's first join: both delays
    diverge first there. The first tried (3000 ms) used to be kept, and every later join of
    the group then diverged too (15 divergences where the trace has one)."""
    path = Path(__file__).resolve().parents[1] / "examples" / "validator-false-positives" / \
        "delete-groups-naming-a-group-twice-kafka-4.1.2.jsonl"
    objs = events(path.read_text(encoding="utf-8"))
    [listing] = [o for o in objs if o.get("kind") == "exchange" and o["seq"] == 12]
    assert listing["api"] == "ListGroups" and listing["response"]["groups"][0]["group_id"] == "wf-112-f64cca-g0"
    listing["response"]["groups"][0]["protocol_type"] = "x"
    by_id = {g.group_id: g for g in validate_bytes(dump(objs).encode()).groups}
    g = by_id["wf-112-f64cca-g0"]
    assert [(d.seq, d.rule) for d in g.divergences] == [(12, "ListGroupAnswer")], g.divergences
    assert g.assumed["group.initial.rebalance.delay.ms"] == 0
