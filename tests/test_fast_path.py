"""The fast path (coordinator/classic/fast_path.py and the replay's ``_sole_option`` and
``_fast_step``) is equivalent to the slow path.

- A Hypothesis property drives two reference coordinators in lockstep, one with the fast
  path and one without, through random sequences of real requests (joins with and without
  member ids, static members, syncs, leaves, heartbeats and commits with right and wrong
  member ids, generations, instance ids and group ids, time advances firing timers) and
  requires, after every input, identical responses, records and state (a deep snapshot: the
  state's repr, which keeps dict order, and the coordinator's clocks). The fast path must
  have been taken in the run, or the property proves nothing.
- The property fails when the fast path is made to disagree (a wrong error code, a session
  deadline not moved, a commit not stored): the mutants below.
- The validator's verdicts on generated traces and on the committed injected collection
  are byte-identical with the fast path on and off.
- The replay's shortcut is checked step by step on the injected collection: each sole
  option is ``_options``' only one, and each fast step leaves the branch (coordinator state,
  clocks, remaining, parked, leaders, ...) and the answers noted as ``_step`` with the fast
  path off does on a copy; dropping one of its conditions or effects is caught.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from groupspec.coordinator.classic import fast_path
from groupspec.coordinator.context import Output
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.state import CoordinatorState, ReplayError
from groupspec.coordinator.timers import deadlines
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error

GROUPS = ("g", "g", "g", "h", "")
INSTANCES = (None, None, "i1", "i2")
PROTOCOLS = (m.JoinGroupProtocol("range", b"\x00\x01"),)

#: one input: (kind, choices); the choices are resolved against the run's known member ids
Op = tuple[str, tuple[int, ...]]

_small = st.integers(0, 7)
#: choices that name group g, a current member, its generation and its own instance id
_right = (st.just(0), st.integers(0, 3), st.sampled_from((0, 1, 2, 6)), st.sampled_from((1, 2)))
OPS: st.SearchStrategy[Op] = st.one_of(
    st.tuples(st.just("heartbeat"), st.tuples(*_right)),
    st.tuples(st.just("commit"), st.tuples(*_right, _small, _small)),
    st.tuples(st.just("heartbeat"), st.tuples(*_right)),
    st.tuples(st.just("commit"), st.tuples(*_right, _small, _small)),
    st.tuples(st.just("join"), st.tuples(_small, _small, _small, _small)),
    st.tuples(st.just("sync"), st.tuples(_small, _small, _small)),
    st.tuples(st.just("leave"), st.tuples(_small, _small)),
    st.tuples(st.just("heartbeat"), st.tuples(_small, _small, _small, _small)),
    st.tuples(st.just("heartbeat"), st.tuples(_small, _small, _small, _small)),
    st.tuples(st.just("commit"), st.tuples(_small, _small, _small, _small, _small, _small)),
    st.tuples(st.just("commit"), st.tuples(_small, _small, _small, _small, _small, _small)),
    st.tuples(st.just("wait"), st.tuples(st.integers(0, 3_000),)),
    st.tuples(st.just("wait"), st.tuples(st.integers(0, 12_000),)),
    st.tuples(st.just("settle"), st.tuples()),
)


class Lockstep:
    """Two coordinators fed the same inputs, one with the fast path and one without."""

    def __init__(self) -> None:
        self.fast = Coordinator()
        self.slow = Coordinator()
        self.now = 0
        self.ids: list[str] = []
        self.taken = 0

    # ------------------------------------------------------------------ inputs
    def member(self, k: int) -> str:
        """Mostly a current member of group g, else any id handed out, "" or a bogus one."""
        g = self.slow.state.groups.get("g")
        if k < 4 and g is not None and g.members:
            current = list(g.members)
            return current[k % len(current)]
        pool = [*self.ids, "", "bogus-member"]
        return pool[k % len(pool)]

    def generation(self, group_id: str, k: int) -> int:
        g = self.slow.state.groups.get(group_id)
        gen = g.generation_id if g is not None else 0
        return (gen, gen, gen, gen - 1, gen + 1, -1, gen, 0)[k % 8]

    def instance(self, member_id: str, k: int) -> str | None:
        if k % 4 == 0:
            return INSTANCES[(k // 4) % len(INSTANCES)]
        for g in self.slow.state.groups.values():
            mem = g.members.get(member_id)
            if mem is not None:
                return mem.group_instance_id if k % 4 != 3 else "i-other"
        return None

    def request(self, op: Op) -> m.Request | None:
        kind, c = op
        if kind == "join":
            gid = GROUPS[c[0] % len(GROUPS)] or "g"
            mid = self.member(c[1] // 2) if c[1] % 2 else ""
            return m.JoinGroupRequest(group_id=gid, member_id=mid,
                                      group_instance_id=INSTANCES[c[2] % len(INSTANCES)],
                                      protocols=PROTOCOLS, session_timeout_ms=(6_000, 10_000)[c[3] % 2],
                                      rebalance_timeout_ms=(6_000, 10_000, 3_000)[c[3] % 3])
        if kind == "sync":
            gid = GROUPS[c[0] % 2]
            mid = self.member(c[1])
            g = self.slow.state.groups.get(gid)
            assignments: tuple[m.SyncGroupAssignment, ...] = ()
            if g is not None and g.leader_id == mid:
                assignments = tuple(m.SyncGroupAssignment(x, x.encode()) for x in g.members)
            return m.SyncGroupRequest(group_id=gid, generation_id=self.generation(gid, c[2]),
                                      member_id=mid, group_instance_id=self.instance(mid, c[2] + 1),
                                      assignments=assignments)
        if kind == "leave":
            mid = self.member(c[1])
            return m.LeaveGroupRequest(group_id=GROUPS[c[0] % 2], members=(
                m.MemberIdentity(mid, self.instance(mid, c[1] + 1)),))
        if kind == "heartbeat":
            gid = GROUPS[c[0] % len(GROUPS)]
            mid = self.member(c[1])
            return m.HeartbeatRequest(group_id=gid, generation_id=self.generation(gid, c[2]),
                                      member_id=mid, group_instance_id=self.instance(mid, c[3]))
        if kind == "commit":
            gid = GROUPS[c[0] % len(GROUPS)]
            mid = self.member(c[1])
            metadata = ("", None, "x" * 2_047, "x" * 2_049, "\U0001f600" * 1_100, "meta")[c[5] % 6]
            parts = tuple(m.OffsetCommitPartition("t", p, 10 * c[4] + p, metadata)
                          for p in range(c[4] % 4))
            # v2-v4 carry a retention time (an expire timestamp kept with the offsets)
            version, retention = ((8, -1), (9, -1), (2, 3_000), (4, 0))[(c[4] // 4) * 2 + c[4] % 2]
            return m.OffsetCommitRequest(group_id=gid, generation_id=self.generation(gid, c[2]),
                                         member_id=mid, group_instance_id=self.instance(mid, c[3]),
                                         partitions=parts, version=version, retention_time_ms=retention)
        return None

    def settle(self, rid: int) -> int:
        """Real requests that take group g towards Stable: every member not parked rejoins,
        the join phase's timer is let expire, then every member syncs (the leader with
        assignments)."""
        g = self.slow.state.groups.get("g")
        if g is None:
            return rid
        for mid, mem in list(g.members.items()):
            if not mem.is_awaiting_join:
                rid += 1
                self.step(rid, ("join", (0, 2 * list(g.members).index(mid) + 1, 0, 0)), mid)
        self.step(rid, ("wait", (3_100,)))
        g = self.slow.state.groups.get("g")
        if g is None or not g.members:
            return rid
        for k in range(len(g.members)):
            rid += 1
            self.step(rid, ("sync", (0, k, 0)))
        return rid

    def step(self, rid: int, op: Op, member_id: str | None = None) -> None:
        if op[0] == "wait":
            self.now += op[1][0]
            with fast_path.enabled(True):
                fa = self.fast.advance(self.now)
            with fast_path.enabled(False):
                fb = self.slow.advance(self.now)
            self.same(fa, fb, op)
            return
        if op[0] == "settle":
            self.settle(100_000 + rid * 1_000)
            return
        req = self.request(op)
        assert req is not None
        if member_id is not None and isinstance(req, m.JoinGroupRequest):
            mem = self.slow.state.groups["g"].members[member_id]
            req = dataclasses.replace(req, member_id=member_id, group_instance_id=mem.group_instance_id)
        if isinstance(req, (m.HeartbeatRequest, m.OffsetCommitRequest)):
            planned = fast_path.plan(self.fast.state, self.fast.config, rid, req, self.now)
            self.taken += planned is not None
        with fast_path.enabled(True):
            a = _outcome(lambda: self.fast.handle(rid, req, self.now))
        with fast_path.enabled(False):
            b = _outcome(lambda: self.slow.handle(rid, req, self.now))
        if isinstance(a, str) or isinstance(b, str):
            # a request the coordinator refuses as the caller's error (a pending member's
            # JoinGroup naming an instance id, say): refused alike, the states alike
            assert a == b, f"{op}: {a} / {b}"
            assert snapshot(self.fast) == snapshot(self.slow), f"{op}: states differ"
            return
        self.same(a, b, op)
        for _, resp in b.responses:
            if isinstance(resp, m.JoinGroupResponse) and resp.member_id and resp.member_id not in self.ids:
                self.ids.append(resp.member_id)

    # ------------------------------------------------------------------ the comparison
    def same(self, a: Output, b: Output, op: Op) -> None:
        assert a.responses == b.responses, f"{op}: responses differ"
        assert a.records == b.records, f"{op}: records differ"
        assert snapshot(self.fast) == snapshot(self.slow), f"{op}: states differ"
        earliest = fast_path.earliest_deadline(self.slow.state)
        assert earliest == min(deadlines(self.slow.state), default=float("inf"))


def _outcome(handle: Callable[[], Output]) -> Output | str:
    """The output, or the caller error the coordinator raised (its contract: a bug in the
    caller, never a protocol outcome)."""
    try:
        return handle()
    except (ValueError, ReplayError, KeyError, TypeError) as err:
        return f"{type(err).__name__}: {err}"


def snapshot(c: Coordinator) -> tuple[str, int, int]:
    """The coordinator's state, deeply and in order (dict insertion order included)."""
    return repr(c.state), c._last_now_ms, c._next_offsets_check_ms


