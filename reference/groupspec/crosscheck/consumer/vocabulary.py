"""The abstraction function of the consumer protocol (KIP-848): reference state to the
spec's ``group`` (spec/ConsumerProtocol.tla), and back.

- :func:`abstract_group` maps a reference
  :class:`~groupspec.coordinator.consumer.group.ConsumerGroup` (or its absence: no
  heartbeat yet) to the spec's ``group`` record; :func:`abstract_request` and
  :func:`abstract_response` map ConsumerGroupHeartbeat and OffsetCommit messages to the
  spec's messages;
- :func:`concrete_group` and :func:`concrete_request` go the other way for the exhaustive
  direction, which checks ``abstract_group(concrete_group(s)) == s`` before using a state.

Values are the classic cross-check's canonical form (``Rec``, ``Fn``, frozensets; the
classic vocabulary module defines them and the TLC/TLA+ conversions, reused here).

Names: a spec member id ``m1`` is the reference member id ``"m1"`` (consumers generate
their own ids, ConsumerGroupHeartbeat v1, KIP-1082, as the spec's do); a consumer ``c1`` is
the client id; a connection ``(c, conn)`` is a request id. A spec partition stands for a
topic of its own (spec/ConsumerProtocol.tla, "Abstractions"): in the exhaustive direction
the reference's metadata image has one single-partition topic per spec partition, named
like it (``p1`` is topic ``p1``, partition 0); a simulator run's topics have several
partitions, and partition N of topic ``orders`` is the spec partition ``orders-N``. A
subscription (topic names) is the set of the subscribed topics' partitions.

What the abstraction leaves out, on purpose (the spec abstracts it):

- time: session deadlines, the rebalance timer's deadline (its member epoch is kept:
  the spec's ``rebalance_timer``), heartbeat intervals, rebalance timeouts;
- the metadata hash (the spec bumps the group epoch on a subscription change; with a fixed
  metadata image the reference's hash changes exactly then), the client id and host, the
  rack, the server assignor's name, static membership (the spec has dynamic members only),
  the order Kafka's member map iterates in (an arbitrary choice: the exhaustive direction
  tries every order), committed offsets;
- in a heartbeat response, the assignment when the reference omits it (null: "unchanged");
  the spec always answers the assignment, so the abstraction fills in the member's
  assignment after the step, which is what the client keeps;
- in a heartbeat request, the subscription when the reference client omits it (null:
  unchanged): the spec always sends it, so the abstraction fills in the member's current
  subscription;
- the answer to a leave (epoch -1): the spec's consumer has closed and its answer is not
  modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.consumer.group import ConsumerGroup, RebalanceTimer
from groupspec.coordinator.consumer.member import Assignment, ConsumerMember, assignment_of
from groupspec.coordinator.offsets import OFFSET_COMMIT_CONSUMER_PROTOCOL_MIN_VERSION
from groupspec.crosscheck.vocabulary import Fn, Rec, SpecValue, fn, rec
from groupspec.protocol import messages as msg
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_group_records import MemberState
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId

NO_MEMBER = "NoMember"
NO_CONSUMER = "NoConsumer"
GROUP_ID = "g"
#: far-away deadlines: the exhaustive direction fires timers explicitly
FAR_MS = 10**12
REBALANCE_MS = 30_000
#: the spec's reconciliation states are Kafka's MemberState names
_STATES = {s.name: s for s in MemberState}

Partition = tuple[TopicId, int]


@dataclass
class Names:
    """How one run names things: member ids, consumers, the metadata image (topic name ->
    partition count) and the request ids of connections (both directions share it)."""

    member_ids: tuple[str, ...]
    consumers: tuple[str, ...]
    #: topic name -> number of partitions (the reference's metadata image)
    topics: dict[str, int]
    #: request id -> (consumer, connection)
    connections: dict[int, tuple[str, int]] = field(default_factory=dict)

    # ----------------------------------------------------------- partitions
    def topic_id(self, topic: str) -> TopicId:
        return TopicId.for_name(topic)

    def metadata(self) -> list[TopicMetadata]:
        return [TopicMetadata(self.topic_id(t), t, n) for t, n in sorted(self.topics.items())]

    def partition_name(self, topic: str, index: int) -> str:
        """The spec's partition: a single-partition topic is named as the topic."""
        return topic if self.topics.get(topic) == 1 else f"{topic}-{index}"

    def _by_id(self) -> dict[TopicId, str]:
        return {self.topic_id(t): t for t in self.topics}

    def partitions(self) -> tuple[str, ...]:
        return tuple(self.partition_name(t, k) for t, n in sorted(self.topics.items())
                     for k in range(n))

    def of_topics(self, topics: Iterable[str]) -> frozenset[SpecValue]:
        """A subscription: every partition of the subscribed topics the image has."""
        return frozenset(self.partition_name(t, k) for t in topics
                         for k in range(self.topics.get(t, 0)))

    def topics_of(self, parts: Iterable[SpecValue]) -> tuple[str, ...]:
        """The topics a spec subscription names (each must be whole)."""
        out: set[str] = set()
        for p in parts:
            out.add(self.partition(str(p))[0])
        topics = tuple(sorted(out))
        if self.of_topics(topics) != frozenset(parts):
            raise ValueError(f"subscription {sorted(map(str, parts))} is not a set of whole topics")
        return topics

    def partition(self, name: str) -> tuple[str, int]:
        if self.topics.get(name) == 1:
            return name, 0
        topic, _, index = name.rpartition("-")
        if topic not in self.topics:
            raise ValueError(f"no topic for spec partition {name!r}")
        return topic, int(index)

    def abstract(self, a: Assignment) -> frozenset[SpecValue]:
        by_id = self._by_id()
        return frozenset(self.partition_name(by_id[t], p) for t, ps in a.items() for p in ps)

    def concrete(self, parts: Iterable[SpecValue]) -> dict[TopicId, frozenset[int]]:
        pairs = []
        for p in parts:
            topic, index = self.partition(str(p))
            pairs.append((self.topic_id(topic), (index,)))
        return assignment_of(pairs)

    def heartbeat_partitions(self, parts: Iterable[SpecValue]) -> tuple[HeartbeatTopicPartitions, ...]:
        a = self.concrete(parts)
        return tuple(HeartbeatTopicPartitions(t, tuple(sorted(ps)))
                     for t, ps in sorted(a.items(), key=lambda kv: int(kv[0])))

    def from_heartbeat(self, parts: Iterable[HeartbeatTopicPartitions]) -> frozenset[SpecValue]:
        return self.abstract(assignment_of((x.topic_id, x.partitions) for x in parts))

    # ----------------------------------------------------------- connections
    def request_id(self, consumer: str, conn: int) -> int:
        """A request id for a connection: a spec consumer has at most one heartbeat and one
        commit outstanding per connection, and they never share a step."""
        rid = 1 + self.consumers.index(consumer) * 1000 + conn
        self.connections[rid] = (consumer, conn)
        return rid


