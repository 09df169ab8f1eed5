"""The reference classic coordinator against Kafka 4.1.2's own group coordinator shard.

Random sequences of JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, DescribeGroups and DeleteGroups requests, clock advances and coordinator failovers, over two groups and five
clients (two dynamic, two static, one sharing a static member's instance id), drive both
the reference (``Coordinator.handle`` / ``advance``) and a real ``GroupCoordinatorShard``
built from kafka-group-coordinator-4.1.2.jar (the JVM oracle's ``ClassicGroupShard`` tool);
every step's completed responses and the groups' state (members, timers, committed offsets,
last persisted group record) must be identical
(``properties/classic_kafka_diff.py`` says what is compared and what is not).

Service layer: the harness drives the shard, so the inputs are restricted to those
GroupCoordinatorService hands to the shard unchanged (non-empty group ids), except the
JoinGroup session-timeout bounds, which the service checks and the Java harness applies as
the service does; exceptions from the shard are answered through the service's own error
conversion (CoordinatorOperationExceptionHelper and its per-request handlers).

Documented modelling choices excluded: the order of responses completed in one step and of
the leader's member list (HashMap order in Kafka, join order in the reference) is not
compared; a sequence whose leader election differs only in whom it picked stops being
compared at that step (docs/deviations.md, "Leader chosen when the leader leaves"); protocol
lists share one preference order so the vote cannot tie ("Protocol-vote tie"); timers due
in one millisecond fire in the reference's order on both sides ("Timers due at the same
millisecond"); a Dead group in the reference counts as absent ("Deleted / expired groups");
failovers happen at multiples of the offset-expiry check interval ("The offset-expiry check
cadence").

Java is required: a missing JVM fails the test (never skipped).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.classic import fast_path
from groupspec.jvm import JvmOracle
from properties.classic_kafka_diff import SEQUENCES, Op, check

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "handlers-only"])
def test_reference_answers_as_kafkas_group_coordinator(
    jvm: JvmOracle, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reference answers a current member's Heartbeat and OffsetCommit through its fast
    # path (coordinator/classic/fast_path.py) unless it is switched off: both must be Kafka's
    monkeypatch.setattr(fast_path, "ENABLED", fast)

    # an example is a few milliseconds (one JVM, one shard per sequence): four times the
    # loaded profile's examples (ci: 240 per path, about 5 s in all)
    current = settings()

    @settings(current, max_examples=4 * current.max_examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(ops=SEQUENCES)
    def run(ops: list[Op]) -> None:
        check(jvm, ops)

    run()


def test_a_whole_rebalance_is_compared(jvm: JvmOracle) -> None:
    """A fixed story, so the harness is known to compare real answers: two members join
    (MEMBER_ID_REQUIRED, then the initial delay), the leader syncs, both commit, one's
    session expires."""
    ops = [
        Op("join", who=0), Op("join", who=1), Op("join", who=0), Op("join", who=1),
        Op("advance", ms=3_000), Op("sync", who=0), Op("sync", who=1),
        Op("commit", who=0), Op("commit", who=1, gen="stale"),
        Op("heartbeat", who=0), Op("advance", ms=5_000), Op("heartbeat", who=0),
        Op("advance", ms=6_000), Op("heartbeat", who=0), Op("join", who=0),
    ]
    assert check(jvm, ops) == len(ops)


#: sequences on which the reference once answered differently from Kafka (each fixed in the
#: reference; tests/test_coordinator_kafka_regressions.py pins the reference's side)
FOUND: dict[str, list[Op]] = {
    # a SyncGroup v5 naming a protocol while the group has none (first join phase):
    # REBALANCE_IN_PROGRESS, not INCONSISTENT_GROUP_PROTOCOL (isProtocolInconsistent)
    "sync-protocol-name-before-any": [
        Op("join", who=0, version=6), Op("join", who=0, version=6),
        Op("sync", who=0, gen="future", version=5, sync_names="wrong_name"),
    ],
    # an OffsetCommit partition without metadata is stored, and fetched, with metadata ""
    # (OffsetAndMetadata.fromRequest), not null
    "commit-without-metadata-fetched-empty": [
        Op("commit", gen="none", ids="empty", metadata="none"), Op("fetch", assign="all", version=1),
    ],
    # a simple group whose offsets OffsetDelete removed is recreated by a failover (the log
    # still holds its offset commits: OffsetMetadataManager.replay), Empty with no offset
    # a JoinGroup v1+ with a negative rebalance timeout: Kafka's parser replaces it by the
    # session timeout only for v0 (maybeOverrideRebalanceTimeout); the group keeps -1 and
    # its join and sync timers fall due at once (the reference replaced any negative one)
    "join-negative-rebalance-timeout-kept": [
        Op("join", who=0, version=5, rebalance_ms=-1), Op("join", who=0, version=5, rebalance_ms=-1),
        Op("join", who=1, version=5, rebalance_ms=-1), Op("join", who=1, version=5, rebalance_ms=-1),
        Op("advance", ms=3_000), Op("sync", who=0), Op("sync", who=1), Op("heartbeat", who=0),
        Op("join", who=1, version=5, rebalance_ms=-1), Op("advance", ms=1), Op("heartbeat", who=0),
        Op("join", who=0, version=5, rebalance_ms=-1), Op("advance", ms=1), Op("sync", who=0),
        Op("advance", ms=1), Op("sync", who=1), Op("advance", ms=10),
    ],
    # ... and the group's rebalance timeout, the largest of its members', is never below 0
    # (ClassicGroup.rebalanceTimeoutMs starts its maximum at 0): a lone member rejoining a
    # Stable group with -1 completes the join at once and the sync timer is due now, not 1 ms
    # ago
    "negative-rebalance-timeout-floored-at-zero": [
        Op("join", who=0, version=1), Op("advance", ms=3_000), Op("sync", who=0),
        Op("join", who=0, version=1, rebalance_ms=-1), Op("advance", ms=1),
    ],
    # a Stable group of a static member whose rebalance timeout is -1; a dynamic member
    # joins and leaves: the join timer finds no member rejoined and re-arms itself at the
    # group's rebalance timeout, 0 (completeClassicGroupJoin). Kafka's timer fires it on and
    # on; both sides' clocks move 1 ms a firing (the nightly run at seed 301130 hung here
    # before: docs/deviations.md, "A join timer re-armed with no delay"), until the static
    # member rejoins or its session expires
    "join-timer-rearmed-with-no-delay": [
        Op("join", who=2, version=5), Op("advance", ms=3_000), Op("sync", who=2),
        Op("join", who=2, version=5, rebalance_ms=-1), Op("sync", who=2),
        Op("join", who=0, version=5, rebalance_ms=-1), Op("join", who=0, version=5, rebalance_ms=-1),
        Op("leave", others=((0, "known"),)), Op("advance", ms=1), Op("advance", ms=5_000),
        Op("join", who=2, version=5, rebalance_ms=-1), Op("advance", ms=1), Op("sync", who=2),
        Op("join", who=0, version=5, rebalance_ms=-1), Op("join", who=0, version=5, rebalance_ms=-1),
        Op("leave", others=((0, "known"),)), Op("advance", ms=20_000), Op("advance", ms=300_000),
    ],
    "offset-deleted-simple-group-reloaded": [
        Op("commit", gen="none", ids="empty"), Op("offset_delete", ms=1), Op("failover"),
        Op("offset_delete", ms=0), Op("advance", ms=60_000), Op("offset_delete", ms=0),
    ],
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_sequences_agree_with_kafka(jvm: JvmOracle, name: str) -> None:
    ops = FOUND[name]
    assert check(jvm, ops) == len(ops)


def test_offset_delete_is_compared_on_every_path(jvm: JvmOracle) -> None:
    """OffsetDelete against Kafka's deleteOffsets, each answer at least once: a simple
    group's offsets deleted (tombstones, then the offsets compared), a partition never
    committed, the empty group id and an unknown group (the service's and the shard's
    errors), a "consumer" group with members keeping its subscribed topics
    (GROUP_SUBSCRIBED_TO_TOPIC) while the rest are deleted, mid-rebalance too, a "connect"
    group with members (NON_EMPTY_GROUP), and the group emptied by a leave."""
    def delete(which: int, ids: str = "known", group: int = 0) -> Op:
        return Op("offset_delete", group=group, ids=ids, ms=which)

    ops = [
        Op("commit", gen="none", ids="empty"), delete(0), delete(4), delete(1), delete(5),
        delete(0, ids="empty"), delete(0, ids="bogus"),
        Op("commit", gen="none", ids="empty"),
        Op("join", who=0), Op("join", who=0), Op("advance", ms=3_000), Op("sync", who=0),
        Op("commit", who=0), delete(2), delete(3),
        Op("join", who=2, version=7), delete(3),  # PreparingRebalance: last generation's topics
        Op("advance", ms=20_000), Op("round"), Op("round"), delete(3),
        Op("leave", others=((0, "known"), (2, "known"))), Op("advance", ms=1), delete(3),
        Op("join", who=1, group=1, protocol_type="connect"), Op("join", who=1, group=1, protocol_type="connect"),
        Op("advance", ms=3_000), Op("commit", who=1, group=1), delete(0, group=1), Op("failover"), delete(1, group=1),
    ]
    assert check(jvm, ops) == len(ops)


def test_a_negative_rebalance_timeout_reaches_the_group(jvm: JvmOracle) -> None:
    """JoinGroup v5 with rebalance timeout -1 (Kafka's parser overrides only v0's): the
    group completes its join phase at the initial delay and its sync timer, -1 past that,
    falls due at once, so the members are gone before they sync, in Kafka's shard and in the
    reference alike (the found sequence above compares every step). The reference once put
    the session timeout in its place at every version: the group then waited for the syncs."""
    from properties.classic_kafka_diff import Differ

    d = Differ(jvm)
    assert d.run(FOUND["join-negative-rebalance-timeout-kept"][:6]) == 6
    g = d.ref.state.groups["g0"]
    assert (g.state.name, g.generation_id, dict(g.members)) == ("Empty", 2, {})
