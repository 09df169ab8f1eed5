"""Traces the reference coordinator itself produced must validate as conforming: each case
here is a false positive the validator once reported (docs/pipeline.md, Known limits)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from groupspec.protocol.records import CoordinatorUnloaded
from groupspec.sim.render import write_trace
from groupspec.sim.runner import SimulationResult, simulate
from groupspec.sim.scenario import load_scenario_text
from groupspec.trace.events import RecordEvent
from groupspec.validate.validator import validate_path

ROOT = Path(__file__).resolve().parents[1]


def _simulated(name: str, tmp_path: Path) -> tuple[SimulationResult, Path]:
    """The scenario ``examples/validator-false-positives/<name>`` simulated, and its trace
    written as JSON Lines."""
    path = ROOT / "examples" / "validator-false-positives" / name
    result = simulate(load_scenario_text(path.read_text(encoding="utf-8"), str(path)))
    trace = tmp_path / "trace.jsonl"
    with trace.open("w", encoding="utf-8") as out:
        write_trace(result, out)
    return result, trace


def _unloads(result: SimulationResult) -> int:
    return sum(1 for e in result.trace
               if isinstance(e, RecordEvent) and isinstance(e.record, CoordinatorUnloaded))


def _validate_scenario(name: str, tmp_path: Path) -> tuple[str, int]:
    result, trace = _simulated(name, tmp_path)
    [group] = validate_path(trace).groups
    return group.verdict, _unloads(result)


def test_static_cooperative_slow_poll_and_failover_is_conforming(tmp_path: Path) -> None:
    """A static cooperative group with a member slower than max.poll.interval and a
    coordinator failover: once reported as a HeartbeatAnswer violation."""
    verdict, failovers = _validate_scenario("static-slowpoll-failover.json", tmp_path)
    assert failovers >= 1
    assert verdict == "conforming"


def test_failover_before_a_pending_member_joins_is_conforming(tmp_path: Path) -> None:
    """The coordinator fails over; a paused member gets a fresh KIP-394 id from the new
    coordinator before the others hear of the move. The replay used to place the failover
    at the others' NOT_COORDINATOR answers, after the pending id was made, so the reload
    lost it and the member's JoinGroup looked unknown (JoinUnknownMember)."""
    result, trace = _simulated("eager-pause-failover.json", tmp_path)
    [group] = validate_path(trace).groups
    assert group.verdict == "conforming", group
    assert _unloads(result)  # the failover happened


def _silent_member_rejoins(trace: Path) -> dict[str, Any]:
    """c3's first Heartbeat after the failover that the new coordinator answered
    UNKNOWN_MEMBER_ID (its reloaded session had run out)."""
    for line in trace.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if (e.get("kind") == "exchange" and e["api"] == "Heartbeat" and e["connection"] == "c3#1"
                and e["response"]["error"] == "UNKNOWN_MEMBER_ID"):
            return dict(e)
    raise AssertionError("no UNKNOWN_MEMBER_ID heartbeat from c3")


def test_a_reload_before_the_first_coordinator_error_may_expire_a_silent_member(tmp_path: Path) -> None:
    """Eager range; c3's process freezes (a GC pause) from 39,500 to 52,100 ms and the
    coordinator fails over at 42,000, reloading every member's session from then
    (GroupMetadataManager.onLoaded). c1 and c2 hear NOT_COORDINATOR at 42,216; c3 comes back
    at 52,100, when its reloaded session has run out: UNKNOWN_MEMBER_ID at 52,108. The
    replay loaded the group at the first coordinator error, so c3's session ran to 52,216,
    and it once reported the answer as a HeartbeatAnswer violation (first met as
    cluster-003-g0037 of seed 4, a slow poll through a failover, before the classic
    client's heartbeat thread looked a lost coordinator up): the load may lie anywhere
    after the last request the old coordinator answered (39,216)."""
    _, trace = _simulated("eager-pause-through-a-failover.json", tmp_path)
    hb = _silent_member_rejoins(trace)
    assert 52_000 <= float(hb["sent_ms"]) < 52_216  # before the session the replay's load gives
    [group] = validate_path(trace).groups
    assert group.verdict == "conforming", group.divergences
    assert any("failover" in n for n in group.notes)


