"""What a server-side (KIP-848) assignor is given, and what it returns.

Mirrors the assignor API of Kafka's group coordinator (group-coordinator-api/.../api/
assignor/GroupSpec.java, MemberSubscription.java, MemberAssignment.java,
SubscribedTopicDescriber.java, GroupAssignment.java, SubscriptionType.java) and the
implementations the coordinator hands over (group-coordinator/.../modern/GroupSpecImpl.java,
MemberSubscriptionAndAssignmentImpl.java, SubscribedTopicDescriberImpl.java).

Kafka's assignors iterate Java collections, and some results depend on their order, so the
orders are part of the input here, explicitly:

- ``GroupSpec.members`` is in the order of ``GroupSpec.memberIds()`` (a ``HashMap`` key set
  in the coordinator, ``TargetAssignmentBuilder.build``);
- ``MemberSpec.subscribed_topic_ids`` is in the order its ``subscribedTopicIds()`` set
  iterates;
- ``MemberSpec.assignment`` lists topics, and each topic its partitions, in the order the
  member's current target assignment (``Map<Uuid, Set<Integer>>``) iterates.

Whether a partition is assigned (``GroupSpec.isPartitionAssigned``, the coordinator's
inverted target assignment) is derived from the members' assignments: in the coordinator
the inverted map is updated from the same target-assignment records
(``ModernGroup.updateTargetAssignment``) and a departing member's records are removed
before the next target is computed (``GroupMetadataManager.removeMember``).

Topics are identified by Kafka ``Uuid`` s, held as
:class:`~groupspec.protocol.topic_id.TopicId`; their Java order and hash code are
:func:`topic_id_key` and :func:`topic_id_hash`.

Preconditions the assignors rely on without checking (Kafka's do the same), checked by
:func:`check_group_spec` where input comes from outside: no partition is held by two
members, and a member holds no partition beyond its topic's count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from groupspec.protocol.topic_id import TopicId

#: topic id -> partitions, in iteration order (the order matters to the uniform assignor).
MemberAssignment = Mapping[TopicId, tuple[int, ...]]

#: member id -> its new target assignment (what ``GroupAssignment.members()`` holds).
GroupAssignment = dict[str, MemberAssignment]


class PartitionAssignorError(Exception):
    """Kafka's ``PartitionAssignorException``: the assignor cannot assign this group."""


def missing_topic_error(topic_id: TopicId) -> PartitionAssignorError:
    return PartitionAssignorError(
        f"members are subscribed to topic {topic_id}, which the topic metadata does not have"
    )


class SubscriptionType(Enum):
    """``SubscriptionType``: whether every member subscribes to the same topics."""

    HOMOGENEOUS = "HOMOGENEOUS"
    HETEROGENEOUS = "HETEROGENEOUS"


def _signed64(x: int) -> int:
    return x - (1 << 64) if x >= (1 << 63) else x


def topic_id_key(topic_id: TopicId) -> tuple[int, int]:
    """A sort key giving ``Uuid.compareTo``'s order: the most significant 64 bits, then the
    least significant 64, each compared as a signed long."""
    n = int(topic_id)
    return _signed64(n >> 64), _signed64(n & 0xFFFFFFFFFFFFFFFF)


def topic_id_hash(topic_id: TopicId) -> int:
    """``Uuid.hashCode`` as an unsigned 32-bit value: the two halves xored, folded to 32 bits."""
    n = int(topic_id)
    x = (n >> 64) ^ (n & 0xFFFFFFFFFFFFFFFF)
    return ((x >> 32) ^ x) & 0xFFFFFFFF


__all__ = ["TopicId"]


