"""The fast generator (issue 20 item 5) writes what the reference path wrote: the same
events for the same seed, and its injected violations where the manifest says."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import hashlib
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.client.classic.consumer import ClusterView, Consumer
from groupspec.pipeline.generate import (
    FAULTS,
    _event_line,
    _line,
    _when,
    generate,
    group_scenario,
    merge,
    simulate_group,
    simulate_group_reference,
)
from groupspec.protocol.errors import Error
from groupspec.sim.runner import simulate, simulate_trace
from groupspec.sim.scenario import parse_scenario
from groupspec.trace import columnar, columnar_write
from groupspec.trace.events import Event, FetchEvent, RecordEvent, WireExchange
from groupspec.trace.jsonl import event_to_json
from groupspec.validate.load import load_bytes
from tests.test_trace_columnar import EVENTS, INJECTED

#: generate(4000, inject_k=2, seed=3, fmt="jsonl", clusters=2): the cluster files' bytes, then
#: the manifest without times and paths. Pinned before the lean simulator (commit 553c602);
#: re-pinned when the classic client was aligned with Kafka's ConsumerCoordinator (onJoinPrepare
#: waits for its auto-commit, no auto-commit while a rebalance is pending, no commit in the
#: cooperative revocation, immediate rejoin after MEMBER_ID_REQUIRED and friends): 484 -> 476
#: OffsetCommits, the other APIs' counts unchanged; re-pinned when eager onJoinPrepare stopped
#: fetching before its auto-commit and a member went on fetching while it rediscovers the
#: coordinator: only correlation ids move (the simulated Fetches take them), every other field
#: and every API's count as before; re-pinned when the generator combined the slow-poll and
#: failover faults again (the validator's reload window, 2026-11-28): 4929 -> 4944 events, and
#: with the two faults kept apart as before, the old digest (checked when re-pinning); re-pinned
#: when the classic client's heartbeat thread looked a lost coordinator up itself (Kafka's
#: HeartbeatThread.run): a FindCoordinator after a heartbeat's NOT_COORDINATOR goes out when the
#: answer comes instead of at the next poll (three groups; only the lookups' times and the
#: correlation ids after them move, every API's count as before); re-pinned when the generator
#: learned KIP-848 groups: the manifest names the group protocol and each kind's rules include
#: the consumer-group ones, the cluster files byte for byte as before (checked when re-pinning);
#: re-pinned when the classic client sent Kafka's rejoin reason in its JoinGroups (KIP-800):
#: only the JoinGroup requests' reason field changed (None -> "" or the requestRejoin reason),
#: every other field of every line as before (checked when re-pinning); re-pinned when the
#: classic client's close waited for its commit's answer before LeaveGroup
#: (ConsumerCoordinator.close): one closing member of cluster-000, its LeaveGroup 4 ms later,
#: the coordinator's records of it after the commit's answer (checked when re-pinning); re-pinned
#: when committed offsets kept their leader epoch (KIP-320): each OffsetCommit partition's
#: committed_leader_epoch, each OffsetFetch answer's and each OffsetCommitted record's
#: leader_epoch (-1, none: the simulated clients send none) and each GroupLoaded's
#: leader_epochs ([]) added, every other field of every line as before (checked when re-pinning);
#: back to the digest before that when the fields added to the vocabulary later (those leader
#: epochs, OffsetCommit v2-v4's retention time, an offset's expire timestamp) were left out of
#: a line at their default (protocol/added_fields.py): the same bytes as before they existed
PINNED = "52b5b1170c111fa7d7ccdc63cc56eb30c7c727735633bcbf23b52b119384a265"


def _digest(out: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(out.glob("cluster-*.jsonl")):
        h.update(f.read_bytes())
    man = json.loads((out / "manifest.json").read_text())
    man.pop("elapsed_s")
    for c in man["clusters"]:
        c["source"] = Path(c["source"]).name
    for i in man["injected"]:
        i["source"] = Path(i["source"]).name
    h.update(json.dumps(man, sort_keys=True).encode())
    return h.hexdigest()


def test_small_collection_is_byte_identical_to_the_pinned_one(tmp_path: Path) -> None:
    col = generate(4000, tmp_path, inject_k=2, seed=3, fmt="jsonl", clusters=2)
    assert col.events == 4944
    assert _digest(tmp_path) == PINNED


def _no_seq(e: Event) -> dict[str, Any]:
    out = event_to_json(e)
    out.pop("seq")
    return out


def test_lean_groups_equal_the_reference_path() -> None:
    for seed in range(6):
        a, b = random.Random(seed), random.Random(seed)
        for g in range(4):
            gid = f"c-g{g:04d}"
            fast = simulate_group(gid, a, FAULTS)
            slow = simulate_group_reference(gid, b, FAULTS)
            # seq within a group is renumbered when the groups are merged
            assert [_no_seq(e) for e in fast] == [_no_seq(e) for e in slow]
            assert a.getstate() == b.getstate()


def _varied(seed: int) -> dict[str, Any]:
    """A generated group's scenario with what the generator never draws but lean runs must
    handle alike: topic changes, message loss and delay, a pause and a poll stall together,
    another poll interval and produce rate, manual commits, a group everyone leaves."""
    sc = group_scenario(f"v{seed}", random.Random(seed + 1000))
    extra: list[dict[str, Any]] = []
    if seed % 3 == 0:
        extra += [{"at_ms": 12000 + seed, "kind": "add_partitions", "topic": "orders", "partitions": 9},
                  {"at_ms": 13000, "kind": "new_topic", "topic": "audit", "partitions": 2}]
    if seed % 4 == 1:
        extra += [{"at_ms": 11000, "kind": "loss", "probability": 0.3, "duration_ms": 4000},
                  {"at_ms": 16000, "kind": "delay", "delay_ms": 40, "duration_ms": 3000}]
    if seed % 6 == 5:
        extra += [{"at_ms": 9000 + seed, "kind": "pause", "member": "c1", "duration_ms": 12000},
                  {"at_ms": 30000 + seed, "kind": "slow_poll", "member": "c2", "duration_ms": 40000}]
    sc["faults"] = sorted(sc["faults"] + extra, key=lambda f: f["at_ms"])
    if seed % 5 == 2:
        sc["produce_rate_per_s"] = 7
    if seed % 17 == 8:  # more records per poll than a poll reads
        sc["produce_rate_per_s"] = 600
    if seed % 7 == 3:
        sc["defaults"]["poll_interval_ms"] = 37
    if seed % 11 == 4:
        sc["defaults"]["enable_auto_commit"] = False
    if seed % 13 == 5:  # everyone leaves long before the end
        sc["faults"] += [{"at_ms": sc["until_ms"] - 30000, "kind": "close", "member": m["name"]}
                         for m in sc["members"] if m["start_ms"] is not None]
        sc["faults"].sort(key=lambda f: f["at_ms"])
    return sc


# 12: topic changes at 7 records/s, cohorts of partitions whose offsets move at different
# polls; 25: 600 records/s
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 11, 12, 16, 17, 18, 20, 25, 29])
def test_lean_runs_equal_full_ones_beyond_what_the_generator_draws(seed: int) -> None:
    # a lean run takes the steps only idle polls make in a loop of its own (sim/runner.py,
    # "skipped steps"): the trace must be the full run's, byte for byte
    scenario = parse_scenario(_varied(seed), f"v{seed}")
    full = [_no_seq(e) for e in simulate(scenario).trace
            if not isinstance(e, FetchEvent) and not (isinstance(e, WireExchange) and e.response is None)]
    assert [_no_seq(e) for e in simulate_trace(scenario)] == full


def _check_idle_claim(c: Consumer, now: int, partitions: Mapping[str, int], wake: int) -> int:
    """What ``c.idle_until(now, partitions) == wake`` promises, checked on copies of ``c``:
    every full tick from ``now`` until ``wake`` (each poll's, and one just before ``wake``)
    sends nothing, notes no event and changes nothing but the positions and the poll clock,
    and its polls read what :meth:`Consumer.idle_poll` reads. Returns the polls checked."""

    def no_request() -> int:
        raise AssertionError(f"an idle consumer sent a request (idle until {wake} at {now})")

    def state(x: Consumer) -> dict[str, Any]:
        moving = ("positions", "last_poll_ms", "next_poll_ms", "processed", "_now", "events", "_rid")
        return copy.deepcopy({k: v for k, v in vars(x).items() if k not in moving})

    full = copy.deepcopy(c, {id(vars(c)["_rid"]): no_request})
    idle = copy.deepcopy(c, {id(vars(c)["_rid"]): no_request})
    full.events.clear()
    full.processed.clear()
    before = state(full)
    start = dict(c.positions)
    t, polls = now, 0
    while t < wake:
        # records keep coming: each partition's log end offset moves on with time
        offsets = {(name, i): start.get((name, i), 0) + (t - now) // 40
                   for name, n in partitions.items() for i in range(n)}
        polled = t >= full.next_poll_ms
        out = full.tick(t, ClusterView(partitions, offsets))
        assert out == [] and full.events == [], (now, wake, t, out, full.events)
        if polled:
            polls += 1
            assert idle.next_poll_ms <= t
            read = idle.idle_poll(t, offsets)
            assert read == bool(full.processed), (now, wake, t)
            assert (idle.positions, idle.last_poll_ms, idle.next_poll_ms) == (
                full.positions, full.last_poll_ms, full.next_poll_ms), (now, wake, t)
        full.processed.clear()
        nxt = max(full.next_poll_ms, full.poll_blocked_until_ms)
        t = nxt if nxt < wake - 1 and nxt > t else max(t + 1, wake - 1)
    assert state(full) == before, (now, wake)
    return polls


def test_an_idle_consumer_polls_as_its_full_ticks_would(monkeypatch: pytest.MonkeyPatch) -> None:
    # Consumer.idle_until is the lean runs' promise that a member's polls until a time only
    # consume (the skipped steps take them without a full tick): every promise a lean run
    # gets, on generated groups and on the varied ones above, is checked against the full
    # ticks it replaces. A condition of idle_until that is too weak (a state in which a
    # poll would send a JoinGroup, an OffsetFetch or a commit, note an event or change the
    # member) fails here even where the trace would not show it. Six varied groups (every
    # fault and setting _varied adds but the 600 records/s and the group everyone leaves)
    # and two generated ones catch each of these weakenings as the 40 and 40 groups
    # checked at first did (about a tenth of their CPU time): request timeouts or
    # heartbeats not waking a member waiting for its JoinGroup or SyncGroup, the Stable
    # member's heartbeat or request timeouts not waking it, a rejoin, a poll stall, an
    # unknown coordinator, an auto-commit one poll late, a leader's stale snapshot, manual
    # commits (the generated groups alone catch 6 of these, the varied ones all)
    promised = Consumer.idle_until
    polls: list[int] = []
    states: set[str] = set()

    def checked(self: Consumer, now: int, partitions: Mapping[str, int]) -> int | None:
        wake = promised(self, now, partitions)
        if wake is not None:
            states.add(self.state.name)
            polls.append(_check_idle_claim(self, now, dict(partitions), wake))
        return wake

    monkeypatch.setattr(Consumer, "idle_until", checked)
    for seed in range(6):
        simulate_trace(parse_scenario(_varied(seed), f"v{seed}"))
    for seed in range(2):
        simulate_group(f"c-g{seed:04d}", random.Random(seed), FAULTS)
    # the states idle polls are promised in, and many polls
    assert states == {"STABLE", "PREPARING_REBALANCE", "COMPLETING_REBALANCE"}
    assert sum(polls) > 1000


def test_injected_violations_land_where_the_manifest_says(tmp_path: Path) -> None:
    col = generate(3000, tmp_path, inject_k=4, seed=5, fmt="jsonl", clusters=2)
    assert len(col.injected) == 4
    for inj in col.injected:
        lines = Path(inj.source).read_text(encoding="utf-8").splitlines()
        row = json.loads(lines[inj.line - 1])
        assert row["seq"] == inj.seq
        assert row["kind"] == "exchange"
        assert row["connection"].startswith(inj.group_id + "/")
        if inj.kind == "stale_commit":
            assert row["api"] == "OffsetCommit"
        else:
            assert row["api"] == "SyncGroup"


def test_parquet_is_what_the_public_writer_makes_of_the_same_lines(tmp_path: Path) -> None:
    import pyarrow.parquet as pq  # a dev dependency: CI must fail, not skip, without it

    from groupspec.trace.parquet import jsonl_to_parquet

    generate(2500, tmp_path / "p", inject_k=2, seed=11, fmt="parquet", clusters=2)
    generate(2500, tmp_path / "j", inject_k=2, seed=11, fmt="jsonl", clusters=2)
    for src in sorted((tmp_path / "j").glob("cluster-*.jsonl")):
        ref = tmp_path / (src.stem + ".ref.parquet")
        jsonl_to_parquet(src, ref)
        got = tmp_path / "p" / (src.stem + ".parquet")
        assert pq.read_table(got).equals(pq.read_table(ref))
        assert got.read_bytes() == ref.read_bytes()


def test_the_simulators_events_are_what_their_classes_make() -> None:
    # the runner gives exchanges and record events their field dict at once (sim/runner.py:
    # Simulation._exchange, _record_event) instead of calling the classes: the objects must
    # be what the classes make, down to the dict's order (a field added to a class fails here)
    # (a lean run's record events are made in Simulation._coordinator_output itself)
    made: list[Event] = []
    for seed in range(4):
        scenario = parse_scenario(group_scenario(f"g{seed}", random.Random(seed)), f"g{seed}")
        for trace in (simulate(scenario).trace, simulate_trace(scenario)):
            made += [e for e in trace if isinstance(e, WireExchange | RecordEvent)]
    assert any(isinstance(e, WireExchange) and e.response is None for e in made)  # unanswered ones too
    for e in made:
        again = type(e)(**{f.name: getattr(e, f.name) for f in dataclasses.fields(e)})
        assert list(vars(again).items()) == list(vars(e).items())


def test_the_earliest_deadline_is_the_least_of_the_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    # the simulator and Coordinator.advance ask timers.earliest_deadline, which reads the
    # timers without listing them: at every call it must be min(deadlines(state)) (the
    # groups of both protocols, with and without timers)
    import groupspec.coordinator.coordinator as coordinator_module
    from groupspec.coordinator import timers
    from groupspec.sim import runner

    earliest = timers.earliest_deadline
    seen: list[int | None] = []

    def checked(state: Any) -> int | None:
        got = earliest(state)
        assert got == min(timers.deadlines(state), default=None)
        seen.append(got)
        return got

    monkeypatch.setattr(runner, "earliest_deadline", checked)
    monkeypatch.setattr(coordinator_module, "earliest_deadline", checked)
    for seed in range(3):
        simulate_trace(parse_scenario(_varied(seed), f"v{seed}"))
        kip848 = _varied(seed)
        kip848["defaults"]["group_protocol"] = "consumer"  # a consumer group's timers
        simulate(parse_scenario(kip848, f"k{seed}"))
    assert None in seen and len({x for x in seen if x is not None}) > 100


@given(st.lists(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0]), max_size=6), max_size=4),
       st.booleans())
@settings(max_examples=150, deadline=None)
def test_merge_orders_as_the_heap_of_the_groups_streams(times: list[list[float]], in_order: bool) -> None:
    # merge sorts all the events at once when every group is in time order, and merges the
    # streams with a heap otherwise: either way the order of heapq.merge over (time, group
    # index, index) and the events renumbered from 1
    import heapq
    from itertools import count, repeat

    if in_order:
        times = [sorted(ts) for ts in times]
    groups: list[list[Event]] = [[RecordEvent(seq=i + 1, at_ms=int(t), record=None)  # type: ignore[arg-type]
                                  for i, t in enumerate(ts)] for ts in times]
    expected = [(gi, ei) for _, gi, ei, _ in heapq.merge(
        *[zip(map(_when, es), repeat(gi), count(), es) for gi, es in enumerate(groups)])]
    got = list(merge(groups))
    assert [(gi, ei) for gi, ei, _ in got] == expected
    assert [e.seq for _, _, e in got] == list(range(1, len(got) + 1))
    assert all(vars(e) == {**vars(groups[gi][ei]), "seq": e.seq} for gi, ei, e in got)
    # in place (the generator's): the same order and numbers, on the groups' own events
    own = [[dataclasses.replace(e) for e in es] for es in groups]
    again = list(merge(own, in_place=True))
    assert [(gi, ei, vars(e)) for gi, ei, e in again] == [(gi, ei, vars(e)) for gi, ei, e in got]
    assert all(e is own[gi][ei] for gi, ei, e in again)


def test_a_lean_run_leaves_no_cycle_behind() -> None:
    # generate pauses the cycle collector while it builds a cluster: its runs must be freed
    # by reference counting alone
    import gc

    gc.collect()
    gc.disable()
    try:
        simulate_group("c-g0000", random.Random(4), FAULTS)
        assert gc.collect() == 0
    finally:
        gc.enable()


# --------------------------------------------------------------------------- JSON lines


#: values a field may hold that its type does not say (the line encoders must leave them to
#: the json encoder): the other plain types, NaN and the infinities, a str subclass
_ODD = st.sampled_from([None, 0, 1, -7, 2**70, 0.0, 1.5, -0.0, 1e22, float("nan"), float("inf"),
                        float("-inf"), True, False, "", "é\u2028\"\\", type("S", (str,), {})("s"),
                        Error.NONE, Error.REBALANCE_IN_PROGRESS, b"", b"\x00\xff>?",
                        [], ()])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=EVENTS, odd=st.lists(st.tuples(st.integers(0, 20), _ODD), max_size=3))
def test_an_events_text_is_what_the_encoder_makes_of_its_json(event: Event, odd: list[tuple[int, Any]]) -> None:
    # the generator writes a line's plain values and enums itself (pipeline/generate.py,
    # _event_line): the text must be the json encoder's, for every kind, API and record
    # type, and for values of another type than their field's
    # the event's fields, or those of its record, request or response
    inner = [x for x in (getattr(event, n, None) for n in ("record", "request", "response"))
             if dataclasses.is_dataclass(x)]
    # the objects in their tuple fields (an OffsetCommit's partitions, written item by item)
    items = [x for o in inner for f in dataclasses.fields(o)
             if isinstance(getattr(o, f.name), tuple) for x in getattr(o, f.name) if dataclasses.is_dataclass(x)]
    for i, value in odd:
        target = (items[i % len(items)] if i % 3 == 2 and items
                  else inner[i % len(inner)] if i % 2 and inner else event)
        names = [f.name for f in dataclasses.fields(target)
                 if f.name not in ("record", "request", "response")]  # objects
        if names:
            object.__setattr__(target, names[i % len(names)], value)
    assert _event_line(event) == _line(event_to_json(event))


def test_the_generators_text_is_the_encoders_on_its_own_events(tmp_path: Path) -> None:
    events = simulate_group("c-g0000", random.Random(2), FAULTS) + simulate_group("c-g0001", random.Random(9), FAULTS)
    assert [_event_line(e) for e in events] == [_line(event_to_json(e)) for e in events]


@settings(max_examples=200, deadline=None)
@given(odd=st.lists(st.tuples(st.integers(0, 1000), _ODD), min_size=1, max_size=3))
def test_an_items_text_is_the_encoders(odd: list[tuple[int, Any]]) -> None:
    # the items of a tuple field (an OffsetCommit's partitions, a JoinGroup's protocols) are
    # written item by item: an item holding a value of another type than its field's is
    # the encoder's text, in its place in the array
    events = [copy.deepcopy(e) for e in _OWN_EVENTS]
    items = [x for e in events if isinstance(e, WireExchange) for o in (e.request, e.response)
             if dataclasses.is_dataclass(o) for f in dataclasses.fields(o)
             if isinstance(getattr(o, f.name), tuple) for x in getattr(o, f.name) if dataclasses.is_dataclass(x)]
    assert items
    for i, value in odd:
        target = items[i % len(items)]
        names = [f.name for f in dataclasses.fields(target)]
        object.__setattr__(target, names[i % len(names)], value)
    assert [_event_line(e) for e in events] == [_line(event_to_json(e)) for e in events]


#: a group's events with OffsetCommit, OffsetFetch, JoinGroup and SyncGroup exchanges
_OWN_EVENTS = [e for e in simulate_group("c-g0000", random.Random(2), FAULTS)
               if isinstance(e, WireExchange) and e.api in ("OffsetCommit", "OffsetFetch", "JoinGroup", "SyncGroup")]


# --------------------------------------------------------------------------- columnar_write


def _round_trips(e: Event) -> bool:
    """Whether the event comes back from its canonical line unchanged, as the events
    columnar_write is for do (no int in a float field and the like)."""
    back = columnar.decode_line(columnar.canonical(e))
    return back is not None and columnar.canonical(back) == columnar.canonical(e) and back == e


def _both_writers(events: list[Event], tmp: Path) -> None:
    import pyarrow.parquet as pq

    a, b = tmp / "layout.parquet", tmp / "columns.parquet"
    columnar.write_events(events, a)
    columnar_write.write_events(events, b)
    assert pq.read_table(b).equals(pq.read_table(a))
    assert b.read_bytes() == a.read_bytes()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(EVENTS.filter(_round_trips), max_size=25))
def test_columnar_write_makes_what_the_layout_writer_makes(events: list[Event], tmp_path_factory: Any) -> None:
    # every kind, API and record type, values of every type the layout holds (nulls, empty
    # and nested lists, enums, topic ids, JSON leaves, lone surrogates Arrow refuses), in
    # any order: the column-at-a-time writer must give the same file, byte for byte
    _both_writers(events, tmp_path_factory.mktemp("cw"))


def test_columnar_write_on_the_injected_collection(tmp_path: Path) -> None:
    for path in INJECTED:
        _both_writers([x.event for x in load_bytes(gzip.decompress(path.read_bytes())).events], tmp_path)


def test_columnar_write_types_are_the_layouts() -> None:
    plan = columnar_write._plan()
    for api, col in plan.requests.items():
        assert col.type == columnar.layout().requests[api].type
    for name, col in plan.records.items():
        assert col.type == columnar.layout().records[name].type
