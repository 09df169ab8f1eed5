"""The wire fuzzer against a real Kafka 4.1.2 broker (groupspec.conformance.wire_fuzz):
random group requests at every wire version, from several connections, through the
recorder, judged by the validator.

In CI this checks the machinery: every sequence is recorded, decoded and judged, and the
sequences reach the answers the fuzzer exists for. Whether Kafka and the reference agree on
every recording is the nightly job's question (ci/nightly runs the command line, which exits
1 on a broker-side divergence): each divergence the fuzzer has met so far was a real gap,
and a gap met at random would fail CI at random. Classic groups and consumer groups
(KIP-848). Needs the cached Kafka jars (ci/setup.d/30-brokers.sh); a broker that cannot
start fails the test. About 15 s a sequence."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from groupspec.brokers import KafkaBroker
from groupspec.brokers.tansu import TansuBroker
from groupspec.conformance.runner import prepare_topics, validation_config
from groupspec.conformance.wire_fuzz import (
    MAX_SIZE_SETTINGS,
    TXN_VERIFICATION_SETTING,
    Connection,
    run_sequence,
)
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.recorder import BackgroundRecorder
from groupspec.validate import validate_path

#: sequences in CI, and their first seed (GROUPSPEC_WIRE_FUZZ_SEQUENCES / _SEED to widen)
SEQUENCES = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEQUENCES", "3"))
FIRST_SEED = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEED", "1000"))


def _fuzz(broker: KafkaBroker, out: Path, group_protocol: str) -> str:
    """SEQUENCES recorded and judged sequences of 40 steps. Returns the steps' log (what
    was sent and answered)."""
    results = [run_sequence((broker.host, broker.port), FIRST_SEED + k, out, ops=40, group_protocol=group_protocol)
               for k in range(SEQUENCES)]
    for r in results:
        # every group the sequence used was recorded and judged (its divergences, if any, are
        # the nightly job's findings)
        assert r.trace.stat().st_size > 0, f"seed {r.seed}: nothing recorded"
        assert len(r.verdicts) >= r.groups, f"seed {r.seed}: groups judged {sorted(r.verdicts)}"
        # against Kafka every answer decodes and no connection is closed: a client that
        # stopped is the fuzzer's bug
        assert r.stopped == [], f"seed {r.seed}: {r.stopped}"
    return "\n".join(line for r in results for line in r.log)


def test_fuzzed_classic_group_requests_are_recorded_and_judged(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    log = _fuzz(kafka_broker, tmp_path, "classic")
    # the fuzzer does reach the deviations it exists for, not only well-behaved traffic
    # (which errors a sequence meets depends on the broker's timing too: the near-certain
    # ones are required, and one at least of the others)
    for answer in ("MEMBER_ID_REQUIRED", "UNKNOWN_MEMBER_ID", "-> NONE"):
        assert answer in log, f"no request answered {answer} in {SEQUENCES} sequences"
    assert any(a in log for a in ("ILLEGAL_GENERATION", "REBALANCE_IN_PROGRESS", "INCONSISTENT_GROUP_PROTOCOL"))


def test_fuzzed_consumer_group_requests_are_recorded_and_judged(
    kafka_broker: KafkaBroker, tmp_path: Path,
) -> None:
    """Consumer groups (KIP-848): ConsumerGroupHeartbeat joins, heartbeats, stale and
    future epochs, unknown members, subscription changes, leaves and static leaves, and
    commits and fetches with member epochs."""
    log = _fuzz(kafka_broker, tmp_path, "consumer")
    for answer in ("ConsumerGroupHeartbeat v0", "ConsumerGroupHeartbeat v1", "-> NONE"):
        assert answer in log, f"nothing like {answer!r} in {SEQUENCES} sequences"
    assert any(a in log for a in ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID", "UNRELEASED_INSTANCE_ID"))


def test_fuzzed_requests_against_a_broker_with_a_small_group_size(tmp_path: Path) -> None:
    """``--group-max-size``: a broker of its own runs with group.max.size and
    group.consumer.max.size 2, each recording's header carries them, and four connections
    meet GROUP_MAX_SIZE_REACHED (consumer seed 200 met it 22 times when it was recorded:
    examples/validator-false-positives/group-max-size; classic seeds 102 and 111, chosen
    again when the fuzzer began to send JoinGroup v0-v1, which changed every classic draw,
    met it 5-6 and 1-4 times in three runs each, 2026-11-29)."""
    sizes = {name: 2 for name in MAX_SIZE_SETTINGS}
    with KafkaBroker(properties={k: str(v) for k, v in sizes.items()}) as broker:
        results = [run_sequence((broker.host, broker.port), seed, tmp_path, ops=40, group_protocol=protocol,
                                broker_config=sizes)
                   for seed, protocol in ((102, "classic"), (111, "classic"), (200, "consumer"))]
    for r in results:
        header = json.loads(r.trace.read_text(encoding="utf-8").splitlines()[0])
        assert header["broker_config"] == sizes
        assert len(r.verdicts) >= r.groups
    logs = ["\n".join(r.log) for r in results]
    assert "GROUP_MAX_SIZE_REACHED" in logs[0] + logs[1]
    assert "GROUP_MAX_SIZE_REACHED" in logs[2]


def test_fuzzed_transactional_offset_commits(tmp_path: Path) -> None:
    """``--txn-commits``: a broker of its own runs with transaction verification off, so a
    TxnOffsetCommit from the fuzzer's producers (which no transaction coordinator knows)
    reaches the group coordinator's checks (KIP-447: the member id and generation or member
    epoch, current, stale or none). Both protocols' sequences are recorded and judged. Which
    answers a sequence meets depends on the broker's timing, so the group's fencing is met
    by a fixed exchange recorded on the same broker: a current, a stale and an unknown
    member's commit, answered NONE, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID, conforming;
    the refusal changed into an acceptance is named on the broker's side by a TxnOffsetCommit
    rule."""
    with KafkaBroker(properties={TXN_VERIFICATION_SETTING: "false"}) as broker:
        results = [run_sequence((broker.host, broker.port), seed, tmp_path, ops=50, group_protocol=protocol,
                                txn_commits=True)
                   for seed, protocol in ((201, "classic"), (300, "consumer"))]
        fixed = _record_fenced_txn_commits(broker, tmp_path / "fenced.jsonl")
    for r in results:
        assert r.trace.stat().st_size > 0 and len(r.verdicts) >= r.groups
        assert r.stopped == [], f"seed {r.seed}: {r.stopped}"
        assert any(" TxnOffsetCommit " in line for line in r.log), f"seed {r.seed}: no TxnOffsetCommit sent"
    assert fixed == [0, 22, 25], fixed  # NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID
    trace = tmp_path / "fenced.jsonl"
    report = validate_path(trace, validation_config("kafka"))
    assert [d for g in report.groups for d in g.divergences if d.side == "broker"] == []
    events = _events(trace)
    k = next(k for k, e in enumerate(events) if e.get("api") == "TxnOffsetCommit"
             and e["response"]["partitions"][0]["error_code"] == 22)
    events[k]["response"]["partitions"][0]["error_code"] = 0
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    report = validate_path(changed, validation_config("kafka"))
    named = [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"]
    assert named[:1] == [(k + 1, "TxnCommitGenerationCheck")], named


def _record_fenced_txn_commits(broker: KafkaBroker, out: Path) -> list[int]:
    """A classic member joins (JoinGroup v3: no member-id round) and syncs, then its
    producer commits transactionally (v3) as the member at its generation, at the next one,
    and as an unknown member; recorded through the recorder. Returns the commits' answers."""
    topic, group = "fenced-t", "fenced-g"
    prepare_topics(f"{broker.host}:{broker.port}", {topic: 1})
    answers: list[int] = []
    with open(out, "w", encoding="utf-8") as fh, BackgroundRecorder(
            (broker.host, broker.port), fh, cluster="kafka", note="fenced TxnOffsetCommits") as rec:
        host, _, port = rec.address.rpartition(":")
        conn = Connection(host, int(port), "fenced", 30)
        while conn.call("FindCoordinator", 3, {"key": group, "key_type": 0})["error_code"] != 0:
            time.sleep(0.1)
        joined = conn.call("JoinGroup", 3, {
            "group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "reason": None,
            "protocols": [{"name": "range", "metadata": Subscription((topic,)).encode()}]})
        member, generation = joined["member_id"], joined["generation_id"]
        conn.call("SyncGroup", 3, {
            "group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": None,
            "protocol_type": None, "protocol_name": None,
            "assignments": [{"member_id": member, "assignment": Assignment({topic: (0,)}).encode()}]})
        for mid, gen in ((member, generation), (member, generation + 1), ("unknown-member", generation)):
            resp = conn.call("TxnOffsetCommit", 3, {
                "transactional_id": "fenced-tx", "group_id": group, "producer_id": 7100, "producer_epoch": 0,
                "generation_id": gen, "member_id": mid, "group_instance_id": None,
                "topics": [{"name": topic, "partitions": [
                    {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                     "committed_metadata": ""}]}]})
            answers.append(resp["topics"][0]["partitions"][0]["error_code"])
        conn.call("LeaveGroup", 3, {"group_id": group, "member_id": member, "members": []})
        conn.close()
    return answers


