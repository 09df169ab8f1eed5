"""The classic group's state: its members and the read-only rules over them.

Mirrors group-coordinator/.../classic/ClassicGroup.java and ClassicGroupMember.java. The
dataclasses here are changed only by :func:`groupspec.coordinator.replay.apply_record`;
everything else reads them. Deadlines are data (``*_deadline_ms``): the coordinator never
reads a clock.

Deliberate differences from Kafka: member maps iterate in insertion order where Kafka's
HashMap order is arbitrary (leader re-election on removal, the vote tie-break); the TLA+
spec allows every choice there, and this is one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from groupspec.coordinator.committed_offset import CommittedOffset
from groupspec.coordinator.errors import NotModelled
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import JoinGroupProtocol, JoinGroupResponseMember
from groupspec.protocol.records import (
    GroupSnapshot,
    JoinTimer,
    MemberInfo,
    PersistedMember,
    SyncTimer,
)
from groupspec.protocol.wire import DecodeError, Reader


@dataclass
class Member:
    info: MemberInfo
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocols: tuple[JoinGroupProtocol, ...]
    assignment: bytes = b""
    #: request id of the parked JoinGroup (ClassicGroupMember.awaitingJoinFuture)
    join_request: int | None = None
    #: request id of the parked SyncGroup (awaitingSyncFuture)
    sync_request: int | None = None
    is_new: bool = False
    heartbeat_deadline_ms: int | None = None

    @property
    def member_id(self) -> str:
        return self.info.member_id

    @property
    def group_instance_id(self) -> str | None:
        return self.info.group_instance_id

    @property
    def is_static(self) -> bool:
        return self.info.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.join_request is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.sync_request is not None

    def has_satisfied_heartbeat(self) -> bool:
        """ClassicGroupMember.hasSatisfiedHeartbeat (Java): new members never; members
        parked in JoinGroup or SyncGroup always."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync

    def matches(self, protocols: tuple[JoinGroupProtocol, ...]) -> bool:
        """ClassicGroupMember.matches: same names and metadata bytes, in the same order."""
        return protocols == self.protocols

    def metadata(self, protocol_name: str | None) -> bytes:
        for p in self.protocols:
            if p.name == protocol_name:
                return p.metadata
        return b""

    def vote(self, candidates: set[str]) -> str:
        """ClassicGroupMember.vote: the first of its own protocols that is a candidate.
        None is when a member lists a protocol name twice (the wire allows it: a
        JoinGroupRequestProtocolCollection is a multi-collection): ClassicGroup's
        supportedProtocols counts it twice, so it is never supported by exactly every
        member, and Kafka's vote throws IllegalArgumentException inside the join completion
        (initNextGeneration, after the generation was bumped). What the broker does after
        that failed write is not modelled: NotModelled (docs/deviations.md)."""
        for p in self.protocols:
            if p.name in candidates:
                return p.name
        raise NotModelled(
            f"member {self.member_id} supports none of the candidate protocols {sorted(candidates)} (a protocol "
            "listed twice by a member is counted twice): Kafka's ClassicGroupMember.vote throws "
            "IllegalArgumentException in the join completion, whose aftermath the reference does not model")


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.Empty
    previous_state: GroupState | None = None
    state_timestamp_ms: int = 0
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    #: group.instance.id -> member id
    static_members: dict[str, str] = field(default_factory=dict)
    #: KIP-394 pending member id -> its session deadline
    pending_members: dict[str, int] = field(default_factory=dict)
    #: members of the current generation that have not sent SyncGroup (insertion ordered)
    pending_sync_members: dict[str, None] = field(default_factory=dict)
    new_member_added: bool = False
    join_timer: JoinTimer | None = None
    sync_timer: SyncTimer | None = None
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    #: the last group record persisted (what a failover reloads)
    persisted: GroupSnapshot | None = None
    #: ClassicGroup.subscribedTopics: the topics the members subscribed to, computed when a
    #: generation starts and when the group is loaded (not on every membership change), or
    #: None when not known (computeSubscribedTopics); what OffsetDelete consults
    subscribed_topics: frozenset[str] | None = None
    #: an offset commit of the group is in ``__consumer_offsets`` since its last group
    #: tombstone: replaying the log recreates the group even when OffsetDelete has left it
    #: no offset and it has no group record (OffsetMetadataManager.replay makes a simple
    #: group for an offset commit record of an unknown group), so a failover reloads it
    offsets_in_log: bool = False

    # ------------------------------------------------------------------ queries
    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.is_awaiting_join)

    def has_all_members_joined(self) -> bool:
        """ClassicGroup.hasAllMembersJoined: everyone parked in JoinGroup and no pending id."""
        return (
            all(m.is_awaiting_join for m in self.members.values())
            and not self.pending_members
        )

    def rebalance_timeout_ms(self) -> int:
        """ClassicGroup.rebalanceTimeoutMs: the largest rebalance timeout of any member, and
        never below 0 (Kafka's maximum starts at 0: a member's negative one, which a JoinGroup
        v1+ may carry, makes the join and sync timers fall due at once, not in the past)."""
        return max([0, *(m.rebalance_timeout_ms for m in self.members.values())])

    def supported_protocol_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.members.values():
            for p in m.protocols:
                counts[p.name] = counts.get(p.name, 0) + 1
        return counts

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, c in self.supported_protocol_counts().items() if c == n}

    def supports_protocols(self, protocol_type: str, names: tuple[str, ...]) -> bool:
        """ClassicGroup.supportsProtocols (KAFKA-6005 for the Empty case)."""
        if self.state is GroupState.Empty:
            return protocol_type != "" and len(names) > 0
        counts = self.supported_protocol_counts()
        n = len(self.members)
        return self.protocol_type == protocol_type and any(counts.get(x, 0) == n for x in names)

    def protocol_votes(self) -> dict[str, int]:
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            v = m.vote(candidates)
            votes[v] = votes.get(v, 0) + 1
        return votes

    def select_protocol(self) -> str:
        """ClassicGroup.selectProtocol: most votes wins. Kafka breaks a tie by HashMap
        order; here the first protocol to reach the top count in member order wins."""
        if not self.members:
            raise AssertionError(f"cannot select a protocol for empty group {self.group_id}")
        votes = self.protocol_votes()
        best = max(votes.values())
        return next(name for name, c in votes.items() if c == best)

    def current_member_metadata(self) -> tuple[JoinGroupResponseMember, ...]:
        """ClassicGroup.currentClassicGroupMembers: what the leader receives."""
        return tuple(
            JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        )

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """ClassicGroup.isSubscribedToTopic: by the subscribed topics computed when the
        generation started; when those are unknown, a "consumer" group counts as
        subscribed to every topic, any other group to none."""
        if self.subscribed_topics is None:
            return self.protocol_type == CONSUMER_PROTOCOL_TYPE
        return topic in self.subscribed_topics