#: fast-path answers over the property's runs (the property must exercise it)
TAKEN = [0]


def run(ops: list[Op]) -> Lockstep:
    ls = Lockstep()
    for rid, op in enumerate(ops):
        ls.step(rid, op)
    TAKEN[0] += ls.taken
    return ls


PROPERTY = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: a join phase and its syncs first, so most runs reach a Stable group early
PRELUDE: list[Op] = [("join", (0, 0, 0, 0)), ("join", (0, 1, 0, 0)), ("wait", (3_000,)),
                     ("sync", (0, 0, 0))]


def equivalence_property(max_examples: int = 400) -> Callable[[], None]:
    @settings(PROPERTY, max_examples=max_examples)
    @given(st.booleans(), st.lists(OPS, min_size=4, max_size=40))
    def prop(prelude: bool, ops: list[Op]) -> None:
        run((PRELUDE if prelude else []) + ops)

    return prop


def test_fast_path_equals_slow_path() -> None:
    TAKEN[0] = 0
    equivalence_property()()
    assert TAKEN[0] >= 250, f"the fast path answered only {TAKEN[0]} requests in the property's runs"


def test_fast_path_is_taken_in_the_property() -> None:
    """The property compares something: the fast path answers in typical runs."""
    ops: list[Op] = [*PRELUDE, ("heartbeat", (0, 0, 0, 1)), ("commit", (0, 0, 0, 1, 2, 0)), ("wait", (2000,)), ("heartbeat", (0, 0, 0, 1))]
    assert run(ops).taken == 3


