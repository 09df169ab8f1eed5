"""Random classic-group requests sent straight to a real broker through the recorder, and
the recording judged by the validator.

The conformance scenarios reach a broker only through real client libraries, which send
what a well-behaved consumer sends. This module sends what no library would: JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups
and DeleteGroups at every wire version Kafka 4 accepts, with known, unknown and empty
member ids, stale and future generations, static members, protocol mismatches, invalid
session timeouts and commits from outside the group, from several connections at once (a
parked JoinGroup blocks only its own connection, as in the broker). Each request is built
from Kafka's own message schemas (:mod:`groupspec.recorder.schema`) and goes through the
recording proxy, so the whole broker answers it: the wire layer, ``KafkaApis``,
``GroupCoordinatorService`` and the shard.

Apache Kafka is the authority, so against a Kafka broker every group of every recording
must be judged conforming: a violation there is a difference between the reference (or
the validator's search) and Kafka, to be explained. Against another broker, the verdicts
are that broker's conformance on inputs its clients never send.

Sequences are drawn from a seeded :class:`random.Random` (a live broker cannot be shrunk
against cheaply); a run prints the seed of each sequence, and ``--seed`` replays one.
"""

from __future__ import annotations

import argparse
import queue
import random
import socket
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.brokers.common import recv_exact
from groupspec.coordinator.config import CoordinatorConfig, broker_setting
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.recorder.frames import decode_response
from groupspec.recorder.schema import encode_body, spec_for

#: the broker settings ``--group-max-size`` gives (classic and consumer groups)
MAX_SIZE_SETTINGS = ("group.max.size", "group.consumer.max.size")

#: api keys and the versions sent: every version Kafka 4.1.2 offers (its ApiVersions answer)
#: but OffsetCommit and OffsetFetch v10, which name topics by id, which the reference's
#: messages do not carry (Kafka 4 removed OffsetCommit v0-v1 and OffsetFetch v0, KIP-896,
#: but kept JoinGroup v0-v1: JoinGroupRequest.json's validVersions 0-9)
VERSIONS: dict[str, tuple[int, int, int]] = {
    "OffsetCommit": (8, 2, 9),
    "OffsetFetch": (9, 1, 9),
    "JoinGroup": (11, 0, 9),
    "Heartbeat": (12, 0, 4),
    "LeaveGroup": (13, 0, 5),
    "SyncGroup": (14, 0, 5),
    "DescribeGroups": (15, 0, 6),
    "ListGroups": (16, 0, 5),
    "DeleteGroups": (42, 0, 2),
    "FindCoordinator": (10, 3, 3),
    "OffsetDelete": (47, 0, 0),
    "Metadata": (3, 12, 12),
    "ConsumerGroupHeartbeat": (68, 0, 1),
    "ConsumerGroupDescribe": (69, 0, 1),
    "ApiVersions": (18, 3, 3),
    "TxnOffsetCommit": (28, 0, 5),
}
#: the broker setting that must be off for a TxnOffsetCommit from a producer the
#: transaction coordinator does not know to reach the group coordinator's checks (with it
#: on, the broker verifies the transaction first and answers a transaction error; v5, KIP-890,
#: is sent to the transaction coordinator whatever the setting, unless the producer already
#: has a transaction open on the partition: ReplicaManager.maybeSendPartitionsToTransactionCoordinator)
TXN_VERIFICATION_SETTING = "transaction.partition.verification.enable"
#: offset.metadata.max.bytes' default: longer metadata is refused per partition
METADATA_MAX_BYTES = 4096
TOPIC_PARTITIONS = 3
#: the broker's group.min.session.timeout.ms default (6 s): a shorter one is refused
MIN_SESSION_TIMEOUT_MS = 6000
STATES = ("Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Dead", "stable", "Unknown")
#: group types for ListGroups v5's filter (Group.GroupType, parsed case-insensitively; an
#: unknown name matches no group)
TYPES = ("classic", "consumer", "Classic", "share", "bogus")
#: a consumer group's states (ConsumerGroup.ConsumerGroupState), for ListGroups' filter
CONSUMER_STATES = ("Empty", "Assigning", "Reconciling", "Stable", "reconciling ", "Dead", "CompletingRebalance")


def _partition_errors(resp: Mapping[str, Any]) -> list[str]:
    """The error names of a commit answer's partitions, each once (a code outside the
    vocabulary, as a transaction's error may be, by its number)."""
    codes = {p["error_code"] for t in resp["topics"] for p in t["partitions"]}
    return sorted(e.name if (e := Error.known(code)) is not None else str(code) for code in codes)


class WireError(RuntimeError):
    """A sequence could not be driven: no coordinator for a group, or a client's connection
    failed (closed by the broker, an undecodable answer)."""


class Connection:
    """One TCP connection: a request sent, its answer read (the broker answers a
    connection's requests in order, one at a time)."""

    def __init__(self, host: str, port: int, client_id: str, timeout_s: float) -> None:
        self.client_id = client_id
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        self.correlation = 0
        self.last = ""
        # first, as every client does: the recording then shows what the broker offers (the
        # validator judges a broker's close only on a request at a version it offered)
        self.call("ApiVersions", 3, {"client_software_name": "groupspec-wire-fuzz",
                                     "client_software_version": "1"})

    def call(self, api: str, version: int, body: Mapping[str, Any]) -> dict[str, Any]:
        self.last = f"{api} v{version} {dict(body)}"
        key = VERSIONS[api][0]
        spec = spec_for(key, "request")
        assert spec is not None, api
        self.correlation += 1
        cid = self.client_id.encode("utf-8")
        header = struct.pack(">hhih", key, version, self.correlation, len(cid)) + cid
        if spec.is_flexible(version):
            header += b"\x00"  # request header v2: no tagged fields
        frame = header + encode_body(spec, version, body)
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        (size,) = struct.unpack(">i", recv_exact(self.sock, 4))
        return decode_response(recv_exact(self.sock, size), key, version)

    def close(self) -> None:
        self.sock.close()


