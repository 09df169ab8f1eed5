"""Every scenario file (tests/scenarios/*.txt) replayed on Kafka 4.1.2's own group coordinator
shard, so that the answers written by hand in them are checked against the real jar too.

tests/test_scenarios.py checks that the reference gives each block's expected output; here
the same commands drive the reference and a ``GroupCoordinatorShard`` built from
kafka-group-coordinator-4.1.2.jar (the JVM oracle's ``ClassicGroupShard`` tool, as in
tests/test_coordinator_kafka_jar.py) side by side, and after every block the two must agree:
the responses it completed, and the groups (state, generation, leader, protocol, members and
their timeouts and assignments, pending syncs, timers, committed offsets, last persisted
group record), compared as ``properties/classic_kafka_diff.py`` compares them.

The commands come from the scenario module itself (``scenario.command``: the request message
each block sends, built as ``run_scenario`` builds it) and reach the shard through the
differential harness's ``wire_op``; nothing here parses the scenario language. Member ids:
Kafka draws a random UUID for each new member, the scenarios name them ``<client or
instance>-<n>``; the reference is given Kafka's ids (as in the differential harness), and a
scenario's ids are mapped to them as they are generated. So that the replay is known to be
the scenario, the reference's output for each request (and failover) block, with Kafka's ids
mapped back, must be the block's expected output.

What the shard harness cannot express is listed below with the reason: blocks not replayed
(``SKIPPED``: commands outside the shard, and requests GroupCoordinatorService answers before
any shard sees them; none changes the reference's groups), and commands after which a file
stops being compared (``UNSUPPORTED``: what follows may depend on them). ``NOT_FULLY_CHECKED``
is the resulting coverage, one (file, reason) per file not compared block for block; the
test fails when it is stale in either direction. Documented modelling choices
(docs/deviations.md): a leader Kafka elects in HashMap order is sought by replaying the file
with new ids (``ATTEMPTS``); the groups a DescribeGroups spanning several partitions
describes are compared as a set (the service's order, ``_groups_as_set``); the last
group record persisted is compared, the other records are not (the tool does not export
them; tests/test_scenarios.py checks the reference's against the file).

Java is required: a missing JVM fails the test (never skipped).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from groupspec.coordinator.classic import fast_path
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.find_coordinator import coordinator_partition
from groupspec.coordinator.scenario import Block, command, parse, render_output
from groupspec.jvm import JvmOracle, JvmToolError
from groupspec.protocol import messages as m
from properties.classic_kafka_diff import (
    SHARD_REQUESTS,
    TOOL,
    canon,
    canon_group,
    kafka_config,
    only_leader_differs,
    ref_groups,
    ref_json,
    wire_op,
)

pytestmark = pytest.mark.java

SCENARIOS = Path(__file__).parent / "scenarios"

#: blocks not replayed, by rule; none of them changes the reference's groups (the groups are
#: compared after every block anyway)
SKIPPED: dict[str, str] = {
    "state": "a dump of the reference's groups (both sides' groups are compared after every block)",
    "coordinator-partition": "a function of the group id (Utils.abs(groupId.hashCode()) % partitions), "
                             "no coordinator involved",
    "FindCoordinator": "answered by the broker's KafkaApis from the metadata cache, not by a shard",
    "service": "GroupCoordinatorService's started state (isActive); the harness drives the shard alone",
    "inactive": "while the service is not active, GroupCoordinatorService answers every group request "
                "COORDINATOR_NOT_AVAILABLE (and onPartitionsDeleted throws) before any shard sees it",
    "empty-group-id": "a JoinGroup, SyncGroup, Heartbeat or LeaveGroup with the empty group id: "
                      "GroupCoordinatorService answers INVALID_GROUP_ID (isGroupIdNotEmpty, in joinGroup, "
                      "syncGroup, heartbeat, leaveGroup) before any shard sees it",
}
#: the skips that change nothing at all: a file with only these is compared in full
INERT = ("state", "coordinator-partition")

#: commands the shard harness cannot express: a file is compared up to the first one (the
#: rest may depend on it)
UNSUPPORTED: dict[str, str] = {
    "delete-partitions": "onPartitionsDeleted comes from the metadata image through the service; "
                         "the ClassicGroupShard tool has no such op",
    "failover-settings": "a failover onto a coordinator with other settings: the tool reloads with "
                         "the same GroupCoordinatorConfig",
    "config": "a setting Kafka cannot be given (kafka_config refuses it)",
    "request": "a request the ClassicGroupShard tool does not take (not a classic-group request)",
    "command": "a command this replay does not know (new in the scenario language: teach it here)",
    "leader-choice": "Kafka elected another leader than the reference in every replay (ATTEMPTS)",
}

#: Kafka elects a leader in HashMap order of its random member ids, the reference takes the
#: first member in join order (docs/deviations.md, "Leader chosen when the leader leaves"):
#: a file whose comparison stops there is replayed again (new ids) until Kafka's choice is
#: the reference's, at most this many times
ATTEMPTS = 40

#: the coverage: every file not compared block for block, and why (the test fails when this
#: list is stale in either direction)
NOT_FULLY_CHECKED: list[tuple[str, str]] = [
    ("failover_max_size.txt", "compared up to its 'failover group_max_size=2' (failover-settings): "
                              "onLoaded's re-check of a changed group.max.size is not replayed"),
    ("find_coordinator.txt", "its one request is FindCoordinator (the broker's, not a shard's); "
                             "coordinator-partition is a pure function"),
    ("join_errors.txt", "JoinGroup, SyncGroup, Heartbeat and LeaveGroup with the empty group id "
                        "(empty-group-id: the service's INVALID_GROUP_ID) skipped; the rest compared"),
    ("kafka_offsets_deleted_partitions.txt", "the commits compared; the service's inactive state skipped, and "
                                             "delete-partitions (onPartitionsDeleted) stops it"),
    ("kafka_service_requests.txt", "a GroupCoordinatorService test file: the session-timeout bounds (the "
                                   "tool applies them as the service does), the joins and the Heartbeat "
                                   "after restart compared; empty group ids, the inactive service's "
                                   "answers and FindCoordinator skipped"),
]

#: files known to agree with Kafka in full: they must stay compared
KNOWN_GOOD = sorted(p.name for p in SCENARIOS.glob("kafka_classic_*.txt"))


@dataclass
class Result:
    """One file's replay."""

    compared: int = 0
    #: (line, command, rule) of each block not replayed
    skipped: list[tuple[int, str, str]] = field(default_factory=list)
    #: (line, rule) of the block the comparison stopped at
    stopped: tuple[int, str] | None = None
    differences: list[str] = field(default_factory=list)
    #: the comparison stopped where only the leader chosen differs
    leader_choice: bool = False
    attempts: int = 1
    #: the request types (and "tick", "failover") compared
    kinds: set[str] = field(default_factory=set)