# ---------------------------------------------------------------- the property bites
def _wrong_error(plan: Callable[..., Output | None]) -> Callable[..., Output | None]:
    def mutant(*args: Any) -> Output | None:
        out = plan(*args)
        if out is not None and isinstance(out.responses[0][1], m.HeartbeatResponse):
            out.responses[0] = (out.responses[0][0], m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS))
        return out
    return mutant


def _deadline_not_moved(commit: Callable[[CoordinatorState, Output], None]
                        ) -> Callable[[CoordinatorState, Output], None]:
    def mutant(state: CoordinatorState, out: Output) -> None:
        keep = Output(out.responses, [x for x in out.records if not isinstance(x, r.HeartbeatScheduled)])
        commit(state, keep)
    return mutant


def _offset_not_stored(plan: Callable[..., Output | None]) -> Callable[..., Output | None]:
    def mutant(*args: Any) -> Output | None:
        out = plan(*args)
        if out is not None:
            out.records[:] = [x for x in out.records if not isinstance(x, r.OffsetCommitted)]
        return out
    return mutant


def _static_instance_ignored(state: CoordinatorState, group_id: str, member_id: str,
                             group_instance_id: str | None, generation_id: int,
                             now_ms: int) -> tuple[Any, int, bool] | None:
    """validate_member's FENCED_INSTANCE_ID forgotten: any instance id is accepted."""
    g = state.groups.get(group_id)
    if g is None or g.state.value != "Stable" or generation_id != g.generation_id:
        return None
    mem = g.members.get(member_id)
    return None if mem is None else (mem, now_ms + mem.session_timeout_ms, True)