def member_value(m: ConsumerMember | None, timer: RebalanceTimer | None, names: Names) -> Rec:
    """The spec's member record (NewMember for a member not in the group)."""
    if m is None:
        return rec(member_epoch=0, previous_member_epoch=-1, state="STABLE",
                   assigned=frozenset(), pending_revocation=frozenset(),
                   subscription=frozenset(), rebalance_timer=-1)
    return rec(
        member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
        state=m.state.name, assigned=names.abstract(m.assigned),
        pending_revocation=names.abstract(m.pending_revocation),
        subscription=names.of_topics(m.subscribed_topic_names),
        rebalance_timer=-1 if timer is None else timer.member_epoch,
    )


def abstract_group(g: ConsumerGroup | None, names: Names) -> Rec:
    """The spec's ``group`` for a reference consumer group (None: no heartbeat yet)."""
    if g is None:
        g = ConsumerGroup(GROUP_ID)
    return rec(
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
        members=frozenset(g.members),
        member=fn((i, member_value(g.members.get(i), g.rebalance_timers.get(i), names))
                  for i in names.member_ids),
        target=fn((i, names.abstract(g.target.get(i, {}))) for i in names.member_ids),
    )


def message(kind: str, consumer: str, conn: int, **fields: SpecValue) -> Rec:
    """A spec message: every field at the default of the spec's ``Request``/``Response``."""
    base: dict[str, SpecValue] = dict(
        type=kind, client=consumer, conn=conn, member=NO_MEMBER, epoch=0, full=True,
        owned=frozenset(), subscription=frozenset(), error="NONE", assigned=frozenset())
    base.update(fields)
    return rec(**base)


def abstract_request(req: ConsumerGroupHeartbeatRequest | msg.OffsetCommitRequest,
                     consumer: str, conn: int, names: Names, group: ConsumerGroup | None) -> Rec:
    """The spec's request for a reference request on ``(consumer, conn)``; ``group`` is the
    coordinator's group before it (for the fields the reference client leaves null)."""
    if isinstance(req, ConsumerGroupHeartbeatRequest):
        member = group.members.get(req.member_id) if group is not None else None
        if req.subscribed_topic_names is not None:
            sub = names.of_topics(req.subscribed_topic_names)
        else:
            sub = names.of_topics(member.subscribed_topic_names) if member is not None else frozenset()
        full = req.topic_partitions is not None
        return message("HeartbeatRequest", consumer, conn, member=req.member_id or NO_MEMBER,
                       epoch=req.member_epoch, full=full,
                       owned=names.from_heartbeat(req.topic_partitions or ()),
                       subscription=sub if req.member_epoch >= 0 else frozenset())
    owned = frozenset(names.partition_name(p.topic, p.partition) for p in req.partitions)
    return message("OffsetCommitRequest", consumer, conn, member=req.member_id or NO_MEMBER,
                   epoch=req.generation_id, owned=owned)