def test_a_reload_cannot_precede_the_last_answer_of_the_old_coordinator(tmp_path: Path) -> None:
    """The control: the same trace with c3's lookup and heartbeat 3.5 s earlier. For its
    session to have run out by then, the load would have had to come before the heartbeats
    the old coordinator answered at 39,216: a violation at that heartbeat."""
    _, trace = _simulated("eager-pause-through-a-failover.json", tmp_path)
    lines = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if (e.get("kind") == "exchange" and e["connection"] == "c3#1"
                and e["api"] in ("FindCoordinator", "Heartbeat") and 52_000 <= e["sent_ms"] < 52_200):
            e["sent_ms"] -= 3500
            e["received_ms"] -= 3500
        lines.append(json.dumps(e))
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    hb = _silent_member_rejoins(trace)
    [group] = validate_path(trace).groups
    assert group.verdict == "violation"
    assert ("HeartbeatAnswer", hb["seq"]) in [(d.rule, d.seq) for d in group.divergences]


def test_a_member_heard_from_since_the_reload_bounds_how_early_it_was(tmp_path: Path) -> None:
    """The control of the window's narrowing: the same trace with c2's session 9,100 ms
    (its JoinGroups) and c2 silent from the failover until its heartbeat at 51,216, which
    the new coordinator answered: the load came after 51,216 - 9,100 = 42,116, too late for
    c3's session (10,000 ms) to have run out by its heartbeat at 52,008. A violation there."""
    _, trace = _simulated("eager-pause-through-a-failover.json", tmp_path)
    events = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        if e.get("kind") == "exchange" and e["connection"] == "c2#1":
            if e["api"] == "JoinGroup":
                e["request"]["session_timeout_ms"] = 9100
            if e["api"] in ("Heartbeat", "OffsetCommit") and 42_224 < e["sent_ms"] < 51_216:
                continue
        if (e.get("kind") == "record" and str(e["record"].get("member_id", "")).startswith("c2-")
                and 42_224 < e["at_ms"] < 51_216):
            continue
        events.append(e)
    seq = 0
    for e in events:
        if e["kind"] != "header":
            seq += 1
            e["seq"] = seq
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    hb = _silent_member_rejoins(trace)
    [group] = validate_path(trace).groups
    assert group.verdict == "violation"
    assert ("HeartbeatAnswer", hb["seq"]) in [(d.rule, d.seq) for d in group.divergences]


KIP848 = ROOT / "examples" / "validator-false-positives" / "kip848"
#: the broker the conformance suite starts: consumer groups with 6 s sessions, 1 s heartbeats
KIP848_BROKER = ["--consumer-session-timeout-ms", "6000", "--consumer-heartbeat-interval-ms", "1000"]


def test_a_heartbeat_answered_before_a_concurrent_join_is_conforming() -> None:
    """Apache Kafka 4.1.2 recorded: a member's heartbeat sent 3 ms after another member's
    join is answered first. The search once dropped that order: its choice point was dated
    by the clock before it rather than when it took effect, and fell behind the failure's
    horizon (a ConsumerReconciliation violation, now and then, in the conformance suite)."""
    from groupspec.cli.main import main

    assert main(["validate", str(KIP848 / "heartbeat-before-a-join-kafka-4.1.2.jsonl"), *KIP848_BROKER]) == 0


def test_a_join_answered_after_a_later_heartbeat_is_conforming() -> None:
    """Apache Kafka 4.1.2 recorded: a member's heartbeat, sent after another member's join
    and behind an OffsetFetch on its own connection, is answered before that join. The
    search pruned moving the OffsetFetch (it changes nothing), which alone let the heartbeat
    move ahead of the join: a ConsumerReconciliation violation, once in CI."""
    from groupspec.cli.main import main

    assert main(["validate", str(KIP848 / "join-answered-after-a-heartbeat-kafka-4.1.2.jsonl"),
                 *KIP848_BROKER]) == 0