class Replay:
    """One scenario file on both sides."""

    def __init__(self, jvm: JvmOracle, name: str) -> None:
        self.jvm = jvm
        self.name = name
        self.ref: Coordinator | None = None
        self.now = 0
        #: scenario member id -> Kafka's
        self.ids: dict[str, str] = {}
        self._fresh: list[str] = []
        self._generated = 0
        self.result = Result()

    def _member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """The reference's member-id generator: Kafka's id of this step with the same prefix
        (ClassicGroup.generateMemberId), recorded under the scenario's name for it
        (scenario._short_member_ids: ``<prefix>-<n>``, n counting every id generated)."""
        self._generated += 1
        prefix = (group_instance_id if group_instance_id is not None else client_id) + "-"
        kafka_id = next((x for x in self._fresh if x.startswith(prefix)), None)
        if kafka_id is None:
            kafka_id = f"{prefix}reference-only-{self._generated}"
        else:
            self._fresh.remove(kafka_id)
        self.ids[f"{prefix}{self._generated}"] = kafka_id
        return kafka_id

    def _start(self, config: CoordinatorConfig) -> Coordinator:
        self.jvm.call(TOOL, {"action": "reset", "config": kafka_config(config)})
        self.ref = Coordinator(config, member_ids=self._member_id)
        return self.ref

    def run(self, text: str) -> Result:
        blocks, _ = parse(text, self.name)
        for block in blocks:
            if not self._block(block):
                break
        return self.result

    def _block(self, block: Block) -> bool:
        """Replays one block; False stops the file."""
        cmd = command(block, self.name)
        res = self.result

        def skip(rule: str) -> bool:
            res.skipped.append((block.line, block.command, rule))
            return True

        def stop(rule: str, detail: str = "") -> bool:
            res.stopped = (block.line, rule + detail)
            return False

        if cmd.name in ("state", "coordinator-partition", "FindCoordinator"):
            return skip(cmd.name)
        if cmd.name == "config":
            try:
                settings: dict[str, Any] = dict(cmd.settings)
                self._start(dataclasses.replace(CoordinatorConfig(), **settings))
            except ValueError as e:
                return stop("config", f": {e}")
            return True
        ref = self.ref if self.ref is not None else self._start(CoordinatorConfig())
        if cmd.name == "service":
            ref.active = cmd.arguments.get("active") == "true"
            return skip("service")
        if not ref.active and (cmd.request is not None or cmd.name == "delete-partitions"):
            return skip("inactive")  # timers run on (the reference's Coordinator.active)
        if cmd.name == "delete-partitions":
            return stop("delete-partitions")
        rid = cmd.request_id
        if cmd.name == "tick":
            self.now = self.now + cmd.tick_ms if cmd.tick_ms is not None else cmd.tick_to or 0
            kafka = self._kafka({"kind": "advance", "to": self.now}, block)
            out = ref.advance(self.now)
        elif cmd.name == "failover":
            if cmd.settings:
                return stop("failover-settings")
            kafka = self._kafka({"kind": "failover"}, block)
            out = ref.failover(self.now)
        elif cmd.request is None or rid is None:
            return stop("command", f": {cmd.name}")
        else:
            if not isinstance(cmd.request, SHARD_REQUESTS):
                return stop("request", f": {type(cmd.request).__name__}")
            if isinstance(cmd.request, _SERVICE_CHECKS_GROUP_ID) and cmd.request.group_id == "":
                return skip("empty-group-id")
            request = _renamed(cmd.request, self.ids)
            kafka = self._kafka(wire_op(rid, request), block)
            if kafka is not None:
                self._fresh = list(kafka["ids"])
            out = ref.handle(rid, request, self.now)
            self._fresh = []
        if kafka is None:
            return False
        res.compared += 1
        res.kinds.add(cmd.name if cmd.request is None else type(cmd.request).__name__)
        where = f"{self.name}:{block.line}: {block.command}"
        k_resp = sorted((i, canon(r)) for i, r in kafka["completed"])
        r_resp = sorted((i, canon(ref_json(r))) for i, r in out.responses)
        if isinstance(cmd.request, m.DescribeGroupsRequest) and len(
                {coordinator_partition(g, ref.config.offsets_topic_num_partitions) for g in cmd.request.groups}) > 1:
            k_resp, r_resp = _groups_as_set(k_resp), _groups_as_set(r_resp)
        k_groups = {g: canon_group(s) for g, s in kafka["groups"].items()}
        r_groups = ref_groups(ref)
        if k_resp != r_resp or k_groups != r_groups:
            if only_leader_differs(k_resp, r_resp, k_groups, r_groups):
                res.leader_choice = True
                return stop("leader-choice")
            lines = [where]
            if k_resp != r_resp:
                lines += [f"  responses kafka:     {k_resp}", f"  responses reference: {r_resp}"]
            for g in sorted(set(k_groups) | set(r_groups)):
                if k_groups.get(g) != r_groups.get(g):
                    lines += [f"  group {g} kafka:     {k_groups.get(g)}", f"  group {g} reference: {r_groups.get(g)}"]
            res.differences.append("\n".join(lines))
            return False  # what follows depends on this block
        if cmd.name != "tick":
            # the replay is the scenario: the reference answered as the file says
            back = {k: s for s, k in self.ids.items()}
            got = [_ids_replaced(line, back) for line in render_output(out)]
            if got != block.expected:
                res.differences.append(f"{where}: the replay is not the scenario: reference output\n  "
                                       + "\n  ".join(got) + "\nexpected\n  " + "\n  ".join(block.expected))
                return False
        return True

    def _kafka(self, op: dict[str, Any], block: Any) -> Any:
        try:
            return self.jvm.call(TOOL, {"action": "op", "op": op})
        except JvmToolError as e:
            self.result.differences.append(f"{self.name}:{block.line}: {block.command}: the shard tool failed: {e}")
            return None