def _rebalance_not_said(plan: Callable[..., Output | None]) -> Callable[..., Output | None]:
    """A heartbeat while the group prepares a rebalance answered NONE, as in Stable."""
    def mutant(*args: Any) -> Output | None:
        out = plan(*args)
        if out is not None and out.responses[0][1] == m.HeartbeatResponse(error=Error.REBALANCE_IN_PROGRESS):
            out.responses[0] = (out.responses[0][0], m.HeartbeatResponse(error=Error.NONE))
        return out
    return mutant


MUTANTS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "wrong error code": lambda mp: mp.setattr(fast_path, "plan", _wrong_error(fast_path.plan)),
    "session deadline not moved": lambda mp: mp.setattr(fast_path, "commit",
                                                        _deadline_not_moved(fast_path.commit)),
    "commit not stored": lambda mp: mp.setattr(fast_path, "plan", _offset_not_stored(fast_path.plan)),
    "instance id not checked": lambda mp: mp.setattr(fast_path, "_member_deadline", _static_instance_ignored),
    "rebalance not said": lambda mp: mp.setattr(fast_path, "plan", _rebalance_not_said(fast_path.plan)),
}


@pytest.fixture
def patch() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_property_catches_a_disagreeing_fast_path(mutant: str, patch: pytest.MonkeyPatch) -> None:
    MUTANTS[mutant](patch)
    with pytest.raises(AssertionError):
        equivalence_property()()


# ---------------------------------------------------------------- the validator's verdicts
def _verdicts(paths: list[Path], on: bool) -> dict[str, Any]:
    from groupspec.validate import validate_path

    with fast_path.enabled(on):
        return {p.name: json.dumps(validate_path(p).to_json(), sort_keys=True) for p in paths}


def test_verdicts_identical_on_generated_traces(tmp_path: Path) -> None:
    from groupspec.pipeline.generate import generate

    generate(6_000, tmp_path, seed=11, fmt="jsonl")
    paths = sorted(tmp_path.glob("*.jsonl"))
    assert paths
    assert _verdicts(paths, True) == _verdicts(paths, False)


def test_verdicts_identical_on_the_injected_collection(tmp_path: Path) -> None:
    here = Path(__file__).resolve().parent.parent / "examples" / "injected"
    paths = []
    for f in sorted(here.glob("cluster-*.jsonl.gz")):
        p = tmp_path / f.name.removesuffix(".gz")
        p.write_bytes(gzip.decompress(f.read_bytes()))
        paths.append(p)
    assert paths
    assert _verdicts(paths, True) == _verdicts(paths, False)


