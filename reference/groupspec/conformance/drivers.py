"""Client drivers: one real consumer (kafka-python or confluent-kafka) in its own process,
driven by commands on stdin and reporting on stdout, both JSON Lines.

A scenario needs to do to a consumer what an application or a fault does: let it poll,
stop it polling (a slow handler), commit, close it, or kill it outright (``SIGKILL``) or
freeze it (``SIGSTOP``/``SIGCONT``) so that its heartbeats stop too. A process per member
makes the last two possible for both libraries (librdkafka runs its own threads; a
frozen thread inside the test process would freeze nothing else), and keeps each
library's global state apart.

With ``group_protocol`` ``consumer`` (KIP-848) the member is confluent-kafka with
``group.protocol=consumer`` here, or kafka-clients' Java consumer in a JVM
(``groupspec/jvm/java/groupspec/conformance/ConsumerDriver.java``, the same commands and
events; :func:`groupspec.conformance.members.member_command` starts either).

Run as ``python -m groupspec.conformance.drivers CONFIG_JSON``. The member polls every
100 ms while it is *polling*; it prints ``{"ev": "status", ...}`` whenever its assignment
or its count of consumed records changes, and answers each command with
``{"ev": "reply", "op": ..., "ok": ..., "error": ...}``. Commands:

- ``{"op": "pause"}`` / ``{"op": "resume"}``: stop / start calling poll (heartbeats go on
  in the library's background thread until ``max.poll.interval.ms`` runs out);
- ``{"op": "commit"}``: a synchronous commit of the current positions of the assignment;
  the reply names the error the library raised, if any (``retries`` retries a commit that
  failed locally because the coordinator was not known yet);
- ``{"op": "remember"}`` then later ``{"op": "zombie_commit"}``: commit the positions
  noted at ``remember`` as a member that missed a rebalance would (see each driver);
- ``{"op": "subscribe", "topics": [...]}`` (or ``"regex": ...``): change the
  subscription (consumer protocol);
- ``{"op": "metadata", "topics": [...]}``: look the topics up (a Metadata request on
  the member's connections; consumer protocol);
- ``{"op": "close"}``: close the consumer (a dynamic member sends LeaveGroup; a static
  one does not) and exit;
- ``{"op": "status"}``: print the status now.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

CLIENTS = ("kafka-python", "confluent-kafka")
#: the client libraries of the consumer-protocol suite (``group.protocol=consumer``)
CONSUMER_CLIENTS = ("confluent-kafka", "java")
#: the group protocols a member may speak
GROUP_PROTOCOLS = ("classic", "consumer")
STRATEGIES = ("range", "roundrobin", "cooperative-sticky")


@dataclass(frozen=True)
class MemberConfig:
    """What a member is: its library, group, identity and timeouts (the scenario's knobs)."""

    client: str
    bootstrap: str
    group_id: str
    client_id: str
    topics: tuple[str, ...]
    strategy: str = "range"
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 500
    max_poll_interval_ms: int = 10000
    group_instance_id: str | None = None
    #: "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848: the session timeout and
    #: heartbeat interval are the broker's; max.poll.interval.ms is the rebalance timeout)
    group_protocol: str = "classic"
    #: subscribe to this regular expression (consumer protocol, the broker resolves it)
    #: rather than to ``topics``
    topic_regex: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MemberConfig:
        data = json.loads(text)
        data["topics"] = tuple(data["topics"])
        return cls(**data)


@dataclass
class _State:
    assignment: list[tuple[str, int]] = field(default_factory=list)
    consumed: int = 0


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


#: how long kafka-python's poll(timeout_ms=100) may go without returning before its
#: pending waits are released (_KafkaPython._watch_poll)
POLL_STUCK_S = 3.0


class _KafkaPython:
    """kafka-python's KafkaConsumer (its classic group protocol; cooperative-sticky is
    kafka-python's own port of KIP-429)."""

    def __init__(self, cfg: MemberConfig) -> None:
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        # the library's own account of joining, syncing and heartbeating goes to this
        # member's log (stderr): when a scenario stalls, the run error quotes its tail
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                            format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
        logging.getLogger("kafka.coordinator").setLevel(logging.INFO)
        assignor = {
            "range": RangePartitionAssignor,
            "roundrobin": RoundRobinPartitionAssignor,
            "cooperative-sticky": CooperativeStickyAssignor,
        }[cfg.strategy]
        self.consumer: Any = KafkaConsumer(
            bootstrap_servers=cfg.bootstrap,
            group_id=cfg.group_id,
            client_id=cfg.client_id,
            group_instance_id=cfg.group_instance_id,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=cfg.session_timeout_ms,
            heartbeat_interval_ms=cfg.heartbeat_interval_ms,
            max_poll_interval_ms=cfg.max_poll_interval_ms,
            partition_assignment_strategy=[assignor],
        )
        # kafka-python 3.0.12 can join before its first Metadata answer: as leader it then
        # assigns nothing ("No partition metadata"), rejoins when the metadata comes, and in
        # about one run in fifteen on a loaded machine it stops after that second SyncGroup
        # is answered (no assignment, no more heartbeats or joins; the broker answered it
        # right). Knowing the topics before subscribing takes that path away; what is under
        # test is the broker, and this changes nothing the broker is sent but the timing.
        for topic in cfg.topics:
            self.consumer.partitions_for_topic(topic)
        self.consumer.subscribe(list(cfg.topics))
        self._poll_started: float | None = None
        self.released = 0
        threading.Thread(target=self._watch_poll, name="poll-watchdog", daemon=True).start()

    def poll(self) -> int:
        self._poll_started = time.monotonic()
        try:
            batches = self.consumer.poll(timeout_ms=100)
        finally:
            self._poll_started = None
        return sum(len(records) for records in batches.values())

    def _watch_poll(self) -> None:
        """A guard against a poll(timeout_ms=100) that never returns: kafka-python 3.0.12's
        application thread waits in NetworkSelector.run for work its I/O thread is to do,
        and a stall under CPU starvation was seen with that thread waiting there
        (docs/conformance.md). A poll that has not returned for POLL_STUCK_S has its
        pending waits failed with KafkaTimeoutError, which is what their own timeout does
        and what the fetcher handles as "no records yet"; each release is logged and
        reported (``released``), and a stuck poll with nothing to release is logged too."""
        from kafka.errors import KafkaTimeoutError

        while True:
            time.sleep(0.5)
            started = self._poll_started
            if started is None or time.monotonic() - started < POLL_STUCK_S:
                continue
            net = self.consumer._net
            with net._pending_waiters_lock:
                waiting = list(net._pending_waiters.items())
                stuck = [(event, state) for event, state in waiting if not event.is_set()]
                if not stuck:
                    print(f"conformance driver: poll stuck for {time.monotonic() - started:.1f} s "
                          f"with {len(waiting)} pending wait(s), none to release",
                          file=sys.stderr, flush=True)
                for event, state in stuck:
                    if state.get("exception") is None:
                        state["exception"] = KafkaTimeoutError("released by the conformance driver")
                    event.set()
            if stuck:
                self.released += 1
                print(f"conformance driver: poll stuck for {time.monotonic() - started:.1f} s; "
                      f"released {len(stuck)} pending wait(s) as their timeout would",
                      file=sys.stderr, flush=True)
                _emit({"ev": "released", "waits": len(stuck)})

    def assignment(self) -> list[tuple[str, int]]:
        return sorted((tp.topic, tp.partition) for tp in self.consumer.assignment())

    def commit(self) -> None:
        self.consumer.commit()

    def close(self) -> None:
        self.consumer.close(autocommit=False)

    def remember(self) -> dict[str, Any]:
        """Note the generation and positions now (what a zombie will later commit)."""
        coordinator = self.consumer._coordinator
        with coordinator._lock:
            self._remembered = (coordinator._generation, coordinator.state)
        self._positions = {tp: self.consumer.position(tp) for tp in self.consumer.assignment()}
        gen = self._remembered[0]
        return {"generation": gen.generation_id, "member_id": gen.member_id}

    def zombie_commit(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Commit the remembered positions with the remembered generation and member id,
        as a member that missed the rebalance would: kafka-python's own commit path, with
        its generation set back to the remembered one for this commit."""
        from kafka.structs import OffsetAndMetadata

        coordinator = self.consumer._coordinator
        with coordinator._lock:
            current = (coordinator._generation, coordinator.state)
            coordinator._generation, coordinator.state = self._remembered
        try:
            self.consumer.commit({tp: OffsetAndMetadata(off, "", -1)
                                  for tp, off in self._positions.items()})
        finally:
            with coordinator._lock:
                coordinator._generation, coordinator.state = current
        return {}


class _Confluent:
    """confluent-kafka's Consumer (librdkafka's classic group protocol)."""

    def __init__(self, cfg: MemberConfig) -> None:
        from confluent_kafka import Consumer

        conf: dict[str, Any] = {
            "bootstrap.servers": cfg.bootstrap,
            "group.id": cfg.group_id,
            "client.id": cfg.client_id,
            "group.protocol": "classic",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": cfg.session_timeout_ms,
            "heartbeat.interval.ms": cfg.heartbeat_interval_ms,
            "max.poll.interval.ms": cfg.max_poll_interval_ms,
            "partition.assignment.strategy": cfg.strategy,
            # the broker's Metadata says where partitions live; keep librdkafka from
            # asking too often on a proxy it does not know
            "topic.metadata.refresh.interval.ms": 10000,
        }
        if cfg.group_instance_id is not None:
            conf["group.instance.id"] = cfg.group_instance_id
        self.consumer: Any = Consumer(conf)
        self.consumer.subscribe(list(cfg.topics))

    def poll(self) -> int:
        msgs = self.consumer.consume(num_messages=100, timeout=0.1)
        return sum(1 for msg in msgs if msg.error() is None)

    def assignment(self) -> list[tuple[str, int]]:
        return sorted((tp.topic, tp.partition) for tp in self.consumer.assignment())

    def commit(self) -> None:
        from confluent_kafka import TopicPartition

        assigned = self.consumer.assignment()
        positions = self.consumer.position(assigned) if assigned else []
        # commit what was consumed; a partition with nothing fetched yet commits 0
        offsets = [TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0)
                   for tp in positions]
        if not offsets:
            raise RuntimeError("nothing assigned to commit")
        self.consumer.commit(offsets=offsets, asynchronous=False)

    def close(self) -> None:
        self.consumer.close()

    def remember(self) -> dict[str, Any]:
        assigned = self.consumer.assignment()
        self._positions = [tp for tp in self.consumer.position(assigned) if tp.offset >= 0]
        return {"member_id": self.consumer.memberid()}

    def zombie_commit(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Commit the remembered positions: librdkafka sends them with the generation it
        holds (it has no way to set one); after a freeze that is the old one until it has
        noticed that its session expired."""
        if not self._positions:
            raise RuntimeError("nothing was remembered to commit")
        self.consumer.commit(offsets=self._positions, asynchronous=False)
        return {}


class CommitRefused(RuntimeError):
    """The broker refused a commit the driver sent itself; ``args[0]`` is the error's name."""

    def name(self) -> str:
        return str(self.args[0])


def raw_offset_commit(
    bootstrap: str, client_id: str, group_id: str, member_id: str, member_epoch: int,
    instance_id: str | None, offsets: list[tuple[str, int, int]], timeout_s: float = 15.0,
) -> list[tuple[str, int, str]]:
    """Send one OffsetCommit v9 (the first version with a member epoch, KIP-848) on a
    connection of its own to the first bootstrap address, under ``client_id``, and return
    the broker's error per partition: the commit of a member at an epoch of the caller's
    choosing, which no consumer API offers."""
    from groupspec.conformance.wire_fuzz import Connection
    from groupspec.protocol.errors import Error

    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition, offset in offsets:
        topics.setdefault(topic, []).append({
            "partition_index": partition, "committed_offset": offset,
            "committed_leader_epoch": -1, "committed_metadata": ""})
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    conn = Connection(host, int(port), client_id, timeout_s)
    try:
        answer = conn.call("OffsetCommit", 9, {
            "group_id": group_id, "generation_id_or_member_epoch": member_epoch,
            "member_id": member_id, "group_instance_id": instance_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in sorted(topics.items())],
        })
    finally:
        conn.close()
    out: list[tuple[str, int, str]] = []
    for t in answer["topics"]:
        for p in t["partitions"]:
            out.append((t["name"], p["partition_index"], Error(p["error_code"]).name))
    return out


