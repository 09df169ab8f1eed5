"""Differential test of the reference classic coordinator against Kafka 4.1.2's own
GroupCoordinatorShard (the JVM oracle's ``ClassicGroupShard`` tool): one operation sequence
drives both, step by step, and every step's answers are compared.

A sequence is abstract (:class:`Op` values: "client c1 joins group g0 with its known member
id"); :class:`Differ` resolves each op against what the clients learnt from earlier answers
(their member ids, generations, the leader's member list), sends the same concrete request
to Kafka and to the reference, and compares:

- the responses completed by the step (the request's own, and parked JoinGroup / SyncGroup
  answers that the step completed), as a multiset per step: which step completes which
  response is compared exactly, the order of several completed in one step is not (Kafka
  completes them walking a ``HashMap`` of members; the reference walks them in join order,
  docs/deviations.md "member maps iterate in insertion order");
- each response field but throttle time: error, generation, member id, leader, protocol
  type and name, skip_assignment, the leader's member list (as a set, same reason),
  assignments, per-member leave errors and per-partition commit errors;
- the groups after the step: state, generation, leader, protocol, members (and each one's
  timeouts, assignment, parked requests), pending-sync set, timer deadlines, committed
  offsets and the last persisted group record.

Member ids: Kafka draws a random UUID for each new member; the reference's id generator is
fed, at each step, the ids Kafka produced in that step, so both sides use the same ids and
the answers compare verbatim.

Inputs are restricted to those GroupCoordinatorService passes to the shard unchanged
(non-empty group ids, except OffsetDelete's, whose empty-id refusal the harness applies as
the service does; LeaveGroup v3+ member lists, OffsetCommit v2-v9, v2-v4 with a retention
time (an expire timestamp kept with the offsets, short, long or wrapping past
Long.MAX_VALUE), v6+ with a committed leader epoch that OffsetFetch answers; JoinGroup v0 gets
the session timeout as rebalance timeout, as Kafka's request parser gives it);
the one service check the shard does not repeat (JoinGroup session timeout bounds) is
applied by the Java harness as the service applies it.

One documented modelling choice makes answers incomparable, so a sequence's comparison
stops (passes) at the first step whose only difference is the leader's identity: Kafka
elects a leader in ``HashMap`` order where the reference takes the first member in join
order (docs/deviations.md, "Leader chosen when the leader leaves").

The pieces are public for other drivers of the same tool (tests/test_scenarios_kafka_jar.py
replays the scenario files): :func:`kafka_config` (the shard's properties), :func:`wire_op`
(a reference request message as the tool's op), :func:`ref_json` / :func:`canon` (responses)
and :func:`ref_groups` / :func:`canon_group` (groups after a step).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.jvm import JvmOracle
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.records import GroupSnapshot

TOOL = "ClassicGroupShard"

GROUPS = ("g0", "g1")
#: (client id, group instance id): two dynamic and two static members, and a second
#: process with the first static member's instance id (a zombie, or its restart elsewhere)
CLIENTS: tuple[tuple[str, str | None], ...] = (
    ("c0", None), ("c1", None), ("s2", "i2"), ("s3", "i3"), ("z2", "i2"))

MIN_SESSION_MS = 1_000
MAX_SESSION_MS = 60_000
INITIAL_DELAY_MS = 3_000
MAX_GROUP_SIZE = 3

#: the same configuration on both sides
CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=MIN_SESSION_MS,
    group_max_session_timeout_ms=MAX_SESSION_MS,
    group_initial_rebalance_delay_ms=INITIAL_DELAY_MS,
    group_max_size=MAX_GROUP_SIZE,
    # short enough that offsets expire and empty groups are deleted within a sequence
    offsets_retention_ms=180_000,
    offsets_retention_check_interval_ms=60_000,
)


def kafka_config(config: CoordinatorConfig) -> dict[str, str]:
    """The Kafka properties (GroupCoordinatorConfig) of the settings ``config`` gives the
    classic shard; ValueError for a setting Kafka cannot be given (its classic new-member
    join timeout is a constant, its offsets retention a whole number of minutes)."""
    default = CoordinatorConfig()
    if config.group_new_member_join_timeout_ms != default.group_new_member_join_timeout_ms:
        raise ValueError("group_new_member_join_timeout_ms: a constant in Kafka "
                         "(GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS)")
    if config.offsets_retention_ms % 60_000:
        raise ValueError("offsets_retention_ms: Kafka's offsets.retention.minutes is in minutes")
    return {
        "group.min.session.timeout.ms": str(config.group_min_session_timeout_ms),
        "group.max.session.timeout.ms": str(config.group_max_session_timeout_ms),
        "group.initial.rebalance.delay.ms": str(config.group_initial_rebalance_delay_ms),
        "group.max.size": str(config.group_max_size),
        "offsets.retention.check.interval.ms": str(config.offsets_retention_check_interval_ms),
        "offsets.retention.minutes": str(config.offsets_retention_ms // 60_000),
        "offset.metadata.max.bytes": str(config.offset_metadata_max_bytes),
        "offsets.topic.num.partitions": str(config.offsets_topic_num_partitions),
    }


KAFKA_CONFIG = kafka_config(CONFIG)

#: protocol lists: always in one preference order, so the vote never ties (Kafka breaks a
#: tie in HashMap order, a documented difference)
PROTOCOLS = (("range",), ("roundrobin",), ("range", "roundrobin"))


# ---------------------------------------------------------------------------- operations
@dataclass(frozen=True)
class Op:
    """An abstract step. ``who`` is a client index, ``group`` a group index; ``ids`` says
    which member id the client sends ("known": the one it last got, "empty", "bogus",
    "other": the one the next client last got);
    ``gen`` which generation ("current", "stale", "future", "none": -1)."""

    kind: str
    who: int = 0
    group: int = 0
    ids: str = "known"
    gen: str = "current"
    version: int = 9
    protocols: int = 0
    protocol_type: str = "consumer"
    session_ms: int = 10_000
    rebalance_ms: int = 20_000
    #: the assignments a SyncGroup carries: for every member the client saw in its JoinGroup
    #: answer ("all"), none, all but the last ("partial"), or all and an unknown id ("extra")
    assign: str = "all"
    sync_names: str = "right"
    others: tuple[tuple[int, str], ...] = ()
    ms: int = 0
    #: OffsetCommit metadata: "", None or too long (offset.metadata.max.bytes)
    metadata: str = "short"
    #: OffsetCommit v2-v4's retention time (-1: none) and v6+'s committed leader epoch
    retention_ms: int = -1
    leader_epoch: int = -1


_who = st.sampled_from([0, 0, 1, 1, 2, 2, 3, 4])
_group = st.sampled_from([0, 0, 0, 1])
_ids = st.sampled_from(["known"] * 6 + ["empty", "bogus", "other"])
_gen = st.sampled_from(["current"] * 6 + ["stale", "future", "none"])


@st.composite
def _join(draw: st.DrawFn) -> Op:
    who = draw(_who)
    static = CLIENTS[who][1] is not None
    return Op(
        "join", who=who, group=draw(_group), ids=draw(_ids),
        version=draw(st.sampled_from([5, 7, 9] if static else [0, 1, 2, 3, 4, 5, 9])),
        protocols=draw(st.sampled_from([0, 0, 0, 2, 1])),
        protocol_type=draw(st.sampled_from(["consumer", "consumer", "consumer", "connect"])),
        session_ms=draw(st.sampled_from([10_000] * 4 + [5_000, 30_000, 500, 90_000])),
        # (-1: a negative rebalance timeout reaches the group as sent from v1 on; 0 and -1
        # both give a group of such members a rebalance timeout of 0)
        rebalance_ms=draw(st.sampled_from([20_000, 5_000, 40_000, 20_000, -1, 0])),
    )


_sync = st.builds(
    lambda who, group, ids, gen, assign, names, version: Op(
        "sync", who=who, group=group, ids=ids, gen=gen, assign=assign, sync_names=names,
        version=version),
    _who, _group, _ids, _gen, st.sampled_from(["all", "all", "none", "partial", "extra"]),
    st.sampled_from(["right", "right", "none", "wrong_type", "wrong_name"]), st.sampled_from([3, 5]),
)
_heartbeat = st.builds(lambda who, group, ids, gen: Op("heartbeat", who=who, group=group, ids=ids, gen=gen),
                       _who, _group, _ids, _gen)
_leave = st.builds(
    lambda group, others: Op("leave", group=group, others=tuple(others)),
    _group, st.lists(st.tuples(_who, _ids), min_size=1, max_size=2),
)
_commit = st.builds(
    lambda who, group, ids, gen, version, meta, retention, epoch: Op(
        "commit", who=who, group=group, ids=ids, gen=gen, version=version, metadata=meta,
        retention_ms=retention if 2 <= version <= 4 else -1, leader_epoch=epoch if version >= 6 else -1),
    _who, _group, _ids, _gen, st.sampled_from([8, 8, 9, 2, 5, 6, 7, 3, 4]),
    st.sampled_from(["short", "short", "none", "long"]),
    # a retention time shorter than the check interval, longer than the broker's retention,
    # or one whose sum with the clock wraps (a Java long)
    st.sampled_from([-1, -1, -1, 0, 30_000, 400_000, 2**63 - 1]), st.sampled_from([-1, -1, 0, 7]),
)
#: TxnOffsetCommit (KIP-447) of producer 1 or 2 (kept in Op.ms' place), naming the client's
#: member id, generation and instance as a transactional producer sends its consumer's
#: group metadata (a stale generation: a zombie; "empty" ids with no generation: an
#: anonymous commit); its offsets stay pending (no transaction marker on either side)
_txn_commit = st.builds(
    lambda who, group, ids, gen, meta, producer: Op(
        "txn_commit", who=who, group=group, ids=ids, gen=gen, metadata=meta, ms=producer),
    _who, _group, _ids, _gen, st.sampled_from(["short", "short", "none", "long"]), st.sampled_from([1, 2]),
)
_delete = st.builds(lambda group, both: Op("delete", group=group, assign="both" if both else "one"),
                    _group, st.booleans())
_describe = st.builds(lambda group, both: Op("describe", group=group, assign="both" if both else "one"),
                      _group, st.booleans())
#: OffsetFetch: every offset of the group ("all"), or the partitions commits write plus one
#: never committed ("some"); v8+ may name the member and its generation (a classic group
#: checks neither: ClassicGroup.validateOffsetFetch only refuses a Dead group)
_fetch = st.builds(
    lambda who, group, ids, gen, what, version: Op("fetch", who=who, group=group, ids=ids, gen=gen,
                                                   assign=what, version=version),
    _who, _group, _ids, _gen, st.sampled_from(["all", "some"]), st.sampled_from([1, 5, 7, 8, 9]),
)
#: ListGroups with a states filter (none, one state, two, in any case and with blanks: Kafka
#: lower-cases and trims them, GroupMetadataManager.listGroups), kept in Op.others' place
_LIST_FILTERS: tuple[tuple[str, ...], ...] = (
    (), ("Stable",), ("empty",), (" PreparingRebalance ",), ("CompletingRebalance", "Empty"), ("Dead",),
    ("unknown",))
_list = st.builds(lambda which: Op("list", ms=which), st.integers(0, len(_LIST_FILTERS) - 1))
#: OffsetDelete (KIP-496) of partitions (kept in Op.ms' place): of the committed topic "t"
#: (which no member subscribes to), of topics members subscribe to (a client's topic is
#: "<client id>-<protocol>"), of a topic never committed, mixed, or none at all; to a known
#: group ("known"), a group that does not exist ("bogus") or the empty group id ("empty")
_OFFSET_DELETES: tuple[tuple[tuple[str, int], ...], ...] = (
    (("t", 0),), (("t", 0), ("t", 1)), (("c0-range", 0), ("t", 1)),
    (("c0-range", 0), ("s2-range", 1), ("c1-roundrobin", 0), ("t", 0), ("u", 3)), (("u", 0),), ())
_offset_delete = st.builds(
    lambda group, ids, which: Op("offset_delete", group=group, ids=ids, ms=which),
    _group, st.sampled_from(["known"] * 6 + ["bogus", "empty"]), st.integers(0, len(_OFFSET_DELETES) - 1),
)
_advance = st.builds(lambda ms: Op("advance", ms=ms),
                     st.sampled_from([1, 100, 1_000, 1_000, 3_000, 3_000, 5_000, 5_000, 10_000, 20_000,
                                      45_000, 300_000]))
#: "the client's natural next step" (join, rejoin with the id it was given, sync, then
#: heartbeat or commit), resolved when it runs: what well-behaved clients do, so that
#: sequences get groups through whole rebalances; the other ops deviate from it
_next = st.builds(lambda who, group: Op("next", who=who, group=group), _who, _group)
#: every member of a group takes its natural next step
_round = st.builds(lambda group: Op("round", group=group), _group)

_BY_KIND: dict[str, st.SearchStrategy[Op]] = {
    "next": _next, "round": _round, "advance": _advance, "join": _join(), "sync": _sync,
    "heartbeat": _heartbeat, "leave": _leave, "commit": _commit, "delete": _delete,
    "failover": st.just(Op("failover")), "describe": _describe, "fetch": _fetch,
    "list": _list, "offset_delete": _offset_delete, "txn_commit": _txn_commit,
}
#: mostly well-behaved steps (st.one_of would fold repeated branches into one)
_WEIGHTS = {"next": 6, "round": 6, "advance": 5, "join": 2, "sync": 1, "heartbeat": 1, "leave": 1,
            "commit": 1, "delete": 1, "failover": 1, "describe": 1,
            "fetch": 1, "list": 1, "offset_delete": 1, "txn_commit": 1}
OPS = st.sampled_from([k for k, n in _WEIGHTS.items() for _ in range(n)]).flatmap(_BY_KIND.__getitem__)
SEQUENCES = st.lists(OPS, min_size=10, max_size=40)


# ---------------------------------------------------------------------------- clients
@dataclass
class Seen:
    """What one client knows of one group, from the answers it got."""

    member_id: str = ""
    generation: int = -1
    members: tuple[str, ...] = ()
    protocol_type: str | None = None
    protocol_name: str | None = None
    #: a JoinGroup / SyncGroup sent and not answered yet
    waiting_join: bool = False
    waiting_sync: bool = False
    #: the generation whose assignment it has, and whether it was told to rejoin
    synced: int = -1
    rejoin: bool = False
    commits: int = 0


class Mismatch(AssertionError):
    pass


class LeaderChoice(Exception):
    """The sides differ only in whom they elected leader (documented modelling choice)."""


@dataclass
class Differ:
    jvm: JvmOracle
    ref: Coordinator = field(default_factory=lambda: Coordinator(CONFIG))
    now: int = 0
    rid: int = 0
    seen: dict[tuple[int, int], Seen] = field(default_factory=dict)
    _fresh: list[str] = field(default_factory=list)
    _fallback: int = 0
    #: the abstract op of each request id
    sent: dict[int, Op] = field(default_factory=dict)
    #: the generation each SyncGroup carried
    sent_generation: dict[int, int] = field(default_factory=dict)
    #: what happened so far, for the failure message
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ref.member_ids = self._next_member_id
        self.jvm.call(TOOL, {"action": "reset", "config": KAFKA_CONFIG})

    def _next_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """The reference's member-id generator: the id Kafka generated in this step, found by
        its prefix (ClassicGroup.generateMemberId: instance id or client id, '-', UUID)."""
        prefix = (group_instance_id if group_instance_id is not None else client_id) + "-"
        for i, mid in enumerate(self._fresh):
            if mid.startswith(prefix):
                return self._fresh.pop(i)
        self._fallback += 1
        return f"{prefix}reference-only-{self._fallback}"

    # ------------------------------------------------------------------ one step
    def run(self, ops: list[Op]) -> int:
        """Runs ``ops``; returns how many steps were compared (all, unless the leader choice
        stopped the comparison)."""
        for i, op in enumerate(ops):
            try:
                self.step(op)
            except LeaderChoice as e:
                self.log.append(f"step {i}: comparison stops, leader choice differs: {e}")
                return i
        return len(ops)

    def step(self, op: Op) -> None:
        if op.kind == "round":
            # every client that is in the group and not waiting for an answer takes its next step
            for who in range(len(CLIENTS)):
                seen = self.seen.get((who, op.group))
                if seen is not None and seen.member_id and not (seen.waiting_join or seen.waiting_sync):
                    self.step(Op("next", who=who, group=op.group))
            return
        if op.kind == "failover":
            # the coordinator moves at a multiple of the offset-expiry check interval: Kafka
            # restarts that check's cadence when a shard loads, the reference keeps it
            # (docs/deviations.md, "The offset-expiry check cadence"); there both agree
            step = CONFIG.offsets_retention_check_interval_ms
            if self.now % step:
                self.step(Op("advance", ms=step - self.now % step))
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {"kind": "failover"}})
            self.log.append(f"t={self.now} failover")
            out = self.ref.failover(self.now)
        elif op.kind == "advance":
            self.now += op.ms
            kafka = self.jvm.call(TOOL, {"action": "op", "op": {"kind": "advance", "to": self.now}})
            self.log.append(f"t={self.now} advance")
            out = self.ref.advance(self.now)
        else:
            if op.kind == "next":
                op = self._natural(op)
            self.rid += 1
            wire, request = self._request(op, self.rid)
            self.sent[self.rid] = op
            self.log.append(f"t={self.now} #{self.rid} {wire}")
            kafka = self.jvm.call(TOOL, {"action": "op", "op": wire})
            self._fresh = list(kafka["ids"])
            out = self.ref.handle(self.rid, request, self.now)
            self._fresh = []
        own = self.rid if op.kind not in ("advance", "failover") else -1
        k_blocks = self._blocks([rid for rid, _ in kafka["completed"] if rid != own])
        r_blocks = self._blocks([rid for rid, _ in out.responses if rid != own])
        if op.kind == "failover":
            # unloading answers every parked request at once, group after group in the order
            # of Kafka's groups map (a hash map of group ids; the reference: creation order):
            # only the answers themselves are compared
            k_blocks, r_blocks = sorted(k_blocks), sorted(r_blocks)
        if k_blocks != r_blocks:
            raise Mismatch(f"{chr(10).join(self.log)}\nDIFFERS at t={self.now} {op}: parked answers "
                           f"completed in the order kafka {k_blocks}, reference {r_blocks}")
        k_resp = sorted((rid, canon(resp)) for rid, resp in kafka["completed"])
        r_resp = sorted((rid, canon(ref_json(resp))) for rid, resp in out.responses)
        k_groups = {g: canon_group(s) for g, s in kafka["groups"].items()}
        r_groups = ref_groups(self.ref)
        self.log.append(f"    -> {k_resp} {k_groups}")
        if k_resp != r_resp or k_groups != r_groups:
            if only_leader_differs(k_resp, r_resp, k_groups, r_groups):
                raise LeaderChoice(f"kafka {k_groups} reference {r_groups}")
            story = "\n".join(self.log[:-1])
            raise Mismatch(
                f"{story}\nDIFFERS at t={self.now} {op}\n  responses kafka:     {k_resp}\n  responses reference: {r_resp}"
                f"\n  groups kafka:     {k_groups}\n  groups reference: {r_groups}"
            )
        for rid, resp in kafka["completed"]:
            self._learn(rid, resp)

    def _blocks(self, rids: list[int]) -> list[tuple[str, str]]:
        """The order in which parked answers completed, as runs of one API and group: within
        a run the order is Kafka's HashMap walk over members (not compared), between runs it
        is the order of the coordinator's steps."""
        out: list[tuple[str, str]] = []
        for rid in rids:
            op = self.sent[rid]
            key = (op.kind, GROUPS[op.group])
            if not out or out[-1] != key:
                out.append(key)
        return out

    # ------------------------------------------------------------------ requests
    def _natural(self, op: Op) -> Op:
        """The step a well-behaved client takes next (an ``Op("next")`` made concrete)."""
        seen = self.seen.setdefault((op.who, op.group), Seen())
        base = Op("heartbeat", who=op.who, group=op.group,
                  version=7 if CLIENTS[op.who][1] is not None else 4)
        if seen.waiting_join or seen.waiting_sync:
            return base
        if seen.member_id == "" or seen.generation < 0 or seen.rejoin:
            return Op("join", who=op.who, group=op.group, version=base.version + 2)
        if seen.synced != seen.generation:
            return Op("sync", who=op.who, group=op.group, version=5)
        seen.commits += 1
        return Op("commit", who=op.who, group=op.group) if seen.commits % 3 == 0 else base

    def _request(self, op: Op, rid: int) -> tuple[dict[str, Any], m.Request]:
        client_id, instance = CLIENTS[op.who]
        gid = GROUPS[op.group]
        seen = self.seen.setdefault((op.who, op.group), Seen())
        if op.kind == "join":
            seen.waiting_join, seen.rejoin = True, False
        elif op.kind == "sync":
            seen.waiting_sync = True
        # "other": the id another client (the next one) last got in this group, as a
        # misbehaving client may send it (the wire fuzzer found Kafka's answer to a static
        # join naming a pending id this way)
        other = self.seen.get(((op.who + 1) % len(CLIENTS), op.group), Seen()).member_id
        mid = {"known": seen.member_id, "empty": "", "bogus": f"{client_id}-bogus", "other": other}[op.ids]
        gen = {"current": seen.generation, "stale": seen.generation - 1,
               "future": seen.generation + 1, "none": -1}[op.gen]
        request = self._message(op, mid, gen, client_id, instance, gid)
        if isinstance(request, m.SyncGroupRequest):
            self.sent_generation[rid] = gen
        # the message has no version of SyncGroup (v3: no protocol type and name) or
        # OffsetFetch; the shard gets the op's
        version = op.version if op.kind in ("sync", "fetch") else None
        return wire_op(rid, request, version=version), request

    def _message(self, op: Op, mid: str, gen: int, client_id: str, instance: str | None,
                 gid: str) -> m.Request:
        """The concrete request of ``op``, as the reference handles it."""
        seen = self.seen[(op.who, op.group)]
        if op.kind == "join":
            names = PROTOCOLS[op.protocols]
            # real consumer-protocol subscriptions: Kafka decodes them (the subscribed topics
            # of a "consumer" group); one topic per client and protocol, so they differ.
            # v0 has no rebalance timeout: the request parser puts the session timeout in its
            # place (JoinGroupRequest.maybeOverrideRebalanceTimeout), the message does the same
            return m.JoinGroupRequest(
                group_id=gid, member_id=mid, group_instance_id=instance, protocol_type=op.protocol_type,
                protocols=tuple(m.JoinGroupProtocol(n, Subscription((f"{client_id}-{n}",)).encode()) for n in names),
                session_timeout_ms=op.session_ms, rebalance_timeout_ms=op.rebalance_ms,
                client_id=client_id, version=op.version)
        if op.kind == "sync":
            targets = {"all": list(seen.members), "none": [], "partial": list(seen.members[:-1]),
                       "extra": [*seen.members, f"{client_id}-bogus"]}[op.assign]
            ptype, pname = seen.protocol_type, seen.protocol_name
            if op.sync_names == "none" or op.version < 5:
                ptype = pname = None
            elif op.sync_names == "wrong_type":
                ptype = "other"
            elif op.sync_names == "wrong_name":
                pname = "other"
            return m.SyncGroupRequest(
                group_id=gid, generation_id=gen, member_id=mid, group_instance_id=instance,
                protocol_type=ptype, protocol_name=pname,
                assignments=tuple(m.SyncGroupAssignment(x, Assignment({"t": (i, gen)}).encode())
                                  for i, x in enumerate(targets)))
        if op.kind == "heartbeat":
            return m.HeartbeatRequest(group_id=gid, generation_id=gen, member_id=mid,
                                      group_instance_id=instance)
        if op.kind == "leave":
            members: list[tuple[str, str | None]] = []
            for who, ids in op.others:
                cid, inst = CLIENTS[who]
                known = self.seen.setdefault((who, op.group), Seen()).member_id
                other = self.seen.get(((who + 1) % len(CLIENTS), op.group), Seen()).member_id
                members.append(({"known": known, "empty": "", "bogus": f"{cid}-bogus", "other": other}[ids], inst))
            return m.LeaveGroupRequest(
                group_id=gid, members=tuple(m.MemberIdentity(x, i) for x, i in members))
        if op.kind == "commit":
            meta = {"short": "m", "none": None, "long": "x" * (CONFIG.offset_metadata_max_bytes + 1)}[op.metadata]
            offset = 10 * self.rid
            return m.OffsetCommitRequest(
                group_id=gid, generation_id=gen, member_id=mid,
                group_instance_id=instance if op.version >= 7 else None, version=op.version,
                retention_time_ms=op.retention_ms,
                partitions=(m.OffsetCommitPartition("t", 0, offset, meta, op.leader_epoch),
                            m.OffsetCommitPartition("t", 1, offset + 1, "")))
        if op.kind == "txn_commit":
            meta = {"short": "m", "none": None, "long": "x" * (CONFIG.offset_metadata_max_bytes + 1)}[op.metadata]
            offset = 10 * self.rid
            return m.TxnOffsetCommitRequest(
                group_id=gid, transactional_id=f"tx-{op.ms}", producer_id=op.ms, producer_epoch=0,
                generation_id=gen, member_id=mid, group_instance_id=instance,
                partitions=(m.TxnOffsetCommitPartition("t", 0, offset, meta, 5),
                            m.TxnOffsetCommitPartition("t", 2, offset + 2, "")))
        if op.kind == "describe":
            return m.DescribeGroupsRequest(groups=GROUPS if op.assign == "both" else (gid,))
        if op.kind == "list":
            return m.ListGroupsRequest(states_filter=_LIST_FILTERS[op.ms])
        if op.kind == "fetch":
            wanted = None if op.assign == "all" else (("t", 0), ("t", 1), ("u", 0))
            member, epoch = (mid, gen) if op.version >= 8 else (None, -1)
            return m.OffsetFetchRequest(
                group_id=gid, partitions=wanted, require_stable=op.version >= 7 and op.gen == "stale",
                member_id=member, member_epoch=epoch)
        if op.kind == "offset_delete":
            target = {"known": gid, "bogus": "gx", "empty": ""}[op.ids]
            return m.OffsetDeleteRequest(group_id=target, partitions=_OFFSET_DELETES[op.ms])
        if op.kind == "delete":
            return m.DeleteGroupsRequest(groups_names=GROUPS if op.assign == "both" else (gid,))
        raise ValueError(op.kind)

    def _learn(self, rid: int, resp: dict[str, Any]) -> None:
        op = self.sent[rid]
        if op.kind in ("delete", "describe", "fetch", "list", "offset_delete", "txn_commit"):
            return
        if op.kind == "leave":
            for (who, _), each in zip(op.others, resp["members"], strict=False):
                if each["error"] == Error.NONE.value:
                    self.seen[(who, op.group)] = Seen()
            return
        seen = self.seen.setdefault((op.who, op.group), Seen())
        if op.kind == "commit":
            errs = {p["error"] for p in resp["partitions"]}
            seen.rejoin |= bool(errs & _REJOIN)
            return
        err = resp["error"]
        if op.kind == "sync":
            seen.waiting_sync = False
            if err == Error.NONE.value:
                seen.synced = self.sent_generation.get(rid, -2)
            seen.rejoin |= err in _REJOIN
            return
        if err == Error.UNKNOWN_MEMBER_ID.value:
            seen.member_id, seen.generation = "", -1
        if op.kind == "heartbeat":
            seen.rejoin |= err in _REJOIN
            return
        seen.waiting_join = False
        if err in (Error.NONE.value, Error.MEMBER_ID_REQUIRED.value) and resp["member_id"]:
            seen.member_id = resp["member_id"]
        if err == Error.NONE.value:
            seen.generation = resp["generation_id"]
            seen.members = tuple(x["member_id"] for x in resp["members"])
            seen.protocol_type, seen.protocol_name = resp["protocol_type"], resp["protocol_name"]
        elif err in (Error.UNKNOWN_MEMBER_ID.value, Error.FENCED_INSTANCE_ID.value):
            seen.member_id, seen.generation = "", -1