#: ConsumerProtocol.PROTOCOL_TYPE
CONSUMER_PROTOCOL_TYPE = "consumer"


def member_from(pm: PersistedMember) -> Member:
    """A member as a group record (or a converted consumer group) describes it: its whole
    protocol list and its assignment."""
    return Member(info=pm.info, rebalance_timeout_ms=pm.rebalance_timeout_ms,
                  session_timeout_ms=pm.session_timeout_ms, protocols=pm.protocols,
                  assignment=pm.assignment)


def compute_subscribed_topics(group: Group, protocol_name: str | None) -> frozenset[str] | None:
    """ClassicGroup.computeSubscribedTopics (group-coordinator/.../classic/ClassicGroup.java)
    for the members ``group`` has and the protocol ``protocol_name``: None unless the
    protocol type is "consumer"; no topic when there is no member; else the union of the
    members' subscribed topics, read with the consumer protocol's version 0 layout whatever
    version the metadata names (later versions only append fields), None when a member's metadata
    does not parse (Kafka catches the SchemaException) or no protocol is selected."""
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    if not group.members:
        return frozenset()
    if protocol_name is None:
        return None
    topics: set[str] = set()
    for m in group.members.values():
        metadata = m.metadata(protocol_name)
        got = _subscribed_topics(metadata) if type(metadata) is bytes else _parse_topics(metadata)
        if got is None:
            return None
        topics.update(got)
    return frozenset(topics)


def _parse_topics(metadata: bytes) -> frozenset[str] | None:
    """One member's subscribed topics as computeSubscribedTopics reads them (None: the
    metadata does not parse)."""
    reader = Reader(metadata)
    try:
        reader.int16("subscription version")  # read, not checked: parsed as version 0
        topics = frozenset(reader.string("topic") for _ in range(reader.array_length("topics")))
        reader.nullable_bytes("user data")
    except DecodeError:
        return None
    return topics


#: _parse_topics of each metadata met (a group's members send the same few again at every
#: rebalance, and the validator replays each generation twice: records and replay)
_subscribed_topics = lru_cache(maxsize=4096)(_parse_topics)
