"""The validator on mixed groups: classic-protocol and consumer-protocol (KIP-848) members in
one group, as Kafka 4.x keeps them (a classic group upgraded by a ConsumerGroupHeartbeat, a
consumer group a classic member joins). Simulated with the reference's own clients and
coordinator, so the traces conform; the rules must say so, and still name an injected fault.

A classic member of a consumer group has its member epoch as its generation: members'
generations differ, and one member gets several SyncGroup answers at one generation as
partitions are released to it (GroupMetadataManager.classicGroupJoinToConsumerGroup,
classicGroupSyncToConsumerGroup). The group-wide generation of classic groups held by
StaleCommitAccepted, and the one assignment per generation the client rules assumed, called
every such trace a violation.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest

from bench.oracle_eval import scenario_data, wire_trace
from groupspec.sim.render import broker_config
from groupspec.sim.runner import Simulation
from groupspec.sim.scenario import parse_scenario
from groupspec.validate import validate_bytes

CONFORMING = "conforming"


def mixed_scenario(seed: int, flavor: str) -> dict[str, Any]:
    """Seed ``seed``'s random classic group scenario (faults included) made mixed: one member
    (not the first) speaking the consumer protocol (``upgrade``: the classic group is
    converted when it joins; ``downgrade``: and it crashes or closes later), or every member
    but one (``classic-in-consumer``)."""
    data = scenario_data(seed)
    rng = random.Random(seed * 7 + 1)
    d = data["defaults"]
    coord = data.setdefault("coordinator", {})
    coord["consumer_group_session_timeout_ms"] = d.get("session_timeout_ms", 45_000)
    coord["consumer_group_heartbeat_interval_ms"] = d.get("heartbeat_interval_ms", 5_000)
    members = data["members"]
    if flavor in ("upgrade", "downgrade"):
        k = rng.randrange(1, len(members)) if len(members) > 1 else 0
        members[k]["group_protocol"] = "consumer"
        if flavor == "downgrade":
            # the consumer-protocol member crashes or closes: the group, left with classic
            # members only, is converted back (the policy is Kafka's default, bidirectional)
            name = members[k]["name"]
            kind = rng.choice(["crash", "close"])
            at = rng.randrange(8000, 30000)
            data["faults"] = [f for f in data["faults"] if f.get("member") != name] + [
                {"at_ms": at, "kind": kind, "member": name}]
    else:
        d["group_protocol"] = "consumer"
        members[rng.randrange(len(members))]["group_protocol"] = "classic"
    return data


@cache
def mixed_trace(seed: int, flavor: str) -> bytes:
    """What a recorder in front of the broker would have written of the simulated group."""
    sc = parse_scenario(mixed_scenario(seed, flavor), f"seed-{seed}")
    result = Simulation(sc).run()
    return wire_trace(result.trace, broker_config(sc.coordinator))


def _lines(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw.decode().splitlines()]


def _dump(events: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


@pytest.mark.parametrize(("seed", "flavor"), [(0, "upgrade"), (1, "upgrade"), (10, "upgrade"),
                                              (0, "classic-in-consumer"), (10, "classic-in-consumer"),
                                              (3, "downgrade"), (51, "downgrade")])
def test_simulated_mixed_groups_conform(seed: int, flavor: str) -> None:
    raw = mixed_trace(seed, flavor)
    events = _lines(raw)
    apis = {e.get("api") for e in events if e.get("kind") == "exchange"}
    assert {"JoinGroup", "SyncGroup", "ConsumerGroupHeartbeat", "OffsetCommit"} <= apis
    [g] = validate_bytes(raw, f"seed-{seed}").groups
    assert g.verdict == CONFORMING, g.violation or g.divergence
    if (seed, flavor) == (51, "downgrade"):
        # the consumer member crashed before a coordinator failover that only a later
        # NOT_COORDINATOR shows: its reloaded session ran from the load, earlier than that
        # error (the replay's "failover-early")
        assert "the replay assumed 1 coordinator failover(s)" in g.notes


def _classic_members(events: list[dict[str, Any]]) -> set[str]:
    return {e["response"]["member_id"] for e in events
            if e.get("kind") == "exchange" and e["api"] == "JoinGroup" and e["response"]["error"] == "NONE"}


def test_a_classic_members_accepted_commit_below_its_generation_is_still_stale() -> None:
    # seed 0's first classic member, after its JoinGroup answer: its accepted commit moved
    # one generation back (the answer kept NONE) was accepted stale
    events = _lines(mixed_trace(0, "upgrade"))
    classic = _classic_members(events)
    joined: dict[str, tuple[int, float]] = {}
    target = None
    for e in events:
        if e.get("kind") != "exchange":
            continue
        if e["api"] == "JoinGroup" and e["response"]["error"] == "NONE":
            joined[e["response"]["member_id"]] = (e["response"]["generation_id"], e["received_ms"])
        if (e["api"] == "OffsetCommit" and e["request"]["member_id"] in classic
                and e["request"]["member_id"] in joined
                and joined[e["request"]["member_id"]][1] < e["sent_ms"]
                and joined[e["request"]["member_id"]][0] > 0
                and e["request"]["generation_id"] == joined[e["request"]["member_id"]][0]
                and all(p["error"] == "NONE" for p in e["response"]["partitions"])):
            target = e
            break
    assert target is not None
    target["request"]["generation_id"] -= 1
    [g] = validate_bytes(_dump(events), "stale").groups
    assert g.verdict == "violation" and g.violation is not None
    assert g.violation.rule == "StaleCommitAccepted", g.violation


def test_a_classic_member_fetching_what_it_was_never_given_is_named() -> None:
    # the classic members' SyncGroup answers at one generation grow; a partition none of them
    # gave is still one the member does not own
    events = _lines(mixed_trace(1, "upgrade"))
    classic = _classic_members(events)
    fetch = next(e for e in events if e.get("kind") == "fetch" and e.get("member_id") in classic)
    given = {(p["topic"], p["partition"]) for p in fetch["partitions"]}
    topic = fetch["partitions"][0]["topic"]
    other = next(n for n in range(100) if (topic, n) not in given)
    fetch["partitions"].append({**fetch["partitions"][0], "partition": other})
    [g] = validate_bytes(_dump(events), "fetch").groups
    assert g.verdict == "violation" and g.violation is not None
    assert g.violation.rule == "ClientFetchesOwnedOnly", g.violation