#: errors after which a client rejoins (or joins afresh)
_REJOIN = {Error.REBALANCE_IN_PROGRESS.value, Error.ILLEGAL_GENERATION.value,
           Error.UNKNOWN_MEMBER_ID.value, Error.FENCED_INSTANCE_ID.value}


# ---------------------------------------------------------------------------- comparison
def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


#: the reference's request messages the shard tool takes (:func:`wire_op`); the rest
#: (FindCoordinator, KIP-848 heartbeats, ...) are not classic-shard requests
SHARD_REQUESTS: tuple[type[m.Request], ...] = (
    m.JoinGroupRequest, m.SyncGroupRequest, m.HeartbeatRequest, m.LeaveGroupRequest,
    m.OffsetCommitRequest, m.OffsetFetchRequest, m.OffsetDeleteRequest, m.ListGroupsRequest,
    m.DescribeGroupsRequest, m.DeleteGroupsRequest, m.TxnOffsetCommitRequest)


def wire_op(rid: int, request: m.Request, version: int | None = None) -> dict[str, Any]:
    """The shard tool's op (ClassicGroupShard's JSON) for the reference's ``request``, with
    request id ``rid``. ``version`` is the API version of a message that has none
    (SyncGroup, Heartbeat, LeaveGroup, OffsetFetch: the tool's defaults otherwise); a
    message with a version uses its own."""
    op: dict[str, Any]
    if isinstance(request, m.JoinGroupRequest):
        op = {"kind": "join", "group": request.group_id, "member_id": request.member_id,
              "group_instance_id": request.group_instance_id, "protocol_type": request.protocol_type,
              "protocols": [[p.name, _b64(p.metadata)] for p in request.protocols],
              "session_timeout_ms": request.session_timeout_ms,
              "rebalance_timeout_ms": request.rebalance_timeout_ms, "client_id": request.client_id,
              "client_host": request.client_host, "reason": request.reason, "version": request.version}
    elif isinstance(request, m.SyncGroupRequest):
        op = {"kind": "sync", "group": request.group_id, "generation_id": request.generation_id,
              "member_id": request.member_id, "group_instance_id": request.group_instance_id,
              "protocol_type": request.protocol_type, "protocol_name": request.protocol_name,
              "assignments": [[a.member_id, _b64(a.assignment)] for a in request.assignments]}
    elif isinstance(request, m.HeartbeatRequest):
        op = {"kind": "heartbeat", "group": request.group_id, "generation_id": request.generation_id,
              "member_id": request.member_id, "group_instance_id": request.group_instance_id}
    elif isinstance(request, m.LeaveGroupRequest):
        op = {"kind": "leave", "group": request.group_id,
              "members": [[x.member_id, x.group_instance_id, x.reason] for x in request.members]}
    elif isinstance(request, m.OffsetCommitRequest):
        op = {"kind": "commit", "group": request.group_id, "generation_id": request.generation_id,
              "member_id": request.member_id, "group_instance_id": request.group_instance_id,
              "version": request.version, "retention_time_ms": request.retention_time_ms,
              "partitions": [[p.topic, p.partition, p.committed_offset, p.committed_metadata,
                              p.committed_leader_epoch] for p in request.partitions]}
    elif isinstance(request, m.TxnOffsetCommitRequest):
        # (the tool takes the transaction as verified: ManualShardRuntime.txnCommit)
        op = {"kind": "txn_commit", "group": request.group_id, "generation_id": request.generation_id,
              "member_id": request.member_id, "group_instance_id": request.group_instance_id,
              "transactional_id": request.transactional_id, "producer_id": request.producer_id,
              "producer_epoch": request.producer_epoch,
              "partitions": [[p.topic, p.partition, p.committed_offset, p.committed_metadata,
                              p.committed_leader_epoch] for p in request.partitions]}
    elif isinstance(request, m.OffsetFetchRequest):
        op = {"kind": "fetch", "group": request.group_id,
              "partitions": None if request.partitions is None else [list(x) for x in request.partitions],
              "member_id": request.member_id, "member_epoch": request.member_epoch,
              "require_stable": request.require_stable}
    elif isinstance(request, m.OffsetDeleteRequest):
        op = {"kind": "offset_delete", "group": request.group_id,
              "partitions": [list(x) for x in request.partitions]}
    elif isinstance(request, m.ListGroupsRequest):
        op = {"kind": "list", "states": list(request.states_filter)}
    elif isinstance(request, m.DescribeGroupsRequest):
        op = {"kind": "describe", "groups": list(request.groups), "version": request.version}
    elif isinstance(request, m.DeleteGroupsRequest):
        op = {"kind": "delete", "groups": list(request.groups_names)}
    else:
        raise ValueError(f"not a classic-shard request: {type(request).__name__}")
    if version is not None and "version" not in op:
        op["version"] = version
    return {"rid": rid, **op}