def _events(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]


def test_the_fuzzer_runs_through_another_broker_s_failures(tansu_broker: TansuBroker, tmp_path: Path) -> None:
    """Against Tansu (a broker groupspec did not write the rules of): answers that do not
    decode by Kafka's schema (an OffsetFetch v6 of all offsets answered with a null topics
    array) and connections closed mid-answer (OffsetDelete) stop that client, not the run:
    the recording up to then is judged, the stopped clients are reported with the sequence,
    and Tansu's deviations are named (its first generation is 0)."""
    results = [run_sequence((tansu_broker.host, tansu_broker.port), seed, tmp_path, ops=40, broker="tansu")
               for seed in (9700, 9701)]
    for r in results:
        assert r.trace.stat().st_size > 0 and len(r.verdicts) >= r.groups
        assert all(": " in s and " at " in s for s in r.stopped), r.stopped
        assert all(not v.startswith("problem:") for v in r.violations)
    # Tansu numbers its first generation 0: every join it answers so is named (by
    # GenerationStartsAtOne, or by the rule of an earlier check the answer fails, such as
    # JoinSessionTimeoutBounds: which one depends on the order Tansu answered in, the
    # kept recording below pins GenerationStartsAtOne itself)
    zero = [(r.seed, line) for r in results for line, e in enumerate(_events(r.trace), 1)
            if e.get("api") == "JoinGroup" and (e.get("response") or {}).get("error") == "NONE"
            and e["response"].get("generation_id") == 0]
    assert zero, "Tansu completed no join in either sequence"
    named = {(r.seed, int(m.group(1))) for r in results for d in r.details
             for m in [re.search(r" line (\d+): ", d)] if m}
    assert set(zero) <= named, (sorted(set(zero) - named), [d for r in results for d in r.details])


