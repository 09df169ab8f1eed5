"""The consumer group's state (KIP-848) and the read-only rules over it.

Mirrors group-coordinator/.../modern/consumer/ConsumerGroup.java and ModernGroup.java: the
members, the static members by instance id, the group epoch, the target assignment and its
epoch, the partition epochs (who holds each partition, at which epoch), and the state
derived from them (``maybeUpdateGroupState``). Changed only by
:mod:`groupspec.coordinator.consumer.replay`; timers are data (deadlines), as for classic
groups.

Deliberate differences from Kafka: the metadata hash (``ModernGroup.computeMetadataHash``,
a Murmur3 digest of the subscribed topics' names, ids, partition counts and racks) is a
deterministic hash of the same facts here; it is compared, never shown, so only its
changes matter and those are the same. Regular-expression subscriptions: the resolved
regexes (``resolved_regexes``, ConsumerGroup.resolvedRegularExpressions) are replayed from
ConsumerGroupRegularExpression records; who subscribes to which regex is derived from the
members (ConsumerGroup.subscribedRegularExpressions); the asynchronous resolution is
coordinator/consumer/regex.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from groupspec.assignors.server_spec import SubscriptionType
from groupspec.coordinator.committed_offset import CommittedOffset
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember
from groupspec.coordinator.consumer.timeline_order import TimelineOrder
from groupspec.coordinator.find_coordinator import java_string_hash
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId


class ConsumerGroupState(Enum):
    """ConsumerGroup.ConsumerGroupState, with the names ListGroups and describe show."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class ResolvedRegex:
    """modern/consumer/ResolvedRegularExpression: the topics a regex matched, the metadata
    image version it was resolved against and when."""

    topics: frozenset[str]
    version: int
    timestamp_ms: int


#: ResolvedRegularExpression.EMPTY
EMPTY_RESOLVED_REGEX = ResolvedRegex(frozenset(), -1, -1)


@dataclass(frozen=True)
class RebalanceTimer:
    deadline_ms: int
    member_epoch: int


@dataclass
class ConsumerTimers:
    """The timers of a consumer group id whose group is gone (in memory).

    Kafka's timers are keyed by group and member id (GroupMetadataManager.
    groupSessionTimeoutKey, groupRebalanceTimeoutKey, consumerGroupJoinKey,
    consumerGroupSyncKey) and live in the shard's timer, not in the group: removing the group
    cancels none of them (convertToClassicGroup, a downgrade, cancels none; nor does deleting
    an emptied group). Each callback looks the group up when it fires
    (consumerGroupFenceMemberOperation, the rebalance timeout's lambda): a classic group or no
    group, and it does nothing; a consumer group of that id made since (an upgrade of the
    classic group, or a new group), and it acts on that group's member of that id. So the
    timers wait here, keyed as the group's own tables are, until a consumer group of the id
    is made again and takes them (``consumer/replay.py``); a coordinator failover drops them
    with the shard's timer."""

    session_deadlines: dict[str, int] = field(default_factory=dict)
    rebalance_timers: dict[str, RebalanceTimer] = field(default_factory=dict)
    classic_join_deadlines: dict[str, int] = field(default_factory=dict)
    classic_sync_deadlines: dict[str, int] = field(default_factory=dict)

    def running(self) -> bool:
        return bool(self.session_deadlines or self.rebalance_timers or self.classic_join_deadlines
                    or self.classic_sync_deadlines)


