"""Differential test of the reference consumer-group (KIP-848) coordinator against Kafka
4.1.2's own GroupCoordinatorShard (the JVM oracle's ``ConsumerGroupShard`` tool): one
operation sequence drives both, step by step, and every step is compared.

A sequence is abstract (:class:`Op` values: "client c1 heartbeats group g0 with a stale
epoch"); :class:`Differ` resolves each op against what the clients learnt from earlier
answers (their member ids, epochs, assignments), sends the same concrete request to Kafka
and to the reference (``Coordinator.handle`` / ``advance`` / ``failover``), and compares:

- each response field but throttle time: error and error message, member id, member
  epoch, heartbeat interval, the assignment (as a set: Kafka builds it from hash maps);
  OffsetCommit per-partition errors, OffsetFetch offsets (as a set), ConsumerGroupDescribe
  groups with their members (as a set);
- each group after the step: state, group epoch, target-assignment epoch, metadata hash
  (normalised, below), its members (epochs, state, subscription, assignor, rebalance
  timeout, client id and host, assigned and pending-revocation partitions), the target
  assignment, the static-member map, the timers' deadlines (session and rebalance
  timeouts) and the committed offsets;
- the records the step appended, in order, field by field (assignments as sets).

Normalised, because the representations legitimately differ:

- the group metadata hash: Kafka's is a Murmur3 digest, the reference's another digest of
  the same facts (docs/deviations.md); each side's values are numbered in the order they
  first appear (0 stays 0), so the same changes give the same numbers;
- member ids: the clients choose their own (ConsumerGroupHeartbeat v1, KIP-1082); Kafka
  draws a random UUID for a v0 join without one, and the reference's id source is fed the
  id Kafka drew in that step.

Not compared: the records of a failover step (the reference re-emits a group's facts as it
reloads them, Kafka replays its log and writes nothing).
"""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.consumer.group import ConsumerGroup, current_preferred_assignor
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.jvm import JvmOracle
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    DescribedAssignment,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from properties import classic_kafka_diff as classic_diff

TOOL = "ConsumerGroupShard"

GROUPS = ("g0", "g1")
#: (client id, group instance id): three dynamic members, two static ones, and a second
#: process with the first static member's instance id
CLIENTS: tuple[tuple[str, str | None], ...] = (
    ("c0", None), ("c1", None), ("c2", None), ("s3", "i3"), ("s4", "i4"), ("z3", "i3"))

#: the classic clients (Op("classic")): client id and instance id
#: (k1 shares its instance id with s3 and z3: a classic static member may replace a
#: consumer-protocol one, and the other way round)
CLASSIC_CLIENTS: tuple[tuple[str, str | None], ...] = (("k0", None), ("k1", "i3"))
#: their JoinGroup's session and rebalance timeouts
CLASSIC_SESSION_MS, CLASSIC_REBALANCE_MS = 10_000, 20_000

#: the instance id a client sends instead of its own (Op.other_instance), one no client
#: has: a static client moves to it (and may come back), a dynamic one becomes static
OTHER_INSTANCE = "i5"

#: the racks of the clients that have one (ConsumerGroupHeartbeat RackId)
CLIENT_RACKS = {0: "r0", 3: "r1", 4: "r0"}

#: the metadata image: name -> partitions (ids from the names)
TOPIC_PARTITIONS = {"t": 3, "u": 2, "v": 1}
TOPICS = tuple(TopicMetadata(TopicId.for_name(n), n, p) for n, p in TOPIC_PARTITIONS.items())

SESSION_MS = 45_000
HEARTBEAT_MS = 5_000
MAX_SIZE = 4