def test_a_recording_of_another_broker_s_undecodable_answer_is_judged() -> None:
    """The Tansu recording the fuzzer made (seed 9701, kept): the undecodable OffsetFetch
    answer (line 15) is a decode_error problem, the groups around it are still judged, and
    Tansu's deviations are named on its side."""
    path = Path(__file__).resolve().parent.parent / "examples" / "conformance" / "tansu-wire-fuzz-classic-9701.jsonl"
    report = validate_path(path, validation_config("tansu"))
    assert [(p.kind, p.line) for p in report.problems if p.kind == "decode_error"] == [("decode_error", 15)]
    broker = {(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"}
    assert (11, "GenerationStartsAtOne") in broker and (4, "SyncUnknownMember") in broker


def test_a_broker_closing_the_connection_on_an_api_it_does_not_offer_is_not_named(
        tansu_broker: TansuBroker, tmp_path: Path) -> None:
    """Tansu closes the connection on a ConsumerGroupHeartbeat, an API its ApiVersions
    answer does not offer (as Kafka closes one on a request it does not support): the
    recorder writes the broker's closes (``closed`` events) and the fuzzer's ApiVersions
    exchanges, and the oracle does not name the closes (AnsweredBeforeClose is for a request
    the broker said it takes; tests/test_validate_broker_closes.py)."""
    r = run_sequence((tansu_broker.host, tansu_broker.port), 9800, tmp_path, ops=20, broker="tansu",
                     group_protocol="consumer")
    events = [json.loads(line) for line in r.trace.read_text(encoding="utf-8").splitlines()]
    assert any(e["kind"] == "closed" and e["pending"] > 0 for e in events)
    offers = [e for e in events if e["kind"] == "api_versions" and e["error_code"] == 0]
    assert offers and all(k["api_key"] != 68 for e in offers for k in e["api_keys"])
    assert not any(" AnsweredBeforeClose " in d for d in r.details), r.details