def ref_json(resp: m.Response) -> dict[str, Any]:
    """A reference response in the JSON shape the Java tool answers with."""
    if isinstance(resp, m.JoinGroupResponse):
        return {"error": resp.error.value, "generation_id": resp.generation_id,
                "protocol_type": resp.protocol_type, "protocol_name": resp.protocol_name,
                "leader": resp.leader, "skip_assignment": resp.skip_assignment,
                "member_id": resp.member_id,
                "members": [{"member_id": x.member_id, "group_instance_id": x.group_instance_id,
                             "metadata": _b64(x.metadata)} for x in resp.members]}
    if isinstance(resp, m.SyncGroupResponse):
        return {"error": resp.error.value, "protocol_type": resp.protocol_type,
                "protocol_name": resp.protocol_name, "assignment": _b64(resp.assignment)}
    if isinstance(resp, m.HeartbeatResponse):
        return {"error": resp.error.value}
    if isinstance(resp, m.LeaveGroupResponse):
        return {"error": resp.error.value,
                "members": [{"member_id": x.member_id, "group_instance_id": x.group_instance_id,
                             "error": x.error.value} for x in resp.members]}
    if isinstance(resp, m.DescribeGroupsResponse):
        return {"groups": [{"error": g.error.value, "group_id": g.group_id, "group_state": g.group_state,
                            "protocol_type": g.protocol_type, "protocol_data": g.protocol_data,
                            "members": [[x.member_id, x.group_instance_id, x.client_id, x.client_host,
                                         _b64(x.member_metadata), _b64(x.member_assignment)]
                                        for x in g.members]} for g in resp.groups]}
    if isinstance(resp, m.DeleteGroupsResponse):
        return {"results": [{"group_id": x.group_id, "error": x.error.value} for x in resp.results]}
    if isinstance(resp, m.ListGroupsResponse):
        return {"error": resp.error.value,
                "listed": [[g.group_id, g.protocol_type, g.group_state] for g in resp.groups]}
    if isinstance(resp, m.OffsetFetchResponse):
        return {"error": resp.error.value,
                "offsets": [[p.topic, p.partition, p.committed_offset, p.metadata, p.error.value,
                             p.committed_leader_epoch] for p in resp.partitions]}
    if isinstance(resp, m.OffsetDeleteResponse):
        return {"error": resp.error.value,
                "deleted": [[p.topic, p.partition, p.error.value] for p in resp.partitions]}
    if isinstance(resp, m.OffsetCommitResponse):
        return {"partitions": [{"topic": p.topic, "partition": p.partition, "error": p.error.value}
                               for p in resp.partitions]}
    if isinstance(resp, m.TxnOffsetCommitResponse):
        return {"partitions": [{"topic": p.topic, "partition": p.partition, "error": p.error_code}
                               for p in resp.partitions]}
    raise TypeError(type(resp).__name__)


