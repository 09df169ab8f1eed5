"""The cooperative contract the validator checks (`CooperativeRevokeFirst`) is Kafka 4.1's own
(issue 16, item 4): claims validated by generation as AbstractStickyAssignor does (a lone
claim of an older generation stands; the higher generation wins a partition claimed twice;
two claims in one generation leave it to nobody), and on the general path the raw
ownedPartitions as CooperativeStickyAssignor.computePartitionsTransferringOwnership reads them.

Differential against the kafka-clients 4.1.2 jar on random leader inputs: Kafka's own answer
never breaks the contract as groupspec states it, and the hand-overs the contract forbids in
Kafka's assignment before its cooperative adjustment are exactly the ones Kafka withheld.
Needs Java (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.assignors.cooperative_sticky import kafka_member_data, premature_handovers
from groupspec.assignors.kafka_sticky import KafkaMember, kafka_sticky_assign
from groupspec.jvm import JvmOracle, JvmToolError
from groupspec.protocol.consumer_protocol import Subscription
from properties.kafka_jar import AssignorCase, assignor_cases, kafkas

pytestmark = pytest.mark.java

TP = tuple[str, int]


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _before_adjustment(case: AssignorCase) -> dict[str, set[TP]]:
    """Kafka's sticky assignment before CooperativeStickyAssignor.adjustAssignment (groupspec's
    Kafka-exact builder; its adjusted output is checked against the jar below)."""
    topics = {t: n for t, n in case.partitions_per_topic.items()
              if n > 0 and any(t in m.subscription.topics for m in case.members)}
    members = []
    for m in case.members:
        owned, generation = kafka_member_data(m.subscription)
        sub = m.subscription
        members.append(KafkaMember(m.member_id, sub.topics, owned, generation,
                                   sub.generation_id if sub.generation_id >= 0 else None,
                                   sub.rack_id, owned))
    result = kafka_sticky_assign(topics, members, case.partition_racks)
    return {mid: set(tps) for mid, tps in result.assignment.items()}


@pytest.mark.parametrize("racks", [False, True], ids=["no-racks", "racks"])
def test_the_contract_is_kafkas_cooperative_adjustment(jvm: JvmOracle, racks: bool) -> None:
    # the two assume()s below discard many drawn cases (topics without partitions, claims on
    # partitions a shrunk topic no longer has); with some seeds the health check's early
    # count found too few kept (6 of 56) and failed the run, though generation goes on
    # until max_examples cases are kept
    @settings(deadline=None, max_examples=max(100, settings().max_examples),
              suppress_health_check=[HealthCheck.filter_too_much])
    @given(case=assignor_cases("cooperative-sticky", racks=racks))
    def check(case: AssignorCase) -> None:
        # claims on topics that have no partitions never reach the assignor (metadata has
        # none); the validator does not know partition counts, so keep them out
        assume(all(n > 0 for n in case.partitions_per_topic.values()))
        # claims on partitions that no longer exist (a partition count that shrank) send
        # Kafka's constrained path astray: its merge of owned and all partitions assumes
        # every claim exists, and it can hand a partition to two members; out of scope here
        counts = case.partitions_per_topic
        assume(all(p < counts.get(t, 0) for m in case.members
                   for t, ps in m.subscription.owned_partitions.items() for p in ps))
        try:
            theirs = kafkas(jvm, "cooperative-sticky", case)
        except JvmToolError:
            return  # Kafka throws on this input: no assignment to judge
        subs: dict[str, Subscription] = {m.member_id: m.subscription for m in case.members}
        after = {mid: set(tps) for mid, tps in theirs.items()}
        assert premature_handovers(subs, after) == [], "Kafka's own answer breaks the stated contract"
        before = _before_adjustment(case)
        withheld = {(tp, mid) for mid, tps in before.items() for tp in tps if tp not in after[mid]}
        flagged = {(tp, mid) for tp, mid, _ in premature_handovers(subs, before)}
        assert flagged == withheld

    check()


def _subs(**claims: tuple[int, list[int]]) -> dict[str, Subscription]:
    """Members of one topic ``t``, each (generation, claimed partitions)."""
    return {mid: Subscription(("t",), None, {"t": tuple(ps)} if ps else {}, gen)
            for mid, (gen, ps) in claims.items()}


def test_a_lone_claim_of_an_older_generation_still_owns_its_partition() -> None:
    subs = _subs(a=(5, [0]), b=(7, [1]), c=(7, []))
    assert premature_handovers(subs, {"c": {("t", 0)}}) == [(("t", 0), "c", "a")]


def test_the_higher_generation_keeps_a_partition_claimed_twice() -> None:
    subs = _subs(a=(5, [0]), b=(7, [0]), c=(7, []))
    assert premature_handovers(subs, {"a": {("t", 0)}}) == [(("t", 0), "a", "b")]
    assert premature_handovers(subs, {"b": {("t", 0)}}) == []


def test_a_partition_claimed_twice_in_one_generation_goes_to_nobody() -> None:
    subs = _subs(a=(7, [0]), b=(7, [0]), c=(7, []))
    for mid in ("a", "b", "c"):
        assert premature_handovers(subs, {mid: {("t", 0)}}) == [(("t", 0), mid, None)]