def adopt_timers(g: ConsumerGroup, timers: ConsumerTimers | None) -> None:
    """A consumer group made under an id whose earlier consumer group's timers still run
    takes them (ConsumerTimers): the same keys in Kafka's timer, so the new group's own
    scheduling replaces them and its cancellations cancel them."""
    if timers is None:
        return
    g.session_deadlines = dict(timers.session_deadlines)
    g.rebalance_timers = dict(timers.rebalance_timers)
    g.classic_join_deadlines = dict(timers.classic_join_deadlines)
    g.classic_sync_deadlines = dict(timers.classic_sync_deadlines)


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    metadata_hash: int = 0
    #: the target assignment's epoch (``targetAssignmentEpoch``)
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    #: instance id -> member id
    static_members: dict[str, str] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)
    #: (topic, partition) -> epoch of the member holding it (assigned or being revoked)
    partition_epochs: dict[tuple[TopicId, int], int] = field(default_factory=dict)
    #: member id -> session deadline (in memory; a replaced member's timer may outlive it,
    #: and all four kinds outlive the group: ConsumerTimers)
    session_deadlines: dict[str, int] = field(default_factory=dict)
    rebalance_timers: dict[str, RebalanceTimer] = field(default_factory=dict)
    #: member id -> deadline of a classic member's join and sync timeouts (in memory)
    classic_join_deadlines: dict[str, int] = field(default_factory=dict)
    classic_sync_deadlines: dict[str, int] = field(default_factory=dict)
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    #: the order Kafka's members map (a TimelineHashMap) iterates the members in, kept
    #: with every put and remove of a member as the records are replayed
    member_order: TimelineOrder[str] = field(default_factory=TimelineOrder)
    #: the order Kafka's serverAssignors map (a TimelineHashMap of assignor name -> number
    #: of members naming it) iterates its names in, kept as the records are replayed
    assignor_order: TimelineOrder[str] = field(default_factory=TimelineOrder)
    #: ConsumerGroup.subscriptionType: recomputed (maybeUpdateGroupSubscriptionType) only when
    #: a member is put or removed, from the topic counts of that moment (regexes resolved then
    #: included); a regex resolved or deleted later does not change it until the next one
    subscription_kind: SubscriptionType = SubscriptionType.HOMOGENEOUS
    #: the order Kafka's subscribedRegularExpressions map (a TimelineHashMap of regex ->
    #: number of members) iterates its regexes in, kept as the records are replayed
    regex_order: TimelineOrder[str] = field(default_factory=TimelineOrder)
    #: regex -> its resolution (ConsumerGroup.resolvedRegularExpressions), in put order
    resolved_regexes: dict[str, ResolvedRegex] = field(default_factory=dict)
    #: the order Kafka's resolvedRegularExpressions map (a TimelineHashMap) iterates its
    #: regexes in (the order of their tombstones when the group is deleted: ConsumerGroup.
    #: createGroupTombstoneRecords), kept as the records are replayed
    resolved_regex_order: TimelineOrder[str] = field(default_factory=TimelineOrder)
    #: the group epoch its subscription metadata was last refreshed at (Kafka's in-memory
    #: ``metadataRefreshDeadline``, whose deadline, Integer.MAX_VALUE ms on, never passes
    #: here; set by the heartbeat handler, not by a record, as Kafka keeps it out of the
    #: log); None: never since this group object was built (``DeadlineAndEpoch.EMPTY``).
    #: Not compared: it is no fact the records carry
    metadata_refresh_epoch: int | None = field(default=None, compare=False)
    #: ConsumerGroup.hasSubscriptionMetadataRecord: the log holds a subscription-metadata
    #: value (an older version's), whose tombstone the next metadata refresh writes
    has_subscription_metadata_record: bool = False

    # ------------------------------------------------------------------ derived
    @property
    def state(self) -> ConsumerGroupState:
        """maybeUpdateGroupState."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def current_partition_epoch(self, topic: TopicId, partition: int) -> int:
        return self.partition_epochs.get((topic, partition), -1)

    def static_member(self, instance_id: str | None) -> ConsumerMember | None:
        """The member the instance id maps to, None also when it maps to a member no longer
        in the group (Kafka's ConsumerGroup.staticMember raises UNKNOWN_MEMBER_ID then: the
        heartbeat looks static members up with heartbeat._static_member)."""
        if instance_id is None:
            return None
        mid = self.static_members.get(instance_id)
        return None if mid is None else self.members.get(mid)

    def subscribed_regexes(self) -> dict[str, int]:
        """ConsumerGroup.subscribedRegularExpressions: regex -> number of members."""
        return subscribed_regexes(self.members.values())

    def counts_with(self, old: ConsumerMember, new: ConsumerMember) -> dict[str, tuple[int, int]]:
        """ConsumerGroup.computeSubscribedTopicNames(oldMember, newMember): the group's topic
        counts less ``old``'s names plus ``new``'s, and less the topics of ``old``'s regex
        when ``old`` was its last subscriber and ``new`` leaves it. A delta over the group's
        counts, not a recount of the members after the change: when ``old`` is a departing
        static member's state under a member id the group already holds (a member rejoining
        under another instance id), the entry that id already has keeps counting here, as in
        Kafka, although the records replace it."""
        rx = old.subscribed_topic_regex
        dropped = (rx if rx and rx != new.subscribed_topic_regex
                   and self.num_subscribed_members(rx) == 1 else None)
        out = self.counts_without((old,), (dropped,) if dropped else ())
        for t in new.subscribed_topic_names:
            by_name, by_regex = out.get(t, (0, 0))
            out[t] = (by_name + 1, by_regex)
        return out

    def regexes_with(self, old: ConsumerMember | None, new: ConsumerMember | None) -> dict[str, int]:
        """ConsumerGroup.computeSubscribedRegularExpressions(oldMember, newMember); None for
        a member joining (old) or leaving (new)."""
        out = self.subscribed_regexes()
        old_rx = old.subscribed_topic_regex if old is not None else ""
        new_rx = new.subscribed_topic_regex if new is not None else ""
        if old_rx != new_rx:
            if old_rx:
                left = out.get(old_rx, 0) - 1
                if left > 0:
                    out[old_rx] = left
                else:
                    out.pop(old_rx, None)
            if new_rx:
                out[new_rx] = out.get(new_rx, 0) + 1
        return out

    def counts_without(self, removed: Iterable[ConsumerMember],
                       removed_regexes: Iterable[str]) -> dict[str, tuple[int, int]]:
        """ConsumerGroup.computeSubscribedTopicNamesWithoutDeletedMembers: the group's topic
        counts less the removed members' names and less the topics of the removed regexes
        (a topic no longer counted either way is left out)."""
        out = subscription_counts(self.members.values(), self.resolved_regexes.values())
        for m in removed:
            for t in m.subscribed_topic_names:
                by_name, by_regex = out.get(t, (0, 0))
                out[t] = (by_name - 1, by_regex)
        for rx in removed_regexes:
            rr = self.resolved_regexes.get(rx)
            for t in rr.topics if rr is not None else ():
                by_name, by_regex = out.get(t, (0, 0))
                out[t] = (by_name, by_regex - 1)
        return {t: c for t, c in out.items() if c[0] > 0 or c[1] > 0}

    # ------------------------------------------------------------------ classic members
    def num_classic_protocol_members(self) -> int:
        """ConsumerGroup.numClassicProtocolMembers: members speaking the classic protocol."""
        return sum(1 for m in self.members.values() if m.uses_classic_protocol)

    def classic_members_supported_protocols(self) -> dict[str, int]:
        """ConsumerGroup.classicMembersSupportedProtocols: protocol name -> number of classic
        members listing it."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            for p in m.classic.supported_protocols if m.classic is not None else ():
                counts[p.name] = counts.get(p.name, 0) + 1
        return counts

    def supports_classic_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        """ConsumerGroup.supportsClassicProtocols: the consumer protocol type, and (in an
        empty group) any protocol, else one that every classic member supports."""
        wanted = set(names)
        if protocol_type != "consumer":
            return False
        if not self.members:
            return bool(wanted)
        counts = self.classic_members_supported_protocols()
        n = self.num_classic_protocol_members()
        return any(counts.get(name, 0) == n for name in wanted)

    def all_members_use_classic_protocol_except(self, members: Iterable[ConsumerMember]) -> bool:
        """ConsumerGroup.allMembersUseClassicProtocolExcept(Set): every member but these
        speaks the classic protocol (true too when none would remain)."""
        excluded = {m.member_id: m for m in members}
        excluded_classic = sum(1 for m in excluded.values() if m.uses_classic_protocol)
        return (self.num_classic_protocol_members() - excluded_classic
                == len(self.members) - len(excluded))

    def num_members_with(self, new: ConsumerMember) -> int:
        """updateSubscriptionMetadata's numMembers: the group's, one more when neither the
        member id nor the instance id is known."""
        known = new.member_id in self.members or (
            new.instance_id is not None and new.instance_id in self.static_members)
        return len(self.members) + (0 if known else 1)

    def num_subscribed_members(self, regex: str) -> int:
        """ConsumerGroup.numSubscribedMembers: the members subscribed to ``regex`` (0 for "",
        no regex, which the subscribedRegularExpressions map never counts)."""
        return self.subscribed_regexes().get(regex, 0)

    def last_regex_refresh_ms(self) -> int:
        """lastResolvedRegularExpressionRefreshTimeMs: the first resolution's timestamp (they
        are resolved together), Long.MIN_VALUE when none."""
        for rr in self.resolved_regexes.values():
            return rr.timestamp_ms
        return -(2**63)

    def last_regex_version(self) -> int:
        """lastResolvedRegularExpressionVersion: the first resolution's version, 0 if none."""
        for rr in self.resolved_regexes.values():
            return rr.version
        return 0

    def target_of(self, member_id: str, instance_id: str | None) -> Assignment:
        """ConsumerGroup.targetAssignment(memberId, instanceId): a static member's target is
        that of the member id its instance id maps to."""
        if instance_id is None:
            return self.target.get(member_id, {})
        previous = self.static_members.get(instance_id)
        return self.target.get(previous, {}) if previous is not None else {}