def test_replay_takes_the_fast_path_and_searches_alike(tmp_path: Path) -> None:
    """On a generated collection the replay's fast step is taken, and every group's replay
    result (divergences, alternatives explored, failovers) is the same with it and without."""
    from groupspec.pipeline.generate import generate
    from groupspec.validate.grouping import group_trace
    from groupspec.validate.load import load_path
    from groupspec.validate.replay import ReplayConfig, Replayer, replay_group

    generate(4_000, tmp_path, seed=3, fmt="jsonl")
    taken = 0
    original = Replayer._fast_step

    def counting(self: Replayer, b: Any, d: Any) -> bool:
        nonlocal taken
        ok = original(self, b, d)
        taken += ok
        return ok

    for path in sorted(tmp_path.glob("*.jsonl")):
        for _, g in sorted(group_trace(load_path(path)).groups.items()):
            if not g.exchanges:
                continue
            with fast_path.enabled(False):
                slow = replay_group(g.exchanges, ReplayConfig())
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(Replayer, "_fast_step", counting)
                with fast_path.enabled(True):
                    fast = replay_group(g.exchanges, ReplayConfig())
            assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    assert taken > 0


def test_optimistic_replays_give_the_search_s_results(injected: list[Path], consumer_groups: list[Path]) -> None:
    """Every group's replay result (divergences, alternatives explored, failovers, the
    delay and expiry-check phase chosen) is the same whether each replay is first tried
    optimistically, without choice points (validate/replay.py ``_run``), or is a search
    from the start; on the injected collection (groups that conform and groups that
    diverge) and the KIP-848 recordings."""
    from groupspec.validate import replay as rp
    from groupspec.validate import validate_path, validator

    got: dict[bool, list[Any]] = {True: [], False: []}
    original = rp.replay_group
    diverged = 0
    run = rp._run

    def counting(exchanges: Any, config: Any, prepared: Any, check: Any, delay: int) -> Any:
        nonlocal diverged
        try:
            return rp.Replayer(exchanges, config, prepared, check, optimistic=True).run(delay)
        except rp._Diverged:
            diverged += 1
        return run(exchanges, config, prepared, check, delay)

    for optimistic in (True, False):
        def recording(exchanges: Any, config: Any = None, on_try: Any = None, on: bool = optimistic) -> Any:
            result = original(exchanges, config, on_try)
            got[on].append(dataclasses.asdict(result))
            return result

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(validator, "replay_group", recording)
            mp.setattr(rp, "OPTIMISTIC", optimistic)
            if optimistic:
                mp.setattr(rp, "_run", counting)
            for p in [*injected, *consumer_groups]:
                validate_path(p)
    assert got[True] == got[False]
    assert len(got[True]) > 60 and diverged >= 12  # both ways taken


# ---------------------------------------------------------------- the replay's fast step, step by step
def _branch_snapshot(b: Any) -> tuple[Any, ...]:
    """The branch as values compared with ``==``. Not the state's repr: a set or frozenset
    in it (a group's subscribed topics) copied by pickle may list its elements in another
    order than the original (string hashes vary per process), which once failed this
    comparison for two equal states."""
    rest = {f.name: getattr(b, f.name) for f in dataclasses.fields(b) if f.name != "coord"}
    return b.coord.state, b.coord._last_now_ms, b.coord._next_offsets_check_ms, rest


def _lockstep_replayer() -> Any:
    """A Replayer that checks each shortcut it takes against the slow path: the sole option
    against ``_options``, the optimistic replay's first option and its quietness against
    ``_options``' first and its ``_options_quiet``, and each fast step against ``_step``
    with the fast path off, run on a copy of the branch (same branch afterwards, same
    answers noted, no failure)."""
    from groupspec.validate import replay as rp
    from groupspec.validate.snapshot import copy_state

    class Lockstepped(rp.Replayer):
        steps = 0
        first_options = 0

        def _first_option(self, b: Any) -> Any:
            d, quiet = super()._first_option(b)
            options = self._options(b)
            assert options[0] == d, f"first option {d}, _options' first {options[0]}"
            assert quiet == self._options_quiet, f"first option quiet {quiet}, _options {self._options_quiet}"
            Lockstepped.first_options += 1
            return d, quiet

        def _sole_option(self, b: Any) -> Any:
            d = super()._sole_option(b)
            if d is not None:
                options = self._options(b)
                assert options == [d], f"sole option {d}, _options {options}"
            return d

        def _fast_step(self, b: Any, d: Any) -> bool:
            twin = copy_state(b)
            seq = self.x[d.index].seq
            before = list(self.answers.get(seq, ()))
            if not super()._fast_step(b, d):
                return False
            Lockstepped.steps += 1
            fast_answers = self.answers.get(seq, [])
            self.answers[seq] = list(before)
            with fast_path.enabled(False):
                try:
                    rp.Replayer._step(self, twin, d)
                except rp._Fail as f:
                    raise AssertionError(f"fast step at seq {seq} where the slow one fails: "
                                         f"{f.failure.detail}") from None
            assert self.answers.get(seq, []) == fast_answers, f"answers differ at seq {seq}"
            assert _branch_snapshot(b) == _branch_snapshot(twin), f"branches differ after seq {seq}"
            return True

    return Lockstepped