def _err(code: int) -> str:
    try:
        return Error(code).name
    except ValueError:
        return str(code)


def canon(resp: dict[str, Any]) -> tuple[Any, ...]:
    """A response as a comparable value: errors by name, member lists as sets."""
    items: list[tuple[str, Any]] = []
    if "generation_id" in resp and resp["error"] != 0 and resp["protocol_name"] == "":
        # JoinGroupResponseData's ProtocolName defaults to "" where an error answer sets none;
        # the reference's message model says None for "not set" (a representation, not a
        # protocol difference: the validator never reads it on errors)
        resp = {**resp, "protocol_name": None}
    for k, v in sorted(resp.items()):
        if k == "error":
            v = _err(v)
        elif k == "members" and "error" in resp and "generation_id" in resp:
            v = tuple(sorted((x["member_id"], x["group_instance_id"], x["metadata"]) for x in v))
        elif k == "members":
            v = tuple((x["member_id"], x["group_instance_id"], _err(x["error"])) for x in v)
        elif k == "groups":
            # described groups in request order; each one's members as a set (HashMap order)
            v = tuple((_err(g["error"]), g["group_id"], g["group_state"], g["protocol_type"], g["protocol_data"],
                       tuple(sorted(tuple(x) for x in g["members"]))) for g in v)
        elif k == "results":
            v = tuple(sorted((x["group_id"], _err(x["error"])) for x in v))
        elif k == "listed":
            # listed groups as a set: Kafka walks its groups map (a hash map)
            v = tuple(sorted(tuple(x) for x in v))
        elif k == "offsets":
            # fetched offsets as a set: an all-partitions fetch walks Kafka's offset hash maps
            v = tuple(sorted((t, p, o, md, _err(e), le) for t, p, o, md, e, le in v))
        elif k == "partitions":
            v = tuple(sorted((x["topic"], x["partition"], _err(x["error"])) for x in v))
        elif k == "deleted":
            # OffsetDelete's partitions as a set (Kafka answers topic by topic)
            v = tuple(sorted((t, p, _err(e)) for t, p, e in v))
        items.append((k, v))
    return tuple(items)