def test_what_the_reference_does_not_model_is_inconclusive_not_a_violation() -> None:
    """Apache Kafka 4.1.2 recorded: a topic subscribed before any Metadata response the
    recorder saw named it. The reference cannot judge it (it has no metadata for the
    topic): the verdict says so, instead of a violation."""
    for name, why in (("topic-not-yet-in-metadata-kafka-4.1.2.jsonl", "no Metadata response"),):
        [g] = validate_path(KIP848 / name).groups
        assert g.verdict == "inconclusive", (name, g.violation)
        assert g.divergence is not None and why in g.divergence.undecided_because


def test_a_regex_subscription_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apache Kafka 4.1.2 recorded (confluent-kafka, two members subscribing by one regex
    to two topics): the reference resolves the regex when the search lets the executor's
    resolution complete, and the trace conforms. Without that step the members would get
    nothing for the regex, and the trace is not conforming."""
    path = KIP848 / "regex-subscription-kafka-4.1.2.jsonl"
    [g] = validate_path(path).groups
    assert g.verdict == "conforming", g.violation
    from groupspec.coordinator.context import Output
    from groupspec.coordinator.coordinator import Coordinator

    monkeypatch.setattr(Coordinator, "complete_regex_resolutions", lambda self, now_ms: Output())
    [g] = validate_path(path).groups
    assert g.verdict != "conforming"


ZERO_DELAY = ROOT / "examples" / "validator-false-positives" / "zero-delay-timer"


def test_a_zero_delay_initial_rebalance_timer_may_fire_before_the_next_join() -> None:
    """Kafka 4.1.2 with group.initial.rebalance.delay.ms 0 (recorded with `conformance
    --jitter-ms 40`): a's JoinGroup, sent first, reached the broker after b's; b's join
    armed the initial-delay timer with no delay, which fired before a's join was read, so
    generation 1 was b alone and a's join started generation 2. The replay fired a timer due
    at the clock's own millisecond only after the next request and reported a violation
    (GenerationIncrements) on all three traces (a static group among them)."""
    from groupspec.conformance.runner import validation_config

    paths = sorted(ZERO_DELAY.glob("*.jsonl"))
    assert len(paths) == 3
    for path in paths:
        report = validate_path(path, validation_config("kafka"))
        assert report.worst() == "conforming", path.name
        [group] = report.groups
        assert group.exchanges > 30


def test_the_target_follows_the_order_kafkas_members_map_iterates_in() -> None:
    """Apache Kafka 4.1.2 recorded (`conformance --group-protocol consumer --jitter-ms 40`,
    the Java consumer): b, a and c join, a leaves; b and c share a bucket of the HashMap
    TargetAssignmentBuilder fills from the group's members, so who gets a's partition
    depends on the order the members map (a TimelineHashMap) iterates in: c before b here.
    The reference iterated in join order and gave it to c (ConsumerReconciliation)."""
    from groupspec.cli.main import main

    assert main(["validate", str(KIP848 / "member-order-tie-break-kafka-4.1.2.jsonl"), *KIP848_BROKER]) == 0


def test_a_leaders_sync_moved_ahead_may_let_its_rejoin_start_a_rebalance() -> None:
    """Kafka 4.1.2, cooperative-sticky with kafka-python (`conformance --jitter-ms 80`):
    the three SyncGroups of generation 4 were sent together; the leader's reached the broker
    first and its member rejoined at once (it had revoked partitions), which started a
    rebalance before the two other SyncGroups were read: both got REBALANCE_IN_PROGRESS.
    The search pruned moving the leader's SyncGroup, as a SyncGroup changes no membership,
    though the JoinGroup behind it on its connection does."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / "leader-sync-unblocks-rejoin-kafka-4.1.2.jsonl"
    assert validate_path(path, validation_config("kafka")).worst() == "conforming"