def _join_answered_early(tmp: Path) -> Path:
    """The default scenario's trace with its last parked JoinGroup (answered when the other
    members rejoined) answered at once instead: the members' heartbeats that follow come
    while the reference still keeps that JoinGroup parked, though the broker answered it
    (the slow step settles it first, and fails)."""
    import io

    from groupspec.cli.simulate import bundled_scenarios
    from groupspec.sim.render import write_trace
    from groupspec.sim.runner import simulate
    from groupspec.sim.scenario import load_scenario_text

    out = io.StringIO()
    write_trace(simulate(load_scenario_text(bundled_scenarios()["default"], "default.json")), out)
    objs = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    join = [o for o in objs if o.get("api") == "JoinGroup" and o.get("response")
            and o["received_ms"] - o["sent_ms"] > 200][-1]
    join["received_ms"] = join["sent_ms"] + 1
    path = tmp / "default-join-answered-early.jsonl"
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))
    return path


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The injected collection, and a trace where a parked request is due at fast steps."""
    here = Path(__file__).resolve().parent.parent / "examples" / "injected"
    tmp = tmp_path_factory.mktemp("injected-fast")
    paths = []
    for f in sorted(here.glob("cluster-*.jsonl.gz")):
        p = tmp / f.name.removesuffix(".gz")
        p.write_bytes(gzip.decompress(f.read_bytes()))
        paths.append(p)
    paths.append(_join_answered_early(tmp))
    return paths


@pytest.fixture(scope="module")
def consumer_groups() -> list[Path]:
    """The committed traces with KIP-848 groups (recordings of Kafka 4.1.2, some with regex
    subscriptions): the options near a consumer group's timers and regex resolutions."""
    root = Path(__file__).resolve().parent.parent / "examples"
    return [p for p in sorted(root.rglob("*.jsonl")) if "ConsumerGroupHeartbeat" in p.read_text()]


def _replay_lockstepped(paths: list[Path], slacks: tuple[int, ...], optimistic: bool = True) -> tuple[int, int]:
    """The fast steps and the optimistic first options taken, each checked."""
    from groupspec.validate import replay as rp
    from groupspec.validate import validate_path, validator

    checked = _lockstep_replayer()
    with pytest.MonkeyPatch.context() as mp, fast_path.enabled(True):
        mp.setattr(rp, "Replayer", checked)  # replay_group builds this one
        mp.setattr(rp, "OPTIMISTIC", optimistic)
        mp.setattr(validator, "CONTAIN_FAILURES", False)  # the lockstep's assertions surface
        for slack in slacks:
            for p in paths:
                validate_path(p, rp.ReplayConfig(slack_ms=slack))
    return int(checked.steps), int(checked.first_options)


@pytest.mark.parametrize("optimistic", [True, False], ids=["optimistic", "search-only"])
def test_each_fast_step_of_the_replay_equals_the_slow_step(injected: list[Path], optimistic: bool) -> None:
    """Over the injected collection, with the default slack and a wide one (more timers
    near requests): every sole option is _options' only one, every first option of an
    optimistic replay is _options' first (and as quiet), every fast step leaves the branch
    and the answers as the slow step does; with optimistic replays (most groups conform:
    their search is one) and with searches alone (what a diverging group gets)."""
    steps, firsts = _replay_lockstepped(injected, (100, 5_000), optimistic)
    assert steps > 10_000
    assert (firsts > 10_000) if optimistic else (firsts == 0)


