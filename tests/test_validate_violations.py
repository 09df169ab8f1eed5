"""Hand-edited traces: the validator reports the violation at the right event, with the
rule and the Kafka source it comes from."""

from __future__ import annotations

import base64
import functools
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.protocol.consumer_protocol import Assignment, Subscription, from_pairs, pairs
from groupspec.protocol.wire import Writer
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.validate import INCONCLUSIVE, VIOLATION, validate_bytes
from groupspec.validate.checks import assignor_contract, stale_commits_accepted
from groupspec.validate.grouping import group_trace
from groupspec.validate.load import load_bytes
from groupspec.validate.replay import replay_group


@functools.cache
def sim_trace(name: str, until_ms: int | None = None, protocol: str | None = None,
              static: bool = False) -> str:
    """The trace (JSON Lines text) of a bundled scenario, optionally cut short."""
    data = json.loads(bundled_scenarios()[name])
    data = apply_overrides(data, until_ms=until_ms, protocol=protocol, static=static)
    result = simulate(load_scenario_text(json.dumps(data), f"{name}.json"))
    out = io.StringIO()
    write_trace(result, out)
    return out.getvalue()


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def dump(objs: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs)


def edit(text: str, pick: Callable[[dict[str, Any]], bool],
         change: Callable[[dict[str, Any]], None]) -> tuple[str, dict[str, Any]]:
    """Apply ``change`` to the first event ``pick`` selects; returns the new text and that
    event (after the change)."""
    objs = events(text)
    for o in objs:
        if pick(o):
            change(o)
            return dump(objs), o
    raise AssertionError("no event matched")


def _accepted_commit_of_later_generation(o: dict[str, Any]) -> bool:
    return (
        o["kind"] == "exchange" and o["api"] == "OffsetCommit"
        and o["request"]["generation_id"] >= 2
        and all(p["error"] == "NONE" for p in o["response"]["partitions"])
        and bool(o["response"]["partitions"])
    )


def test_stale_generation_commit_accepted_is_a_violation_at_that_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = sim_trace("eager")

    def older(o: dict[str, Any]) -> None:
        o["request"]["generation_id"] -= 1  # the broker still answered NONE

    bad, ev = edit(text, _accepted_commit_of_later_generation, older)
    report = validate_bytes(bad.encode(), "stale.jsonl")
    [g] = report.groups
    assert g.verdict == VIOLATION
    assert g.violation is not None
    assert g.violation.seq == ev["seq"]
    # The replay-free check fires first (the replay would name CommitGenerationCheck at the
    # same event); its detail names both generations, which only that check knows.
    assert g.violation.rule == "StaleCommitAccepted"
    gen = ev["request"]["generation_id"]
    assert f"with generation {gen} accepted" in g.violation.detail
    assert f"but generation {gen + 1} had completed" in g.violation.detail
    assert "ClassicGroup.java" in g.violation.kafka_source
    assert "OffsetCommit NONE" in g.violation.broker_answered
    # the CLI says so too, with exit code 1
    path = tmp_path / "stale.jsonl"
    path.write_text(bad)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"violation at seq {ev['seq']}" in out and "ILLEGAL_GENERATION" in out