def ref_groups(coordinator: Coordinator) -> dict[str, tuple[Any, ...]]:
    """The reference's groups as :func:`canon_group` has Kafka's (a Dead group counts
    as absent)."""
    out: dict[str, tuple[Any, ...]] = {}
    for gid, g in coordinator.state.groups.items():
        if g.state is GroupState.Dead:
            continue  # deliberate: the reference records Dead before removing a group
        timers = [("heartbeat", mid, mem.heartbeat_deadline_ms) for mid, mem in g.members.items()
                  if mem.heartbeat_deadline_ms is not None]
        timers += [("heartbeat", mid, deadline) for mid, deadline in g.pending_members.items()]
        if g.join_timer is not None:
            timers.append(("join", "", g.join_timer.deadline_ms))
        if g.sync_timer is not None:
            timers.append(("sync", "", g.sync_timer.deadline_ms))
        out[gid] = (g.state.name, g.generation_id, g.leader_id, g.protocol_name,
                    tuple(sorted(g.members)),
                    tuple(sorted((f"{t}-{p}", c.committed_offset) for (t, p), c in g.offsets.items())),
                    tuple(sorted((mid, mem.group_instance_id, mem.session_timeout_ms,
                                  mem.rebalance_timeout_ms, _b64(mem.assignment), mem.is_awaiting_join,
                                  mem.is_awaiting_sync, mem.is_new) for mid, mem in g.members.items())),
                    tuple(sorted(g.pending_sync_members)),
                    tuple(sorted((k, mid, d) for k, mid, d in timers)),
                    _ref_persisted(g.persisted))
    return out