def test_each_first_option_of_an_optimistic_replay_of_consumer_groups_is_the_search_s(
        consumer_groups: list[Path]) -> None:
    _, firsts = _replay_lockstepped(consumer_groups, (100,))
    assert len(consumer_groups) >= 10 and firsts > 500


#: the replay's shortcut with one condition or effect dropped: (method, text, replacement)
REPLAY_MUTANTS = {
    "timer near the request ignored": ("_sole_option",
                                       "if fast_path.earliest_deadline(state) <= self._read_by(i, t):",
                                       "if False:"),
    "overlapping request ignored": ("_sole_option",
                                    "if len(rem) > 1 and not self.x[rem[1]].sent > ex.received:", "if False:"),
    "another connection's overlapping request ignored": ("_sole_option",
                                                         "if xj.event.connection != conn:", "if False:"),
    "missing response ignored": ("_sole_option",
                                 "if e.response is None or self.coordinator_error[i]:", "if False:"),
    "due timer ignored": ("_fast_step", "fast_path.earliest_deadline(state) <= t:", "False:"),
    "connection's last time not noted": ("_fast_step", "b.last_normal[e.connection] = t", "pass"),
    "answer not noted": ("_fast_step", "self.answers.setdefault(ex.seq, []).append(resp)", "pass"),
    "parked request due ignored": ("_fast_step", "if b.parked and any(", "if False and any("),
    "options' timers taken as quiet": ("_options", "self._options_quiet = not near",
                                       "self._options_quiet = True"),
    "first option's timers taken as quiet": ("_first_option", "return d, not near", "return d, True"),
    "first option's coordinator error handled": ("_first_option", "if self._answered[i]:", "if True:"),
    "first option's regex resolution ignored": ("_first_option", "if state.regex_tasks:", "if False:"),
}


@pytest.mark.parametrize("mutant", sorted(REPLAY_MUTANTS))
def test_the_step_check_catches_a_disagreeing_replay_shortcut(mutant: str, injected: list[Path],
                                                                consumer_groups: list[Path]) -> None:
    import inspect
    import textwrap

    from groupspec.validate import replay as rp

    method, find, replace = REPLAY_MUTANTS[mutant]
    source = textwrap.dedent(inspect.getsource(getattr(rp.Replayer, method)))
    assert source.count(find) == 1
    namespace: dict[str, Any] = {}
    exec(source.replace(find, replace), vars(rp), namespace)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rp.Replayer, method, namespace[method])
        with pytest.raises(AssertionError):
            # (a search's own shortcuts are taken where an optimistic replay diverged, and
            # alone with it off)
            if method == "_first_option":
                _replay_lockstepped([*consumer_groups, *injected], (100, 5_000))
            else:
                _replay_lockstepped(injected, (100, 5_000), optimistic=False)


def test_the_shortcuts_records_are_what_their_classes_make() -> None:
    # fast_path makes its two records and a commit's partition answers from their field
    # dicts (no frozen __init__): the same class, fields in the same order, equal and
    # hashing alike
    made: list[tuple[Any, Any]] = [
        (fast_path.heartbeat_scheduled("g", "m-1", 1234), r.HeartbeatScheduled("g", "m-1", 1234)),
        (fast_path.offset_committed("g", "t", 3, 42, "", 99, 2, "m-1", 7, None),
         r.OffsetCommitted("g", "t", 3, 42, "", 99, 2, "m-1", 7)),
        (fast_path.offset_committed("g", "t", 3, 42, "", 99, 2, "m-1", -1, 1099),
         r.OffsetCommitted("g", "t", 3, 42, "", 99, 2, "m-1", -1, 1099)),
        (fast_path.partition_committed("t", 3), m.OffsetCommitPartitionResponse("t", 3, Error.NONE))]
    for fast, slow in made:
        assert type(fast) is type(slow)
        assert list(vars(fast).items()) == list(vars(slow).items())
        assert fast == slow and hash(fast) == hash(slow)
        assert [f.name for f in dataclasses.fields(slow)] == list(vars(fast))