CONFIG = CoordinatorConfig(
    consumer_group_session_timeout_ms=SESSION_MS,
    consumer_group_heartbeat_interval_ms=HEARTBEAT_MS,
    consumer_group_max_size=MAX_SIZE,
    consumer_group_assignors=("uniform", "range"),
    offsets_retention_ms=180_000,
    offsets_retention_check_interval_ms=60_000,
    consumer_group_migration_policy="disabled",
)
KAFKA_CONFIG = {
    "group.consumer.session.timeout.ms": str(SESSION_MS),
    "group.consumer.heartbeat.interval.ms": str(HEARTBEAT_MS),
    "group.consumer.max.size": str(MAX_SIZE),
    "group.consumer.assignors": "uniform,range",
    # the policy under which every answer is modelled (a conversion is not:
    # docs/deviations.md)
    "group.consumer.migration.policy": CONFIG.consumer_group_migration_policy,
    "offsets.retention.check.interval.ms": str(CONFIG.offsets_retention_check_interval_ms),
    "offsets.retention.minutes": str(CONFIG.offsets_retention_ms // 60_000),
}

#: regular expressions a join or a change may subscribe with ("(" does not compile: RE2/J
#: and the reference answer INVALID_REGULAR_EXPRESSION)
REGEXES = ("t|u", "[tuv]", "x.*", "v", "(")

#: the metadata images an "image" step moves to (the first is the initial one): u grows to
#: 3 partitions, x is created with 2, both, t grows to 7; topics are never deleted or shrunk
IMAGES: tuple[dict[str, int], ...] = (
    TOPIC_PARTITIONS, {**TOPIC_PARTITIONS, "u": 3}, {**TOPIC_PARTITIONS, "x": 2}, {**TOPIC_PARTITIONS, "u": 3, "x": 2},
    {**TOPIC_PARTITIONS, "t": 7})


TOPIC_NAMES = {TopicId.for_name(n): n for image in IMAGES for n in image}


def _image(which: int) -> tuple[TopicMetadata, ...]:
    return tuple(TopicMetadata(TopicId.for_name(n), n, p) for n, p in IMAGES[which].items())


#: subscriptions a join or a change may carry ("x" is not in the first image)
SUBSCRIPTIONS: tuple[tuple[str, ...], ...] = (("t",), ("t", "u"), ("u",), ("t", "u", "v"), (), ("x",), ("t", "x"))


# ---------------------------------------------------------------------------- operations
@dataclass(frozen=True)
class Op:
    """An abstract step. ``who`` is a client index, ``group`` a group index; ``ids`` says
    which member id the client sends ("known", "fresh": a new one of its own, "empty",
    "bogus"); ``epoch`` which member epoch ("current", "stale", "future", "zero", "leave",
    "static_leave"); ``owned`` which owned partitions ("correct": its assignment,
    "previous": the one before, "wrong": all of topic t, "none": null, "empty")."""

    kind: str
    who: int = 0
    group: int = 0
    ids: str = "known"
    epoch: str = "current"
    owned: str = "correct"
    #: index into SUBSCRIPTIONS, or -1: the client's current subscription (None on a
    #: partial heartbeat)
    sub: int = -1
    full: bool = False
    assignor: str | None = None
    rebalance_ms: int = 30_000
    #: index into REGEXES (a regex subscription), -2: drop the regex (""), -1: unchanged
    regex: int = -1
    version: int = 1
    ms: int = 0
    what: str = ""
    #: the client sends another instance id than its own (OTHER_INSTANCE): a process
    #: restarted with another group.instance.id that keeps its member id
    other_instance: bool = False


_who = st.sampled_from([0, 0, 1, 1, 2, 3, 3, 4, 5])
_group = st.sampled_from([0, 0, 0, 1])
_ids = st.sampled_from(["known"] * 8 + ["fresh", "bogus"])
_epoch = st.sampled_from(["current"] * 6 + ["stale", "future"])
_owned = st.sampled_from(["correct"] * 4 + ["previous", "wrong", "none", "empty"])
_assignor = st.sampled_from([None, None, None, "uniform", "range"])

_other_instance = st.sampled_from([False, False, True])
_join = st.builds(
    lambda who, group, ids, sub, assignor, rebalance, version, other: Op(
        "join", who=who, group=group, ids=ids, epoch="zero", sub=sub, assignor=assignor,
        rebalance_ms=rebalance, version=version, full=True, other_instance=other),
    _who, _group, st.sampled_from(["known", "known", "fresh", "empty"]),
    st.sampled_from([0, 0, 0, 1, 1, 2, 3, 4, 5, 6]), _assignor,
    st.sampled_from([30_000, 30_000, 10_000, 60_000]), st.sampled_from([1, 1, 1, 0]), _other_instance,
)
_heartbeat = st.builds(
    lambda who, group, ids, epoch, owned, full: Op(
        "heartbeat", who=who, group=group, ids=ids, epoch=epoch, owned=owned, full=full),
    _who, _group, _ids, _epoch, _owned, st.booleans(),
)
#: a regex subscription (join or change) or dropping one; the resolution runs right after
#: the heartbeat that schedules it, on both sides
_regex = st.builds(
    lambda who, group, rx, join: Op("join" if join else "heartbeat", who=who, group=group, regex=rx,
                                    epoch="zero" if join else "current", full=join),
    _who, _group, st.sampled_from([0, 0, 1, 1, 2, 3, 4, -2]), st.booleans(),
)
_subscribe = st.builds(
    lambda who, group, sub, assignor: Op("heartbeat", who=who, group=group, sub=sub, assignor=assignor),
    _who, _group, st.sampled_from(range(len(SUBSCRIPTIONS))), _assignor,
)
_leave = st.builds(
    lambda who, group, ids, static, other: Op("leave", who=who, group=group, ids=ids,
                                              epoch="static_leave" if static else "leave",
                                              other_instance=other),
    _who, _group, st.sampled_from(["known"] * 4 + ["bogus"]), st.booleans(), _other_instance,
)
_advance = st.builds(lambda ms: Op("advance", ms=ms),
                     st.sampled_from([1, 100, 1_000, 5_000, 5_000, 10_000, 20_000, 30_000, 45_000, 60_000,
                                      300_000]))
#: OffsetCommit: v9 with the member epoch (current, stale, future, -1) or v8 (a consumer
#: group refuses it from a member: UNSUPPORTED_VERSION); metadata "", none or too long
_commit = st.builds(
    lambda who, group, ids, epoch, version, what: Op("commit", who=who, group=group, ids=ids, epoch=epoch,
                                                     version=version, what=what),
    _who, _group, st.sampled_from(["known"] * 4 + ["bogus", "empty"]),
    st.sampled_from(["current"] * 4 + ["stale", "future", "none"]), st.sampled_from([9, 9, 9, 8]),
    st.sampled_from(["short", "short", "none", "long"]),
)
#: TxnOffsetCommit (KIP-447): a transactional producer (1 or 2, in Op.ms' place) commits
#: with the member's id and epoch (current, stale: a zombie, none) or none at all; its
#: offsets stay pending on both sides (no transaction marker)
_txn_commit = st.builds(
    lambda who, group, ids, epoch, what, producer: Op("txn_commit", who=who, group=group, ids=ids, epoch=epoch,
                                                      what=what, ms=producer),
    _who, _group, st.sampled_from(["known"] * 4 + ["bogus", "empty"]),
    st.sampled_from(["current"] * 4 + ["stale", "future", "none"]),
    st.sampled_from(["short", "short", "none", "long"]), st.sampled_from([1, 2]),
)
#: OffsetFetch (v9 shape): all offsets or named ones, as the member (its id and epoch,
#: current or stale) or as an admin (no member, epoch -1)
_fetch = st.builds(
    lambda who, group, ids, epoch, what: Op("fetch", who=who, group=group, ids=ids, epoch=epoch, what=what),
    _who, _group, st.sampled_from(["known", "known", "bogus", "admin"]),
    st.sampled_from(["current", "current", "stale"]), st.sampled_from(["all", "some"]),
)
_describe = st.builds(lambda group, both: Op("describe", group=group, what="both" if both else "one"),
                      _group, st.booleans())
_delete = st.builds(lambda group, both: Op("delete", group=group, what="both" if both else "one"),
                    _group, st.booleans())
#: OffsetDelete (KIP-496) of: the committed partitions, one of a topic every client may
#: subscribe to and one never committed (kept in Op.ms' place)
_OFFSET_DELETES: tuple[tuple[tuple[str, int], ...], ...] = (
    (("t", 0),), (("u", 1),), (("t", 0), ("u", 1)), (("v", 0),), (("t", 5),))
_offset_delete = st.builds(lambda group, which: Op("offset_delete", group=group, ms=which),
                           _group, st.integers(0, len(_OFFSET_DELETES) - 1))
#: ListGroups with a states filter (Kafka lower-cases and trims them)
_LIST_FILTERS: tuple[tuple[str, ...], ...] = (
    (), ("Stable",), ("empty",), (" Reconciling ",), ("Assigning", "Stable"), ("Dead",), ("unknown",))
_list = st.builds(lambda which: Op("list", ms=which), st.integers(0, len(_LIST_FILTERS) - 1))
#: a new metadata image, never one that loses a topic or partition the current one has
_image_op = st.builds(lambda which: Op("image", ms=which), st.integers(1, len(IMAGES) - 1))
_next = st.builds(lambda who, group: Op("next", who=who, group=group), _who, _group)
_round = st.builds(lambda group: Op("round", group=group), _group)

#: a classic client's request to a group (KIP-848 mixed groups when the group is a consumer
#: group with members): ``who`` indexes CLASSIC_CLIENTS, ``what`` is "join" (with the member
#: id it was given, none, or a bogus one), "sync", "beat" or "commit" (its generation, or one
#: before; a commit's version is 8 when ``sub`` is 1, else 9), or "leave"; ``sub`` its
#: subscription
_classic_op = st.builds(
    lambda who, group, what, ids, epoch, sub: Op("classic", who=who, group=group, what=what, ids=ids,
                                                 epoch=epoch, sub=sub),
    st.sampled_from([0, 0, 1]), _group, st.sampled_from(["join", "join", "sync", "sync", "beat", "beat", "commit", "leave"]),
    st.sampled_from(["known"] * 6 + ["empty", "bogus"]), st.sampled_from(["current"] * 5 + ["stale"]),
    st.sampled_from([0, 0, 1, 2]),
)

_BY_KIND: dict[str, st.SearchStrategy[Op]] = {
    "next": _next, "round": _round, "advance": _advance, "join": _join, "heartbeat": _heartbeat,
    "subscribe": _subscribe, "leave": _leave, "failover": st.just(Op("failover")),
    "commit": _commit, "txn_commit": _txn_commit, "fetch": _fetch, "describe": _describe, "list": _list, "image": _image_op,
    "delete": _delete, "regex": _regex, "offset_delete": _offset_delete, "classic": _classic_op,
}
_WEIGHTS = {"next": 6, "round": 6, "advance": 4, "join": 2, "heartbeat": 2, "subscribe": 1, "leave": 1,
            "failover": 1, "commit": 2, "txn_commit": 1, "fetch": 1, "describe": 1, "list": 1, "image": 1, "delete": 1, "regex": 2,
            "offset_delete": 1, "classic": 3}
OPS = st.sampled_from([k for k, n in _WEIGHTS.items() for _ in range(n)]).flatmap(_BY_KIND.__getitem__)
SEQUENCES = st.lists(OPS, min_size=10, max_size=40)

#: a classic group first (two classic clients join group g0, its initial rebalance delay
#: passes, they may sync), then any sequence: for the online upgrade, run with the policy
#: "upgrade" (a consumer-protocol member joining converts the classic group)
_CLASSIC_START = [Op("classic", who=0, what="join", ids="empty"), Op("classic", who=0, what="join"),
                  Op("classic", who=1, what="join")]
UPGRADE_SEQUENCES = st.builds(
    lambda wait, syncs, rest: [*_CLASSIC_START, Op("advance", ms=wait), *syncs, *rest],
    # in its first join phase (no protocol yet: the upgrade fails), or past the initial
    # rebalance delay, extended once by the second member (generation 1)
    st.sampled_from([100, 6_100, 6_100, 9_100]),
    st.lists(st.builds(lambda who: Op("classic", who=who, what="sync"), st.sampled_from([0, 1])),
             min_size=0, max_size=2),
    st.lists(OPS, min_size=5, max_size=25),
)

#: a mixed group first (the classic group of UPGRADE_SEQUENCES past its first join phase,
#: converted by a consumer-protocol member's join), then that member leaves (left alone or
#: by a static member's leave, or its session expiring): with a policy allowing downgrades
#: ("bidirectional"), the group goes back to a classic group; then any sequence
DOWNGRADE_SEQUENCES = st.builds(
    lambda syncs, how, rest: [*_CLASSIC_START, Op("advance", ms=6_100), *syncs,
                              Op("join", who=0, epoch="zero", full=True), *how, *rest],
    st.lists(st.builds(lambda who: Op("classic", who=who, what="sync"), st.sampled_from([0, 1])), max_size=2),
    st.sampled_from([[Op("leave", who=0, epoch="leave")], [Op("advance", ms=45_000)],
                     [Op("next", who=0), Op("leave", who=0, epoch="leave")]]),
    st.lists(OPS, min_size=3, max_size=20),
)


# ---------------------------------------------------------------------------- clients
Parts = tuple[tuple[str, tuple[int, ...]], ...]


@dataclass
class Seen:
    """What one client knows of one group, from the answers it got."""

    member_id: str = ""
    epoch: int = 0
    #: its assignment (the last one received) and the one before
    owned: Parts = ()
    previous: Parts = ()
    subscription: tuple[str, ...] = ("t",)
    regex: str | None = None
    joined: bool = False


class Mismatch(AssertionError):
    pass


def _parts_json(parts: Iterable[HeartbeatTopicPartitions]) -> list[list[Any]]:
    out: dict[str, set[int]] = {}
    for tp in parts:
        if tp.partitions:
            out.setdefault(str(tp.topic_id), set()).update(tp.partitions)
    return [[t, sorted(ps)] for t, ps in sorted(out.items())]


def _assignment_json(a: Any) -> list[list[Any]]:
    """An assignment (topic id -> partitions) as the Java tool renders one."""
    return [[str(t), sorted(ps)] for t, ps in sorted(((str(t), ps) for t, ps in a.items() if ps))]


def _record_parts(parts: Iterable[cr.RecordTopicPartitions]) -> list[list[Any]]:
    out: dict[str, set[int]] = {}
    for tp in parts:
        if tp.partitions:
            out.setdefault(str(tp.topic_id), set()).update(tp.partitions)
    return [[t, sorted(ps)] for t, ps in sorted(out.items())]


class Hashes:
    """Numbers a side's metadata hashes in the order they first appear (0 stays 0)."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {0: 0}

    def __call__(self, h: int) -> int:
        if h not in self.seen:
            self.seen[h] = len(self.seen)
        return self.seen[h]


@dataclass
class Differ:
    jvm: JvmOracle
    #: the server assignors' order on both sides: the first is the default of a group whose
    #: members name none ("uniform,range", Kafka's default, or "range,uniform")
    assignors: tuple[str, ...] = ("uniform", "range")
    #: group.consumer.migration.policy on both sides ("upgrade": classic groups with members
    #: are converted when a consumer-protocol member joins; "disabled": refused)
    policy: str = "disabled"
    ref: Coordinator = field(init=False)
    now: int = 0
    rid: int = 0
    seen: dict[tuple[int, int], Seen] = field(default_factory=dict)
    _fresh: list[str] = field(default_factory=list)
    _fallback: int = 0
    _ids: int = 0
    sent: dict[int, Op] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    k_hash: Hashes = field(default_factory=Hashes)
    r_hash: Hashes = field(default_factory=Hashes)
    #: (classic client, group) -> (its member id, its generation), from the answers it got
    classic_seen: dict[tuple[int, int], tuple[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ref = Coordinator(dataclasses.replace(CONFIG, consumer_group_assignors=self.assignors,
                                                   consumer_group_migration_policy=self.policy))
        self.ref._consumer_member_ids = self._next_member_id
        # a classic group's member ids (clientId-UUID): the one Kafka drew as well
        self.ref.member_ids = lambda client_id, instance_id: self._next_member_id()
        # the image's version is Kafka's lastContainedOffset: 1, then one more per new image
        self.ref.set_topics(TOPICS, version=1)
        self.jvm.call(TOOL, {"action": "reset", "config": {**KAFKA_CONFIG, "group.consumer.assignors": ",".join(self.assignors),
                                                           "group.consumer.migration.policy": self.policy},
                             "topics": [[t.name, str(t.topic_id), t.num_partitions] for t in TOPICS]})

    def _next_member_id(self) -> str:
        """The reference's member-id source for a v0 join without one: the id Kafka drew."""
        if self._fresh:
            return self._fresh.pop(0)
        self._fallback += 1
        return f"reference-only-{self._fallback}"

    # ------------------------------------------------------------------ one step
    def run(self, ops: list[Op]) -> int:
        for op in ops:
            self.step(op)
        return len(ops)

    def step(self, op: Op) -> None:
        if op.kind == "round":
            for who in range(len(CLIENTS)):
                seen = self.seen.get((who, op.group))
                if seen is not None and seen.joined:
                    self.step(Op("next", who=who, group=op.group))
            return
        if op.kind == "classic":
            self.classic(*self._classic_request(op), op)
            return
        wire: dict[str, Any] = {}
        if op.kind == "failover":
            step = CONFIG.offsets_retention_check_interval_ms
            if self.now % step:
                # Kafka restarts the offset-expiry cadence when a shard loads, the reference
                # keeps it (docs/deviations.md, "The offset-expiry check cadence")
                self.step(Op("advance", ms=step - self.now % step))
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {"kind": "failover"}})
            self.log.append(f"t={self.now} failover")
            out = self.ref.failover(self.now)
        elif op.kind == "image":
            have = {t.name: t.num_partitions for t in self.ref.state.topics.values()}
            new = _image(op.ms)
            if any(have.get(t.name, 0) > t.num_partitions for t in new) or set(have) - {t.name for t in new}:
                # only growth: merge what is there with the chosen image
                new = _image_merge(have, IMAGES[op.ms])
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {
                "kind": "image", "topics": [[t.name, str(t.topic_id), t.num_partitions] for t in new]}})
            self.log.append(f"t={self.now} image {[(t.name, t.num_partitions) for t in new]}")
            self.ref.set_topics(new, version=self.ref.state.metadata_version + 1)
            out = Output()
        elif op.kind == "regex":
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {"kind": "regex"}})
            self.log.append(f"t={self.now} regex resolutions")
            out = self.ref.complete_regex_resolutions(self.now)
        elif op.kind == "advance":
            self.now += op.ms
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {"kind": "advance", "to": self.now}})
            self.log.append(f"t={self.now} advance")
            out = self.ref.advance(self.now)
        else:
            if op.kind == "next":
                op = self._natural(op)
            elif op.kind == "heartbeat" and op.epoch == "current" and op.ids == "known" and not (
                    self.seen.get((op.who, op.group)) or Seen()).joined:
                # a client that is not in the group joins rather than heartbeating at epoch 0
                # with a partial request (INVALID_REQUEST, the service's check, every time)
                op = self._natural(op)
            self.rid += 1
            wire, request = self._request(op, self.rid)
            self.sent[self.rid] = op
            self.log.append(f"t={self.now} #{self.rid} {wire}")
            kafka = self.jvm.call(TOOL, {"action": "op", "op": wire})
            self._fresh = list(kafka["ids"])
            out = self.ref.handle(self.rid, request, self.now)
            self._fresh = []
        self._compare(op, wire, kafka, out)

    def classic(self, wire: dict[str, Any], request: m.Request, op: Op | None = None) -> Any:
        """A classic request (``wire``: a "classic_join", "classic_sync", "classic_heartbeat"
        or "classic_leave" op of the tool) sent to both sides and compared as every step is;
        the reference's answer. A member id Kafka draws for a JoinGroup without one is the
        one the reference gives."""
        self.rid += 1
        op = op or Op("classic")
        self.sent[self.rid] = op
        self.log.append(f"t={self.now} #{self.rid} {wire}")
        kafka = self.jvm.call(TOOL, {"action": "op", "op": {"rid": self.rid, **wire}})
        drawn = [resp["member_id"] for rid, resp in kafka["completed"]
                 if rid == self.rid and wire["kind"] == "classic_join" and wire.get("member_id") == ""
                 and resp.get("member_id") and resp["member_id"] not in kafka["ids"]]
        self._fresh = list(kafka["ids"]) + drawn
        out = self.ref.handle(self.rid, request, self.now)
        self._fresh = []
        self._compare(op, wire, kafka, out)
        return out.response_to(self.rid)

    def _classic_request(self, op: Op) -> tuple[dict[str, Any], m.Request]:
        """Op("classic"): the tool's op and the reference's request."""
        client_id, instance = CLASSIC_CLIENTS[op.who]
        gid = GROUPS[op.group]
        known, generation = self.classic_seen.get((op.who, op.group), ("", -1))
        mid = {"known": known, "empty": "", "bogus": f"{client_id}-bogus"}[op.ids]
        if op.epoch == "stale":
            generation -= 1
        if op.what == "join":
            cg = self.ref.state.consumer_groups.get(gid)
            if cg is not None and not cg.members:
                # a member id to an empty consumer group: Kafka drops the group in memory only,
                # the reference keeps it (docs/deviations.md, mixed groups): not compared
                mid = ""
            meta = Subscription(SUBSCRIPTIONS[op.sub] or ("t",)).encode()
            wire = {"kind": "classic_join", "group": gid, "member_id": mid, "group_instance_id": instance,
                    "protocol_type": "consumer", "session_timeout_ms": CLASSIC_SESSION_MS,
                    "rebalance_timeout_ms": CLASSIC_REBALANCE_MS,
                    "protocols": [["range", base64.b64encode(meta).decode()]], "version": 9,
                    "client_id": client_id, "client_host": "/127.0.0.1"}
            return wire, m.JoinGroupRequest(
                group_id=gid, member_id=mid, group_instance_id=instance, protocol_type="consumer",
                protocols=(m.JoinGroupProtocol("range", meta),), session_timeout_ms=CLASSIC_SESSION_MS,
                rebalance_timeout_ms=CLASSIC_REBALANCE_MS, client_id=client_id, client_host="/127.0.0.1",
                version=9)
        if op.what == "sync":
            wire = {"kind": "classic_sync", "group": gid, "generation_id": generation, "member_id": mid,
                    "group_instance_id": instance, "protocol_type": "consumer", "protocol_name": "range"}
            return wire, m.SyncGroupRequest(group_id=gid, generation_id=generation, member_id=mid,
                                            group_instance_id=instance, protocol_type="consumer",
                                            protocol_name="range")
        if op.what == "beat":
            wire = {"kind": "classic_heartbeat", "group": gid, "generation_id": generation, "member_id": mid,
                    "group_instance_id": instance}
            return wire, m.HeartbeatRequest(group_id=gid, generation_id=generation, member_id=mid,
                                            group_instance_id=instance)
        if op.what == "commit":
            # a classic member of a consumer group commits as a classic client, with its
            # generation (its member epoch) and any version (ConsumerGroup.validateOffsetCommit)
            version = 8 if op.sub == 1 else 9
            parts: list[list[Any]] = [["t", 0, 7, "m"]]
            wire = {"kind": "commit", "group": gid, "generation_id": generation, "member_id": mid,
                    "group_instance_id": instance, "version": version, "partitions": parts}
            return wire, m.OffsetCommitRequest(
                group_id=gid, generation_id=generation, member_id=mid, group_instance_id=instance,
                version=version, partitions=tuple(m.OffsetCommitPartition(t, p, o, md) for t, p, o, md in parts))
        leave: dict[str, Any] = {"kind": "classic_leave", "group": gid, "members": [[mid, instance]]}
        return leave, m.LeaveGroupRequest(group_id=gid, members=(m.MemberIdentity(mid, instance),))

    def _compare(self, op: Op, wire: dict[str, Any], kafka: dict[str, Any], out: Output) -> None:
        """One step's answers, groups and records on both sides: a Mismatch if they differ."""
        generated = wire.get("kind") == "heartbeat" and wire["member_id"] == ""
        k_resp = sorted((rid, _canon(resp, generated)) for rid, resp in kafka["completed"])
        r_resp = sorted((rid, _canon(_ref_json(resp, self.ref.state.consumer_groups), generated))
                        for rid, resp in out.responses)
        # group ids in one order on both sides: the hashes are numbered as they appear
        k_groups = {g: self._kafka_group(kafka["groups"][g]) for g in sorted(kafka["groups"])}
        r_groups = self._ref_groups()
        if op.kind == "failover":
            k_recs: list[Any] = []
            r_recs: list[Any] = []
        else:
            k_recs = [self._kafka_record(x) for x in kafka["records"]]
            r_recs = [y for x in out.records for y in self._ref_records(x)]
            if op.kind in ("advance", "delete", "offset_delete"):
                # timers and the periodic cleanup (or a DeleteGroups) of several groups in one
                # step: Kafka walks its groups in hash-map order, so the records are compared
                # group by group
                k_recs, r_recs = _by_group(k_recs), _by_group(r_recs)
        self.log.append(f"    -> {k_resp}")
        if k_resp != r_resp or k_groups != r_groups or k_recs != r_recs:
            story = "\n".join(self.log[:-1])
            raise Mismatch(
                f"{story}\nDIFFERS at t={self.now} {op}\n  responses kafka:     {k_resp}\n  responses reference: {r_resp}"
                f"\n  groups kafka:     {k_groups}\n  groups reference: {r_groups}"
                f"\n  records kafka:     {k_recs}\n  records reference: {r_recs}"
            )
        for rid, resp in kafka["completed"]:
            self._learn(rid, resp)
        k_tasks = sorted(kafka["pending_tasks"])
        r_tasks = sorted(f"{g}-regex" for g in self.ref.pending_regex_resolutions())
        if k_tasks != r_tasks:
            raise Mismatch(f"{chr(10).join(self.log)}\nDIFFERS at t={self.now} {op}: regex resolutions pending "
                           f"kafka {k_tasks}, reference {r_tasks}")
        if k_tasks and op.kind != "regex":
            # the executor runs the resolution a few milliseconds later: here at once
            self.step(Op("regex"))

    # ------------------------------------------------------------------ state
    def _kafka_group(self, s: dict[str, Any]) -> tuple[Any, ...]:
        members = tuple(sorted(
            (mid, d["instance_id"], d["rack_id"], d["member_epoch"], d["previous_member_epoch"], d["state"],
             d["rebalance_timeout_ms"], d["client_id"], d["client_host"], tuple(d["subscribed_topic_names"]),
             d["subscribed_topic_regex"], d["server_assignor"], _tupled(d["assigned"]),
             _tupled(d["pending_revocation"]), _tupled(d.get("classic")))
            for mid, d in s["members"].items()))
        return (s["state"], s["group_epoch"], s["assignment_epoch"], self.k_hash(s["metadata_hash"]),
                s["preferred_assignor"], members,
                tuple(sorted((mid, _tupled(a)) for mid, a in s["target"].items())),
                tuple(sorted(s["static_members"].items())),
                tuple(tuple(t) for t in s["timers"] if t[1] in s["members"]), tuple(sorted(s["offsets"].items())),
                tuple((rx, (tuple(v[0]), v[1], v[2])) for rx, v in sorted(s["resolved_regexes"].items())))

    def _ref_groups(self) -> dict[str, tuple[Any, ...]]:
        out: dict[str, tuple[Any, ...]] = {}
        for gid in sorted(self.ref.state.consumer_groups):
            out[gid] = self._ref_group(self.ref.state.consumer_groups[gid])
        return out

    def _ref_group(self, g: ConsumerGroup) -> tuple[Any, ...]:
        members = tuple(sorted(
            (mid, x.instance_id, x.rack_id, x.member_epoch, x.previous_member_epoch, x.state.value,
             x.rebalance_timeout_ms, x.client_id, x.client_host, tuple(sorted(x.subscribed_topic_names)),
             x.subscribed_topic_regex, x.server_assignor, _tupled(_assignment_json(x.assigned)),
             _tupled(_assignment_json(x.pending_revocation)),
             None if x.classic is None else _classic(x.classic))
            for mid, x in g.members.items()))
        timers = [("session", mid, d) for mid, d in g.session_deadlines.items()]
        timers += [("rebalance", mid, t.deadline_ms) for mid, t in g.rebalance_timers.items()]
        timers += [("join", mid, d) for mid, d in g.classic_join_deadlines.items()]
        timers += [("sync", mid, d) for mid, d in g.classic_sync_deadlines.items()]
        return (g.state.value, g.group_epoch, g.assignment_epoch, self.r_hash(g.metadata_hash),
                current_preferred_assignor(g), members,
                tuple(sorted((mid, _tupled(_assignment_json(a))) for mid, a in g.target.items())),
                tuple(sorted(g.static_members.items())),
                # timers of members the group has (Kafka leaves a departed member's timers
                # running after a downgrade; they find no member when they fire)
                tuple(sorted(t for t in timers if t[1] in g.members)),
                tuple(sorted((f"{t}-{p}", c.committed_offset) for (t, p), c in g.offsets.items())),
                tuple((rx, (tuple(sorted(rr.topics)), rr.version, rr.timestamp_ms))
                      for rx, rr in sorted(g.resolved_regexes.items())))

    def _kafka_record(self, x: list[Any]) -> tuple[Any, ...]:
        if x[0] == "epoch" and x[2] is not None:
            return ("epoch", x[1], (x[2][0], self.k_hash(x[2][1])))
        if x[0] == "subscription" and x[3] is not None:
            return ("subscription", x[1], x[2], tuple(sorted(
                (k, _tupled(v)) for k, v in x[3].items())))
        return tuple(_tupled(x))

    def _ref_records(self, x: r.Record) -> list[tuple[Any, ...]]:
        if not x.persisted:
            return []
        if isinstance(x, r.OffsetsDeleted):
            return [("offset", x.group_id, t, p, None) for t, p in x.partitions]
        # a classic group's record (a simple group made by a commit with epoch -1, deleted
        # when a consumer group takes its id): compared as value or tombstone only
        if isinstance(x, r.GroupTombstoned):
            return [("classic", x.group_id, "tombstone")]
        if isinstance(x, r.GroupMetadataPersisted):
            return [("classic", x.group_id, "value")]
        return [self._ref_record(x)]

    def _ref_record(self, x: r.Record) -> tuple[Any, ...]:
        gid = x.group_id
        match x:
            case cr.ConsumerGroupEpochRecord(value=v):
                return ("epoch", gid, None if v is None else (v.epoch, self.r_hash(v.metadata_hash)))
            case cr.ConsumerGroupMemberSubscriptionRecord(member_id=mid, value=v):
                if v is None:
                    return ("subscription", gid, mid, None)
                d = {"instance_id": v.instance_id, "rack_id": v.rack_id, "client_id": v.client_id,
                     "client_host": v.client_host, "subscribed_topic_names": tuple(sorted(v.subscribed_topic_names)),
                     "subscribed_topic_regex": v.subscribed_topic_regex,
                     "rebalance_timeout_ms": v.rebalance_timeout_ms, "server_assignor": v.server_assignor}
                if v.classic_member_metadata is not None:
                    d["classic"] = _classic(v.classic_member_metadata)
                return ("subscription", gid, mid, tuple(sorted(d.items())))
            case cr.ConsumerGroupTargetAssignmentRecord(member_id=mid, value=v):
                return ("target", gid, mid, None if v is None else _tupled(_record_parts(v.topic_partitions)))
            case cr.ConsumerGroupTargetAssignmentEpochRecord(value=v):
                return ("target_epoch", gid, None if v is None else v.assignment_epoch)
            case cr.ConsumerGroupSubscriptionMetadataRecord(value=v):
                return ("subscription_metadata", gid, None if v is None else "value")
            case cr.ConsumerGroupCurrentAssignmentRecord(member_id=mid, value=v):
                if v is None:
                    return ("current", gid, mid, None)
                return ("current", gid, mid, (v.member_epoch, v.previous_member_epoch, v.state.value,
                                              _tupled(_record_parts(v.assigned_partitions)),
                                              _tupled(_record_parts(v.partitions_pending_revocation))))
            case cr.ConsumerGroupRegularExpressionRecord(regular_expression=rx, value=v):
                return ("regex", gid, rx, None if v is None else (tuple(sorted(v.topics)), v.version, v.timestamp))
            case r.OffsetCommitted():
                return ("offset", gid, x.topic, x.partition,
                        (x.committed_offset, x.metadata, x.commit_timestamp_ms))
        return (type(x).__name__, gid)

    # ------------------------------------------------------------------ requests
    def _natural(self, op: Op) -> Op:
        """The step a well-behaved client takes next."""
        seen = self.seen.setdefault((op.who, op.group), Seen())
        if not seen.joined:
            return Op("join", who=op.who, group=op.group, epoch="zero", full=True,
                      sub=SUBSCRIPTIONS.index(seen.subscription) if seen.subscription in SUBSCRIPTIONS else 0)
        return Op("heartbeat", who=op.who, group=op.group)

    def _new_id(self, who: int) -> str:
        self._ids += 1
        return f"{CLIENTS[who][0]}-member-{self._ids:04d}"

    def _request(self, op: Op, rid: int) -> tuple[dict[str, Any], Any]:
        client_id, instance = CLIENTS[op.who]
        if op.other_instance:
            instance = OTHER_INSTANCE
        gid = GROUPS[op.group]
        seen = self.seen.setdefault((op.who, op.group), Seen())
        if op.kind in ("commit", "txn_commit", "fetch", "describe", "list", "delete", "offset_delete"):
            return self._other_request(op, rid, seen)
        if op.ids == "fresh" or (op.ids == "known" and not seen.member_id and op.version >= 1):
            seen.member_id = self._new_id(op.who)
        mid = {"known": seen.member_id, "fresh": seen.member_id, "empty": "",
               "bogus": f"{client_id}-bogus"}[op.ids]
        version = op.version
        if op.kind == "join" and op.ids == "empty":
            version = 0
        epoch = {"current": seen.epoch, "stale": seen.epoch - 1, "future": seen.epoch + 1, "zero": 0,
                 "leave": -1, "static_leave": -2}[op.epoch]
        if op.kind == "leave" and instance is None:
            epoch = -1
        sub: tuple[str, ...] | None = None
        regex: str | None = None
        if op.regex >= 0:
            regex = seen.regex = REGEXES[op.regex]
        elif op.regex == -2:
            regex, seen.regex = "", None
            sub = seen.subscription
        elif op.sub >= 0:
            sub = SUBSCRIPTIONS[op.sub]
            seen.subscription = sub
        elif op.full or op.kind == "join":
            if seen.regex is not None:
                regex = seen.regex
            else:
                sub = seen.subscription
        if regex is not None:
            version = 1  # v0 has no regex field
        owned: Parts | None
        if op.kind == "join" or epoch < 0:
            owned = () if op.kind == "join" else None
        else:
            owned = {"correct": seen.owned, "previous": seen.previous, "wrong": (("t", (0, 1, 2)),),
                     "none": None, "empty": ()}[op.owned]
            if op.owned == "correct" and not op.full and op.sub < 0:
                # a client sends its owned partitions only when they changed (or on a full
                # request): here every heartbeat sends them, as the current clients do
                pass
        rebalance = op.rebalance_ms if (op.kind == "join" or op.full) else -1
        # a client's rack (some have one) goes with its full requests; the image has no
        # racks (4.1's assignors do not read them; they enter only the metadata hash)
        rack = CLIENT_RACKS.get(op.who) if (op.kind == "join" or op.full) else None
        wire = {"rid": rid, "kind": "heartbeat", "group": gid, "member_id": mid, "member_epoch": epoch,
                "instance_id": instance, "rack_id": rack, "rebalance_timeout_ms": rebalance,
                "subscribed_topic_names": None if sub is None else list(sub),
                "subscribed_topic_regex": regex, "server_assignor": op.assignor,
                "topic_partitions": None if owned is None else [
                    [str(TopicId.for_name(t)), list(ps)] for t, ps in owned],
                "version": version, "client_id": client_id}
        req = ConsumerGroupHeartbeatRequest(
            group_id=gid, member_id=mid, member_epoch=epoch, instance_id=instance, rack_id=rack,
            rebalance_timeout_ms=rebalance, subscribed_topic_names=sub, subscribed_topic_regex=regex,
            server_assignor=op.assignor,
            topic_partitions=None if owned is None else tuple(
                HeartbeatTopicPartitions(TopicId.for_name(t), ps) for t, ps in owned),
            version=version, client_id=client_id, client_host="/127.0.0.1")
        return wire, req

    def _other_request(self, op: Op, rid: int, seen: Seen) -> tuple[dict[str, Any], Any]:
        """OffsetCommit, OffsetFetch, ConsumerGroupDescribe and ListGroups."""
        client_id, instance = CLIENTS[op.who]
        gid = GROUPS[op.group]
        if op.kind == "describe":
            described = list(GROUPS) if op.what == "both" else [gid]
            return ({"rid": rid, "kind": "describe", "groups": described},
                    ConsumerGroupDescribeRequest(group_ids=tuple(described)))
        if op.kind == "offset_delete":
            named = _OFFSET_DELETES[op.ms]
            return ({"rid": rid, "kind": "offset_delete", "group": gid, "partitions": [list(x) for x in named]},
                    m.OffsetDeleteRequest(group_id=gid, partitions=named))
        if op.kind == "delete":
            deleted = list(GROUPS) if op.what == "both" else [gid]
            return {"rid": rid, "kind": "delete", "groups": deleted}, m.DeleteGroupsRequest(groups_names=tuple(deleted))
        if op.kind == "list":
            states = _LIST_FILTERS[op.ms]
            return {"rid": rid, "kind": "list", "states": list(states)}, m.ListGroupsRequest(states_filter=states)
        mid = {"known": seen.member_id, "bogus": f"{client_id}-bogus", "empty": "", "admin": ""}[op.ids]
        epoch = {"current": seen.epoch, "stale": seen.epoch - 1, "future": seen.epoch + 1, "none": -1}[op.epoch]
        if op.kind == "commit":
            meta = {"short": "m", "none": None, "long": "x" * (CONFIG.offset_metadata_max_bytes + 1)}[op.what]
            # a committed leader epoch on the first partition (KIP-320), none on the second
            parts: list[list[Any]] = [["t", 0, 10 * rid, meta, rid % 4 - 1], ["u", 1, 10 * rid + 1, "", -1]]
            wire = {"rid": rid, "kind": "commit", "group": gid, "generation_id": epoch, "member_id": mid,
                    "group_instance_id": instance, "version": op.version, "partitions": parts}
            return wire, m.OffsetCommitRequest(
                group_id=gid, generation_id=epoch, member_id=mid, group_instance_id=instance, version=op.version,
                partitions=tuple(m.OffsetCommitPartition(t, p, o, md, le) for t, p, o, md, le in parts))
        if op.kind == "txn_commit":
            meta = {"short": "m", "none": None, "long": "x" * (CONFIG.offset_metadata_max_bytes + 1)}[op.what]
            txn_parts: list[list[Any]] = [["t", 0, 10 * rid, meta, 3], ["v", 0, 10 * rid + 2, "", -1]]
            wire = {"rid": rid, "kind": "txn_commit", "group": gid, "generation_id": epoch, "member_id": mid,
                    "group_instance_id": instance, "transactional_id": f"tx-{op.ms}", "producer_id": op.ms,
                    "producer_epoch": 0, "partitions": txn_parts}
            return wire, m.TxnOffsetCommitRequest(
                group_id=gid, transactional_id=f"tx-{op.ms}", producer_id=op.ms, producer_epoch=0,
                generation_id=epoch, member_id=mid, group_instance_id=instance,
                partitions=tuple(m.TxnOffsetCommitPartition(t, p, o, md, le) for t, p, o, md, le in txn_parts))
        wanted = None if op.what == "all" else [("t", 0), ("u", 1), ("v", 0)]
        member = None if op.ids == "admin" else mid
        if op.ids == "admin":
            epoch = -1
        wire = {"rid": rid, "kind": "fetch", "group": gid, "member_id": member, "member_epoch": epoch,
                "partitions": None if wanted is None else [list(x) for x in wanted]}
        return wire, m.OffsetFetchRequest(group_id=gid, partitions=None if wanted is None else tuple(wanted),
                                          member_id=member, member_epoch=epoch)

    def _learn(self, rid: int, resp: dict[str, Any]) -> None:
        op = self.sent[rid]
        if op.kind == "classic":
            # a JoinGroup's answer names the member id (MEMBER_ID_REQUIRED too) and the
            # generation; a fencing error makes the client start over
            key = (op.who, op.group)
            if "generation_id" in resp and resp["error"] in (Error.NONE.value, Error.MEMBER_ID_REQUIRED.value):
                self.classic_seen[key] = (resp["member_id"], resp["generation_id"])
            elif resp.get("error") in (Error.UNKNOWN_MEMBER_ID.value, Error.FENCED_INSTANCE_ID.value):
                self.classic_seen.pop(key, None)
            return
        if op.kind in ("commit", "txn_commit", "fetch", "describe", "list", "delete", "offset_delete"):
            return
        seen = self.seen.setdefault((op.who, op.group), Seen())
        err = resp["error"]
        if err == Error.NONE.value:
            if op.kind == "leave" or resp["member_epoch"] < 0:
                seen.joined, seen.epoch, seen.owned, seen.previous = False, 0, (), ()
                return
            seen.joined = True
            if resp["member_id"]:
                seen.member_id = resp["member_id"]
            seen.epoch = resp["member_epoch"]
            if resp["assignment"] is not None:
                new = tuple((TOPIC_NAMES[TopicId.parse(t)], tuple(ps)) for t, ps in resp["assignment"])
                seen.previous, seen.owned = seen.owned, new
            return
        if err in (Error.FENCED_MEMBER_EPOCH.value, Error.UNKNOWN_MEMBER_ID.value,
                   Error.FENCED_INSTANCE_ID.value, Error.UNRELEASED_INSTANCE_ID.value):
            # the client drops its partitions and rejoins with epoch 0 (same member id)
            seen.joined, seen.epoch, seen.owned, seen.previous = False, 0, (), ()


