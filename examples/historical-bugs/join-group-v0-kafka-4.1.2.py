"""Records join-group-v0-kafka-4.1.2.jsonl: two members of a classic group joining with JoinGroup
v0 (no rebalance timeout: the broker takes the session timeout for it, KAFKA-8653), against
a Kafka broker started by groupspec (`groupspec broker start`), through the recorder.

    python examples/historical-bugs/join-group-v0-kafka-4.1.2.py HOST:PORT OUT.jsonl

a joins and leads generation 1; b joins and waits while the group prepares a rebalance;
a's heartbeat is answered REBALANCE_IN_PROGRESS, a rejoins, and both are answered
generation 2; both sync, heartbeat and leave. A broker with KAFKA-8653 (a v0 member's
rebalance timeout 0) answered b's join at once, without a (tests/test_historical_bugs.py)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

from groupspec.conformance.runner import prepare_topics
from groupspec.conformance.wire_fuzz import Connection
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.recorder import BackgroundRecorder

GROUP, TOPIC = "join-v0", "join-v0-t"


def join(conn: Connection, member_id: str) -> dict[str, Any]:
    return conn.call("JoinGroup", 0, {
        "group_id": GROUP, "session_timeout_ms": 10_000, "rebalance_timeout_ms": -1, "member_id": member_id,
        "group_instance_id": None, "protocol_type": "consumer", "reason": None,
        "protocols": [{"name": "range", "metadata": Subscription((TOPIC,)).encode()}]})


def sync(conn: Connection, resp: dict[str, Any], assignments: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    return conn.call("SyncGroup", 0, {
        "group_id": GROUP, "generation_id": resp["generation_id"], "member_id": resp["member_id"],
        "group_instance_id": None, "protocol_type": None, "protocol_name": None,
        "assignments": [{"member_id": m, "assignment": Assignment({TOPIC: ps}).encode()}
                        for m, ps in assignments.items()]})


def beat(conn: Connection, resp: dict[str, Any]) -> dict[str, Any]:
    return conn.call("Heartbeat", 0, {"group_id": GROUP, "generation_id": resp["generation_id"],
                                      "member_id": resp["member_id"], "group_instance_id": None})


def main() -> None:
    host, _, port = sys.argv[1].rpartition(":")
    prepare_topics(sys.argv[1], {TOPIC: 2})
    with open(Path(sys.argv[2]), "w", encoding="utf-8") as out, BackgroundRecorder(
            (host, int(port)), out, cluster="kafka", note="JoinGroup v0 (KAFKA-8653)") as rec:
        rhost, _, rport = rec.address.rpartition(":")
        a, b = Connection(rhost, int(rport), "a", 30), Connection(rhost, int(rport), "b", 30)
        while a.call("FindCoordinator", 3, {"key": GROUP, "key_type": 0})["error_code"] != 0:
            time.sleep(0.1)
        a1 = join(a, "")
        sync(a, a1, {a1["member_id"]: (0, 1)})
        beat(a, a1)
        answers: dict[str, dict[str, Any]] = {}
        t = threading.Thread(target=lambda: answers.setdefault("b", join(b, "")))
        t.start()
        time.sleep(0.5)
        assert beat(a, a1)["error_code"] == 27  # REBALANCE_IN_PROGRESS
        a2 = join(a, a1["member_id"])
        t.join()
        b2 = answers["b"]
        leader, follower = (a, b) if a2["member_id"] == a2["leader"] else (b, a)
        lead, follow = (a2, b2) if leader is a else (b2, a2)
        sync(leader, lead, {lead["member_id"]: (0,), follow["member_id"]: (1,)})
        sync(follower, follow, {})
        beat(a, a2)
        beat(b, b2)
        for conn, resp in ((a, a2), (b, b2)):
            conn.call("LeaveGroup", 0, {"group_id": GROUP, "member_id": resp["member_id"], "members": []})
        a.close()
        b.close()


if __name__ == "__main__":
    main()