def test_a_describe_answered_early_lets_a_later_leave_precede_the_leaders_sync() -> None:
    """Apache Kafka 4.1.2 recorded (groupspec.conformance.wire_fuzz, seed 14): the leader's
    SyncGroup (line 43) was answered REBALANCE_IN_PROGRESS, because a LeaveGroup sent 5 ms
    after it (line 44) started a rebalance while the assignment's write was still pending
    (the coordinator lingers before appending); a DescribeGroups between them (line 42) saw
    CompletingRebalance. In the reference's instant write the order DescribeGroups,
    LeaveGroup, SyncGroup explains it, but the LeaveGroup becomes a candidate only once the
    DescribeGroups, answered first, is handled, and the search pruned moving a request that
    changes nothing (Replayer._widens_window)."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / \
        "describe-lets-leave-precede-leader-sync-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    assert [(g.verdict, g.violation) for g in report.groups] == [("conforming", None)]


def test_a_static_join_for_a_pending_id_and_a_zero_delay_timer_after_a_leave() -> None:
    """Apache Kafka 4.1.2 recorded (groupspec.conformance.wire_fuzz, seed 102). Line 17: a
    JoinGroup with a group.instance.id naming a pending (KIP-394) member id; Kafka throws
    IllegalStateException in classicGroupJoinExistingMember and the service answers
    UNKNOWN_SERVER_ERROR, where the reference raised (the request was "unprocessable").
    Line 39: a DescribeGroups shows CompletingRebalance because the LeaveGroup of the other
    pending member (line 33) was handled before the zero-delay initial join timer fired;
    the search had not gone back that far for a DescribeGroups (Replayer._horizon)."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / \
        "pending-static-join-then-zero-delay-timer-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side != "client"] == []
    assert [g.missing for g in report.groups] == [()]
    # the fuzzer's own: told it leads generation 2, it rejoined without SyncGroup
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences] == [(70, "LeaderSyncsItsGeneration")]


def test_a_delete_groups_naming_its_group_twice_deletes_it() -> None:
    """Apache Kafka 4.1.2 recorded (groupspec.conformance.wire_fuzz, seed 112): line 42 is a
    DeleteGroups of [g0, g0], answered with one result (KafkaApis takes the distinct
    names); g0 came back at generation 1 (line 64). The exchange named no single group, so
    no group replayed it and the reference kept g0 at generation 2
    (GenerationIncrements). grouping.per_group splits such an exchange by group."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / "delete-groups-naming-a-group-twice-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    assert all(d.side == "client" for g in report.groups for d in g.divergences), [g.violation for g in report.groups]


def test_a_static_member_syncing_without_its_instance_id_owns_what_it_owned() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, seed 113): a static member synced twice in
    generation 2, once without its group.instance.id (line 57) and once with it (line 65),
    and got the same partitions. OneOwnerPerGenerationInv took the two for two owners (the
    member id, then the instance id); a member id a JoinGroup gave an instance is that
    instance. The fuzzer's own client-rule breaches remain (it keeps committing when fenced)."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / \
        "static-member-syncs-without-its-instance-id-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    broker_side = [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side != "client"]
    assert broker_side == []
    assert {d.rule for g in report.groups for d in g.divergences} == {"ClientStopsWhenFenced", "LeaderSyncsItsGeneration"}


def test_a_group_described_before_its_first_record_commits_may_be_dead() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, seed 1002): a JoinGroup answered
    MEMBER_ID_REQUIRED created g1 (line 5); a DescribeGroups sent 0.1 ms after that answer
    (line 6) described g1 Dead. Kafka answers the new member inside the write, before the
    group's first record commits (the append lingers), and describes groups at the last
    committed offset. Allowed within the replay's slack of the group's creation; the same
    answer 300 ms later is a violation."""
    import json

    from groupspec.conformance.runner import validation_config
    from groupspec.validate.validator import validate_bytes

    path = ROOT / "examples" / "validator-false-positives" / "describe-before-new-group-commits-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    assert [g.verdict for g in report.groups] == ["conforming", "conforming"]
    lines = path.read_text(encoding="utf-8").splitlines()
    ev = json.loads(lines[5])
    assert ev["api"] == "DescribeGroups" and ev["response"]["groups"][0]["group_state"] == "Dead"
    ev["sent_ms"] += 300
    ev["received_ms"] += 300
    lines[5] = json.dumps(ev)
    late_trace = "\n".join(lines).encode()
    # with the broker's periodic expiry check where the trace's clock zero puts it
    known = dataclasses.replace(validation_config("kafka"), offsets_check_phase_known=True)
    late = validate_bytes(late_trace, "late", known)
    assert [(g.violation.line, g.violation.rule) for g in late.groups if g.violation] == [(6, "DescribeGroupAnswer")]
    # a recording does not show when that check runs: it may have deleted the new group
    # (Empty, no offsets) in those 300 ms, but then the LeaveGroup of its pending member
    # (line 11), which Kafka answered NONE, breaks down
    late = validate_bytes(late_trace, "late", validation_config("kafka"))
    assert [(g.violation.line, g.violation.rule) for g in late.groups if g.violation] == [(11, "LeaveGroupAnswer")]