def group_tombstones(group: ConsumerGroup, replaced: tuple[str, str] | None = None) -> list[Record]:
    """ConsumerGroup.createGroupTombstoneRecords: every member's current assignment, then
    every member's target, the target epoch, every member's subscription (each in the
    members map's order), each resolved regex (in its map's order), the deprecated
    subscription metadata, the group epoch. ``replaced`` (leaving, joining):
    createGroupTombstoneRecordsWithReplacedMember, the joining member's id in the leaving
    one's place (a classic static member replacing the last consumer-protocol one)."""
    gid = group.group_id
    order = group.member_order.order()
    if replaced is not None:
        order = [replaced[1] if mid == replaced[0] else mid for mid in order]
    out: list[Record] = [cr.ConsumerGroupCurrentAssignmentRecord(gid, mid, None) for mid in order]
    out += [cr.ConsumerGroupTargetAssignmentRecord(gid, mid, None) for mid in order]
    out.append(cr.ConsumerGroupTargetAssignmentEpochRecord(gid, None))
    out += [cr.ConsumerGroupMemberSubscriptionRecord(gid, mid, None) for mid in order]
    out += [cr.ConsumerGroupRegularExpressionRecord(gid, rx, None)
            for rx in group.resolved_regex_order.order()]
    out.append(cr.ConsumerGroupSubscriptionMetadataRecord(gid, None))
    out.append(cr.ConsumerGroupEpochRecord(gid, None))
    return out