def test_rejected_stale_commit_answer_changed_to_none_is_caught_by_replay() -> None:
    # The zombie's commits: turn a commit's generation into a future one; the reference
    # answers ILLEGAL_GENERATION, the edited broker NONE.
    text = sim_trace("zombie")

    def future(o: dict[str, Any]) -> None:
        o["request"]["generation_id"] += 5

    bad, ev = edit(text, _accepted_commit_of_later_generation, future)
    [g] = validate_bytes(bad.encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.seq == ev["seq"]
    assert g.violation.rule == "CommitGenerationCheck"
    assert "ILLEGAL_GENERATION" in " ".join(g.violation.protocol_allows)


def _syncs_of_one_generation(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_gen: dict[int, list[dict[str, Any]]] = {}
    for o in objs:
        if (o["kind"] == "exchange" and o["api"] == "SyncGroup" and o["response"]
                and o["response"]["error"] == "NONE"):
            by_gen.setdefault(o["request"]["generation_id"], []).append(o)
    for gen in sorted(by_gen):
        syncs = by_gen[gen]
        owned = [pairs(Assignment.decode(base64.b64decode(s["response"]["assignment"])).partitions) for s in syncs]
        if len(syncs) >= 2 and all(owned[:2]):
            return syncs
    raise AssertionError("no generation with two members holding partitions")


def test_two_members_given_one_partition_is_a_violation_at_the_second_sync() -> None:
    text = sim_trace("eager")
    objs = events(text)
    first, second = sorted(_syncs_of_one_generation(objs)[:2], key=lambda o: o["seq"])
    a = pairs(Assignment.decode(base64.b64decode(first["response"]["assignment"])).partitions)
    b = pairs(Assignment.decode(base64.b64decode(second["response"]["assignment"])).partitions)
    stolen = sorted(a)[0]
    second["response"]["assignment"] = base64.b64encode(
        Assignment(from_pairs(b | {stolen})).encode()
    ).decode()
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.seq == second["seq"]
    assert g.violation.rule == "OneOwnerPerGenerationInv"
    assert f"{stolen[0]}-{stolen[1]}" in g.violation.detail


def test_leader_assigning_one_partition_twice_breaks_the_assignor_contract() -> None:
    # The leader's SyncGroup request and the follower's result agree (the broker forwarded
    # faithfully), so only the assignor contract and the one-owner check can see it.
    text = sim_trace("eager")
    objs = events(text)
    syncs = _syncs_of_one_generation(objs)
    leader = next(s for s in syncs if s["request"]["assignments"])
    follower = next(s for s in syncs if s is not leader)
    la = pairs(Assignment.decode(base64.b64decode(leader["response"]["assignment"])).partitions)
    fa = pairs(Assignment.decode(base64.b64decode(follower["response"]["assignment"])).partitions)
    stolen = sorted(la)[0]
    new = base64.b64encode(Assignment(from_pairs(fa | {stolen})).encode()).decode()
    follower["response"]["assignment"] = new
    for a in leader["request"]["assignments"]:
        if a["member_id"] == follower["request"]["member_id"]:
            a["assignment"] = new
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule in {"AssignDisjoint", "OneOwnerPerGenerationInv"}
    assert g.violation.seq == min(leader["seq"], follower["seq"])


def test_broker_answering_a_join_before_all_members_rejoined() -> None:
    # A follower's JoinGroup (parked until every member rejoins) answered at once.
    text = sim_trace("eager")
    objs = events(text)
    joins = [o for o in objs if o["kind"] == "exchange" and o["api"] == "JoinGroup"
             and o["response"]["error"] == "NONE" and o["response"]["generation_id"] >= 2
             and o["received_ms"] - o["sent_ms"] > 1000]
    j = joins[0]
    j["received_ms"] = j["sent_ms"] + 1
    bad = dump(objs).encode()
    [g] = validate_bytes(bad).groups
    assert g.verdict == VIOLATION and g.violation is not None
    # Commits of the old generation sent after the (edited) early answer now look stale
    # too, and may come first in the file; the replay itself stops at the join.
    assert g.violation.rule in {"JoinWaitsForAllMembers", "StaleCommitAccepted"}
    [gt] = group_trace(load_bytes(bad)).groups.values()
    result = replay_group(gt.exchanges)
    assert not result.ok and result.failure is not None
    assert result.failure.exchange.seq == j["seq"]
    assert result.failure.rule.name == "JoinWaitsForAllMembers"
    assert "GroupMetadataManager.java" in result.failure.rule.source


def test_trace_starting_mid_group_is_inconclusive_not_a_violation() -> None:
    text = sim_trace("eager")
    objs = events(text)
    # Drop everything before the second generation's first heartbeat: the members the
    # requests name were introduced before the trace starts.
    cut = next(i for i, o in enumerate(objs) if o["kind"] == "exchange" and o["api"] == "Heartbeat"
               and o["request"]["generation_id"] >= 2)
    kept = [objs[0]] + [o for o in objs[cut:] if o["kind"] == "exchange"]
    for i, o in enumerate(kept):
        o["seq"] = i
    [g] = validate_bytes(dump(kept).encode()).groups
    assert g.verdict == INCONCLUSIVE
    assert any("before the trace started" in m.what for m in g.missing)


def test_a_broker_handing_a_member_other_than_the_leaders_assignment() -> None:
    """The follower receives less than the leader sent for it: no partition goes to two
    members and the leader's assignment keeps the assignor contract, so only the replay's
    SyncGroup assignment comparison can see it."""
    objs = events(sim_trace("eager"))
    syncs = _syncs_of_one_generation(objs)
    leader = next(s for s in syncs if s["request"]["assignments"])
    follower = next(s for s in syncs if s is not leader)
    sent = next(a["assignment"] for a in leader["request"]["assignments"]
                if a["member_id"] == follower["request"]["member_id"])
    assert follower["response"]["assignment"] == sent  # the recording forwarded it faithfully
    given = pairs(Assignment.decode(base64.b64decode(sent)).partitions)
    kept = set(sorted(given)[1:])
    follower["response"]["assignment"] = base64.b64encode(Assignment(from_pairs(kept)).encode()).decode()
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.seq == follower["seq"]
    assert g.violation.rule == "SyncPropagatesLeaderAssignment"
    assert g.violation.detail == "assignment differs"
    assert "GroupMetadataManager.java" in g.violation.kafka_source


def test_a_classic_broker_reordering_the_leaders_assignment_bytes() -> None:
    """A classic group's SyncGroup hands each member the leader's bytes as they are: the same
    partitions serialized in another order are a deviation (only an assignment the
    coordinator serializes itself, a classic member's in a consumer group, is compared as a
    set)."""
    objs = events(sim_trace("eager"))
    syncs = _syncs_of_one_generation(objs)
    leader = next(s for s in syncs if s["request"]["assignments"])
    follower = next(s for s in syncs if s is not leader)
    sent = base64.b64decode(follower["response"]["assignment"])
    a = Assignment.decode(sent)
    w = Writer()  # the same partitions, each topic's in reverse order
    w.int16(int.from_bytes(sent[:2], "big"))
    w.int32(len(a.partitions))
    for topic, ps in sorted(a.partitions.items()):
        w.string(topic)
        w.int32(len(ps))
        for p in sorted(ps, reverse=True):
            w.int32(p)
    w.nullable_bytes(a.user_data)
    reordered = w.getvalue()
    assert reordered != sent and Assignment.decode(reordered).partitions.keys() == a.partitions.keys()
    follower["response"]["assignment"] = base64.b64encode(reordered).decode()
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "SyncPropagatesLeaderAssignment"


def _exchanges(text: str) -> list[Any]:
    [gt] = group_trace(load_bytes(text.encode())).groups.values()
    return gt.exchanges


def test_stale_commit_check_fires_exactly_one_generation_back_and_not_at_the_current() -> None:
    """StaleCommitAccepted on its own (the replay would name another rule at the same
    event): a commit one generation behind the newest completed one is a finding; commits
    of the current generation, which every simulated run has, are not."""
    text = sim_trace("eager")
    assert stale_commits_accepted(_exchanges(text)) == []

    def older(o: dict[str, Any]) -> None:
        o["request"]["generation_id"] -= 1

    bad, ev = edit(text, _accepted_commit_of_later_generation, older)
    [f] = [f for f in stale_commits_accepted(_exchanges(bad)) if f.seq == ev["seq"]]
    assert f.rule.name == "StaleCommitAccepted"
    gen = ev["request"]["generation_id"]
    assert f.detail.startswith(f"commit from {ev['request']['member_id']} with generation {gen} accepted")
    assert f"but generation {gen + 1} had completed" in f.detail


def test_a_commit_sent_as_the_newer_generation_arrives_is_not_stale() -> None:
    """Only a JoinGroup response received strictly before the commit was sent makes it
    stale: at equal times the commit may have been handled first."""
    text = sim_trace("eager")
    objs = events(text)
    for o in objs:
        if _accepted_commit_of_later_generation(o):
            o["request"]["generation_id"] -= 1
            commit = o
            break
    join = max((o for o in objs if o["kind"] == "exchange" and o["api"] == "JoinGroup"
                and o["response"]["error"] == "NONE"
                and o["response"]["generation_id"] == commit["request"]["generation_id"] + 1
                and o["received_ms"] <= commit["sent_ms"]), key=lambda o: o["received_ms"])
    assert [f.seq for f in stale_commits_accepted(_exchanges(dump(objs)))][:1] == [commit["seq"]]
    # move every newer JoinGroup response to arrive exactly when the commit is sent
    for o in objs:
        if (o["kind"] == "exchange" and o["api"] == "JoinGroup" and o["response"]["error"] == "NONE"
                and o["response"]["generation_id"] > commit["request"]["generation_id"]
                and o["received_ms"] <= commit["sent_ms"]):
            o["received_ms"] = max(commit["sent_ms"], o["sent_ms"])
    assert join["received_ms"] == commit["sent_ms"]
    assert commit["seq"] not in [f.seq for f in stale_commits_accepted(_exchanges(dump(objs)))]


def test_a_member_id_handed_out_twice_is_member_id_fresh() -> None:
    """A late joiner's MEMBER_ID_REQUIRED names the id of a member already in the group."""
    objs = events(sim_trace("eager"))
    current = {o["response"]["member_id"] for o in objs if o["kind"] == "exchange"
               and o["api"] == "JoinGroup" and o["response"]["error"] == "NONE"}
    late = next(o for o in objs if o["kind"] == "exchange" and o["api"] == "JoinGroup"
                and o["response"]["error"] == "MEMBER_ID_REQUIRED"
                and any(p["kind"] == "exchange" and p["api"] == "SyncGroup" and p["seq"] < o["seq"] for p in objs))
    taken = sorted(current - {late["response"]["member_id"]})[0]
    late["response"]["member_id"] = taken
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.seq == late["seq"]
    assert g.violation.rule == "MemberIdFresh"
    assert g.violation.detail.startswith(f"member id {taken} is already in use")


def _leader_sync(objs: list[dict[str, Any]], generation: int) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "exchange" and o["api"] == "SyncGroup"
                and o["request"]["generation_id"] == generation and o["request"]["assignments"])


def _set_assignment(a: dict[str, Any], parts: set[tuple[str, int]]) -> None:
    a["assignment"] = base64.b64encode(Assignment(from_pairs(parts)).encode()).decode()


def _contract(objs: list[dict[str, Any]]) -> list[Any]:
    return assignor_contract(_exchanges(dump(objs)))


def test_leader_assigning_a_topic_its_member_did_not_subscribe_to() -> None:
    objs = events(sim_trace("eager"))
    assert _contract(objs) == []
    sync = _leader_sync(objs, 2)
    a = sync["request"]["assignments"][0]
    _set_assignment(a, pairs(Assignment.decode(base64.b64decode(a["assignment"])).partitions)
                    | {("not-subscribed", 0)})
    [f] = _contract(objs)
    assert (f.rule.name, f.seq) == ("AssignSubscribedTopicsOnly", sync["seq"])
    assert f.detail == f"{a['member_id']} is assigned topic(s) not-subscribed it did not subscribe to"


def test_leader_assigning_one_partition_to_two_members_is_assign_disjoint() -> None:
    objs = events(sim_trace("eager"))
    sync = _leader_sync(objs, 2)
    first, second = sync["request"]["assignments"][:2]
    p1 = pairs(Assignment.decode(base64.b64decode(first["assignment"])).partitions)
    p2 = pairs(Assignment.decode(base64.b64decode(second["assignment"])).partitions)
    stolen = sorted(p1)[0]
    _set_assignment(second, p2 | {stolen})
    [f] = _contract(objs)
    assert (f.rule.name, f.seq) == ("AssignDisjoint", sync["seq"])
    assert f"{stolen[0]}-{stolen[1]} assigned to both" in f.detail


def test_cooperative_leader_moving_an_owned_partition_at_once_is_revoke_first() -> None:
    """cooperative-sticky: a partition its owner (with a valid claim) still holds may not be
    handed to another member in the same rebalance (KIP-429)."""
    objs = events(sim_trace("default"))
    assert _contract(objs) == []
    leader_joins = {(o["response"]["generation_id"], o["response"]["member_id"]): o for o in objs
                    if o["kind"] == "exchange" and o["api"] == "JoinGroup"
                    and o["response"]["error"] == "NONE" and o["response"]["members"]}
    for sync in (o for o in objs if o["kind"] == "exchange" and o["api"] == "SyncGroup"
                 and o["request"]["assignments"]):
        join = leader_joins[(sync["request"]["generation_id"], sync["request"]["member_id"])]
        subs = {x["member_id"]: Subscription.decode(base64.b64decode(x["metadata"]))
                for x in join["response"]["members"]}
        newest = max(sub.generation_id for sub in subs.values())
        given = {a["member_id"]: a for a in sync["request"]["assignments"]}
        kept = [(mid, tp) for mid, sub in sorted(subs.items()) if sub.generation_id == newest
                for tp in sorted(pairs(sub.owned_partitions))
                if mid in given and tp in pairs(Assignment.decode(base64.b64decode(given[mid]["assignment"])).partitions)]
        if kept and len(given) >= 2:
            break
    else:
        raise AssertionError("no cooperative rebalance where a member keeps an owned partition")
    owner, tp = kept[0]
    thief = next(mid for mid in sorted(given) if mid != owner)

    def parts(mid: str) -> set[tuple[str, int]]:
        return pairs(Assignment.decode(base64.b64decode(given[mid]["assignment"])).partitions)

    moved_from, moved_to = parts(owner) - {tp}, parts(thief) | {tp}
    _set_assignment(given[owner], moved_from)
    _set_assignment(given[thief], moved_to)
    [f] = _contract(objs)
    assert (f.rule.name, f.seq) == ("CooperativeRevokeFirst", sync["seq"])
    assert f.detail == f"{tp[0]}-{tp[1]} handed to {thief} while {owner} still owns it"


def test_a_record_breaking_an_invariant_is_reported_with_that_invariant() -> None:
    """Simulator traces carry the reference's records; a stored commit whose generation is
    not the group's breaks NoStaleCommitInv, found by the record check alone (the
    exchanges are untouched)."""
    objs = events(sim_trace("eager"))
    rec = next(o for o in objs if o["kind"] == "record" and o["record"]["type"] == "OffsetCommitted"
               and o["record"]["generation_id"] >= 1)
    rec["record"]["generation_id"] += 1
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION and g.violation is not None
    # reported at the first record of its millisecond (records of one input are checked together)
    same_ms = [o["seq"] for o in objs if o["kind"] == "record" and o["at_ms"] == rec["at_ms"]]
    assert (g.violation.rule, g.violation.seq) == ("NoStaleCommitInv", min(same_ms))
    assert f"from generation {rec['record']['generation_id']} stored" in g.violation.detail