def test_a_group_described_after_its_first_join_phase_may_still_be_dead() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz with group.max.size 2, seed 107): a JoinGroup v3
    (no member id required) created g0 and completed its first join phase at once (line 3,
    generation 1, initial delay 0); a DescribeGroups 4 ms after that answer (line 6)
    described g0 Dead, without members. The group's first record (the empty group's
    metadata, GroupMetadataManager.classicGroupJoin for a new group) had not committed, and
    completing the join phase writes none. Allowed within the slack of that write; the
    same answer 300 ms later is named."""
    import json

    from groupspec.conformance.runner import validation_config
    from groupspec.validate.validator import validate_bytes

    path = ROOT / "examples" / "validator-false-positives" / "describe-dead-after-first-join-kafka-4.1.2.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    report = validate_bytes("\n".join(lines).encode(), path.name, validation_config("kafka"))
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"] == []
    ev = json.loads(lines[5])
    assert ev["api"] == "DescribeGroups" and ev["response"]["groups"][0]["group_state"] == "Dead"
    assert json.loads(lines[2])["response"]["generation_id"] == 1
    ev["sent_ms"] += 300
    ev["received_ms"] += 300
    lines[5] = json.dumps(ev)
    late = validate_bytes("\n".join(lines).encode(), "late", validation_config("kafka"))
    assert (6, "DescribeGroupAnswer") in [(d.line, d.rule) for g in late.groups for d in g.divergences
                                          if d.side == "broker"]


def test_partitions_the_api_layer_refused_in_a_commit_are_not_judged() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, seed 601): an OffsetCommit naming a partition
    the topic does not have (line 68) got UNKNOWN_TOPIC_OR_PARTITION for it from KafkaApis,
    which the coordinator never sees, and NONE for the others. It was judged as a whole
    against the reference's NONE (CommitAccepted); such partitions are now taken out of the
    replayed request, as OffsetDelete's are."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "validator-false-positives" / "commit-to-a-missing-partition-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka"))
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side != "client"] == []


def test_two_subscription_changes_at_once_are_judged_by_the_assignment_they_lead_to() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, consumer groups, seed 1002): two members changed
    their subscriptions 0.1 ms apart (lines 30 and 31, answered alike); Kafka handled them in
    the other order than their send order, and only the assignments of epoch 6, 900 ms later
    (lines 37 and 38), show it: u-0 and u-1 went to the two u subscribers the other way
    round. The search now revisits the group's last heartbeats for such a divergence."""
    from groupspec.conformance.runner import validation_config

    path = KIP848 / "two-subscription-changes-seen-later-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka", "consumer"))
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"] == []
    # the fuzzer's own heartbeats without a member id (Kafka answered INVALID_REQUEST)
    assert [(g.verdict, [(d.line, d.rule) for d in g.divergences]) for g in report.groups] == [
        ("violation", [(7, "ConsumerClientRequestValid")]), ("violation", [(18, "ConsumerClientRequestValid")])]


def test_a_new_topic_is_linked_first_in_its_bucket_as_kafkas_hash_map_does() -> None:
    """Apache Kafka 4.1.2 recorded (the Java consumer, one regex subscription): b alone got
    both matching topics at epoch 2, a joined at epoch 3 and b kept t2. The two topic ids
    share a bucket of a HashMap; the uniform assignor adds b's topics to its new
    assignment with computeIfAbsent, which links a new key in front of its bucket, so the
    target record (and its replay) lists t2 before t1 and b keeps t2. The reference listed
    them in insertion order, kept t1 for b (ConsumerReconciliation at seq 14)."""
    from groupspec.cli.main import main

    assert main(["validate", str(KIP848 / "regex-topic-order-kafka-4.1.2.jsonl"), *KIP848_BROKER]) == 0


