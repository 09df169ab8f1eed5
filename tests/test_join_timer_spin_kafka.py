"""A join timer re-armed with no delay, on a real Kafka 4.1.2 broker, recorded and judged
(docs/deviations.md, "A join timer re-armed with no delay"; tests/test_join_timer_spin.py
for the reference alone).

Two static members of a Stable group are each replaced (a JoinGroup with an unknown member
id and its instance id, same protocols: the group stays Stable and the member takes the
request's rebalance timeout, -1), then one leaves. No member has rejoined when the join
timer fires, so completeClassicGroupJoin re-arms it at the group's rebalance timeout, 0:
Kafka's coordinator fires it over and over, logging "could not complete rebalance" each
time, until the remaining member's session expires and the group is left Empty. The
recording must be judged conforming, and judged at all (the reference's clock used to stand
still there, and ``groupspec validate`` never returned).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from groupspec.brokers import KafkaBroker
from groupspec.conformance.runner import prepare_topics, validation_config
from groupspec.conformance.wire_fuzz import Connection
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.recorder import BackgroundRecorder
from groupspec.validate import validate_path
from tests.deadline import within

pytestmark = [pytest.mark.java, pytest.mark.slow]

GROUP, TOPIC = "spin-g", "spin-t"
#: Kafka's group.min.session.timeout.ms: the wait lasts one session
SESSION_MS = 6_000
SPIN_LINE = "could not complete rebalance"


def _record(broker: KafkaBroker, out: Path) -> dict[str, Any]:
    prepare_topics(f"{broker.host}:{broker.port}", {TOPIC: 2})
    meta = Subscription((TOPIC,)).encode()
    seen: dict[str, Any] = {}
    with open(out, "w", encoding="utf-8") as fh, BackgroundRecorder(
            (broker.host, broker.port), fh, cluster="kafka", note="join timer re-armed with no delay") as rec:
        host, _, port = rec.address.rpartition(":")
        c1, c2 = Connection(host, int(port), "s1", 30), Connection(host, int(port), "s2", 30)
        while c1.call("FindCoordinator", 3, {"key": GROUP, "key_type": 0})["error_code"] != 0:
            time.sleep(0.1)

        def join(conn: Connection, member: str, instance: str, rebalance_ms: int) -> dict[str, Any]:
            return conn.call("JoinGroup", 5, {
                "group_id": GROUP, "session_timeout_ms": SESSION_MS, "rebalance_timeout_ms": rebalance_ms,
                "member_id": member, "group_instance_id": instance, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": meta}]})

        def sync(conn: Connection, member: str, generation: int, instance: str,
                 assignments: list[dict[str, Any]]) -> dict[str, Any]:
            return conn.call("SyncGroup", 3, {"group_id": GROUP, "generation_id": generation, "member_id": member,
                                              "group_instance_id": instance, "assignments": assignments})

        def described() -> str:
            return str(c1.call("DescribeGroups", 0, {"groups": [GROUP]})["groups"][0]["group_state"])

        # i1 alone (the broker's initial delay is 0), then i2 joins and i1 rejoins
        first = join(c1, "", "i1", 20_000)
        while first["error_code"] == 14:  # COORDINATOR_LOAD_IN_PROGRESS
            time.sleep(0.2)
            first = join(c1, "", "i1", 20_000)
        m1 = first["member_id"]
        sync(c1, m1, first["generation_id"], "i1", [{"member_id": m1, "assignment": Assignment({TOPIC: (0, 1)}).encode()}])
        answers: dict[str, dict[str, Any]] = {}
        second = threading.Thread(target=lambda: answers.setdefault("i2", join(c2, "", "i2", 20_000)))
        second.start()
        time.sleep(0.5)
        j1 = join(c1, m1, "i1", 20_000)
        second.join()
        j2 = answers["i2"]
        m2, generation = j2["member_id"], j1["generation_id"]
        plan = [{"member_id": m1, "assignment": Assignment({TOPIC: (0,)}).encode()},
                {"member_id": m2, "assignment": Assignment({TOPIC: (1,)}).encode()}]
        follower = threading.Thread(target=lambda: answers.setdefault(
            "sync", sync(c2, m2, generation, "i2", []) if j1["leader"] == m1 else sync(c1, m1, generation, "i1", [])))
        follower.start()
        if j1["leader"] == m1:
            sync(c1, m1, generation, "i1", plan)
        else:
            sync(c2, m2, generation, "i2", plan)
        follower.join()
        seen["stable"] = described()
        # both replaced with a rebalance timeout of -1; the group stays Stable
        r1, r2 = join(c1, "", "i1", -1), join(c2, "", "i2", -1)
        seen["replaced"] = (r1["error_code"], r2["error_code"], described())
        c2.call("LeaveGroup", 3, {"group_id": GROUP, "members": [{"member_id": r2["member_id"], "group_instance_id": "i2"}]})
        time.sleep(1.0)
        seen["waiting"] = described()
        time.sleep(SESSION_MS / 1000 + 1.5)
        seen["after"] = described()
        c1.close()
        c2.close()
    return seen


def test_kafka_spins_and_the_recording_is_judged_conforming(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    before = kafka_broker.log_path.read_text(encoding="utf-8", errors="replace").count(SPIN_LINE)
    seen = _record(kafka_broker, tmp_path / "spin.jsonl")
    assert seen["stable"] == "Stable" and seen["replaced"] == (0, 0, "Stable"), seen
    assert seen["waiting"] == "PreparingRebalance" and seen["after"] == "Empty", seen
    # the premise of the deviation: Kafka's timer fired far more often than once a millisecond
    # would (a 6 s wait); if a later Kafka stops spinning, docs/deviations.md must change
    spins = kafka_broker.log_path.read_text(encoding="utf-8", errors="replace").count(SPIN_LINE) - before
    assert spins > SESSION_MS, spins
    with within(120, "groupspec validate"):
        report = validate_path(tmp_path / "spin.jsonl", validation_config("kafka"))
    [group] = [g for g in report.groups if g.group_id == GROUP]
    # (a validator that does not return within the time is stopped there: the group is then
    # inconclusive, VALIDATOR_FAILED among what is missing)
    assert group.verdict == "conforming", (group.verdict, [(x.what, x.line) for x in group.missing],
                                           [(d.line, d.rule, d.detail) for d in group.divergences])