#: the requests whose empty group id GroupCoordinatorService refuses (isGroupIdNotEmpty); the
#: others reach the shard with it (OffsetDelete's and TxnOffsetCommit's refusals the tool
#: applies itself)
_SERVICE_CHECKS_GROUP_ID = (m.JoinGroupRequest, m.SyncGroupRequest, m.HeartbeatRequest, m.LeaveGroupRequest)


def _groups_as_set(resps: list[tuple[int, tuple[Any, ...]]]) -> list[tuple[int, tuple[Any, ...]]]:
    """DescribeGroups answers with the described groups as a set, for groups on several
    __consumer_offsets partitions: GroupCoordinatorService asks one shard per partition and
    concatenates their answers in the order of a HashMap of partitions (describeGroups; the
    reference models that order, tests/test_scenarios.py checks it against the file); the
    tool is one shard, answering in request order."""
    return [(i, tuple((k, tuple(sorted(v)) if k == "groups" else v) for k, v in r)) for i, r in resps]


def _renamed(x: Any, ids: dict[str, str]) -> Any:
    """``x`` with every ``member_id`` a scenario generated replaced by Kafka's."""
    if not dataclasses.is_dataclass(x) or isinstance(x, type):
        return x
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(x):
        v = getattr(x, f.name)
        if f.name == "member_id" and isinstance(v, str) and v in ids:
            changes[f.name] = ids[v]
        elif isinstance(v, tuple) and v and dataclasses.is_dataclass(v[0]):
            changes[f.name] = tuple(_renamed(e, ids) for e in v)
    return dataclasses.replace(x, **changes) if changes else x