def test_an_instance_id_left_behind_by_a_removed_static_member_names_no_member() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, consumer groups, seed 7107): member 3BPn...
    joined as wf-i1, rejoined at epoch 0 as wf-i0 (line 11: Kafka maps both instance ids to
    it), left with -2 through wf-i1 (line 39) and was replaced by a new wf-i0 member (line
    40), which drops the wf-i0 mapping only. Its v0 rejoin as wf-i1 with its own member id
    (line 47) found wf-i1 still mapped to it, and ConsumerGroup.staticMember answered
    UNKNOWN_MEMBER_ID for the missing member; the reference let it join (a broker-side
    ConsumerReconciliation divergence at lines 47 and 53)."""
    from groupspec.conformance.runner import validation_config

    path = KIP848 / "static-rejoin-same-member-id-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka", "consumer"))
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"] == []
    # the fuzzer's own leave without a member id (line 4, answered INVALID_REQUEST)
    assert [(d.line, d.side, d.rule) for g in report.groups for d in g.divergences] == [
        (4, "client", "ConsumerClientRequestValid")]


def test_a_fetch_and_a_simple_commit_before_a_static_join_are_conforming(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz, seed 5112): a new static member's JoinGroup
    (line 5, sent first), an OffsetFetch (line 4) and a simple OffsetCommit (line 6) overlap.
    Kafka answered the fetch with no offsets (it read the group before the commit: reads
    are answered at the last committed offset) and the commit NONE (before the join, the
    group still Empty). The search pruned moving the fetch while the commit diverged, and
    the commit-first branch then diverged at the fetch; a read's pruned moves are now tried
    again when it diverges. Without that, line 6 is a CommitUnknownMember violation."""
    from groupspec.conformance.runner import validation_config
    from groupspec.validate import replay

    path = ROOT / "examples" / "validator-false-positives" / \
        "offset-fetch-and-simple-commit-before-a-static-join-kafka-4.1.2.jsonl"
    for config in (None, validation_config("kafka")):
        report = validate_path(path, config)
        assert [(g.verdict, g.violation) for g in report.groups] == [("conforming", None)]
    monkeypatch.setattr(replay, "_COMMITTED_READS", frozenset())
    [g] = validate_path(path, validation_config("kafka")).groups
    assert g.verdict == "violation"
    assert g.violation is not None and (g.violation.line, g.violation.rule) == (6, "CommitUnknownMember")


MIXED = ROOT / "examples" / "validator-false-positives" / "mixed"


def test_classic_members_of_a_consumer_group_commit_with_offset_commit_v8() -> None:
    """Apache Kafka 4.1.2 recorded (`conformance --group-protocol mixed`, online-upgrade,
    kafka-python classic members beside a confluent-kafka consumer-protocol member): the
    group converted to a consumer group, and the classic members committed with
    OffsetCommit v8 at their generation (their member epoch). Kafka accepts that
    (ConsumerGroup.validateOffsetCommit asks for v9 only of consumer-protocol members);
    the reference answered UNSUPPORTED_VERSION (a CommitMemberEpoch violation)."""
    from groupspec.conformance.runner import validation_config

    path = MIXED / "classic-members-commit-v8-in-a-consumer-group-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka", "mixed"))
    [group] = report.groups
    assert group.verdict == "conforming", group.violation
    commits = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if '"api":"OffsetCommit"' in line]
    assert {(e["client_id"], e["api_version"]) for e in commits} >= {("a", 8), ("b", 8), ("c", 9)}