# ---------------------------------------------------------------------------- comparison
def _tupled(x: Any) -> Any:
    if isinstance(x, list | tuple):
        return tuple(_tupled(v) for v in x)
    return x


def _classic(c: cr.ClassicMemberMetadata) -> tuple[Any, ...]:
    """A classic member's metadata as the tool renders it: (session timeout, protocol names)."""
    return (c.session_timeout_ms, tuple(p.name for p in c.supported_protocols))


def _ref_json(resp: Any, consumer_ids: Iterable[str] = ()) -> dict[str, Any]:
    if isinstance(resp, ConsumerGroupHeartbeatResponse):
        return {"error": resp.error.value, "error_message": resp.error_message, "member_id": resp.member_id,
                "member_epoch": resp.member_epoch, "heartbeat_interval_ms": resp.heartbeat_interval_ms,
                "assignment": None if resp.assignment is None else _parts_json(resp.assignment.topic_partitions)}
    if isinstance(resp, m.JoinGroupResponse | m.SyncGroupResponse | m.HeartbeatResponse | m.LeaveGroupResponse):
        return classic_diff.ref_json(resp)  # the tools share these answers' shape (ManualShardRuntime)
    if isinstance(resp, m.OffsetCommitResponse):
        return {"partitions": [{"topic": p.topic, "partition": p.partition, "error": p.error.value}
                               for p in resp.partitions]}
    if isinstance(resp, m.TxnOffsetCommitResponse):
        return classic_diff.ref_json(resp)
    if isinstance(resp, m.OffsetFetchResponse):
        return {"error": resp.error.value,
                "offsets": [[p.topic, p.partition, p.committed_offset, p.metadata, p.error.value,
                             p.committed_leader_epoch] for p in resp.partitions]}
    if isinstance(resp, m.OffsetDeleteResponse):
        return {"error": resp.error.value,
                "deleted": [[p.topic, p.partition, p.error.value] for p in resp.partitions]}
    if isinstance(resp, m.DeleteGroupsResponse):
        return {"results": [{"group_id": x.group_id, "error": x.error.value} for x in resp.results]}
    if isinstance(resp, m.ListGroupsResponse):
        # Kafka's listed group carries its type too; the reference's message has none (its
        # groups are in one map per protocol)
        return {"error": resp.error.value,
                "listed": [[g.group_id, g.protocol_type, g.group_state,
                            "consumer" if g.group_id in consumer_ids else "classic"] for g in resp.groups]}
    if isinstance(resp, ConsumerGroupDescribeResponse):
        def described(a: DescribedAssignment) -> list[list[Any]]:
            return [[str(tp.topic_id), tp.topic_name, sorted(tp.partitions)]
                    for tp in sorted(a.topic_partitions, key=lambda x: str(x.topic_id))]
        return {"groups": [{
            "error": g.error.value, "error_message": g.error_message, "group_id": g.group_id,
            "group_state": g.group_state, "group_epoch": g.group_epoch, "assignment_epoch": g.assignment_epoch,
            "assignor_name": g.assignor_name,
            "members": [{"member_id": x.member_id, "instance_id": x.instance_id, "rack_id": x.rack_id,
                         "member_epoch": x.member_epoch, "client_id": x.client_id, "client_host": x.client_host,
                         "subscribed_topic_names": sorted(x.subscribed_topic_names),
                         "subscribed_topic_regex": x.subscribed_topic_regex,
                         "assignment": described(x.assignment), "target_assignment": described(x.target_assignment),
                         "member_type": x.member_type} for x in g.members]} for g in resp.groups]}
    raise TypeError(type(resp).__name__)