def _ids_replaced(line: str, back: dict[str, str]) -> str:
    for kafka_id, scenario_id in back.items():
        line = line.replace(kafka_id, scenario_id)
    return line


# ---------------------------------------------------------------------------- tests
FILES = sorted(p.name for p in SCENARIOS.glob("*.txt"))


def replay(jvm: JvmOracle, name: str) -> Result:
    """Replays file ``name``; again, with Kafka's new ids, while the comparison stops at a
    leader chosen otherwise (ATTEMPTS)."""
    text = (SCENARIOS / name).read_text()
    for attempt in range(1, ATTEMPTS + 1):
        res = Replay(jvm, name).run(text)
        res.attempts = attempt
        if not res.leader_choice:
            break
    return res


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


@pytest.fixture(scope="module", params=[True, False], ids=["fast-path", "handlers-only"])
def replays(request: pytest.FixtureRequest, jvm: JvmOracle) -> dict[str, Result]:
    """Every file replayed, with the reference's fast path for a current member's Heartbeat
    and OffsetCommit (coordinator/classic/fast_path.py) on and off: both must be Kafka's."""
    saved = fast_path.ENABLED
    fast_path.ENABLED = request.param
    try:
        return {name: replay(jvm, name) for name in FILES}
    finally:
        fast_path.ENABLED = saved


@pytest.mark.parametrize("name", FILES)
def test_scenario_agrees_with_kafkas_shard(replays: dict[str, Result], name: str) -> None:
    res = replays[name]
    assert not res.differences, "\n\n".join(res.differences)


def _partial(res: Result) -> list[str]:
    """Why ``res`` is not a comparison of the whole file (empty: it is)."""
    why = [f"line {line}: {command_text}: skipped ({rule})" for line, command_text, rule in res.skipped
           if rule not in INERT]
    if res.stopped is not None:
        why.append(f"line {res.stopped[0]}: stopped ({res.stopped[1]})")
    return why


def test_coverage_is_listed(replays: dict[str, Result]) -> None:
    """Every file is compared in full or listed (with its reason) in NOT_FULLY_CHECKED, and
    no listed file is in fact compared in full; the known-good files are compared in full."""
    listed = [f for f, _ in NOT_FULLY_CHECKED]
    assert len(set(listed)) == len(listed), "a file listed twice"
    assert set(listed) <= set(FILES), f"listed files that do not exist: {sorted(set(listed) - set(FILES))}"
    partial = {name: _partial(r) for name, r in replays.items() if _partial(r)}
    unlisted = {name: why for name, why in partial.items() if name not in listed}
    assert not unlisted, f"not compared in full, not listed in NOT_FULLY_CHECKED: {unlisted}"
    assert not set(listed) - set(partial), f"listed but compared in full: {sorted(set(listed) - set(partial))}"
    rules = {rule for r in replays.values() for _, _, rule in r.skipped}
    rules |= {r.stopped[1].split(":")[0] for r in replays.values() if r.stopped is not None}
    assert rules <= set(SKIPPED) | set(UNSUPPORTED), f"rules without a reason: {rules - set(SKIPPED) - set(UNSUPPORTED)}"
    assert len(KNOWN_GOOD) >= 7
    for name in KNOWN_GOOD:
        assert name not in partial and replays[name].compared > 0, name


def test_every_shard_request_is_compared(replays: dict[str, Result]) -> None:
    """Each request the shard tool takes, and clock ticks and failovers, are compared in
    some file (the replay reaches real answers)."""
    compared = set().union(*(r.kinds for r in replays.values()))
    wanted = {t.__name__ for t in SHARD_REQUESTS} | {"tick", "failover"}
    assert wanted <= compared, f"never compared: {sorted(wanted - compared)}"
    assert sum(r.compared for r in replays.values()) > 500
