"""The validator's shortcuts (issue 20) give what the plain code they replaced gives:

- the coordinator-unload filter of the record invariants (one backward pass) keeps exactly
  the unloads the scan ahead from each unload kept;
- ``record_invariants`` (which leaves out the state check after an input of only
  heartbeat and commit records while the last check found nothing) reports what
  :meth:`InvariantMonitor.apply_input` per input reports, on record streams that break the
  state invariants, stop at a record that does not fit, or pass;
- ``group_trace`` marks a group's records as in seq order only when they are.
"""

from __future__ import annotations

import random

import pytest

from groupspec.invariants import InvariantMonitor
from groupspec.protocol import records as r
from groupspec.protocol.group_state import GroupState
from groupspec.trace.events import Header, RecordEvent
from groupspec.validate import checks
from groupspec.validate.grouping import group_trace
from groupspec.validate.load import LoadedTrace, Located
from groupspec.validate.rules import RULES

S = GroupState


def _old_own_unloads(records: list[tuple[int, RecordEvent]]) -> list[tuple[int, RecordEvent]]:
    out = []
    for k, item in enumerate(records):
        if isinstance(item[1].record, r.CoordinatorUnloaded):
            nxt = next((x for _, x in records[k + 1:] if not isinstance(x.record, r.CoordinatorUnloaded)), None)
            if nxt is None or not isinstance(nxt.record, r.GroupLoaded | r.GroupCreated):
                continue
        out.append(item)
    return out


def _old_record_invariants(records: list[tuple[int, RecordEvent]]) -> tuple[list[checks.Finding],
                                                                             checks.RecordCoverage]:
    mon = InvariantMonitor()
    out: list[checks.Finding] = []
    total = len(records)
    records = _old_own_unloads(records)
    runs: list[list[tuple[int, RecordEvent]]] = []
    for item in records:
        if runs and runs[-1][-1][1].at_ms == item[1].at_ms:
            runs[-1].append(item)
        else:
            runs.append([item])
    checked = total - len(records)
    for run in runs:
        line, ev = run[0]
        try:
            found = mon.apply_input([e.record for _, e in run], ev.at_ms)
        except Exception as e:
            return out, checks.RecordCoverage(checked, total,
                                              f"line {line}: a record does not fit the replayed state ({e})", line)
        checked += len(run)
        for v in found:
            rule = RULES.get(v.invariant)
            if rule is not None:
                out.append(checks.Finding(ev.seq, line, rule, f"records at {ev.at_ms} ms", "", v.detail, "record"))
    return out, checks.RecordCoverage(checked, total)


def _stream(rng: random.Random, n: int) -> list[tuple[int, RecordEvent]]:
    """Records of group g (and unloads) in a plausible order, some of them wrong."""
    info = r.MemberInfo("m1", None, "c1", "/h", "consumer")
    recs: list[r.Record] = [r.GroupCreated("g", 0), r.ProtocolTypeSet("g", "consumer"),
                            r.StateChanged("g", S.PreparingRebalance, 1),
                            r.MemberAdded("g", info, 1000, 10000, (), None),
                            r.LeaderChanged("g", "m1"), r.GenerationStarted("g", 1, "range"),
                            r.StateChanged("g", S.CompletingRebalance, 2),
                            r.StateChanged("g", S.Stable, 3)]
    choices: list[r.Record] = [
        r.HeartbeatScheduled("g", "m1", 5000),
        r.OffsetCommitted("g", "t", 0, 5, None, 4, 1, "m1"),
        r.OffsetCommitted("g", "t", 1, 6, None, 4, 2, "m1"),       # stale generation
        r.HeartbeatScheduled("g", "nobody", 5000),                  # does not fit
        r.LeaderChanged("g", None),                                  # breaks LeaderIsMemberInv
        r.LeaderChanged("g", "m1"),
        r.CoordinatorUnloaded(""),
        r.StateChanged("g", S.Stable, 5),                            # not a valid transition
    ]
    weights = [30, 20, 2, 1, 2, 3, 2, 1]
    recs += rng.choices(choices, weights, k=n)
    out = []
    at = 0
    for k, rec in enumerate(recs):
        at += rng.choice((0, 0, 1, 5))
        out.append((k + 2, RecordEvent(k + 1, at, rec)))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_record_invariants_as_before(seed: int) -> None:
    rng = random.Random(seed)
    records = _stream(rng, rng.randrange(1, 80))
    assert checks._own_unloads(records) == _old_own_unloads(records)
    assert checks.record_invariants(records) == _old_record_invariants(records)


def test_records_in_seq_order_only_when_they_are() -> None:
    def loaded(seqs: list[int]) -> LoadedTrace:
        events = [Located(1, Header())]
        events += [Located(k + 2, RecordEvent(s, k, r.HeartbeatScheduled("g", "m", 1)))
                   for k, s in enumerate(seqs)]
        return LoadedTrace("<t>", events)

    assert group_trace(loaded([1, 2, 3])).groups["g"].records_in_seq_order
    assert not group_trace(loaded([1, 3, 2])).groups["g"].records_in_seq_order
