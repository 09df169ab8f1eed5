"""Properties of the server-side (KIP-848) assignors, and their differential test against
Kafka 4.1.2's own ``UniformAssignor`` and ``RangeAssignor`` run in the JVM oracle.

Each ``*_property(...)`` returns a Hypothesis test (call it to run it); tests/ holds thin
wrappers. Inputs (:func:`groups`): a few topics (some with no partitions, some missing from
the metadata only when a test asks for errors), members subscribed to the same topics
(HOMOGENEOUS) or to different ones, static and dynamic members, racks on members and
replicas, and a current target assignment that is valid but arbitrary: partitions of
topics a member no longer subscribes to, more than a balanced share, partitions nobody
holds, listed in arbitrary orders (the order is part of the input; see
:mod:`groupspec.assignors.server_spec`). A "next round" strategy also derives inputs from
an assignor's own previous output with members leaving, joining and changing
subscriptions, the way the coordinator feeds its target back.

- differential: the Python assignor's output equals Kafka's exactly (member keys, topics,
  partitions), or both raise ``PartitionAssignorException``;
- validity: every subscribed partition assigned exactly once, only to a subscriber;
- balance: uniform with HOMOGENEOUS subscriptions gives sizes within one
  (``UniformHomogeneousAssignmentBuilder``); uniform with HETEROGENEOUS ones leaves no
  topic whose subscribers' sizes differ by more than one while the giver holds a partition
  of it, unless the 16-round limit was hit (``balanceTopics``); range gives, per topic,
  subscriber shares within one (``RangeAssignor``);
- stickiness (uniform, HOMOGENEOUS): the number of moved partitions is exactly the
  closed-form minimum of :mod:`groupspec.assignors.moves` (the builder keeps
  ``min(owned, quota)`` per member and gives the extra partitions to members that hold
  more than the base quota first); (uniform, both): an assignment it produced is a fixed
  point, fed back as the current assignment it moves nothing (when the heterogeneous
  balancing ended within its round limit). Kafka promises no minimum for different
  subscriptions, and the range assignor is not sticky at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import given, note, settings
from hypothesis import strategies as st

from groupspec.assignors.base import ServerAssignor
from groupspec.assignors.moves import count_moves, minimum_moves_from
from groupspec.assignors.registry import get_server_assignor
from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    MemberSpec,
    PartitionAssignorError,
    SubscribedTopicMetadata,
    SubscriptionType,
    TopicId,
    TopicMetadata,
    check_group_spec,
    replayed_assignment_order,
    subscription_type_of,
    topic_id_from_str,
    topic_id_str,
)
from groupspec.assignors.uniform_heterogeneous import build_heterogeneous
from groupspec.protocol.consumer_protocol import TopicPartitions

PropertyTest = Callable[[], None]
#: A JVM oracle's ``call`` (tool name, payload) -> output; the tests pass a live one.
OracleCall = Callable[[str, Any], Any]

# ------------------------------------------------------------------------------ inputs

#: Topic ids that matter to Kafka's orders: small ones (equal hash buckets are likely),
#: ones with the sign bit set in either half (Uuid.compareTo compares signed longs), and
#: random ones.
_topic_ids = st.one_of(
    st.integers(0, 64).map(lambda n: TopicId(n)),
    st.integers(0, 64).map(lambda n: TopicId((1 << 127) | n)),
    st.integers(0, 64).map(lambda n: TopicId((1 << 63) | (n << 64) | n)),
    st.integers(0, (1 << 128) - 1).map(TopicId),
)
#: Member ids whose Java order differs from Python's (a non-BMP character sorts before
#: U+FFFD in UTF-16) and with shared prefixes.
_member_ids = st.text(alphabet="abAB0-\u00e9\ufffd\U0001f600", min_size=1, max_size=3)
_racks = st.one_of(st.none(), st.sampled_from(["r0", "r1", "r2"]))


@st.composite
def groups(
    draw: st.DrawFn,
    homogeneous: bool | None = None,
    max_members: int = 7,
    max_topics: int = 5,
    max_partitions: int = 9,
    missing_topics: bool = False,
) -> tuple[GroupSpec, SubscribedTopicMetadata]:
    """A group and its topic metadata (see the module docstring)."""
    ids = draw(st.lists(_topic_ids, min_size=1, max_size=max_topics, unique=True))
    # Equal partition counts are likely, so the topic order's tie-breaks are exercised.
    counts = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 6, max_partitions]) | st.integers(0, max_partitions), min_size=len(ids), max_size=len(ids)))
    metas = []
    for i, (t, n) in enumerate(zip(ids, counts, strict=True)):
        racks = draw(st.lists(st.frozensets(st.sampled_from(["r0", "r1", "r2"]), max_size=2), min_size=n, max_size=n)) if draw(st.booleans()) else []
        metas.append(TopicMetadata(t, f"topic-{i}", n, tuple(racks)))
    # A topic the metadata no longer has (deleted): it may linger in assignments.
    deleted = draw(st.sampled_from([*ids[:1], TopicId((1 << 100) + 7)]))
    known = [m for m in metas if m.topic_id != deleted] if deleted in ids and len(ids) > 1 else metas
    topics = SubscribedTopicMetadata.of(known)
    pool = [m.topic_id for m in known] + ([deleted] if missing_topics else [])
    member_ids = draw(st.lists(_member_ids, min_size=1, max_size=max_members, unique=True))
    instance_ids = draw(st.lists(st.one_of(st.none(), st.sampled_from(["i0", "i1", "i2", "i3", "i\U0001f600"])), min_size=len(member_ids), max_size=len(member_ids)))
    seen: set[str] = set()
    for k, iid in enumerate(instance_ids):
        if iid is not None and iid in seen:
            instance_ids[k] = None
        elif iid is not None:
            seen.add(iid)
    same = homogeneous if homogeneous is not None else draw(st.booleans())
    common = draw(st.lists(st.sampled_from(pool), unique=True))
    subs: list[tuple[TopicId, ...]] = []
    for _ in member_ids:
        chosen = common if same else draw(st.lists(st.sampled_from(pool), unique=True))
        subs.append(tuple(draw(st.permutations(chosen))))
    # Current target: each partition of a known (and the deleted) topic held by one member
    # or nobody; then every member's topics and partitions listed in a drawn order.
    held: dict[int, dict[TopicId, list[int]]] = {k: {} for k in range(len(member_ids))}
    for t, n in [*((m.topic_id, m.num_partitions) for m in known), (deleted, 3)]:
        if t == deleted and any(m.topic_id == deleted for m in known):
            continue
        for p in range(n):
            owner = draw(st.one_of(st.none(), st.integers(0, len(member_ids) - 1)))
            if owner is not None:
                held[owner].setdefault(t, []).append(p)
    members = []
    for k, mid in enumerate(member_ids):
        topics_order = draw(st.permutations(list(held[k])))
        assignment = {t: tuple(draw(st.permutations(held[k][t]))) for t in topics_order}
        members.append(MemberSpec(mid, subs[k], assignment, draw(_racks), instance_ids[k]))
    kind = subscription_type_of(members)
    if kind is SubscriptionType.HOMOGENEOUS and len(members) > 1 and draw(st.booleans()):
        # The coordinator counts topic names: names that do not resolve make a group
        # HETEROGENEOUS even when the ids are the same.
        kind = SubscriptionType.HETEROGENEOUS
    spec = GroupSpec(tuple(members), kind)
    check_group_spec(spec)
    return spec, topics


@st.composite
def next_rounds(
    draw: st.DrawFn, spec: GroupSpec, topics: SubscribedTopicMetadata, result: GroupAssignment
) -> GroupSpec:
    """The group after a target ``result``: some members leave, some join, some change their
    subscription (to a drawn one, or to another member's, so that different subscriptions
    can become the same); the rest carry their new target as current assignment, in a
    drawn order or in the order the assignor listed it (as the coordinator writes the
    record, which the replayed check then reads in Kafka's order)."""
    pool = list(topics.topics)
    others = sorted({m.subscribed_topic_ids for m in spec.members}, key=repr)
    as_listed = draw(st.booleans())
    members = []
    for m in spec.members:
        if len(spec.members) > 1 and draw(st.integers(0, 5)) == 0:
            continue  # left
        subs = m.subscribed_topic_ids
        if pool and draw(st.integers(0, 5)) == 0:
            subs = tuple(draw(st.lists(st.sampled_from(pool), unique=True)))
        elif len(others) > 1 and draw(st.integers(0, 3)) == 0:
            subs = tuple(draw(st.permutations(draw(st.sampled_from(others)))))
        mine = result.get(m.member_id, {})
        order = list(mine) if as_listed else draw(st.permutations(list(mine)))
        assignment = {t: tuple(draw(st.permutations(list(mine[t])))) for t in order if mine[t]}
        members.append(MemberSpec(m.member_id, subs, assignment, m.rack_id, m.instance_id))
    taken = {m.member_id for m in spec.members}
    for _ in range(draw(st.integers(0, 2))):
        common = members[0].subscribed_topic_ids if members else ()
        subs = common if draw(st.booleans()) else tuple(draw(st.lists(st.sampled_from(pool), unique=True))) if pool else ()
        k = len(taken)
        while f"new-{k}" in taken:
            k += 1
        new_id = f"new-{k}"
        taken.add(new_id)
        members.append(MemberSpec(new_id, subs))
    shuffled: list[MemberSpec] = draw(st.permutations(members))
    out = GroupSpec(tuple(shuffled))
    check_group_spec(out)
    return out


# ------------------------------------------------------------------------------ oracle I/O


def oracle_input(assignor: str, spec: GroupSpec, topics: SubscribedTopicMetadata) -> dict[str, Any]:
    """The JSON the ``ServerAssignor`` oracle tool reads, keeping every order."""
    return {
        "assignor": assignor,
        "subscription_type": spec.kind.value,
        "topics": [
            {
                "id": topic_id_str(t.topic_id),
                "partitions": t.num_partitions,
                "racks": [sorted(r) for r in t.partition_racks],
            }
            for t in topics.topics.values()
        ],
        "members": [
            {
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "rack_id": m.rack_id,
                "topics": [topic_id_str(t) for t in m.subscribed_topic_ids],
                "assignment": [[topic_id_str(t), list(ps)] for t, ps in m.assignment.items()],
            }
            for m in spec.members
        ],
    }


Canonical = dict[str, dict[TopicId, tuple[int, ...]]]


def canonical(result: GroupAssignment) -> Canonical:
    """Members with their topics and sorted partitions (empty topics kept, to compare)."""
    return {mid: {t: tuple(sorted(ps)) for t, ps in parts.items()} for mid, parts in result.items()}


def from_oracle(output: Mapping[str, Any]) -> Canonical:
    members: Mapping[str, list[list[Any]]] = output["members"]
    return {
        mid: {topic_id_from_str(t): tuple(ps) for t, ps in pairs}
        for mid, pairs in members.items()
    }


def ours_or_error(
    assignor: ServerAssignor, spec: GroupSpec, topics: SubscribedTopicMetadata
) -> Canonical | str:
    try:
        return canonical(assignor.assign(spec, topics))
    except PartitionAssignorError:
        return "PartitionAssignorException"


def kafkas_or_error(
    call: OracleCall, name: str, spec: GroupSpec, topics: SubscribedTopicMetadata
) -> Canonical | str:
    out = call("ServerAssignor", oracle_input(name, spec, topics))
    if "error" in out:
        return "PartitionAssignorException"
    return from_oracle(out)


def replayed(spec: GroupSpec) -> GroupSpec:
    """The group with each member's assignment in the order the coordinator holds it after
    replaying a record that lists it in the given order."""
    return GroupSpec(
        tuple(
            MemberSpec(
                m.member_id,
                m.subscribed_topic_ids,
                replayed_assignment_order(list(m.assignment.items())),
                m.rack_id,
                m.instance_id,
            )
            for m in spec.members
        ),
        spec.kind,
    )


def check_same_as_kafka(
    call: OracleCall,
    name: str,
    spec: GroupSpec,
    topics: SubscribedTopicMetadata,
    as_replayed: bool = False,
) -> None:
    """Same output; ``as_replayed``: Kafka builds each member's assignment with
    ``Assignment.fromRecord`` and groupspec with :func:`replayed_assignment_order`."""
    ours = ours_or_error(get_server_assignor(name), replayed(spec) if as_replayed else spec, topics)
    if as_replayed:
        out = call("ServerAssignor", {**oracle_input(name, spec, topics), "replayed": True})
        kafka: Canonical | str = (
            "PartitionAssignorException" if "error" in out else from_oracle(out)
        )
    else:
        kafka = kafkas_or_error(call, name, spec, topics)
    note(f"ours:  {ours}")
    note(f"kafka: {kafka}")
    assert ours == kafka, f"{name}: groupspec and Kafka 4.1.2 differ"
    if name in ORDERED and isinstance(ours, dict) and isinstance(kafka, dict):
        assert topic_orders(ours) == topic_orders(kafka), (
            f"{name}: a member's topics in another order than Kafka 4.1.2's"
        )


#: Assignors whose output lists each member's topics in Kafka's order (the order the
#: target record is written in, so the order the next epoch reads after replay). The
#: server-side range assignor's output order is not modelled.
ORDERED = frozenset({"uniform"})


def topic_orders(result: Canonical) -> dict[str, list[TopicId]]:
    """Each member's topics in the order its output mapping lists them."""
    return {mid: list(parts) for mid, parts in result.items()}


# ------------------------------------------------------------------------------ checks


def sizes(result: GroupAssignment) -> dict[str, int]:
    return {mid: sum(len(ps) for ps in parts.values()) for mid, parts in result.items()}


def check_valid(spec: GroupSpec, topics: SubscribedTopicMetadata, result: GroupAssignment) -> None:
    """Every partition of a subscribed topic assigned once, to a subscriber, and nothing else.
    A HOMOGENEOUS group is taken at its word: the first member's topics stand for all."""
    homogeneous = spec.kind is SubscriptionType.HOMOGENEOUS
    subscribed = {
        m.member_id: set(spec.members[0].subscribed_topic_ids if homogeneous else m.subscribed_topic_ids)
        for m in spec.members
    }
    wanted = {(t, p) for subs in subscribed.values() for t in subs for p in range(topics.num_partitions(t))}
    seen: dict[tuple[TopicId, int], str] = {}
    assert set(result) <= set(subscribed), f"unknown members in {set(result) - set(subscribed)}"
    if wanted:
        assert set(result) == set(subscribed), "a member is missing from the assignment"
    for mid, parts in result.items():
        for t, ps in parts.items():
            assert t in subscribed[mid], f"{mid!r} got topic {t} it does not subscribe to"
            for p in ps:
                assert (t, p) in wanted, f"{mid!r} got {t}-{p}, which does not exist"
                other = seen.setdefault((t, p), mid)
                assert other == mid, f"{t}-{p} assigned to {other!r} and {mid!r}"
    missing = wanted - set(seen)
    assert not missing, f"unassigned: {sorted(missing)[:5]}"


def check_within_one(result: GroupAssignment) -> None:
    per = sizes(result)
    assert not per or max(per.values()) - min(per.values()) <= 1, f"sizes {per}"


def check_topics_balanced(spec: GroupSpec, result: GroupAssignment) -> None:
    """Uniform with different subscriptions, once its balancing settled: no member holding a
    partition of a topic has two more partitions in all than a subscriber of that topic
    (else ``balanceTopic`` would have moved one)."""
    per = sizes(result)
    by_topic: dict[TopicId, list[str]] = {}
    for m in spec.members:
        for t in m.subscribed_topic_ids:
            by_topic.setdefault(t, []).append(m.member_id)
    for t, subs in by_topic.items():
        if len(subs) < 2:
            continue
        low = min(per.get(s, 0) for s in subs)
        for s in subs:
            if result.get(s, {}).get(t):
                assert per[s] <= low + 1, f"topic {t}: {s!r} holds {per[s]}, a subscriber {low}"


def check_range_shares(spec: GroupSpec, topics: SubscribedTopicMetadata, result: GroupAssignment) -> None:
    """Range: per topic, its subscribers' shares differ by at most one, and each share is a
    contiguous range."""
    homogeneous = spec.kind is SubscriptionType.HOMOGENEOUS
    for t in {t for m in spec.members for t in m.subscribed_topic_ids}:
        subs = [m.member_id for m in spec.members if homogeneous or t in m.subscribed_topic_ids]
        if homogeneous and t not in spec.members[0].subscribed_topic_ids:
            continue
        shares = [tuple(sorted(result.get(s, {}).get(t, ()))) for s in subs]
        lens = [len(x) for x in shares]
        assert max(lens) - min(lens) <= 1, f"range: topic {t} shares {lens}"
        for x in shares:
            assert list(x) == list(range(x[0], x[0] + len(x))) if x else True, f"range: {x} not contiguous"


def _by_name(assignment: Mapping[str, Mapping[TopicId, Sequence[int]]]) -> dict[str, TopicPartitions]:
    return {mid: {str(t): tuple(ps) for t, ps in parts.items()} for mid, parts in assignment.items()}


def check_minimal_moves(spec: GroupSpec, topics: SubscribedTopicMetadata, result: GroupAssignment) -> None:
    """Uniform, HOMOGENEOUS: exactly the closed-form minimum of moves."""
    subscribed = spec.members[0].subscribed_topic_ids
    counts = {str(t): topics.num_partitions(t) for t in subscribed}
    previous = _by_name({m.member_id: m.assignment for m in spec.members})
    # Partitions of topics nobody subscribes to any more cannot move; leave them out.
    previous = {mid: {t: ps for t, ps in parts.items() if t in counts} for mid, parts in previous.items()}
    expected = minimum_moves_from(counts, [m.member_id for m in spec.members], previous)
    actual = count_moves(previous, _by_name(result))
    assert actual == expected, f"{actual} moves, the minimum is {expected}"


def fed_back(spec: GroupSpec, result: GroupAssignment) -> GroupSpec:
    """The same members with ``result`` as their current assignment."""
    return GroupSpec(
        tuple(
            MemberSpec(m.member_id, m.subscribed_topic_ids, dict(result.get(m.member_id, {})), m.rack_id, m.instance_id)
            for m in spec.members
        ),
        spec.kind,
    )


# ------------------------------------------------------------------------------ properties


def same_as_kafka_property(call: OracleCall, name: str, large: bool = False) -> PropertyTest:
    """groupspec's assignor ``name`` and Kafka's give the same output on one group;
    ``large``: up to 40 members, 12 topics and 60 partitions per topic (a fifth of the
    examples), where the heterogeneous balancing takes many rounds."""
    strategy = (
        groups(max_members=40, max_topics=12, max_partitions=60)
        if large
        else groups(missing_topics=True)
    )
    examples = max(settings().max_examples // 5, 5) if large else settings().max_examples

    @settings(deadline=None, max_examples=examples)
    @given(case=strategy)
    def run(case: tuple[GroupSpec, SubscribedTopicMetadata]) -> None:
        spec, topics = case
        note(repr(spec))
        check_same_as_kafka(call, name, spec, topics)

    return run


def rounds_same_as_kafka_property(call: OracleCall, name: str, rounds: int = 3) -> PropertyTest:
    """Several rebalances in a row, each fed the previous target (members leave, join and
    change subscriptions in between); the same output as Kafka's at every round, with the
    current assignments in drawn orders and, as the coordinator holds them, replayed."""

    @settings(deadline=None)
    @given(case=groups(), data=st.data())
    def run(case: tuple[GroupSpec, SubscribedTopicMetadata], data: st.DataObject) -> None:
        spec, topics = case
        assignor = get_server_assignor(name)
        for k in range(rounds):
            note(f"round {k}: {spec!r}")
            check_same_as_kafka(call, name, spec, topics)
            check_same_as_kafka(call, name, spec, topics, as_replayed=True)
            result = assignor.assign(spec, topics)
            spec = data.draw(next_rounds(spec, topics, result))

    return run


def uniform_properties_property() -> PropertyTest:
    """Uniform: valid; balanced as its builder promises; HOMOGENEOUS moves the minimum; an
    output fed back moves nothing."""
    assignor = get_server_assignor("uniform")

    @given(case=groups())
    def run(case: tuple[GroupSpec, SubscribedTopicMetadata]) -> None:
        spec, topics = case
        note(repr(spec))
        result = assignor.assign(spec, topics)
        note(f"result: {canonical(result)}")
        check_valid(spec, topics, result)
        settled = True
        if spec.kind is SubscriptionType.HOMOGENEOUS:
            check_within_one(result)
            check_minimal_moves(spec, topics, result)
        else:
            _, settled = build_heterogeneous(spec, topics)
            if settled:
                check_topics_balanced(spec, result)
        if settled:
            again = assignor.assign(fed_back(spec, result), topics)
            assert canonical(again) == canonical(result), "a target fed back moved partitions"

    return run


def range_properties_property() -> PropertyTest:
    """Server-side range: valid, per-topic shares within one and contiguous, and the same
    output whatever the current assignment (it is not sticky)."""
    assignor = get_server_assignor("range")

    @given(case=groups())
    def run(case: tuple[GroupSpec, SubscribedTopicMetadata]) -> None:
        spec, topics = case
        note(repr(spec))
        result = assignor.assign(spec, topics)
        check_valid(spec, topics, result)
        check_range_shares(spec, topics, result)
        empty = GroupSpec(
            tuple(MemberSpec(m.member_id, m.subscribed_topic_ids, {}, m.rack_id, m.instance_id) for m in spec.members),
            spec.kind,
        )
        assert canonical(assignor.assign(empty, topics)) == canonical(result)

    return run
