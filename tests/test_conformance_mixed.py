"""The mixed-group conformance scenarios (classic and consumer-protocol members in one group,
docs/conformance.md) against Apache Kafka 4.1.2 with real clients: Kafka must be conforming
on each, and each trace must hold what its scenario is about (the conversion of a classic
group to a consumer group, classic requests answered by a consumer group with the member
epoch as generation, the conversion back, a static member's replacement).

The run uses the session's Kafka broker (tests/conftest.py; groupspec starts it with the
migration policy at Kafka's default, bidirectional) and validates with the settings of
``groupspec conformance --group-protocol mixed``. To keep CI short it runs every scenario
with one pair (kafka-python classic members, confluent-kafka consumer-protocol members) and
the cooperative scenario also with librdkafka's classic consumer, whose cooperative-sticky
assignments Kafka will not convert; `groupspec conformance --group-protocol mixed` runs the
Java consumer pair too. Nothing is mocked and nothing is skipped.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from groupspec.brokers import KafkaBroker
from groupspec.conformance.mixed_scenarios import MIXED_BY_NAME, MIXED_SCENARIOS, split_client
from groupspec.conformance.report import write_reports
from groupspec.conformance.runner import run_conformance, validation_config
from groupspec.protocol.consumer_protocol import Assignment
from groupspec.validate import validate_path

pytestmark = [pytest.mark.slow, pytest.mark.java]

#: every scenario with this pair
PAIR = "kafka-python+confluent-kafka"
#: the cooperative scenario with librdkafka's classic consumer too (no JVM: CI time)
LIBRDKAFKA_PAIR = "confluent-kafka+confluent-kafka"
HEARTBEAT = "ConsumerGroupHeartbeat"

Run = tuple[Path, dict[str, Any]]


@pytest.fixture(scope="session")
def mixed_run(kafka_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Run:
    out = tmp_path_factory.mktemp("conformance-mixed")
    config = validation_config("kafka", "mixed")
    runs = [
        run_conformance(kafka_broker.bootstrap, [PAIR], MIXED_SCENARIOS, out, label="kafka",
                        config=config, group_protocol="mixed", attempts=3),
        run_conformance(kafka_broker.bootstrap, [LIBRDKAFKA_PAIR], [MIXED_BY_NAME["cooperative-classic"]],
                        out / "librdkafka", label="kafka", config=config, group_protocol="mixed",
                        attempts=3),
    ]
    write_reports(out, [r.to_json() for r in runs])
    results = [dict(r.to_json(), base=str(base)) for run, base in zip(runs, (out, out / "librdkafka"), strict=True)
               for r in run.results]
    return out, {"results": results}


def _exchanges(trace: Path, api: str | None = None) -> list[dict[str, Any]]:
    out = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        if e.get("kind") == "exchange" and (api is None or e["api"] == api):
            out.append(e)
    return out


def _ok(xs: list[dict[str, Any]], client: str | None = None) -> list[dict[str, Any]]:
    return [e for e in xs if (e.get("response") or {}).get("error") == "NONE"
            and (client is None or e["client_id"] == client)]


def _assigned(sync: dict[str, Any]) -> set[tuple[str, int]]:
    data = base64.b64decode(sync["response"]["assignment"] or "")
    if not data:
        return set()
    return {(t, p) for t, ps in Assignment.decode(data).partitions.items() for p in ps}


def test_kafka_is_conforming_on_every_mixed_scenario(mixed_run: Run) -> None:
    out, summary = mixed_run
    got = {(r["client"], r["scenario"]): r for r in summary["results"]}
    assert set(got) == {(PAIR, s.name) for s in MIXED_SCENARIOS} | {(LIBRDKAFKA_PAIR, "cooperative-classic")}
    for (client, name), r in got.items():
        where = f"{name} / {client}"
        assert split_client(client)[0] in ("kafka-python", "confluent-kafka")
        # the verdict first (test_conformance.py says why)
        assert r["verdict"] == "conforming", (
            f"{where}: {json.dumps(r['validation'], indent=1)[:4000]}\nrun error: {r['run_error']}")
        assert r["run_error"] is None, f"{where}: {r['run_error']}"
        [group] = r["validation"]["groups"]
        assert group["exchanges"] > 0
        trace = Path(r["base"]) / r["trace"]
        assert validate_path(trace, validation_config("kafka", "mixed")).worst() == "conforming", where
        apis = {e["api"] for e in _exchanges(trace)}
        assert {HEARTBEAT, "JoinGroup", "SyncGroup", "Heartbeat"} <= apis, where  # both protocols
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "group protocol: mixed" in md and "Every scenario is conforming with every client." in md


def _result(summary: dict[str, Any], name: str, client: str = PAIR) -> tuple[dict[str, Any], Path]:
    [r] = [r for r in summary["results"] if r["scenario"] == name and r["client"] == client]
    return r, Path(r["base"]) / r["trace"]


def test_online_upgrade_converts_the_classic_group(mixed_run: Run) -> None:
    """Classic generation G, then c's first heartbeat joins at member epoch G + 1 (the
    converted group keeps G as its epoch: ConsumerGroup.fromClassicGroup); from then on the
    classic members' JoinGroups are answered with their member epoch, without a leader or a
    member list (the coordinator assigns), and their leaves are answered by the consumer
    group."""
    _, summary = mixed_run
    r, trace = _result(summary, "online-upgrade")
    xs = _exchanges(trace)
    beats = _ok([e for e in xs if e["api"] == HEARTBEAT], "c")
    first = beats[0]
    before = [e for e in _ok(xs) if e["api"] == "JoinGroup" and e["seq"] < first["seq"]]
    assert before and all(e["response"]["leader"] for e in before)  # a classic group's joins
    generation = max(e["response"]["generation_id"] for e in before)
    assert first["request"]["member_epoch"] == 0 and first["response"]["member_epoch"] == generation + 1
    after = [e for e in _ok(xs) if e["api"] == "JoinGroup" and e["seq"] > first["seq"]]
    assert {e["client_id"] for e in after} == {"a", "b"}
    assert all(e["response"]["leader"] == "" and e["response"]["members"] == [] for e in after)
    # each a member epoch of the converted group: from G up to the group's last epoch
    top = max(e["response"]["member_epoch"] for e in beats)
    assert all(generation <= e["response"]["generation_id"] <= top for e in after)
    # kafka-python commits with OffsetCommit v8 in the consumer group, and Kafka accepts it
    commits = [e for e in xs if e["api"] == "OffsetCommit" and e["client_id"] in ("a", "b")
               and e["seq"] > first["seq"]]
    assert commits and all(e["api_version"] < 9 for e in commits)
    assert all(p["error"] == "NONE" for e in commits for p in e["response"]["partitions"])
    assert [e["client_id"] for e in _ok(xs) if e["api"] == "LeaveGroup"] == ["a", "b"]
    # c ends with every partition: the group stayed a consumer group
    assert any("settled: c: 4 partitions" in n for n in r["notes"])


def test_downgrade_converts_the_consumer_group_back(mixed_run: Run) -> None:
    """c creates a consumer group (epoch 1 at its first heartbeat); a and b join it with
    coordinator-computed assignments; c's leave (epoch -1) makes it a classic group again,
    whose rebalance (REBALANCE_IN_PROGRESS) has a leader that assigns with the member list."""
    _, summary = mixed_run
    r, trace = _result(summary, "downgrade")
    xs = _exchanges(trace)
    beats = [e for e in xs if e["api"] == HEARTBEAT]
    assert beats[0]["request"]["member_epoch"] == 0 and beats[0]["response"]["member_epoch"] == 1
    [leave] = [e for e in beats if e["request"]["member_epoch"] == -1]
    joins = _ok([e for e in xs if e["api"] == "JoinGroup"])
    inside = [e for e in joins if e["seq"] < leave["seq"]]
    assert {e["client_id"] for e in inside} == {"a", "b"}
    assert all(e["response"]["leader"] == "" for e in inside)  # the consumer group assigns
    told = [e for e in xs if e["api"] == "Heartbeat" and e["seq"] > leave["seq"]
            and e["response"]["error"] == "REBALANCE_IN_PROGRESS"]
    assert told
    classic = [e for e in joins if e["seq"] > leave["seq"]]
    leaders = {e["response"]["leader"] for e in classic}
    assert len(leaders) >= 1 and "" not in leaders  # a classic group again: a leader
    # the classic group starts at the consumer group's epoch and rebalances to the next
    first_gen = min(e["response"]["generation_id"] for e in classic)
    assert first_gen > max(e["response"]["generation_id"] for e in inside)
    syncs = [e for e in xs if e["api"] == "SyncGroup" and e["seq"] > leave["seq"] and e["request"]["assignments"]]
    assert syncs  # the leader's assignment, as in any classic group
    assert any(n.startswith("c left;") for n in r["notes"])


def test_classic_rejoin_expires_and_admits_classic_members_in_a_consumer_group(mixed_run: Run) -> None:
    _, summary = mixed_run
    r, trace = _result(summary, "classic-rejoin")
    xs = _exchanges(trace)
    assert not [e for e in xs if e["api"] == "LeaveGroup" and e["client_id"] == "a"]  # killed
    # the consumer group expired a by its classic session timeout: c got both partitions
    # at a new epoch with no request of a in between
    c_beats = _ok([e for e in xs if e["api"] == HEARTBEAT], "c")
    a_last = max(e["seq"] for e in xs if e["client_id"] == "a")
    took = [e for e in c_beats if e["seq"] > a_last and e["response"].get("assignment")
            and sum(len(t["partitions"]) for t in e["response"]["assignment"]["topic_partitions"]) == 2]
    assert took, "c never got both partitions after a was killed"
    assert _ok([e for e in xs if e["api"] == "JoinGroup"], "a-again")
    assert _ok([e for e in xs if e["api"] == "LeaveGroup"], "a-again")
    assert not [e for e in xs if e["api"] == "JoinGroup" and e["seq"] > took[0]["seq"]
                and e["response"]["leader"]]  # never a classic group again
    assert any(n.startswith("a killed") for n in r["notes"])


def test_cooperative_classic_member_revokes_at_its_epoch(mixed_run: Run) -> None:
    """kafka-python's cooperative-sticky members through an upgrade: some classic member's
    SyncGroup, at an unchanged generation (its member epoch), assigns fewer partitions
    than the one before (a revocation), and the member then rejoins at a higher one."""
    _, summary = mixed_run
    _, trace = _result(summary, "cooperative-classic")
    xs = _exchanges(trace)
    first = _ok([e for e in xs if e["api"] == HEARTBEAT], "c")[0]
    revoked = []
    for member in ("a", "b"):
        syncs = [e for e in _ok([e for e in xs if e["api"] == "SyncGroup"], member) if e["seq"] > first["seq"]]
        before = [e for e in _ok([e for e in xs if e["api"] == "SyncGroup"], member) if e["seq"] < first["seq"]]
        prev, prev_gen = _assigned(before[-1]), before[-1]["request"]["generation_id"]
        for s in syncs:
            now, gen = _assigned(s), s["request"]["generation_id"]
            if now < prev and gen == prev_gen:
                revoked.append((member, gen))
            prev, prev_gen = now, gen
    assert revoked, "no classic member was told to revoke"
    member, generation = revoked[0]
    later = [e for e in _ok([e for e in xs if e["api"] == "JoinGroup"], member)
             if e["response"]["generation_id"] > generation]
    assert later


def test_kafka_refuses_to_upgrade_a_group_of_librdkafka_cooperative_assignments(mixed_run: Run) -> None:
    """librdkafka's cooperative-sticky puts the member's sticky state in its assignment once
    the member has had a generation (a settles alone first, so its assignment carries it
    when b has joined); Kafka will not convert such a classic group
    (ConsumerGroup.fromClassicGroup), answers the consumer-protocol member
    GROUP_ID_NOT_FOUND, and the classic group carries on."""
    _, summary = mixed_run
    r, trace = _result(summary, "cooperative-classic", LIBRDKAFKA_PAIR)
    xs = _exchanges(trace)
    beats = [e for e in xs if e["api"] == HEARTBEAT]
    assert beats
    # each classic member's assignment when c first asked to join
    current = {e["client_id"]: e for e in _ok([e for e in xs if e["api"] == "SyncGroup"])
               if e["seq"] < beats[0]["seq"]}
    assert set(current) == {"a", "b"}
    carrying = sorted(m for m, e in current.items()
                      if Assignment.decode(base64.b64decode(e["response"]["assignment"])).user_data)
    assert "a" in carrying, "a synced at its second generation without user data in its assignment"
    assert beats[0]["response"]["error"] == "GROUP_ID_NOT_FOUND"
    assert "custom assignor" in (beats[0]["response"]["error_message"] or "")
    assert any(n.startswith("Kafka refused the upgrade") for n in r["notes"])


def test_static_downgrade_replaces_the_consumer_member_and_goes_classic(mixed_run: Run) -> None:
    """c (static) leaves at epoch -2; c-classic with c's instance id joins and gets c's
    partitions (the replacement: no new assignment); the group is classic from then on,
    which d's join shows: a rebalance whose JoinGroups name a leader."""
    _, summary = mixed_run
    r, trace = _result(summary, "static-downgrade")
    xs = _exchanges(trace)
    [leave] = [e for e in xs if e["api"] == HEARTBEAT and e["request"]["member_epoch"] < 0]
    assert leave["request"]["member_epoch"] == -2 and leave["request"]["instance_id"] == "instance-c"
    joined = _ok([e for e in xs if e["api"] == "JoinGroup"], "c-classic")
    assert joined and joined[0]["request"]["group_instance_id"] == "instance-c"
    assert not any(e["api"] == HEARTBEAT for e in xs if e["seq"] > leave["seq"])
    first_d = min(e["seq"] for e in xs if e["client_id"] == "d")
    later = _ok([e for e in xs if e["api"] == "JoinGroup" and e["seq"] > first_d])
    assert later and all(e["response"]["leader"] for e in later)
    assert any(n.endswith("(the same)") for n in r["notes"])
    assert any(n.startswith("d (classic) joined: a classic rebalance") for n in r["notes"])