@dataclass
class Membership:
    """What one client learned of its membership in one group from the answers."""

    member_id: str = ""
    generation: int = -1
    leader: bool = False
    members: list[str] = field(default_factory=list)
    protocol: str | None = None


@dataclass
class Client:
    """A connection, its thread, and what it knows. Requests are built in the thread, at
    send time, from what the client knows then."""

    name: str
    instance_id: str | None
    conn: Connection
    inbox: queue.Queue[Callable[[], None] | None] = field(default_factory=queue.Queue)
    groups: dict[str, Membership] = field(default_factory=dict)
    busy: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    gave_up: bool = False

    def of(self, group: str) -> Membership:
        return self.groups.setdefault(group, Membership())

    def run(self) -> None:
        while True:
            job = self.inbox.get()
            if job is None:
                return
            try:
                if self.error is None and not self.gave_up:
                    job()
            except TimeoutError:
                # no answer in the connection's timeout: the client gives up on it (the
                # recording shows the request unanswered) and sends nothing more
                self.gave_up = True
            except BaseException as e:  # kept and reported by the driver
                self.error = e
            finally:
                self.busy.clear()


@dataclass
class Sequence_:
    """One drawn sequence: its seed, the groups and topic it uses, and the steps sent."""

    seed: int
    groups: tuple[str, ...]
    topic: str
    steps: list[str] = field(default_factory=list)