def abstract_response(resp: ConsumerGroupHeartbeatResponse | msg.OffsetCommitResponse,
                      req: Rec, group_after: Rec, names: Names) -> Rec | None:
    """The spec's answer to the spec request ``req`` (None for a leave's: not modelled)."""
    consumer, conn = str(req["client"]), int(req["conn"])  # type: ignore[arg-type]
    member = str(req["member"])
    if isinstance(resp, ConsumerGroupHeartbeatResponse):
        epoch = req["epoch"]
        assert isinstance(epoch, int)
        if epoch < 0:
            return None
        if resp.error is not Error.NONE:
            return message("HeartbeatResponse", consumer, conn, member=member,
                           error=resp.error.name, epoch=0)
        if resp.assignment is not None:
            assigned: SpecValue = names.from_heartbeat(resp.assignment.topic_partitions)
        else:
            per = group_after["member"]
            assert isinstance(per, Fn)
            mem = per[member]
            assert isinstance(mem, Rec)
            assigned = mem["assigned"]
        return message("HeartbeatResponse", consumer, conn, member=member,
                       epoch=resp.member_epoch, assigned=assigned)
    errors = {p.error for p in resp.partitions}
    error = next(iter(errors)) if len(errors) == 1 else Error.UNKNOWN_SERVER_ERROR
    return message("OffsetCommitResponse", consumer, conn, member=member, epoch=req["epoch"],
                   error=error.name, assigned=req["owned"])


# ---------------------------------------------------------------- spec -> reference
def _s(v: SpecValue) -> frozenset[SpecValue]:
    assert isinstance(v, frozenset)
    return v


def _i(v: SpecValue) -> int:
    assert isinstance(v, int) and not isinstance(v, bool)
    return v


def concrete_group(s: Rec, names: Names, order: Sequence[str] | None = None,
                   metadata_hash: int = 0) -> ConsumerGroup | None:
    """A reference consumer group whose abstraction is ``s``, with Kafka's member map
    filled in ``order`` (its iteration order is an arbitrary choice of Kafka's); None for
    the spec's initial group (no heartbeat yet)."""
    members = _s(s["members"])
    per, target = s["member"], s["target"]
    assert isinstance(per, Fn) and isinstance(target, Fn)
    if _i(s["group_epoch"]) == 0 and not members:
        return None
    g = ConsumerGroup(GROUP_ID, group_epoch=_i(s["group_epoch"]), metadata_hash=metadata_hash,
                      assignment_epoch=_i(s["assignment_epoch"]))
    ordered = list(order) if order is not None else sorted(str(m) for m in members)
    for mid in ordered:
        v = per[mid]
        assert isinstance(v, Rec)
        m = ConsumerMember(
            member_id=mid, member_epoch=_i(v["member_epoch"]),
            previous_member_epoch=_i(v["previous_member_epoch"]),
            state=_STATES[str(v["state"])], rebalance_timeout_ms=REBALANCE_MS,
            client_id=mid, client_host="/127.0.0.1",
            subscribed_topic_names=frozenset(names.topics_of(_s(v["subscription"]))),
            assigned=names.concrete(_s(v["assigned"])),
            pending_revocation=names.concrete(_s(v["pending_revocation"])),
        )
        g.members[mid] = m
        g.member_order.put(mid)
        for t, ps in (*m.assigned.items(), *m.pending_revocation.items()):
            for p in ps:
                g.partition_epochs[(t, p)] = m.member_epoch
        g.target[mid] = names.concrete(_s(target[mid]))
        g.session_deadlines[mid] = FAR_MS
        if _i(v["rebalance_timer"]) != -1:
            g.rebalance_timers[mid] = RebalanceTimer(FAR_MS, _i(v["rebalance_timer"]))
    for other, parts in target.pairs:
        if other not in members and parts:
            g.target[str(other)] = names.concrete(_s(parts))
    return g


def concrete_request(m: Rec, names: Names) -> ConsumerGroupHeartbeatRequest | msg.OffsetCommitRequest:
    """The reference request for a spec request message (ConsumerGroupHeartbeat v1: the
    member id is the consumer's own; OffsetCommit v9: the member epoch)."""
    member = "" if m["member"] == NO_MEMBER else str(m["member"])
    epoch = _i(m["epoch"])
    owned = _s(m["owned"])
    if m["type"] == "HeartbeatRequest":
        return ConsumerGroupHeartbeatRequest(
            group_id=GROUP_ID, member_id=member, member_epoch=epoch,
            rebalance_timeout_ms=REBALANCE_MS if epoch >= 0 else -1,
            subscribed_topic_names=(names.topics_of(_s(m["subscription"])) if epoch >= 0
                                    else None),
            topic_partitions=names.heartbeat_partitions(owned) if m["full"] is True else None,
            client_id=str(m["client"]),
        )
    if m["type"] == "OffsetCommitRequest":
        parts = []
        for p in sorted(map(str, owned)):
            topic, index = names.partition(p)
            parts.append(msg.OffsetCommitPartition(topic, index, 0))
        return msg.OffsetCommitRequest(
            group_id=GROUP_ID, generation_id=epoch, member_id=member,
            partitions=tuple(parts), version=OFFSET_COMMIT_CONSUMER_PROTOCOL_MIN_VERSION)
    raise ValueError(f"not a request the coordinator handles: {m['type']}")