def _image_merge(have: dict[str, int], want: dict[str, int]) -> tuple[TopicMetadata, ...]:
    merged = {n: max(have.get(n, 0), want.get(n, 0)) for n in {*have, *want}}
    return tuple(TopicMetadata(TopicId.for_name(n), n, p) for n, p in sorted(merged.items()))


def _by_group(recs: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Records grouped by group id (each group's in their order), a group's offset
    tombstones first, in their order (the reference writes them in the order of Kafka's
    offset maps: coordinator/offset_order.py)."""
    out: list[tuple[Any, ...]] = []
    for gid in sorted({x[1] for x in recs}):
        mine = [x for x in recs if x[1] == gid]
        tombstones = [x for x in mine if x[0] == "offset" and x[-1] is None]
        out += tombstones + [x for x in mine if not (x[0] == "offset" and x[-1] is None)]
    return out


def _err(code: int) -> str:
    try:
        return Error(code).name
    except ValueError:
        return str(code)


_GENERATED = re.compile(r"^Static member \S* with instance id")


def _canon(resp: dict[str, Any], generated: bool = False) -> tuple[Any, ...]:
    """A response as a comparable value. ``generated``: the request had no member id, so
    Kafka drew a random one that an error message may name (and no answer field carries,
    so the reference cannot be given it): that id is blanked in the message."""
    if "generation_id" in resp or ("members" in resp and "error" in resp):
        return classic_diff.canon(resp)  # a JoinGroup or LeaveGroup answer
    items: list[tuple[str, Any]] = []
    for k, v in sorted(resp.items()):
        if k == "error_message" and generated and v is not None:
            v = _GENERATED.sub("Static member <generated> with instance id", v)
        if k == "error":
            v = _err(v)
        elif k == "assignment" and isinstance(v, str):
            # a SyncGroup assignment the coordinator serialized: its topics come in a hash
            # map's order (Kafka's tests sort them too: Assertions.assertSyncGroupResponse)
            data = base64.b64decode(v)
            a = Assignment.decode(data) if data else Assignment()
            v = (data[:2], tuple(sorted((t, tuple(sorted(ps))) for t, ps in a.partitions.items())), a.user_data)
        elif k == "partitions":
            v = tuple(sorted((x["topic"], x["partition"], _err(x["error"])) for x in v))
        elif k == "offsets":
            v = tuple(sorted((t, p, o, md, _err(e), le) for t, p, o, md, e, le in v))
        elif k == "deleted":
            v = tuple(sorted((t, p, _err(e)) for t, p, e in v))  # Kafka answers topic by topic
        elif k == "results":
            v = tuple(sorted((x["group_id"], _err(x["error"])) for x in v))
        elif k == "listed":
            v = tuple(sorted(tuple(x) for x in v))  # Kafka walks its groups' hash map
        elif k == "groups":
            # described groups by id (the service orders them by __consumer_offsets
            # partition, the shard here answers in request order), members as a set (by
            # repr: one client's members may differ first in an instance id None and a name)
            v = tuple(sorted(tuple(sorted(
                (gk, tuple(sorted((_tupled(sorted(x.items())) for x in gv), key=repr)) if gk == "members"
                 else _tupled(gv))
                for gk, gv in g.items())) for g in v))
        else:
            v = _tupled(v)
        items.append((k, v))
    return tuple(items)


def check(jvm: JvmOracle, ops: list[Op], assignors: tuple[str, ...] = ("uniform", "range"),
          policy: str = "disabled") -> int:
    """Runs ``ops`` on both sides; raises :class:`Mismatch` at the first differing step."""
    return Differ(jvm, assignors=assignors, policy=policy).run(ops)


__all__ = ["DOWNGRADE_SEQUENCES", "OPS", "SEQUENCES", "UPGRADE_SEQUENCES", "Differ", "Mismatch", "Op", "check"]