def refresh_changed_groups(groups: Iterable[ConsumerGroup], changed: Iterable[str]) -> None:
    """GroupMetadataManager.onNewMetadataImage: of ``groups`` (a coordinator's consumer
    groups), those subscribed to a changed topic (its groupsByTopics, from each group's
    subscribed topic names, by name and through resolved regexes) refresh their metadata at
    their next heartbeat (requestMetadataRefresh: in memory, as Kafka's deadline)."""
    names = set(changed)
    for g in groups:
        if names & subscription_counts(g.members.values(), g.resolved_regexes.values()).keys():
            g.metadata_refresh_epoch = None


def subscribed_topic_names(members: Iterable[ConsumerMember]) -> dict[str, int]:
    """Topic name -> number of members subscribing to it by name."""
    counts: dict[str, int] = {}
    for m in members:
        for t in m.subscribed_topic_names:
            counts[t] = counts.get(t, 0) + 1
    return counts


def subscribed_regexes(members: Iterable[ConsumerMember]) -> dict[str, int]:
    """Regex -> number of members subscribing to it (ConsumerGroup.subscribedRegularExpressions;
    "" is no regex)."""
    counts: dict[str, int] = {}
    for m in members:
        if m.subscribed_topic_regex:
            counts[m.subscribed_topic_regex] = counts.get(m.subscribed_topic_regex, 0) + 1
    return counts