def test_a_classic_member_assigned_later_at_the_same_member_epoch() -> None:
    """Apache Kafka 4.1.2 recorded (`conformance --group-protocol mixed`, downgrade): classic
    member a joined a consumer group at generation (member epoch) 3 while the
    consumer-protocol member still held every partition, so its SyncGroup assigned
    nothing; after the release it was told to rejoin and got t-3 at the same generation 3
    (line of seq 44), then fetched and committed t-3. The client rules kept a generation's
    first SyncGroup answer and called both a client violation (ClientFetchesOwnedOnly,
    ClientCommitsOwnedOnly)."""
    from groupspec.conformance.runner import validation_config

    path = MIXED / "classic-member-assigned-later-at-one-epoch-kafka-4.1.2.jsonl"
    report = validate_path(path, validation_config("kafka", "mixed"))
    [group] = report.groups
    assert group.verdict == "conforming", group.violation
    syncs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
             if '"api":"SyncGroup"' in line and '"client_id":"a"' in line]
    assert [e["request"]["generation_id"] for e in syncs][:2] == [3, 3]


def test_an_upgrade_during_a_classic_groups_first_join_phase_is_judged() -> None:
    """Apache Kafka 4.1.2 recorded (`conformance --group-protocol mixed`, an early version of
    static-downgrade that started both members at once, kafka-python and confluent-kafka).
    The classic member's JoinGroup made a classic group still in its first join phase when
    the consumer-protocol member's heartbeat came: convertToConsumerGroup first answered the
    parked JoinGroup REBALANCE_IN_PROGRESS, then ConsumerGroup.fromClassicGroup read the
    member's metadata for a protocol the group does not have yet and failed, so the
    heartbeat was answered UNKNOWN_SERVER_ERROR (librdkafka takes it as fatal) and the group
    stayed classic; the member's rejoin waited out its 10 s rebalance timeout. The
    reference does the same (coordinator/consumer/migration.py), so the trace conforms."""
    from groupspec.conformance.runner import validation_config

    path = ROOT / "examples" / "conformance" / "mixed" / "kafka-4.1.2-upgrade-during-the-first-join-phase.jsonl"
    report = validate_path(path, validation_config("kafka", "mixed"))
    [group] = report.groups
    assert group.verdict == "conforming", group.violation
    xs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if '"kind":"exchange"' in line]
    errors = [(e["api"], e["response"]["error"]) for e in xs
              if e["api"] in ("JoinGroup", "ConsumerGroupHeartbeat") and e.get("response")]
    assert errors[:4] == [("ConsumerGroupHeartbeat", "COORDINATOR_LOAD_IN_PROGRESS"),
                          ("JoinGroup", "REBALANCE_IN_PROGRESS"),
                          ("ConsumerGroupHeartbeat", "UNKNOWN_SERVER_ERROR"),
                          ("JoinGroup", "NONE")]


def test_a_delete_answered_late_may_take_a_pending_member_handed_out_after_it_was_sent() -> None:
    """Apache Kafka 4.1.2 recorded (wire_fuzz with group.initial.rebalance.delay.ms 300, seed
    6116): a DeleteGroups sent at 27575.4 ms was answered NONE at 27587.7 (line 7); a
    JoinGroup sent at 27580.7 was answered MEMBER_ID_REQUIRED at 27581.8, making
    wf-c3-7507eb... a pending member (line 6). Kafka handled the delete after that join, so
    the group went with its pending member, and the member's LeaveGroup 2 s later (line 22)
    was answered UNKNOWN_MEMBER_ID. The search now reaches back to the answer that handed
    out a member id the broker no longer knows when the trace holds a DeleteGroups."""
    import json

    from groupspec.conformance.runner import validation_config
    from groupspec.validate.validator import validate_bytes, with_broker_config

    path = ROOT / "examples" / "validator-false-positives" / "delete-takes-a-pending-member-kafka-4.1.2.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    events = [json.loads(x) for x in lines]
    delete, pending, leave = events[6], events[5], events[21]
    assert delete["api"] == "DeleteGroups" and delete["response"]["results"][0]["error"] == "NONE"
    assert pending["response"]["error"] == "MEMBER_ID_REQUIRED"
    assert delete["sent_ms"] < pending["sent_ms"] < pending["received_ms"] < delete["received_ms"]
    assert leave["request"]["members"][0]["member_id"] == pending["response"]["member_id"]
    assert leave["response"]["error"] == "UNKNOWN_MEMBER_ID"
    config = with_broker_config(validation_config("kafka"), events[0]["broker_config"], keep=False)
    report = validate_bytes("\n".join(lines).encode(), path.name, config)
    assert [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"] == []
