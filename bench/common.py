"""The benchmark's groups, the two implementations behind one adapter, and one measurement.

A *case* is (implementation, assignor, size, scenario). :func:`measure` builds the group the
scenario describes, hands it to the implementation in the form its clients send (groupspec's
``MemberSubscription`` with the assignor's own user data; kafka-python's decoded
``ConsumerProtocolSubscription`` with *its* sticky user data encoding), times the assign
call alone, counts the moves against the previous owners, and measures the peak memory of
one more call under ``tracemalloc``. It reports through ``emit`` in three steps (``ready``,
``timed``, ``memory``) so the driver in :mod:`bench.worker` / :mod:`bench.assignors` can cap
each step's time when it runs the case in a subprocess.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.moves import count_moves, minimum_moves_from
from groupspec.assignors.registry import get_assignor
from groupspec.protocol.consumer_protocol import Subscription

Parts = dict[str, tuple[int, ...]]
Result = dict[str, Parts]
Event = dict[str, Any]

IMPLS = ("groupspec", "kafka-python")
ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
STICKY = ("sticky", "cooperative-sticky")


@dataclass(frozen=True)
class Size:
    """All members subscribe to all topics (except in the non-uniform scenarios)."""

    name: str
    members: int
    topics: int
    partitions_per_topic: int

    @property
    def partitions(self) -> int:
        return self.topics * self.partitions_per_topic

    def shape(self) -> str:
        return f"{self.members} x {self.topics} x {self.partitions_per_topic}"


#: members x topics x partitions per topic. S3 is the issue's 10k shape, S5 Kafka's
#: 1M-partition tests (AbstractStickyAssignorTest: 2000 consumers, 500 topics of 2000).
SIZES: dict[str, Size] = {
    s.name: s
    for s in (
        Size("S1", 10, 10, 10),  # 100 partitions, 10 per member
        Size("S2", 100, 10, 100),  # 1,000 partitions, 10 per member
        Size("S3", 1000, 100, 100),  # 10,000 partitions, 10 per member
        Size("S4", 1000, 100, 1000),  # 100,000 partitions, 100 per member
        Size("S5", 2000, 500, 2000),  # 1,000,000 partitions, 500 per member
    )
}

#: Scenario name -> what it is, for the table and the README.
SCENARIOS: dict[str, str] = {
    "fresh": "no member owns anything (first assignment)",
    "leave": "from a balanced assignment of all members, the middle member (JoinGroup order) leaves",
    "join": "from a balanced assignment of all members, a new member joins (members + 1)",
    "join-round2": "cooperative only: the rebalance after `join`, once the owners revoked what round 1 withheld",
    "nonuniform-fresh": "the last member subscribes to the first topic only, the rest to all; fresh",
    "nonuniform-reassign": (
        "the same group again: every member but the first reports what the fresh sticky "
        "assignment gave it (Kafka's testLargeAssignmentAndGroupWithNonEqualSubscription)"
    ),
}


def scenarios_for(assignor: str) -> tuple[str, ...]:
    """The uniform scenarios run for ``assignor`` (the non-uniform ones are added at 1M)."""
    if assignor == "cooperative-sticky":
        return ("fresh", "leave", "join", "join-round2")
    return ("fresh", "leave", "join")


# ----------------------------------------------------------------------------- groups


@dataclass
class Member:
    member_id: str
    topics: tuple[str, ...]
    owned: Parts = field(default_factory=dict)
    generation: int = -1


@dataclass
class Group:
    """What the leader sees, and who owned what before (departed members included)."""

    partitions_per_topic: dict[str, int]
    members: list[Member]
    previous: Result
    #: Identical subscriptions: the closed-form minimum of moves applies.
    uniform: bool = True


def topic_names(n: int) -> list[str]:
    width = len(str(max(n - 1, 0)))
    return [f"topic-{i:0{width}d}" for i in range(n)]


def member_name(i: int) -> str:
    return f"consumer-{i:05d}"


def deal(topics: Sequence[str], per_topic: int, member_ids: Sequence[str]) -> Result:
    """A balanced assignment without any assignor: partitions in (topic, partition) order
    dealt round-robin, so global index ``g`` goes to member ``g % C``."""
    c = len(member_ids)
    out: Result = {}
    for m, mid in enumerate(member_ids):
        parts: Parts = {}
        for ti, t in enumerate(topics):
            first = (m - ti * per_topic) % c
            if first < per_topic:
                parts[t] = tuple(range(first, per_topic, c))
        out[mid] = parts
    return out


def build_group(size: Size, scenario: str) -> Group:
    """The group ``scenario`` describes at ``size``; ``join-round2`` starts as ``join``."""
    topics = topic_names(size.topics)
    ppt = dict.fromkeys(topics, size.partitions_per_topic)
    ids = [member_name(i) for i in range(size.members)]
    everything = tuple(topics)
    if scenario == "fresh":
        return Group(ppt, [Member(m, everything) for m in ids], {})
    if scenario == "leave":
        previous = deal(topics, size.partitions_per_topic, ids)
        gone = ids[len(ids) // 2]
        members = [Member(m, everything, previous[m], 1) for m in ids if m != gone]
        return Group(ppt, members, previous)
    if scenario in ("join", "join-round2"):
        previous = deal(topics, size.partitions_per_topic, ids)
        members = [Member(m, everything, previous[m], 1) for m in ids]
        members.append(Member(member_name(size.members), everything))
        return Group(ppt, members, previous)
    if scenario == "nonuniform-fresh":
        members = [Member(m, everything) for m in ids]
        members[-1] = Member(ids[-1], everything[:1])
        return Group(ppt, members, {}, uniform=False)
    if scenario == "nonuniform-reassign":
        fresh = build_group(size, "nonuniform-fresh")
        adapter = GroupspecAdapter()
        before = adapter.normalize(adapter.prepare("sticky", fresh)())
        members = [Member(fresh.members[0].member_id, fresh.members[0].topics)]
        members += [
            Member(m.member_id, m.topics, before[m.member_id], 1) for m in fresh.members[1:]
        ]
        reported = {m.member_id: m.owned for m in members if m.owned}
        return Group(ppt, members, reported, uniform=False)
    raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")


def next_round(group: Group, result: Result) -> Group:
    """The rebalance after ``result``: every member reports what it was given (the owners
    of withheld partitions have revoked them); ``previous`` stays, so moves are counted
    over both rounds."""
    members = [
        Member(
            m.member_id,
            m.topics,
            result.get(m.member_id, {}),
            m.generation + 1 if m.generation >= 0 else 1,
        )
        for m in group.members
    ]
    return Group(group.partitions_per_topic, members, group.previous, group.uniform)


# ----------------------------------------------------------------------------- adapters


class GroupspecAdapter:
    name = "groupspec"

    def prepare(self, assignor_name: str, group: Group) -> Callable[[], object]:
        """A call assigning ``group``; the subscriptions are built here, outside the timing."""
        assignor = get_assignor(assignor_name)
        cooperative = assignor_name == "cooperative-sticky"
        members = []
        for m in group.members:
            user_data = assignor.subscription_user_data(m.topics, m.owned, m.generation)
            owned = m.owned if cooperative else {}  # eager members revoke before they join
            members.append(
                MemberSubscription(
                    m.member_id, Subscription(m.topics, user_data, owned, m.generation)
                )
            )
        ppt = group.partitions_per_topic

        def run() -> object:
            return assignor.assign(ppt, members)

        return run

    def normalize(self, raw: object) -> Result:
        assert isinstance(raw, dict)
        return {mid: dict(a.partitions) for mid, a in raw.items()}


class _Cluster:
    """The two ClusterMetadata calls kafka-python's assignors make."""

    def __init__(self, sizes: Mapping[str, int]) -> None:
        self._parts = {t: set(range(n)) for t, n in sizes.items()}

    def topics(self) -> set[str]:
        return set(self._parts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._parts.get(topic)


def _kafka() -> SimpleNamespace:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kafka-python's schema loading
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
        from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
    return SimpleNamespace(
        assignors={
            "range": RangePartitionAssignor,
            "roundrobin": RoundRobinPartitionAssignor,
            "sticky": StickyPartitionAssignor,
            "cooperative-sticky": CooperativeStickyAssignor,
        },
        user_data=StickyAssignorUserData,
        subscription=ConsumerProtocolSubscription,
    )


class KafkaPythonAdapter:
    name = "kafka-python"

    def prepare(self, assignor_name: str, group: Group) -> Callable[[], object]:
        k = _kafka()
        cls: Any = k.assignors[assignor_name]
        sub: Any = k.subscription
        members = []
        for m in group.members:
            topics = list(m.topics)
            if assignor_name == "sticky":
                # kafka-python's own StickyAssignorUserData encoding (it carries a version
                # prefix Java's does not), as its consumers send it.
                data = (
                    k.user_data([(t, list(ps)) for t, ps in m.owned.items()], m.generation).encode()
                    if m.generation >= 0 or m.owned
                    else b""
                )
                metadata = sub(version=0, topics=topics, user_data=data)
            elif assignor_name == "cooperative-sticky":
                owned = [
                    sub.TopicPartition(topic=t, partitions=list(ps)) for t, ps in m.owned.items()
                ]
                metadata = sub(
                    version=1,
                    topics=topics,
                    user_data=b"",
                    owned_partitions=owned,
                    generation_id=m.generation,
                )
            else:
                metadata = sub(version=0, topics=topics, user_data=b"")
            members.append(
                SimpleNamespace(member_id=m.member_id, group_instance_id=None, metadata=metadata)
            )
        cluster = _Cluster(group.partitions_per_topic)
        assignor = cls() if assignor_name in STICKY else cls

        def run() -> object:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return assignor.assign(cluster, members)

        return run

    def normalize(self, raw: object) -> Result:
        assert isinstance(raw, dict)
        out: Result = {}
        for mid, a in raw.items():
            parts: Parts = {}
            for item in a.assigned_partitions:
                t, ps = (item.topic, item.partitions) if hasattr(item, "topic") else item
                if ps:
                    parts[t] = tuple(sorted(ps))
            out[mid] = parts
        return out


def adapter(impl: str) -> GroupspecAdapter | KafkaPythonAdapter:
    if impl == "groupspec":
        return GroupspecAdapter()
    if impl == "kafka-python":
        return KafkaPythonAdapter()
    raise ValueError(f"unknown implementation {impl!r}; known: {', '.join(IMPLS)}")


# ----------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Check:
    """What the result is: how many partitions went out, how even, whether it is valid."""

    assigned: int
    spread: int
    valid: bool
    problem: str | None = None


def check_result(group: Group, result: Result) -> Check:
    """No partition twice, none that does not exist, none to a member not subscribed."""
    seen = {t: bytearray(n) for t, n in group.partitions_per_topic.items()}
    subs = {m.member_id: frozenset(m.topics) for m in group.members}
    sizes = []
    problem: str | None = None
    if set(result) != set(subs):
        problem = "the result's members differ from the group's"
    for mid, parts in result.items():
        n = 0
        for t, ps in parts.items():
            marks = seen.get(t)
            if marks is None or t not in subs.get(mid, ()):
                problem = problem or f"{mid} got {t}, which it does not subscribe to"
                continue
            for p in ps:
                if not 0 <= p < len(marks):
                    problem = problem or f"{mid} got {t}-{p}, which does not exist"
                elif marks[p]:
                    problem = problem or f"{t}-{p} assigned twice"
                else:
                    marks[p] = 1
            n += len(ps)
        sizes.append(n)
    assigned = sum(sizes)
    return Check(assigned, max(sizes) - min(sizes) if sizes else 0, problem is None, problem)


def minimum(group: Group) -> tuple[int, str]:
    """The fewest moves the rebalance can make, and how we know: "closed form" (identical
    subscriptions, :func:`groupspec.assignors.moves.minimum_moves_from`) or "lower bound"
    (0, which is the minimum whenever it is reached)."""
    if not group.previous:
        return 0, "closed form"
    if group.uniform:
        ids = [m.member_id for m in group.members]
        return minimum_moves_from(group.partitions_per_topic, ids, group.previous), "closed form"
    return 0, "lower bound"


# ----------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class CaseSpec:
    impl: str
    assignor: str
    size: Size
    scenario: str
    #: Best of this many timed calls (fewer when the calls are slow, see ``repeat_budget_s``).
    runs: int = 3
    #: No further timed call once the timed calls so far took this long in total.
    repeat_budget_s: float = 10.0
    #: Measure peak memory with tracemalloc unless the first call took longer than this.
    memory_limit_s: float = 30.0


def _status_kib(field_name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        return True
    except OSError:
        return False


def measure(
    spec: CaseSpec, emit: Callable[[Event], None], results: list[Result] | None = None
) -> None:
    """Run one case and ``emit`` its three events; ``results`` (if given) receives the
    normalized result of the last timed call."""
    started = time.perf_counter()
    impl = adapter(spec.impl)
    group = build_group(spec.size, spec.scenario)
    if spec.scenario == "join-round2":
        first = impl.normalize(impl.prepare(spec.assignor, group)())
        group = next_round(group, first)
    call = impl.prepare(spec.assignor, group)
    emit({"event": "ready", "prepare_s": time.perf_counter() - started})

    times: list[float] = []
    rss_delta: int | None = None
    raw: object = None
    while len(times) < max(spec.runs, 1):
        raw = None
        gc.collect()
        first_call = not times
        if first_call:
            reset = _reset_peak_rss()
            rss_before = _status_kib("VmRSS")
        t0 = time.perf_counter()
        raw = call()
        times.append(time.perf_counter() - t0)
        if first_call and reset:
            rss_delta = max(_status_kib("VmHWM") - rss_before, 0) * 1024
        if sum(times) >= spec.repeat_budget_s:
            break
    result = impl.normalize(raw)
    check = check_result(group, result)
    min_moves, min_kind = minimum(group)
    emit(
        {
            "event": "timed",
            "times_s": times,
            "best_s": min(times),
            "moves": count_moves(group.previous, result),
            "min_moves": min_moves,
            "min_kind": min_kind,
            "assigned": check.assigned,
            "spread": check.spread,
            "valid": check.valid,
            "problem": check.problem,
            "rss_delta_bytes": rss_delta,
        }
    )
    if results is not None:
        results.append(result)
    del raw, result

    if times[0] > spec.memory_limit_s:
        emit(
            {
                "event": "memory",
                "peak_bytes": None,
                "memory_note": f"not traced: one call took {times[0]:.0f} s",
            }
        )
        return
    gc.collect()
    tracemalloc.start()
    try:
        kept = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    emit({"event": "memory", "peak_bytes": peak, "memory_note": None})