def subscription_counts(members: Iterable[ConsumerMember],
                        resolved: Iterable[ResolvedRegex]) -> dict[str, tuple[int, int]]:
    """ModernGroup.subscribedTopicNames as ConsumerGroup keeps it: topic name -> (members
    subscribing by name, resolved regexes that matched it) (SubscriptionCount)."""
    names = subscribed_topic_names(members)
    out = {t: (c, 0) for t, c in names.items()}
    for rr in resolved:
        for t in rr.topics:
            by_name, by_regex = out.get(t, (0, 0))
            out[t] = (by_name, by_regex + 1)
    return out


def subscription_type(counts: Mapping[str, int] | Mapping[str, tuple[int, int]], num_members: int,
                      regexes: Mapping[str, int] | None = None) -> SubscriptionType:
    """ConsumerGroup.subscriptionType: without regexes, HOMOGENEOUS when every subscribed
    topic has every member as a subscriber by name; with regexes, HOMOGENEOUS only when
    every member subscribes to the same (first) regex and every topic comes from exactly one
    regex and from no name. ``counts`` values are name counts or (by name, by regex)."""
    def split(c: int | tuple[int, int]) -> tuple[int, int]:
        return (c, 0) if isinstance(c, int) else c

    if not regexes:
        if all(split(c)[0] == num_members for c in counts.values()):
            return SubscriptionType.HOMOGENEOUS
        return SubscriptionType.HETEROGENEOUS
    # subscribedRegularExpressions.values().iterator().next(): the first regex's count
    first = next(iter(regexes.values()))
    if first != num_members:
        return SubscriptionType.HETEROGENEOUS
    for c in counts.values():
        by_name, by_regex = split(c)
        if by_regex != 1 or by_name > 0:
            return SubscriptionType.HETEROGENEOUS
    return SubscriptionType.HOMOGENEOUS


def assignor_counts(members: Iterable[ConsumerMember]) -> dict[str, int]:
    """ConsumerGroup.serverAssignors: assignor name -> number of members naming it."""
    counts: dict[str, int] = {}
    for m in members:
        if m.server_assignor is not None:
            counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
    return counts


def _first_max(names: Iterable[str], counts: Mapping[str, int]) -> str | None:
    """``stream().max(comparingByValue())``: the first of the largest counts."""
    best: str | None = None
    for name in names:
        if best is None or counts[name] > counts[best]:
            best = name
    return best


def current_preferred_assignor(group: ConsumerGroup) -> str | None:
    """ConsumerGroup.preferredServerAssignor: the most named assignor, ties to the first in
    the serverAssignors TimelineHashMap's order."""
    counts = assignor_counts(group.members.values())
    return _first_max((n for n in group.assignor_order.order() if n in counts), counts)