def canon_group(s: dict[str, Any]) -> tuple[Any, ...]:
    """A group summary of the shard tool as a comparable value (:func:`ref_groups`)."""
    members = tuple(sorted(
        (mid, d["group_instance_id"], d["session_timeout_ms"], d["rebalance_timeout_ms"], d["assignment"],
         d["awaiting_join"], d["awaiting_sync"], d["is_new"]) for mid, d in s["member_state"].items()))
    return (_KAFKA_STATES.get(s["state"], s["state"]), s["generation"], s["leader"], s["protocol_name"],
            tuple(s["members"]), tuple(sorted(s["offsets"].items())), members,
            tuple(s["pending_sync"]), tuple((k, mid, d) for k, mid, d in s["timers"]),
            _kafka_persisted(s["persisted"]))


def _kafka_persisted(p: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """The group's last persisted metadata (GroupMetadataValue), or None."""
    if p is None:
        return None
    # an empty group's record carries protocol type "" (newEmptyGroupMetadataRecord), which
    # GroupMetadataManager.replay reads back as no protocol type: the reference's None
    return (p["protocol_type"] or None, p["generation"], p["protocol"], p["leader"], p["state_timestamp"],
            tuple(sorted(tuple(x) for x in p["members"])))


def _ref_persisted(snap: GroupSnapshot | None) -> tuple[Any, ...] | None:
    """The reference's last persisted group record, as Kafka's GroupMetadataValue has it: a
    member's subscription is its metadata for the group's protocol."""
    if snap is None:
        return None
    members = []
    for x in snap.members:
        subscription = next((p.metadata for p in x.protocols if p.name == snap.protocol_name), b"")
        members.append((x.info.member_id, x.info.group_instance_id, x.info.client_id, x.info.client_host,
                        x.rebalance_timeout_ms, x.session_timeout_ms, _b64(subscription), _b64(x.assignment)))
    return (snap.protocol_type, snap.generation_id, snap.protocol_name, snap.leader_id,
            snap.state_timestamp_ms, tuple(sorted(members)))


_KAFKA_STATES = {"PreparingRebalance": "PreparingRebalance", "CompletingRebalance": "CompletingRebalance",
                 "Stable": "Stable", "Empty": "Empty", "Dead": "Dead"}


def only_leader_differs(
    k_resp: list[tuple[int, tuple[Any, ...]]],
    r_resp: list[tuple[int, tuple[Any, ...]]],
    k_groups: dict[str, tuple[Any, ...]],
    r_groups: dict[str, tuple[Any, ...]],
) -> bool:
    """True when blanking the leader (group summaries, JoinGroup answers' leader field, and
    the member list only a leader receives) makes the two sides equal, and both leaders are
    members of their group."""
    def blank_groups(gs: dict[str, tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
        out = {}
        for g, s in gs.items():
            persisted = s[9] if s[9] is None else (*s[9][:3], None, *s[9][4:])
            out[g] = (s[0], s[1], None, *s[3:9], persisted)
        return out

    def blank_resp(rs: list[tuple[int, tuple[Any, ...]]]) -> list[tuple[int, tuple[Any, ...]]]:
        out = []
        for rid, resp in rs:
            d = dict(resp)
            if "leader" in d:
                d["leader"] = None
                d["members"] = ()
            out.append((rid, tuple(sorted(d.items()))))
        return out

    if blank_groups(k_groups) != blank_groups(r_groups) or blank_resp(k_resp) != blank_resp(r_resp):
        return False
    return all(s[2] is None or s[2] in s[4] for s in [*k_groups.values(), *r_groups.values()])


def check(jvm: JvmOracle, ops: list[Op]) -> int:
    """Runs ``ops`` on both sides; raises :class:`Mismatch` at the first differing step."""
    return Differ(jvm).run(ops)


__all__ = ["KAFKA_CONFIG", "OPS", "SEQUENCES", "SHARD_REQUESTS", "TOOL", "Differ", "Mismatch", "Op", "canon",
           "canon_group", "check", "kafka_config", "only_leader_differs", "ref_groups", "ref_json", "wire_op"]