class _ConfluentConsumer(_Confluent):
    """confluent-kafka's Consumer with ``group.protocol=consumer`` (librdkafka's KIP-848
    client). The session timeout and heartbeat interval are the broker's (librdkafka
    refuses its classic settings); ``max.poll.interval.ms`` is the rebalance timeout. The
    subscription carries rebalance callbacks, so revocations complete in the application's
    poll: a member that stops polling keeps its partitions."""

    def __init__(self, cfg: MemberConfig) -> None:
        from confluent_kafka import Consumer

        self.cfg = cfg
        conf: dict[str, Any] = {
            "bootstrap.servers": cfg.bootstrap,
            "group.id": cfg.group_id,
            "client.id": cfg.client_id,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "max.poll.interval.ms": cfg.max_poll_interval_ms,
            "topic.metadata.refresh.interval.ms": 10000,
        }
        if cfg.group_instance_id is not None:
            conf["group.instance.id"] = cfg.group_instance_id
        self.consumer = Consumer(conf)
        self._positions: list[Any] = []
        self._member_id = ""
        self.subscribed = False
        self.subscribe(list(cfg.topics), cfg.topic_regex)

    def subscribe(self, topics: list[str], regex: str | None) -> None:
        """Subscribe (again); with no topics and no regex, not yet (the member waits)."""
        # librdkafka takes a topic starting with "^" as a regular expression
        wanted = [regex if regex.startswith("^") else "^" + regex] if regex is not None else topics
        if not wanted:
            return
        self.consumer.subscribe(wanted, on_assign=_noop_rebalance, on_revoke=_noop_rebalance)
        self.subscribed = True

    def metadata(self, topics: list[str]) -> dict[str, int]:
        """Partitions per topic, as a Metadata request for each topic answers."""
        out: dict[str, int] = {}
        for t in topics:
            meta = self.consumer.list_topics(topic=t, timeout=10)
            out[t] = len(meta.topics[t].partitions) if t in meta.topics else -1
        return out

    def remember(self) -> dict[str, Any]:
        out = super().remember()
        self._member_id = str(out.get("member_id") or "")
        return out

    def zombie_commit(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The remembered positions committed with the member id and epoch the command
        names (the scenario reads them from the recording: librdkafka does not tell its
        member epoch), sent by :func:`raw_offset_commit`: librdkafka commits only with
        the epoch it holds."""
        if not self._positions:
            raise RuntimeError("nothing was remembered to commit")
        member_id = str(cmd.get("member_id") or self._member_id)
        epoch = int(cmd["member_epoch"])
        answers = raw_offset_commit(
            self.cfg.bootstrap, self.cfg.client_id, self.cfg.group_id, member_id, epoch,
            self.cfg.group_instance_id,
            [(tp.topic, tp.partition, tp.offset) for tp in self._positions])
        info = {"member_id": member_id, "member_epoch": epoch,
                "partitions": [f"{t}-{p}: {e}" for t, p, e in answers]}
        refused = [e for _, _, e in answers if e != "NONE"]
        if refused:
            raise CommitRefused(refused[0], info)
        return info


def _noop_rebalance(consumer: Any, partitions: Any) -> None:
    """A rebalance callback that does nothing: confluent-kafka then (un)assigns itself, in
    the application's poll."""


def _error_name(e: BaseException) -> str:
    """The name a library gives an error: librdkafka's code name, kafka-python's class."""
    args = getattr(e, "args", ())
    if args and hasattr(args[0], "name") and callable(args[0].name):
        return str(args[0].name())
    return type(e).__name__


def _reader(commands: queue.Queue[dict[str, Any] | None]) -> None:
    for line in sys.stdin:
        line = line.strip()
        if line:
            commands.put(json.loads(line))
    commands.put(None)  # stdin closed: the controller is gone


def _retryable(name: str) -> bool:
    return name in {"CoordinatorNotAvailableError", "NodeNotReadyError",
                    "_WAIT_COORD", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR",
                    "KafkaConnectionError", "_TRANSPORT"}


def _driver(cfg: MemberConfig) -> _KafkaPython | _Confluent:
    if cfg.group_protocol == "consumer":
        if cfg.client != "confluent-kafka":
            raise ValueError(f"no Python driver for {cfg.client} with group.protocol=consumer")
        return _ConfluentConsumer(cfg)
    return _KafkaPython(cfg) if cfg.client == "kafka-python" else _Confluent(cfg)


def run(cfg: MemberConfig) -> int:
    # SIGUSR1 writes every thread's stack to stderr (the member's log): a stalled scenario
    # asks for it, so its run error shows where the library waits
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    driver = _driver(cfg)
    commands: queue.Queue[dict[str, Any] | None] = queue.Queue()
    threading.Thread(target=_reader, args=(commands,), daemon=True).start()
    state = _State()
    polling = True
    _emit({"ev": "started", "pid": os.getpid()})
    last: tuple[list[tuple[str, int]], int] | None = None
    while True:
        try:
            cmd = commands.get_nowait()
        except queue.Empty:
            cmd = {}
        if cmd is None:
            driver.close()
            return 0
        op = cmd.get("op")
        if op == "pause":
            polling = False
            _emit({"ev": "reply", "op": op, "ok": True})
        elif op == "resume":
            polling = True
            _emit({"ev": "reply", "op": op, "ok": True})
        elif op == "remember":
            _emit({"ev": "reply", "op": op, "ok": True, **driver.remember()})
        elif op == "metadata" and isinstance(driver, _ConfluentConsumer):
            try:
                found = driver.metadata(list(cmd.get("topics") or []))
                _emit({"ev": "reply", "op": op, "ok": True, "error": None, "partitions": found})
            except Exception as e:
                _emit({"ev": "reply", "op": op, "ok": False, "error": _error_name(e)})
        elif op == "subscribe" and isinstance(driver, _ConfluentConsumer):
            try:
                driver.subscribe(list(cmd.get("topics") or []), cmd.get("regex"))
                _emit({"ev": "reply", "op": op, "ok": True, "error": None})
            except Exception as e:
                _emit({"ev": "reply", "op": op, "ok": False, "error": _error_name(e)})
        elif op in ("commit", "zombie_commit"):
            error: str | None = None
            extra: dict[str, Any] = {}
            for attempt in range(int(cmd.get("retries", 0)) + 1):
                try:
                    if op == "commit":
                        driver.commit()
                    else:
                        extra = driver.zombie_commit(cmd)
                    error = None
                    break
                except CommitRefused as e:
                    error, extra = e.name(), e.args[1]
                    break
                except Exception as e:
                    error = _error_name(e)
                    if not _retryable(error) or attempt == int(cmd.get("retries", 0)):
                        break
                    time.sleep(0.2)
            _emit({"ev": "reply", "op": op, "ok": error is None, "error": error, **extra})
        elif op == "close":
            try:
                driver.close()
                _emit({"ev": "reply", "op": op, "ok": True})
            except Exception as e:
                _emit({"ev": "reply", "op": op, "ok": False, "error": _error_name(e)})
            return 0
        elif op == "status":
            last = None
        if polling and getattr(driver, "subscribed", True):
            try:
                state.consumed += driver.poll()
            except Exception as e:
                # a fenced or kicked-out member: report it and keep going (the scenario
                # decides what that means)
                _emit({"ev": "poll_error", "error": _error_name(e)})
                time.sleep(0.1)
            state.assignment = driver.assignment()
        else:
            time.sleep(0.05)
        now = (state.assignment, state.consumed)
        if now != last:
            _emit({"ev": "status", "assignment": state.assignment, "consumed": state.consumed})
            last = (list(state.assignment), state.consumed)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m groupspec.conformance.drivers CONFIG_JSON", file=sys.stderr)
        return 2
    return run(MemberConfig.from_json(args[0]))


if __name__ == "__main__":
    sys.exit(main())