def regex_task_order(group: ConsumerGroup, old: str, new: str) -> list[str]:
    """The regexes a resolution task gets, in the order Kafka's task iterates them
    (GroupMetadataManager.maybeUpdateRegularExpressions: the group's
    subscribedRegularExpressions copied into a HashMap, the member's old regex counted down
    and its new one up with ``compute``; "" is no regex)."""
    counts = subscribed_regexes(group.members.values())
    table = _JavaHashMap.copy_of([(rx, counts[rx]) for rx in group.regex_order.order() if rx in counts])
    if old:
        table.compute(old, -1)
    if new:
        table.compute(new, +1)
    return [k for k, _ in table.entries()]


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of ``new HashMap<>(n)`` filled with ``keys`` (n of them) in this
    order (refreshRegularExpressions builds its maps so: the table sized for n, not 16)."""
    ks = list(keys)
    table = _JavaHashMap.with_capacity(len(ks))
    for k in ks:
        table._put(k, 1)
    return [k for k, _ in table.entries()]


def computed_preferred_assignor(group: ConsumerGroup, old: ConsumerMember | None,
                                new: ConsumerMember | None) -> str | None:
    """ConsumerGroup.computePreferredServerAssignor(oldMember, newMember): the group's counts
    copied into a ``HashMap`` (in the TimelineHashMap's order), the old member's assignor
    decremented and the new one's incremented with ``HashMap.compute``, then the first of
    the largest counts in that HashMap's order. Its order is not the group's: the copy
    constructor sizes the table for the entries it copies, and ``compute`` puts a new key
    at the head of its bucket (java.util.HashMap, Java 17), so a tie may go either way."""
    counts = assignor_counts(group.members.values())
    table = _JavaHashMap.copy_of([(n, counts[n]) for n in group.assignor_order.order() if n in counts])
    if old is not None and old.server_assignor is not None:
        table.compute(old.server_assignor, -1)
    if new is not None and new.server_assignor is not None:
        table.compute(new.server_assignor, +1)
    entries = table.entries()
    return _first_max([k for k, _ in entries], dict(entries))


class _JavaHashMap:
    """java.util.HashMap<String, Integer> as far as the assignor counts use it: the copy
    constructor, ``compute`` with a +1/-1 function (a count reaching 0 removes the key),
    resizing and iteration order (buckets upwards, each bucket's chain in order)."""

    def __init__(self) -> None:
        self.table: list[list[list[Any]]] | None = None
        self.threshold = 0
        self.size = 0

    @staticmethod
    def _spread(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return h ^ (h >> 16)

    @classmethod
    def with_capacity(cls, n: int) -> _JavaHashMap:
        """HashMap(int): the first table holds tableSizeFor(n) buckets (at least 1)."""
        out = cls()
        out.threshold = 1 << max(0, (n - 1).bit_length()) if n > 0 else 1
        return out

    @classmethod
    def copy_of(cls, items: list[tuple[str, int]]) -> _JavaHashMap:
        out = cls()
        if items:
            # HashMap(Map): a table for s entries at load factor 0.75 (float arithmetic)
            t = int(len(items) / 0.75 + 1.0)
            out.threshold = 1 << max(0, (t - 1).bit_length())
            for k, v in items:
                out._put(k, v)
        return out

    def _resize(self) -> None:
        old = self.table
        # the first table: the size the copy constructor asked for, else 16
        cap = (self.threshold if self.threshold > 0 else 16) if old is None else len(old) * 2
        if old is not None and len(old) >= 16:
            self.threshold *= 2
        else:
            self.threshold = int(cap * 0.75)
        table: list[list[list[Any]]] = [[] for _ in range(cap)]
        for chain in old or []:
            for node in chain:  # a split keeps each chain's order
                table[self._spread(node[0]) & (cap - 1)].append(node)
        self.table = table

    def _put(self, key: str, value: int) -> None:
        """putVal: a new key at the tail of its bucket, then a resize if past the threshold."""
        if self.table is None:
            self._resize()
        assert self.table is not None
        chain = self.table[self._spread(key) & (len(self.table) - 1)]
        for node in chain:
            if node[0] == key:
                node[1] = value
                return
        chain.append([key, value])
        self.size += 1
        if self.size > self.threshold:
            self._resize()

    def compute(self, key: str, delta: int) -> None:
        """compute(key, inc/dec): a resize first if due, a new key at the head of its bucket,
        a count falling to 0 (or a decrement of a missing key) leaves the key out."""
        if self.table is None or self.size > self.threshold:
            self._resize()
        assert self.table is not None
        chain = self.table[self._spread(key) & (len(self.table) - 1)]
        for i, node in enumerate(chain):
            if node[0] == key:
                value = node[1] + delta
                if value <= 0:
                    del chain[i]
                    self.size -= 1
                else:
                    node[1] = value
                return
        if delta > 0:
            chain.insert(0, [key, delta])
            self.size += 1

    def entries(self) -> list[tuple[str, int]]:
        if self.table is None:
            return []
        return [(k, v) for chain in self.table for k, v in chain]


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """Iteration order of a ``HashMap<String, ?>`` filled with ``keys`` in this order
    (Java 17: table 16, doubling past 3/4 full; buckets in index order, a bucket in
    insertion order). Not reproduced: buckets of eight or more colliding keys (trees)."""
    ks = list(dict.fromkeys(keys))
    cap = 16
    while len(ks) > cap * 3 // 4:
        cap *= 2
    pos = {k: i for i, k in enumerate(ks)}

    def bucket(k: str) -> tuple[int, int]:
        h = java_string_hash(k) & 0xFFFFFFFF
        return ((h ^ (h >> 16)) & (cap - 1), pos[k])

    return sorted(ks, key=bucket)