def test_static_upgrade_replaces_the_classic_member(mixed_run: Run) -> None:
    """KAFKA-17228's rolling upgrade: a (classic, static) crashes without a LeaveGroup;
    a-consumer, a consumer-protocol member with a's instance id, joins while a is still a
    member and is admitted (not UNRELEASED_INSTANCE_ID, as before 4.0) with a's partitions;
    b (classic) goes on heartbeating in the group, now a consumer group."""
    _, summary = mixed_run
    r, trace = _result(summary, "static-upgrade")
    assert r["verdict"] == "conforming"
    xs = _exchanges(trace)
    classic_a = _ok([e for e in xs if e["api"] == "JoinGroup"], "a")
    assert classic_a and classic_a[0]["request"]["group_instance_id"] == "instance-a"
    [join] = [e for e in xs if e["api"] == HEARTBEAT and e["client_id"] == "a-consumer"
              and e["request"]["member_epoch"] == 0]
    assert join["request"]["instance_id"] == "instance-a" and join["response"]["error"] == "NONE"
    # a's session had not run out: the replacement is of a member still in the group
    last_a = max(e["received_ms"] for e in xs if e["client_id"] == "a" and e["received_ms"] is not None)
    assert join["sent_ms"] - last_a < 6000
    assert any(e["api"] == "Heartbeat" and e["client_id"] == "b" and e["seq"] > join["seq"]
               for e in _ok(xs))
    assert any(n.endswith("(the same)") for n in r["notes"])