def topic_id_str(topic_id: TopicId) -> str:
    """``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return str(topic_id)


def topic_id_from_str(text: str) -> TopicId:
    return TopicId.parse(text)


def java_hash_set_order(topic_ids: Sequence[TopicId]) -> list[TopicId]:
    """The iteration order of ``new HashSet<>(c)`` for ``c`` iterating as ``topic_ids``.

    Java 17's ``HashSet(Collection)`` sizes its table to the power of two at or above
    ``max(size / 0.75 + 1, 16)`` (no resize follows); ``HashMap`` iterates buckets in index
    order (bucket = ``h ^ (h >>> 16)`` masked), and a bucket in insertion order. Not
    reproduced: a bucket of eight or more colliding ids, which Java turns into a tree.
    As far as we know, JDK 19 moved this constructor to ``HashMap.newHashMap``, which sizes
    for ``ceil(size / 0.75)``: a table half as large when that is a power of two (48, 96,
    192, ... elements), so a broker on a newer JVM could iterate, and so assign, differently.
    Not verified here: the oracle runs Java 17.
    """
    wanted = max(4 * len(topic_ids) // 3 + 1, 16)
    mask = (1 << (wanted - 1).bit_length()) - 1

    def bucket(t: TopicId) -> int:
        h = topic_id_hash(t)
        return (h ^ (h >> 16)) & mask

    return sorted(dict.fromkeys(topic_ids), key=bucket)


def _spread_bucket(h: int, mask: int) -> int:
    """``HashMap.hash`` (the high half folded into the low) masked to a table slot."""
    return (h ^ (h >> 16)) & mask


def _table_for(size: int) -> int:
    """The table length of ``new HashMap<>()`` after ``size`` puts (16, doubling past 3/4)."""
    cap = 16
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def replayed_assignment_order(
    record: Sequence[tuple[TopicId, Sequence[int]]],
) -> dict[TopicId, tuple[int, ...]]:
    """A member's target assignment in the order Kafka iterates it after replaying its
    record (``Assignment.fromRecord``: the topics collected into a ``HashMap``, each
    topic's partitions into ``new HashSet<>(list)``), from the record's order. This is the
    order the coordinator hands the uniform assignor (Java 17; buckets of eight or more
    colliding keys, which Java turns into trees, are not reproduced)."""
    topic_mask = _table_for(len(record)) - 1
    topics = sorted(
        range(len(record)), key=lambda k: _spread_bucket(topic_id_hash(record[k][0]), topic_mask)
    )
    out: dict[TopicId, tuple[int, ...]] = {}
    for k in topics:
        t, parts = record[k]
        mask = (1 << (max(4 * len(parts) // 3 + 1, 16) - 1).bit_length()) - 1
        out[t] = tuple(
            sorted(dict.fromkeys(parts), key=lambda p: _spread_bucket(p & 0xFFFFFFFF, mask))
        )
    return out


class JavaAssignmentMap:
    """The topic order of the ``HashMap`` a member's new assignment is built in.

    Both builders of the uniform assignor (UniformHomogeneousAssignmentBuilder:
    maybeRevokePartitions, assignRemainingPartitions; UniformHeterogeneousAssignmentBuilder:
    maybeRevokePartitions, addPartitionToTargetAssignment,
    removePartitionFromTargetAssignment) alter a member's assignment only on a copy (AssignorHelpers.deepCopyAssignment:
    ``new HashMap<>(size)``, then one ``put`` per topic in the old map's order), removes
    topics from it, and adds topics with ``computeIfAbsent``. Java 17's HashMap iterates
    its table's buckets in index order and a bucket along its chain; ``put`` appends a new
    key to its chain but ``computeIfAbsent`` links it in front, and growing the table
    (``new HashMap<>(n)`` starts at the power of two at or above n, 1 for 0; it doubles
    once more keys than 3/4 of it are held: after the insertion for ``put``, before it for
    ``computeIfAbsent``) keeps the relative order of keys that still share a bucket. So the
    final order is by bucket in the final table, then by ``rank`` (appends count up from
    0, links in front count down from -1).
    """

    __slots__ = ("cap", "created", "front", "parts", "rank")

    def __init__(self, old: MemberAssignment) -> None:
        self.parts: dict[TopicId, tuple[int, ...]] = {}
        self.rank: dict[TopicId, int] = {}
        self.front = 0
        n = len(old)
        self.cap = 1 if n <= 1 else 1 << (n - 1).bit_length()  # the table made at the first put
        self.created = n > 0
        for t, ps in old.items():  # put: append, then grow once past 3/4
            self.parts[t] = tuple(ps)
            self.rank[t] = len(self.rank)
            if len(self.parts) > self.cap * 3 // 4:
                self.cap *= 2

    def remove(self, t: TopicId) -> None:
        del self.parts[t]

    def set(self, t: TopicId, ps: tuple[int, ...]) -> None:
        """Replace the partitions of a topic already held (no change to the order)."""
        self.parts[t] = ps

    def add(self, t: TopicId, ps: tuple[int, ...]) -> None:
        """``computeIfAbsent(t, ...).add(p)`` for each ``p`` of ``ps``, in order."""
        self.compute_if_absent(t, len(ps))
        self.parts[t] += ps

    def compute_if_absent(self, t: TopicId, calls: int = 1) -> None:
        """``calls`` (at least one) ``computeIfAbsent(t, ...)`` in a row, as the builders
        make one per partition they add. Each call first grows the table if more keys than
        3/4 of it are held, whether or not ``t`` is there yet (HashMap.computeIfAbsent, Java
        17), and the first inserts ``t`` without growing after it. So a call that follows
        the insertion of a key, even for a key already held, can grow the table: adding two
        partitions of a new topic is not the same as adding one."""
        for k in range(min(calls, 2)):  # the size is constant after the first call
            if not self.created:
                self.created = True  # the table is made at its initial size
            elif len(self.parts) > self.cap * 3 // 4:
                self.cap *= 2
            if k == 0 and t not in self.parts:
                self.parts[t] = ()
                self.front -= 1
                self.rank[t] = self.front

    def order(self) -> list[TopicId]:
        """The topics held, in the order the ``HashMap`` iterates them."""
        mask = self.cap - 1

        def key(t: TopicId) -> tuple[int, int]:
            h = topic_id_hash(t)
            return (h ^ (h >> 16)) & mask, self.rank[t]

        return sorted(self.parts, key=key)

    def result(self) -> dict[TopicId, tuple[int, ...]]:
        return {t: self.parts[t] for t in self.order()}


@dataclass(frozen=True)
class TopicMetadata:
    """One topic as the coordinator's metadata image describes it."""

    topic_id: TopicId
    name: str
    num_partitions: int
    #: Racks of each partition's replicas, by partition (empty when unknown). Neither
    #: 4.1's uniform nor its range assignor reads them.
    partition_racks: tuple[frozenset[str], ...] = ()

    def __post_init__(self) -> None:
        if self.num_partitions < 0:
            raise ValueError(f"topic {self.name!r}: num_partitions must be >= 0")
        if self.partition_racks and len(self.partition_racks) != self.num_partitions:
            raise ValueError(
                f"topic {self.name!r}: partition_racks has {len(self.partition_racks)} "
                f"entries for {self.num_partitions} partitions"
            )


@dataclass(frozen=True)
class SubscribedTopicMetadata:
    """``SubscribedTopicDescriber``: partition counts and racks of the known topics."""

    topics: Mapping[TopicId, TopicMetadata]

    @classmethod
    def of(cls, topics: Iterable[TopicMetadata]) -> SubscribedTopicMetadata:
        out: dict[TopicId, TopicMetadata] = {}
        for t in topics:
            if t.topic_id in out:
                raise ValueError(f"topic {t.name!r}: topic id {t.topic_id} listed twice")
            out[t.topic_id] = t
        return cls(out)

    def num_partitions(self, topic_id: TopicId) -> int:
        """The partition count, or -1 for a topic the metadata does not have (as Kafka)."""
        t = self.topics.get(topic_id)
        return -1 if t is None else t.num_partitions

    def racks_for_partition(self, topic_id: TopicId, partition: int) -> frozenset[str]:
        t = self.topics.get(topic_id)
        if t is None or not 0 <= partition < len(t.partition_racks):
            return frozenset()
        return t.partition_racks[partition]

    def resolve(self, names: Iterable[str]) -> tuple[TopicId, ...]:
        """Topic ids of ``names``, skipping unknown names (as ``TopicIds`` resolves a
        member's subscribed topic names against the metadata image)."""
        by_name = {t.name: t.topic_id for t in self.topics.values()}
        return tuple(dict.fromkeys(by_name[n] for n in names if n in by_name))


@dataclass(frozen=True)
class MemberSpec:
    """``MemberSubscriptionAndAssignmentImpl``: one member's subscription and current target."""

    member_id: str
    subscribed_topic_ids: tuple[TopicId, ...]
    assignment: MemberAssignment = field(default_factory=dict)
    rack_id: str | None = None
    instance_id: str | None = None


def subscription_type_of(members: Sequence[MemberSpec]) -> SubscriptionType:
    """HOMOGENEOUS when every member subscribes to the same topics
    (``ModernGroup.subscriptionType``, which counts subscribers per topic name; here per id)."""
    if not members:
        return SubscriptionType.HOMOGENEOUS
    first = frozenset(members[0].subscribed_topic_ids)
    if all(frozenset(m.subscribed_topic_ids) == first for m in members[1:]):
        return SubscriptionType.HOMOGENEOUS
    return SubscriptionType.HETEROGENEOUS


@dataclass(frozen=True)
class GroupSpec:
    """``GroupSpec``: the members in ``memberIds()`` order and the subscription type.

    The coordinator computes the type from subscribed topic *names*, so a group whose
    members name different topics that resolve to the same ids is HETEROGENEOUS there;
    give the type explicitly for that case, else it is computed from the ids.

    ``assigned``: the partitions ``isPartitionAssigned`` answers true for (GroupSpecImpl's
    inverted target assignment: the coordinator's targets *before* the request), None for
    the union of the members' assignments. The two differ only when the member being
    updated already had a target of its own and takes over a replaced static member's
    (GroupMetadataManager.updateTargetAssignment): its own partitions are still marked
    assigned, held by no member, so the uniform assignor gives them to nobody.
    """

    members: tuple[MemberSpec, ...]
    subscription_type: SubscriptionType | None = None
    assigned: Mapping[TopicId, frozenset[int]] | None = None

    def __post_init__(self) -> None:
        if self.subscription_type is None:
            object.__setattr__(self, "subscription_type", subscription_type_of(self.members))

    @property
    def kind(self) -> SubscriptionType:
        assert self.subscription_type is not None
        return self.subscription_type


def check_group_spec(spec: GroupSpec) -> None:
    """ValueError naming the member and topic if the input is not one Kafka could build:
    duplicate member or topic ids, empty or repeated partition lists, or a partition in
    two members' current assignments."""
    seen_members: set[str] = set()
    owners: dict[tuple[TopicId, int], str] = {}
    for i, m in enumerate(spec.members):
        where = f"members[{i}] ({m.member_id!r})"
        if m.member_id in seen_members:
            raise ValueError(f"{where}: duplicate member id")
        seen_members.add(m.member_id)
        if len(set(m.subscribed_topic_ids)) != len(m.subscribed_topic_ids):
            raise ValueError(f"{where}: a topic id is subscribed twice")
        for t, ps in m.assignment.items():
            if not ps:
                raise ValueError(f"{where}: assignment of topic {t}: empty partition list")
            for p in ps:
                if p < 0:
                    raise ValueError(f"{where}: assignment of topic {t}: partition {p} < 0")
                other = owners.setdefault((t, p), m.member_id)
                if other != m.member_id:
                    raise ValueError(
                        f"{where}: partition {p} of topic {t} is also assigned to {other!r}"
                    )
            if len(set(ps)) != len(ps):
                raise ValueError(f"{where}: assignment of topic {t}: a partition twice")
