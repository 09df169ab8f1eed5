"""The periodic offset-expiry check skips the checks that cannot expire anything
(Coordinator._skip_idle_checks): the same records and answers as stepping through every
check, on random workloads of simple and classic groups whose clocks jump (found by
mutating a recording: a request stamped in 1970 among 2026's made the replay step through
millions of checks), some commits with an expire timestamp of their own (OffsetCommit v2-v4's
retention time)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m

CONFIG = CoordinatorConfig(offsets_retention_ms=10_000, offsets_retention_check_interval_ms=1_000,
                           group_initial_rebalance_delay_ms=0)

#: a commit's retention time, by its offset (-1: none, the broker's retention)
RETENTIONS = (-1, -1, 500, 2_500)

#: one step: (kind, group, time advance in ms, offset)
Step = tuple[str, int, int, int]
STEPS = st.lists(st.tuples(st.sampled_from(("commit", "join", "leave", "advance", "advance")),
                           st.integers(0, 2),
                           st.one_of(st.integers(0, 3_000), st.integers(0, 40_000), st.just(10**7)),
                           st.integers(0, 100)),
                 min_size=1, max_size=30)


def _run(steps: list[Step], skip: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as mp:
        if not skip:
            mp.setattr(Coordinator, "_skip_idle_checks", lambda self, now_ms, first: None)
        coord = Coordinator(CONFIG)
        now, out = 1_000, []
        members: dict[str, tuple[str, int]] = {}
        for rid, (kind, g, dt, offset) in enumerate(steps, start=1):
            now += dt
            gid = f"g{g}"
            if kind == "advance":
                o = coord.advance(now)
            elif kind == "commit":
                mid, gen = members.get(gid, ("", -1))
                # some at v2 with a retention time (an expire timestamp of their own)
                retention = RETENTIONS[offset % len(RETENTIONS)]
                o = coord.handle(rid, m.OffsetCommitRequest(
                    group_id=gid, generation_id=gen, member_id=mid, version=8 if retention == -1 else 2,
                    retention_time_ms=retention, partitions=(m.OffsetCommitPartition("t", g, offset),)), now)
            elif kind == "join":
                o = coord.handle(rid, m.JoinGroupRequest(
                    group_id=gid, session_timeout_ms=6_000, rebalance_timeout_ms=6_000, member_id="",
                    protocol_type="consumer", protocols=(m.JoinGroupProtocol("range", b""),), version=3), now)
                resp = o.response_to(rid)
                if isinstance(resp, m.JoinGroupResponse) and resp.member_id:
                    members[gid] = (resp.member_id, resp.generation_id)
            else:
                mid, _ = members.pop(gid, ("x", -1))
                o = coord.handle(rid, m.LeaveGroupRequest(group_id=gid, members=(m.MemberIdentity(mid),)), now)
            o.extend(coord.advance(now))
            out.append((now, o.responses, o.records))
        return out


@settings(max_examples=60, deadline=None)
@given(steps=STEPS)
# a simple group's commit, then a time past its retention and before twice it
@example(steps=[("commit", 0, 0, 5), ("advance", 0, 14_000, 0)])
# a commit expiring by its own retention time (2.5 s), long before the broker's, and a check
# between that finds nothing to expire
@example(steps=[("commit", 0, 0, 3), ("advance", 0, 4_000, 0)])
def test_skipping_idle_checks_changes_nothing(steps: list[Step]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        assert _run(steps, True, mp) == _run(steps, False, mp)


def test_a_jump_of_years_takes_few_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    coord = Coordinator(CONFIG)
    coord.handle(1, m.OffsetCommitRequest(group_id="g", partitions=(m.OffsetCommitPartition("t", 0, 5),)), 1_000)
    calls: list[int] = []
    expire_all = Coordinator._expire_all

    def counted(self: Coordinator, txn: Any) -> None:
        calls.append(txn.now_ms)
        expire_all(self, txn)

    monkeypatch.setattr(Coordinator, "_expire_all", counted)
    out = coord.advance(10**12)
    # the first check (nothing old enough), the one once the commit is 10 s old (expired,
    # the group deleted), and none of the billion after
    assert len(calls) <= 3, calls[:10]
    assert any(type(rec).__name__ == "OffsetsDeleted" for rec in out.records)
    assert "g" not in coord.state.groups