class Fuzzer:
    """Draws and sends one sequence of ``ops`` steps over ``clients`` connections."""

    #: the states a ListGroups filter draws from
    list_states: tuple[str, ...] = STATES

    def __init__(self, host: str, port: int, rng: random.Random, groups: Sequence[str], topic: str,
                 clients: int = 4, statics: int = 2, timeout_s: float = 45.0,
                 txn_commits: bool = False) -> None:
        self.rng = rng
        #: TxnOffsetCommits are drawn too (KIP-447: a transactional producer committing
        #: with the consumer's member id and generation, current, stale or none); the broker
        #: must run with TXN_VERIFICATION_SETTING false. Off, a seed draws what it did before
        self.txn_commits = txn_commits
        #: the committed leader epochs (KIP-320) commits carry, drawn apart from ``rng`` so
        #: that a seed's sequence of requests is what it was before they were drawn
        self.epochs = random.Random(str(rng.getstate()[1][:8]))
        #: the retention times OffsetCommit v2-v4 carry, drawn apart from both likewise
        self.retentions = random.Random(str(rng.getstate()[1][8:16]))
        self.groups = list(groups)
        self.topic = topic
        self.lock = threading.Lock()
        self.log: list[str] = []
        #: the clients that stopped on a failed exchange (``finish``), one line each
        self.stopped: list[str] = []
        self.clients: list[Client] = []
        for i in range(clients):
            name = f"wf-c{i}"
            instance = f"wf-i{i}" if i < statics else None
            c = Client(name, instance, Connection(host, port, name, timeout_s))
            threading.Thread(target=c.run, name=name, daemon=True).start()
            self.clients.append(c)
        self._find_coordinator(timeout_s)

    def _leader_epoch(self, version: int) -> int:
        """A committed leader epoch for an OffsetCommit of ``version``: none (-1) before v6,
        which cannot carry one; from v6 on, none or a small epoch, which Kafka stores and
        OffsetFetch v5+ answers (OffsetAndMetadata.fromRequest, fetchOffsets)."""
        if version < m.OFFSET_COMMIT_LEADER_EPOCH_MIN_VERSION or self.epochs.random() < 0.4:
            return -1
        return self.epochs.randint(0, 9)

    def _retention_time(self, version: int) -> int:
        """An OffsetCommit's retention time: -1 (the broker's offsets.retention.ms) but at
        v2-v4, where it is often a short one, 0, a negative one or Long.MAX_VALUE (whose sum
        with the clock wraps into the past), kept by Kafka as the offsets' expire timestamp
        (OffsetMetadataManager.expireTimestampMs). Expiring them within a run needs the
        broker's offsets.retention.check.interval.ms short (``--broker-config``)."""
        if not 2 <= version <= 4 or self.retentions.random() < 0.4:
            return m.DEFAULT_RETENTION_TIME
        return self.retentions.choice((0, 500, 2_000, 10_000, 600_000, -5, 2**63 - 1))

    def _find_coordinator(self, timeout_s: float) -> None:
        """Ask for each group's coordinator until it is known, as a client does first: the
        broker creates the offsets topic on the first FindCoordinator, and answers group
        requests NOT_COORDINATOR until its coordinator has loaded."""
        deadline = time.monotonic() + timeout_s
        conn = self.clients[0].conn
        for g in self.groups:
            while True:
                resp = conn.call("FindCoordinator", 3, {"key": g, "key_type": 0})
                if resp["error_code"] == Error.NONE.value:
                    break
                if time.monotonic() > deadline:
                    raise WireError(f"no coordinator for {g}: {Error(resp['error_code']).name}")
                time.sleep(0.1)

    # ------------------------------------------------------------------ driving
    def run(self, ops: int, max_sleep_ms: int = 1500) -> None:
        rng = self.rng
        for _ in range(ops):
            idle = [c for c in self.clients if not c.busy.is_set() and not c.gave_up]
            if not idle or rng.random() < 0.08:
                time.sleep(rng.choice((0.02, 0.2, 0.6, max_sleep_ms / 1000)))
                continue
            c = rng.choice(idle)
            g = rng.choice(self.groups)
            step = self._draw(c, g)
            c.busy.set()
            c.inbox.put(step)
            time.sleep(rng.choice((0.0, 0.0, 0.005, 0.03)))
        self.finish()

    def finish(self, timeout_s: float = 60.0) -> None:
        """Wait for every client's last request to be answered, then close."""
        deadline = time.monotonic() + timeout_s
        for c in self.clients:
            c.inbox.put(None)
        for c in self.clients:
            while c.busy.is_set() and time.monotonic() < deadline:
                time.sleep(0.05)
        for c in self.clients:
            c.conn.close()
        # a client whose connection failed (an answer that does not decode by Kafka's schema,
        # a connection the broker closed) stopped there; the recording up to then is judged
        # all the same, and the failure is reported with it (against Kafka, a fuzzer bug;
        # against another broker, perhaps that broker's)
        self.stopped = [f"{c.name}: {c.error!r} at {c.conn.last}" for c in self.clients if c.error is not None]

    def _note(self, text: str) -> None:
        with self.lock:
            self.log.append(text)

    def _draw(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        kinds: tuple[str, ...] = ("join", "sync", "heartbeat", "leave", "commit", "fetch", "describe", "list",
                                  "delete", "offset_delete")
        weights: tuple[int, ...] = (30, 22, 18, 6, 12, 5, 3, 2, 2, 3)
        if self.txn_commits:
            kinds, weights = (*kinds, "txn_commit"), (*weights, 16)
        kind = rng.choices(kinds, weights=weights)[0]
        return {"join": self._join, "sync": self._sync, "heartbeat": self._heartbeat,
                "leave": self._leave, "commit": self._commit, "fetch": self._fetch,
                "describe": self._describe, "list": self._list, "delete": self._delete,
                "offset_delete": self._offset_delete, "txn_commit": self._txn_commit}[kind](c, g)

    def _offset_delete(self, c: Client, g: str) -> Callable[[], None]:
        """OffsetDelete (KIP-496) of some of the topic's partitions, now and then one the
        topic does not have or a topic that does not exist (the API layer answers those)."""
        rng = self.rng
        parts = sorted(rng.sample(range(TOPIC_PARTITIONS), rng.randint(1, TOPIC_PARTITIONS)))
        partitions: list[dict[str, Any]] = [{"partition_index": p} for p in parts]
        if rng.random() < 0.15:
            partitions.append({"partition_index": TOPIC_PARTITIONS + 2})
        topics: list[dict[str, Any]] = [{"name": self.topic, "partitions": partitions}]
        if rng.random() < 0.1:
            topics.append({"name": f"{self.topic}-missing", "partitions": [{"partition_index": 0}]})
        body = {"group_id": rng.choices((g, "", f"{g}-unknown"), weights=(90, 5, 5))[0], "topics": topics}

        def send() -> None:
            resp = c.conn.call("OffsetDelete", 0, body)
            errs = _partition_errors(resp)
            self._note(f"{c.name} OffsetDelete v0 {body['group_id']} -> {Error(resp['error_code']).name} {errs}")
        return send

    def _version(self, api: str) -> int:
        _, lo, hi = VERSIONS[api]
        return self.rng.randint(lo, hi)

    def _instance(self, c: Client) -> str | None:
        """The group.instance.id a request carries: the client's own, or now and then another
        client's (a second process configured with the same instance id, KIP-345's zombie)."""
        others = [x.instance_id for x in self.clients if x is not c and x.instance_id is not None]
        if others and self.rng.random() < 0.05:
            return self.rng.choice(others)
        return c.instance_id

    def _member_id(self, c: Client, g: str) -> str:
        r = self.rng.random()
        if r < 0.8:
            return c.of(g).member_id
        if r < 0.9:
            return ""
        others = [x.of(g).member_id for x in self.clients if x is not c and x.of(g).member_id]
        return self.rng.choice(others) if others else f"unknown-{self.rng.randint(0, 9)}"

    def _generation(self, c: Client, g: str) -> int:
        gen = c.of(g).generation
        return self.rng.choices((gen, gen - 1, gen + 1, -1), weights=(85, 6, 5, 4))[0]

    # ------------------------------------------------------------------ requests
    def _join(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        v = self._version("JoinGroup")
        mid = self._member_id(c, g)
        static = c.instance_id is not None and v >= 5 and rng.random() < 0.9
        session = rng.choices((10_000, MIN_SESSION_TIMEOUT_MS, 1000), weights=(90, 8, 2))[0]
        rebalance = rng.choice((1000, 2000, 10_000))
        ptype = rng.choices(("consumer", "other"), weights=(97, 3))[0]
        names = rng.choice((("range",), ("roundrobin",), ("range", "roundrobin")))
        meta = Subscription((self.topic,)).encode()
        body = {"group_id": g, "session_timeout_ms": session, "rebalance_timeout_ms": rebalance,
                "member_id": mid, "group_instance_id": self._instance(c) if static else None,
                "protocol_type": ptype, "protocols": [{"name": n, "metadata": meta} for n in names],
                "reason": rng.choice((None, "fuzz"))}

        def send() -> None:
            resp = c.conn.call("JoinGroup", v, body)
            err = Error(resp["error_code"])
            self._note(f"{c.name} JoinGroup v{v} {g} id={mid!r} -> {err.name}")
            ms = c.of(g)
            if err is Error.MEMBER_ID_REQUIRED or (err is Error.NONE and resp["member_id"]):
                ms.member_id = resp["member_id"]
            if err is Error.NONE:
                ms.generation = resp["generation_id"]
                ms.leader = resp["leader"] == resp["member_id"]
                ms.members = [m["member_id"] for m in resp.get("members", ())]
                ms.protocol = resp.get("protocol_name")
        return send

    def _sync(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        v = self._version("SyncGroup")
        ms = c.of(g)
        mid, gen = self._member_id(c, g), self._generation(c, g)
        assignments: list[dict[str, Any]] = []
        if ms.leader and rng.random() < 0.9:
            members = list(ms.members)
            if rng.random() < 0.1 and members:
                members.pop()  # a member left out
            for k, m in enumerate(members):
                parts = [p for p in range(TOPIC_PARTITIONS) if p % max(1, len(members)) == k]
                assignment = Assignment({self.topic: tuple(parts)}).encode()
                assignments.append({"member_id": m, "assignment": assignment})
        elif rng.random() < 0.05:
            assignments.append({"member_id": mid, "assignment": b""})  # a follower's assignment
        ptype = rng.choices(("consumer", None, "other"), weights=(80, 15, 5))[0]
        pname = rng.choices((ms.protocol, None, "roundrobin"), weights=(80, 15, 5))[0]
        body = {"group_id": g, "generation_id": gen, "member_id": mid,
                "group_instance_id": self._instance(c), "protocol_type": ptype, "protocol_name": pname,
                "assignments": assignments}

        def send() -> None:
            resp = c.conn.call("SyncGroup", v, body)
            self._note(f"{c.name} SyncGroup v{v} {g} gen={gen} -> {Error(resp['error_code']).name}")
        return send

    def _heartbeat(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("Heartbeat")
        mid, gen = self._member_id(c, g), self._generation(c, g)
        body = {"group_id": g, "generation_id": gen, "member_id": mid, "group_instance_id": self._instance(c)}

        def send() -> None:
            resp = c.conn.call("Heartbeat", v, body)
            self._note(f"{c.name} Heartbeat v{v} {g} gen={gen} -> {Error(resp['error_code']).name}")
        return send

    def _leave(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("LeaveGroup")
        mid = self._member_id(c, g)
        members = [{"member_id": mid, "group_instance_id": None, "reason": None}]
        if c.instance_id is not None and self.rng.random() < 0.7:
            members = [{"member_id": self.rng.choice((mid, "")), "group_instance_id": c.instance_id,
                        "reason": "fuzz"}]
        body = {"group_id": g, "member_id": mid, "members": members}

        def send() -> None:
            resp = c.conn.call("LeaveGroup", v, body)
            self._note(f"{c.name} LeaveGroup v{v} {g} -> {Error(resp['error_code']).name}")
        return send

    def _commit(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        v = self._version("OffsetCommit")
        outside = rng.random() < 0.15
        mid = "" if outside else self._member_id(c, g)
        gen = -1 if outside else self._generation(c, g)
        parts = sorted(rng.sample(range(TOPIC_PARTITIONS), rng.randint(1, TOPIC_PARTITIONS)))
        topics: list[dict[str, Any]] = [{"name": self.topic, "partitions": [
            {"partition_index": p, "committed_offset": rng.randint(0, 50),
             "committed_leader_epoch": self._leader_epoch(v), "commit_timestamp": -1,
             "committed_metadata": rng.choice(("", "m", None))} for p in parts]}]
        if rng.random() < 0.08:
            # a partition the topic does not have, or a topic that does not exist: KafkaApis
            # answers them UNKNOWN_TOPIC_OR_PARTITION from its metadata cache
            missing = {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                       "commit_timestamp": -1, "committed_metadata": ""}
            if rng.random() < 0.5:
                topics[0]["partitions"].append({**missing, "partition_index": TOPIC_PARTITIONS + 1})
            else:
                topics.append({"name": f"{self.topic}-missing", "partitions": [missing]})
        body = {"group_id": g, "generation_id_or_member_epoch": gen, "member_id": mid,
                "group_instance_id": None if outside else self._instance(c), "retention_time_ms": self._retention_time(v),
                "topics": topics}

        def send() -> None:
            resp = c.conn.call("OffsetCommit", v, body)
            errs = _partition_errors(resp)
            self._note(f"{c.name} OffsetCommit v{v} {g} gen={gen} -> {errs}")
        return send

    def _txn_commit(self, c: Client, g: str) -> Callable[[], None]:
        """TxnOffsetCommit from the client's own transactional producer (one producer id per
        client, epoch 0, its transaction never ended: the offsets stay pending). From v3 on
        it names the consumer's member id, generation and instance id as the client knows
        them (KIP-447's fencing of a zombie producer), or none (a producer outside the
        group, or an older client); now and then metadata over offset.metadata.max.bytes."""
        rng = self.rng
        # (v3+ names the member, KIP-447's fencing: drawn more often)
        v = rng.choices(range(6), weights=(1, 1, 1, 3, 3, 3))[0]
        outside = v < 3 or rng.random() < 0.15
        mid = "" if outside else self._member_id(c, g)
        gen = -1 if outside else self._generation(c, g)
        parts = sorted(rng.sample(range(TOPIC_PARTITIONS), rng.randint(1, TOPIC_PARTITIONS)))
        too_long = "x" * (METADATA_MAX_BYTES + 1)
        topics = [{"name": self.topic, "partitions": [
            {"partition_index": p, "committed_offset": rng.randint(0, 50),
             "committed_leader_epoch": rng.choice((-1, -1, 0, 3)),
             "committed_metadata": rng.choices(("", "m", None, too_long), weights=(4, 4, 2, 1))[0]}
            for p in parts]}]
        return self._txn_send(c, g, v, gen, mid, None if outside else self._instance(c), topics, f"gen={gen}")

    def _txn_send(self, c: Client, g: str, version: int, generation: int, member_id: str,
                  instance_id: str | None, topics: list[dict[str, Any]], label: str) -> Callable[[], None]:
        """A TxnOffsetCommit from the client's own transactional producer (producer id 7000
        + the client's number, epoch 0, a transaction never ended)."""
        body = {"transactional_id": f"wf-tx-{c.name}", "group_id": g,
                "producer_id": 7000 + self.clients.index(c), "producer_epoch": 0, "generation_id": generation,
                "member_id": member_id, "group_instance_id": instance_id, "topics": topics}

        def send() -> None:
            resp = c.conn.call("TxnOffsetCommit", version, body)
            self._note(f"{c.name} TxnOffsetCommit v{version} {g} {label} -> {_partition_errors(resp)}")
        return send

    def _require_stable(self, version: int) -> bool:
        """Whether an OffsetFetch asks for stable offsets (v7+): with TxnOffsetCommits
        drawn, now and then (a partition with a pending offset is then answered
        UNSTABLE_OFFSET_COMMIT), else never (a seed draws what it did before)."""
        return self.txn_commits and version >= 7 and self.rng.random() < 0.5

    def _fetch(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("OffsetFetch")
        every = self.rng.random() < 0.3 and v >= 2
        topics = None if every else [{"name": self.topic, "partition_indexes": list(range(TOPIC_PARTITIONS))}]
        body = {"group_id": g, "topics": topics, "require_stable": self._require_stable(v),
                "groups": [{"group_id": g, "member_id": None, "member_epoch": -1, "topics": topics}]}

        def send() -> None:
            c.conn.call("OffsetFetch", v, body)
            self._note(f"{c.name} OffsetFetch v{v} {g}")
        return send

    def _describe(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("DescribeGroups")
        body = {"groups": self.rng.choice(([g], self.groups)), "include_authorized_operations": False}

        def send() -> None:
            c.conn.call("DescribeGroups", v, body)
            self._note(f"{c.name} DescribeGroups v{v}")
        return send

    def _list(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("ListGroups")
        states = self.rng.sample(self.list_states, self.rng.randint(0, 2))
        types = self.rng.sample(TYPES, self.rng.randint(0, 2)) if v >= 5 else []
        body = {"states_filter": states, "types_filter": types}

        def send() -> None:
            c.conn.call("ListGroups", v, body)
            self._note(f"{c.name} ListGroups v{v} {states} {types}")
        return send

    def _delete(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("DeleteGroups")
        body = {"groups_names": self.rng.choice(([g], [g, g], self.groups))}

        def send() -> None:
            resp = c.conn.call("DeleteGroups", v, body)
            self._note(f"{c.name} DeleteGroups v{v} {g} -> "
                       f"{[Error(r['error_code']).name for r in resp['results']]}")
        return send


@dataclass
class ConsumerMembership:
    """What one client learned of its membership in one consumer group (KIP-848)."""

    member_id: str = ""
    epoch: int = 0
    #: topic id -> partitions, as the last assignment the broker sent
    assignment: dict[bytes, list[int]] = field(default_factory=dict)
    subscribed: tuple[str, ...] = ()


class ConsumerFuzzer(Fuzzer):
    """Consumer groups (KIP-848): ConsumerGroupHeartbeat v0-v1 joins, heartbeats with the
    partitions owned, stale and future epochs, unknown member ids, subscription and assignor
    changes, leaves (-1) and static leaves (-2); OffsetCommit v9 and OffsetFetch v9 with
    member epochs; ConsumerGroupDescribe and ListGroups; pauses that let sessions and
    rebalance timeouts run out."""

    list_states = CONSUMER_STATES

    def __init__(self, host: str, port: int, rng: random.Random, groups: Sequence[str],
                 topics: Mapping[str, int], clients: int = 4, statics: int = 2, timeout_s: float = 45.0,
                 txn_commits: bool = False) -> None:
        self.topics = dict(topics)
        self.topic_ids: dict[str, bytes] = {}
        self.states: dict[tuple[str, str], ConsumerMembership] = {}
        super().__init__(host, port, rng, groups, next(iter(topics)), clients, statics, timeout_s, txn_commits)
        self._learn_topic_ids()

    def _learn_topic_ids(self) -> None:
        """Metadata for the topics, as a client asks first: their ids (a consumer group's
        heartbeat names topics by id), and the image the recording shows the validator."""
        resp = self.clients[0].conn.call("Metadata", 12, {
            "topics": [{"topic_id": b"\x00" * 16, "name": t} for t in self.topics],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
        for t in resp["topics"]:
            self.topic_ids[t["name"]] = bytes(t["topic_id"])

    def state(self, c: Client, g: str) -> ConsumerMembership:
        return self.states.setdefault((c.name, g), ConsumerMembership())

    def _draw(self, c: Client, g: str) -> Callable[[], None]:
        kinds: tuple[str, ...] = ("heartbeat", "leave", "commit", "fetch", "describe", "list")
        weights: tuple[int, ...] = (75, 7, 12, 6, 8, 4)
        if self.txn_commits:
            kinds, weights = (*kinds, "txn_commit"), (*weights, 10)
        kind = self.rng.choices(kinds, weights=weights)[0]
        return {"heartbeat": self._consumer_heartbeat, "leave": self._consumer_leave,
                "commit": self._consumer_commit, "fetch": self._consumer_fetch,
                "describe": self._consumer_describe, "list": self._list,
                "txn_commit": self._consumer_txn_commit}[kind](c, g)

    def _consumer_describe(self, c: Client, g: str) -> Callable[[], None]:
        v = self._version("ConsumerGroupDescribe")
        body = {"group_ids": self.rng.choice(([g], list(self.groups))), "include_authorized_operations": False}

        def send() -> None:
            resp = c.conn.call("ConsumerGroupDescribe", v, body)
            states = [(d["group_id"], d["group_state"], d["group_epoch"]) for d in resp["groups"]]
            self._note(f"{c.name} ConsumerGroupDescribe v{v} -> {states}")
        return send

    def _subscription(self) -> list[str]:
        names = sorted(self.topics)
        return self.rng.choice((names[:1], names[1:], names))

    def _consumer_heartbeat(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        st = self.state(c, g)
        v = self._version("ConsumerGroupHeartbeat")
        joining = st.epoch == 0 or rng.random() < 0.05
        member = st.member_id
        if joining and (not member or rng.random() < 0.3):
            # v1: the client names itself (KIP-1082); v0: the broker names it
            member = uuid.uuid4().hex[:22] if v >= 1 else ""
        elif rng.random() < 0.06:
            member = rng.choice(("", f"unknown-{rng.randint(0, 9)}"))
        epoch = 0 if joining else rng.choices((st.epoch, st.epoch - 1, st.epoch + 1), weights=(88, 7, 5))[0]
        subscribe: list[str] | None = None
        if joining or rng.random() < 0.08:
            subscribe = self._subscription()
        owned = [{"topic_id": tid, "partitions": list(ps)} for tid, ps in sorted(st.assignment.items())]
        if not joining and rng.random() < 0.05 and owned:
            owned = owned[:-1]  # a partition left out of what the member says it owns
        body = {"group_id": g, "member_id": member, "member_epoch": epoch,
                "instance_id": self._instance(c), "rack_id": None,
                "rebalance_timeout_ms": rng.choice((2000, 5000)) if joining else -1,
                "subscribed_topic_names": subscribe, "subscribed_topic_regex": None,
                "server_assignor": rng.choices((None, "uniform", "range"), weights=(6, 2, 2))[0] if joining else None,
                "topic_partitions": [] if joining else (owned if rng.random() < 0.6 else None)}

        def send() -> None:
            resp = c.conn.call("ConsumerGroupHeartbeat", v, body)
            err = Error(resp["error_code"])
            self._note(f"{c.name} ConsumerGroupHeartbeat v{v} {g} epoch={epoch} -> {err.name}")
            if err is Error.NONE:
                st.member_id = resp["member_id"] or member
                st.epoch = resp["member_epoch"]
                if subscribe is not None:
                    st.subscribed = tuple(subscribe)
                if resp["assignment"] is not None:
                    st.assignment = {bytes(tp["topic_id"]): list(tp["partitions"])
                                     for tp in resp["assignment"]["topic_partitions"]}
            elif err in (Error.FENCED_MEMBER_EPOCH, Error.UNKNOWN_MEMBER_ID):
                # as a consumer does: give up its partitions and join again
                st.epoch, st.assignment = 0, {}
        return send

    def _consumer_leave(self, c: Client, g: str) -> Callable[[], None]:
        st = self.state(c, g)
        v = self._version("ConsumerGroupHeartbeat")
        epoch = -2 if c.instance_id is not None and self.rng.random() < 0.6 else -1
        body = {"group_id": g, "member_id": st.member_id, "member_epoch": epoch,
                "instance_id": c.instance_id, "rack_id": None, "rebalance_timeout_ms": -1,
                "subscribed_topic_names": None, "subscribed_topic_regex": None,
                "server_assignor": None, "topic_partitions": None}

        def send() -> None:
            resp = c.conn.call("ConsumerGroupHeartbeat", v, body)
            self._note(f"{c.name} ConsumerGroupHeartbeat v{v} {g} leave {epoch} -> "
                       f"{Error(resp['error_code']).name}")
            st.epoch, st.assignment = 0, {}
        return send

    def _commit_target(self, c: Client, g: str) -> tuple[bool, int, str, list[int]]:
        """Whom a consumer-group commit names and what: from outside the group (no member,
        epoch -1) or as the member at its epoch, a stale or a future one; a topic and some
        of its partitions."""
        rng = self.rng
        st = self.state(c, g)
        outside = rng.random() < 0.15
        epoch = -1 if outside else rng.choices((st.epoch, st.epoch - 1, st.epoch + 1), weights=(85, 10, 5))[0]
        topic = rng.choice(sorted(self.topics))
        parts = sorted(rng.sample(range(self.topics[topic]), rng.randint(1, self.topics[topic])))
        return outside, epoch, topic, parts

    def _consumer_commit(self, c: Client, g: str) -> Callable[[], None]:
        rng = self.rng
        st = self.state(c, g)
        outside, epoch, topic, parts = self._commit_target(c, g)
        body = {"group_id": g, "generation_id_or_member_epoch": epoch, "member_id": "" if outside else st.member_id,
                "group_instance_id": None, "retention_time_ms": -1,
                "topics": [{"name": topic, "partitions": [
                    {"partition_index": p, "committed_offset": rng.randint(0, 50),
                     "committed_leader_epoch": self._leader_epoch(9),
                     "commit_timestamp": -1, "committed_metadata": ""} for p in parts]}]}

        def send() -> None:
            resp = c.conn.call("OffsetCommit", 9, body)
            errs = _partition_errors(resp)
            self._note(f"{c.name} OffsetCommit v9 {g} epoch={epoch} -> {errs}")
        return send

    def _consumer_txn_commit(self, c: Client, g: str) -> Callable[[], None]:
        """TxnOffsetCommit v5 from the client's own transactional producer (as the classic
        fuzzer's) naming the member's id and epoch (its generation id field), a stale or a
        future one, or none."""
        rng = self.rng
        st = self.state(c, g)
        outside, epoch, topic, parts = self._commit_target(c, g)
        topics = [{"name": topic, "partitions": [
            {"partition_index": p, "committed_offset": rng.randint(0, 50), "committed_leader_epoch": -1,
             "committed_metadata": rng.choice(("", "m"))} for p in parts]}]
        return self._txn_send(c, g, 5, epoch, "" if outside else st.member_id, None, topics, f"epoch={epoch}")

    def _consumer_fetch(self, c: Client, g: str) -> Callable[[], None]:
        st = self.state(c, g)
        member = st.member_id if self.rng.random() < 0.8 else None
        body = {"group_id": g, "topics": None, "require_stable": self._require_stable(9),
                "groups": [{"group_id": g, "member_id": member, "member_epoch": st.epoch if member else -1,
                            "topics": None}]}

        def send() -> None:
            c.conn.call("OffsetFetch", 9, body)
            self._note(f"{c.name} OffsetFetch v9 {g}")
        return send


@dataclass
class SequenceResult:
    """One recorded sequence and its verdicts. The fuzzer's clients break the client
    rules on purpose (they keep sending after being fenced, commit for others), so only
    divergences on the broker's side are findings."""

    seed: int
    trace: Path
    #: how many groups the sequence used (its requests may name others too: an unknown group)
    groups: int
    verdicts: dict[str, str]
    #: the broker-side divergences and what was missing, one line each
    details: list[str]
    #: how many client-side divergences the validator named (expected)
    client_findings: int
    log: list[str]
    #: the fuzzer's clients that stopped on a failed exchange (an answer that did not decode,
    #: a closed connection), one line each
    stopped: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        """Groups with a divergence of the broker's."""
        return sorted({d.split(" ", 1)[0] for d in self.details
                       if " line " in d and not d.startswith("problem:")})


def run_sequence(upstream: tuple[str, int], seed: int, out_dir: Path, ops: int = 60,
                 broker: str = "kafka", group_protocol: str = "classic",
                 broker_config: Mapping[str, int] | None = None, txn_commits: bool = False) -> SequenceResult:
    """Record one sequence through a fresh recorder and judge the recording (classic groups,
    or consumer groups with ``group_protocol="consumer"``). ``broker_config``: settings the
    broker runs with (Kafka's names), written into the recording's header, from which the
    validator takes them. ``txn_commits``: TxnOffsetCommits are sent too, and some fetches
    ask for stable offsets (the broker must run with TXN_VERIFICATION_SETTING false)."""
    from groupspec.conformance.runner import prepare_topics, validation_config
    from groupspec.recorder import BackgroundRecorder
    from groupspec.validate import validate_path
    from groupspec.validate.validator import with_broker_config

    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:6]
    groups = tuple(f"wf-{seed}-{tag}-g{i}" for i in range(rng.choice((1, 2))))
    topic = f"wf-{seed}-{tag}-t"
    topics = {topic: TOPIC_PARTITIONS}
    if group_protocol == "consumer":
        topics[f"wf-{seed}-{tag}-u"] = 2
    prepare_topics(f"{upstream[0]}:{upstream[1]}", topics)
    out_dir.mkdir(parents=True, exist_ok=True)
    trace = out_dir / f"wire-fuzz-{group_protocol}-{seed}.jsonl"
    with open(trace, "w", encoding="utf-8") as out, BackgroundRecorder(
        upstream, out, cluster=broker, note=f"groupspec wire fuzz, seed {seed}",
        broker_config=dict(broker_config or {}),
    ) as rec:
        host, _, port = rec.address.rpartition(":")
        fz = (ConsumerFuzzer(host, int(port), rng, groups, topics, txn_commits=txn_commits)
              if group_protocol == "consumer"
              else Fuzzer(host, int(port), rng, groups, topic, txn_commits=txn_commits))
        fz.run(ops)
    # the settings the broker runs with, as given (over those validation_config assumes)
    config = with_broker_config(validation_config(broker, group_protocol), dict(broker_config or {}), keep=False)
    report = validate_path(trace, config)
    verdicts = {v.group_id: v.verdict for v in report.groups}
    found = [(v, d) for v in report.groups for d in v.divergences if d.side != "client"]
    details = [f"{v.group_id} line {d.line}: {d.api} {d.rule} (broker answered {d.broker_answered}, "
               f"allowed {'/'.join(d.protocol_allows)}): {d.detail}" for v, d in found]
    details += [f"{v.group_id} missing: {x.what} (line {x.line})" for v in report.groups for x in v.missing]
    details += [f"problem: {p.kind} line {p.line}: {p.message}" for p in report.problems
                if p.kind not in ("missing_response",)]
    clients = sum(1 for v in report.groups for d in v.divergences if d.side == "client")
    return SequenceResult(seed, trace, len(groups), verdicts, details, clients, fz.log, list(fz.stopped))


def _broker_setting_arg(text: str) -> tuple[str, str]:
    try:
        return broker_setting(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m groupspec.conformance.wire_fuzz", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--broker", default="kafka", help="kafka (started here) or HOST:PORT of a running broker")
    p.add_argument("--settings", choices=("groupspec", "kafka-defaults"), default=None,
                   help="the broker's group settings the validator assumes: those of the Kafka broker "
                        "groupspec starts (the default with --broker kafka), or Kafka's defaults (the "
                        "default for a broker at HOST:PORT)")
    p.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic",
                   help="classic groups (JoinGroup, SyncGroup, ...) or consumer groups (KIP-848: "
                        "ConsumerGroupHeartbeat, and commits and fetches with member epochs)")
    p.add_argument("--sequences", type=int, default=5)
    p.add_argument("--ops", type=int, default=60, help="steps per sequence (default 60)")
    p.add_argument("--seed", type=int, default=None, help="the first sequence's seed (default: random)")
    p.add_argument("--out", type=Path, default=Path("wire-fuzz"), help="where the recordings go")
    p.add_argument("--group-max-size", type=int, default=None, metavar="N",
                   help="start the broker with group.max.size and group.consumer.max.size N (the "
                        "fuzzer's four connections then meet GROUP_MAX_SIZE_REACHED; with --broker "
                        "HOST:PORT, the size that broker runs with)")
    p.add_argument("--broker-config", type=_broker_setting_arg, action="append", default=[], metavar="NAME=VALUE",
                   help="a broker setting the reference models, by Kafka's name (repeatable): the broker "
                        "started here runs with it (with --broker HOST:PORT, that broker does), and each "
                        "recording's header carries it for the validator")
    p.add_argument("--txn-commits", action="store_true",
                   help="send TxnOffsetCommits too (KIP-447), from one transactional "
                        f"producer per connection; the broker started here runs with {TXN_VERIFICATION_SETTING}"
                        "=false (with --broker HOST:PORT, that broker must), so that they reach the group "
                        "coordinator's checks")
    a = p.parse_args(argv)
    if a.group_max_size is not None and a.group_max_size < 1:
        p.error(f"--group-max-size: at least 1, got {a.group_max_size}")
    sizes = {} if a.group_max_size is None else {name: a.group_max_size for name in MAX_SIZE_SETTINGS}
    sizes.update({name: int(value) for name, value in a.broker_config})
    try:
        CoordinatorConfig().with_broker_settings(sizes)
    except ValueError as e:
        p.error(f"--broker-config: {e}")
    first = a.seed if a.seed is not None else random.randrange(1 << 30)
    if a.broker == "kafka":
        from groupspec.brokers import KafkaBroker

        props = {k: str(v) for k, v in sizes.items()}
        if a.txn_commits:
            props[TXN_VERIFICATION_SETTING] = "false"
        ctx: Any = KafkaBroker(properties=props)
    else:
        ctx = None
    broker = ctx.start() if ctx is not None else None
    try:
        if broker is not None:
            upstream = (broker.host, broker.port)
        else:
            host, _, port = a.broker.rpartition(":")
            upstream = (host, int(port))
        # the header carries every setting known: all the reference models of a broker
        # started here, else those given
        known = broker.group_settings() if broker is not None else sizes
        bad = 0
        for k in range(a.sequences):
            settings = a.settings or ("groupspec" if broker is not None else "kafka-defaults")
            r = run_sequence(upstream, first + k, a.out, a.ops, "kafka" if settings == "groupspec" else a.broker,
                             a.group_protocol, known, txn_commits=a.txn_commits)
            worst = sorted(set(r.verdicts.values()))
            print(f"seed {r.seed}: {worst}, {len(r.violations)} group(s) with a broker divergence, "
                  f"{r.client_findings} client divergence(s) ({r.trace})", flush=True)
            for d in r.details:
                print(f"  {d}", flush=True)
            for s in r.stopped:
                print(f"  client stopped: {s}", flush=True)
            bad += bool(r.violations or r.stopped)
        return 1 if bad else 0
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    sys.exit(main())
