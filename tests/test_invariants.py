"""Each invariant function of :mod:`groupspec.invariants`, fed a state (or a record, or an
ownership map) that breaks it, reports exactly that invariant with a detail naming the
culprit, and stays silent on the same state repaired. These are the precise catchers
the curated mutants (bench/mutants.toml) rely on: an invariant replaced by ``return
None`` or with one branch dropped fails here, whatever the coordinator does."""

from __future__ import annotations

import pytest

from groupspec.coordinator.classic.group import Group, Member
from groupspec.coordinator.state import CoordinatorState
from groupspec.invariants import (
    STATE_INVARIANTS,
    InvariantMonitor,
    check_record,
    check_state,
    concurrent_owners,
    leader_is_member,
    one_owner_per_generation,
    parked_requests_fit_state,
    pending_members_disjoint,
    stale_commit,
    static_members_consistent,
    unassigned,
)
from groupspec.protocol import records as r
from groupspec.protocol.group_state import GroupState

S = GroupState


def member(mid: str, instance: str | None = None, *, join: int | None = None,
           sync: int | None = None) -> Member:
    info = r.MemberInfo(mid, instance, f"client-{mid}", "/127.0.0.1", "consumer")
    return Member(info, 30_000, 10_000, (), join_request=join, sync_request=sync)


def stable_group(*members: Member, state: GroupState = S.Stable) -> Group:
    g = Group("g", state=state, generation_id=3, protocol_type="consumer",
              protocol_name="range", leader_id=members[0].member_id if members else None)
    for m in members:
        g.members[m.member_id] = m
        if m.group_instance_id is not None:
            g.static_members[m.group_instance_id] = m.member_id
    return g


def only(state: Group) -> list[str]:
    """The names of the state invariants ``state`` breaks."""
    cs = CoordinatorState({state.group_id: state})
    return sorted({v.invariant for v in check_state(cs, at_ms=7)})


def test_a_well_formed_group_breaks_no_state_invariant() -> None:
    g = stable_group(member("a"), member("b", "inst-b"))
    assert only(g) == []
    assert {name: fn(g) for name, fn in STATE_INVARIANTS.items()} == dict.fromkeys(STATE_INVARIANTS)


# ---------------------------------------------------------------- LeaderIsMemberInv
def test_leader_not_a_member_is_leader_is_member_inv() -> None:
    g = stable_group(member("a"), member("b"))
    g.leader_id = "gone"
    assert only(g) == ["LeaderIsMemberInv"]
    assert "'gone'" in (leader_is_member(g) or "")


def test_stable_without_members_is_leader_is_member_inv() -> None:
    g = stable_group(state=S.CompletingRebalance)
    assert only(g) == ["LeaderIsMemberInv"]
    assert leader_is_member(g) == "CompletingRebalance with no members"


# ---------------------------------------------------------------- StaticMembersInv
def test_instance_mapped_to_a_non_member_is_static_members_inv() -> None:
    g = stable_group(member("a"))
    g.static_members["inst-x"] = "ghost"
    assert only(g) == ["StaticMembersInv"]
    assert static_members_consistent(g) == "instance 'inst-x' maps to non-member 'ghost'"


def test_two_instances_mapped_to_one_member_is_static_members_inv() -> None:
    g = stable_group(member("a", "inst-a"))
    g.static_members["inst-other"] = "a"
    assert only(g) == ["StaticMembersInv"]
    detail = static_members_consistent(g) or ""
    assert "two instance ids" in detail or "carries 'inst-a'" in detail


def test_mapping_to_a_member_of_another_instance_is_static_members_inv() -> None:
    g = stable_group(member("a", "inst-a"), member("b"))
    g.static_members["inst-a"] = "b"  # b is dynamic; a is left unmapped
    assert only(g) == ["StaticMembersInv"]
    assert static_members_consistent(g) == "instance 'inst-a' maps to 'b', which carries None"


def test_static_member_missing_from_the_mapping_is_static_members_inv() -> None:
    g = stable_group(member("a", "inst-a"))
    del g.static_members["inst-a"]
    assert only(g) == ["StaticMembersInv"]
    assert static_members_consistent(g) == "static member 'a' is not mapped by its instance id"


def test_two_members_carrying_one_instance_id_is_static_members_inv() -> None:
    g = stable_group(member("a", "inst-a"), member("b"))
    g.members["b"] = member("b", "inst-a")  # b carries a's instance id, which maps to a
    assert only(g) == ["StaticMembersInv"]
    assert static_members_consistent(g) == "static member 'b' is not mapped by its instance id"


# ---------------------------------------------------------------- PendingMembersInv
def test_pending_id_that_is_also_a_member_is_pending_members_inv() -> None:
    g = stable_group(member("a"), member("b"))
    g.pending_members = {"b": 40_000, "c": 40_000}
    assert only(g) == ["PendingMembersInv"]
    assert pending_members_disjoint(g) == "pending and member at once: ['b']"
    g.pending_members = {"c": 40_000}
    assert only(g) == []


# ---------------------------------------------------------------- ParkedRequestsInv
@pytest.mark.parametrize("state", [S.Stable, S.CompletingRebalance])
def test_join_parked_outside_preparing_rebalance_is_parked_requests_inv(state: GroupState) -> None:
    g = stable_group(member("a"), member("b", join=11), state=state)
    assert only(g) == ["ParkedRequestsInv"]
    assert parked_requests_fit_state(g) == f"'b' parked in JoinGroup while {state.value}"
    g.state = S.PreparingRebalance
    assert only(g) == []


@pytest.mark.parametrize("state", [S.Stable, S.PreparingRebalance])
def test_sync_parked_outside_completing_rebalance_is_parked_requests_inv(state: GroupState) -> None:
    g = stable_group(member("a", sync=12), member("b"), state=state)
    assert only(g) == ["ParkedRequestsInv"]
    assert parked_requests_fit_state(g) == f"'a' parked in SyncGroup while {state.value}"
    g.state = S.CompletingRebalance
    assert only(g) == []


def test_check_state_reports_every_group_with_time_and_group() -> None:
    bad = stable_group(member("a"))
    bad.pending_members = {"a": 1}
    other = Group("h", state=S.Stable)  # Stable with no members
    cs = CoordinatorState({"g": bad, "h": other})
    found = sorted((v.group_id, v.invariant, v.at_ms) for v in check_state(cs, at_ms=5))
    assert found == [("g", "PendingMembersInv", 5), ("h", "LeaderIsMemberInv", 5)]


# ---------------------------------------------------------------- record invariants
def _names(before: CoordinatorState, rec: r.Record, previous: r.Record | None = None) -> list[str]:
    return [v.invariant for v in check_record(before, rec, 9, previous)]


def test_transition_outside_the_table_is_valid_transition_inv() -> None:
    cs = CoordinatorState({"g": stable_group(member("a"))})
    assert _names(cs, r.StateChanged("g", S.CompletingRebalance, 9)) == ["ValidTransitionInv"]
    assert _names(cs, r.StateChanged("g", S.PreparingRebalance, 9)) == []
    # the join phase may not skip CompletingRebalance (the spec's
    # mutant-completing-rebalance-skipped)
    preparing = CoordinatorState({"g": stable_group(member("a", join=1), state=S.PreparingRebalance)})
    assert _names(preparing, r.StateChanged("g", S.Stable, 9)) == ["ValidTransitionInv"]


def test_join_phase_ending_without_a_generation_is_generation_monotonic_inv() -> None:
    g = stable_group(member("a", join=1), state=S.PreparingRebalance)
    cs = CoordinatorState({"g": g})
    to_completing = r.StateChanged("g", S.CompletingRebalance, 9)
    assert _names(cs, to_completing) == ["GenerationMonotonicInv"]
    assert _names(cs, to_completing, previous=r.GenerationStarted("g", 4, "range")) == []
    assert _names(cs, r.StateChanged("g", S.Empty, 9)) == ["GenerationMonotonicInv"]


def test_generation_skipping_or_repeating_is_generation_monotonic_inv() -> None:
    cs = CoordinatorState({"g": stable_group(member("a"), state=S.PreparingRebalance)})
    assert _names(cs, r.GenerationStarted("g", 5, "range")) == ["GenerationMonotonicInv"]
    assert _names(cs, r.GenerationStarted("g", 3, "range")) == ["GenerationMonotonicInv"]
    assert _names(cs, r.GenerationStarted("g", 4, "range")) == []


def _commit(generation: int, member_id: str = "a") -> r.OffsetCommitted:
    return r.OffsetCommitted("g", "t", 0, 42, None, 9, generation, member_id)


def test_stored_stale_commits_are_no_stale_commit_inv() -> None:
    g = stable_group(member("a"))
    cs = CoordinatorState({"g": g})
    assert _names(cs, _commit(3)) == []
    assert _names(cs, _commit(2)) == ["NoStaleCommitInv"]
    assert stale_commit(g, _commit(2)) == ("commit t-0@42 from generation 2 stored while the "
                                           "group is at generation 3")
    assert stale_commit(g, _commit(4)) is not None
    assert stale_commit(g, _commit(3, "stranger")) == "commit t-0@42 stored from non-member 'stranger'"
    assert stale_commit(None, _commit(3)) is not None
    assert stale_commit(None, _commit(-1)) is None
    assert stale_commit(g, _commit(-1)) == "generation-less commit t-0@42 stored while the group is Stable"
    g.state = S.Empty
    assert stale_commit(g, _commit(-1)) is None


@pytest.mark.parametrize("state", [S.CompletingRebalance, S.Empty])
def test_commit_stored_between_join_and_sync_is_no_stale_commit_inv(state: GroupState) -> None:
    g = stable_group(member("a"), state=state)
    assert stale_commit(g, _commit(3)) == f"commit t-0@42 stored while the group is {state.value}"
    g.state = S.PreparingRebalance
    assert stale_commit(g, _commit(3)) is None


def test_monitor_checks_records_and_state_per_input() -> None:
    mon = InvariantMonitor()
    assert mon.apply_input([r.GroupCreated("g", 0)], 0) == []
    assert mon.apply_input([r.StateChanged("g", S.PreparingRebalance, 1)], 1) == []
    # a join phase ending without a generation is a record invariant, found at the record
    [v] = mon.apply_input([r.StateChanged("g", S.Empty, 2)], 2)
    assert (v.invariant, v.at_ms) == ("GenerationMonotonicInv", 2)
    # inside one input a member may be added before it is named leader: no violation
    info = r.MemberInfo("a", None, "client-a", "/127.0.0.1", "consumer")
    added = r.MemberAdded("g", info, 30_000, 10_000, (), None)
    assert mon.apply_input([added, r.LeaderChanged("g", "a")], 3) == []
    # ... but a state left that way after the input is a state invariant
    info_b = r.MemberInfo("b", None, "client-b", "/127.0.0.1", "consumer")
    mon2 = InvariantMonitor()
    mon2.apply_input([r.GroupCreated("g", 0)], 0)
    found = mon2.apply_input([r.MemberAdded("g", info_b, 30_000, 10_000, (), None)], 4)
    assert [x.invariant for x in found] == ["LeaderIsMemberInv"]
    assert "at 4 ms" in str(found[0]) and "['b']" in str(found[0])
    assert [x.invariant for x in mon.violations] == ["GenerationMonotonicInv"]


# ---------------------------------------------------------------- ownership invariants
def test_one_owner_per_generation_reports_each_shared_partition() -> None:
    assignments = {
        1: {"a": [("t", 0), ("t", 1)], "b": [("t", 1)]},
        2: {"a": [("t", 0)], "b": [("t", 1)]},
        3: {"a": [("t", 2)], "b": [("t", 2)], "c": [("t", 2)]},
    }
    assert one_owner_per_generation(assignments) == [
        (1, ("t", 1), ["a", "b"]),
        (3, ("t", 2), ["a", "b", "c"]),
    ]
    assert one_owner_per_generation({1: {"a": [("t", 0)]}, 2: {"b": [("t", 0)]}}) == []


def test_concurrent_owners_and_unassigned() -> None:
    owned = {"a": [("t", 0)], "b": [("t", 0), ("t", 1)], "c": []}
    assert concurrent_owners(owned) == {("t", 0): ["a", "b"]}
    assert concurrent_owners({"a": [("t", 0)], "b": [("t", 1)]}) == {}
    assert unassigned([("t", 0), ("t", 1), ("t", 2)], owned) == {("t", 2)}
    assert unassigned([("t", 0)], owned) == set()


def test_no_stale_commit_in_a_consumer_group_is_by_member_epoch() -> None:
    """KIP-848: a stored commit carries its member's current epoch (NoStaleCommitInv)."""
    from groupspec.coordinator.consumer.group import ConsumerGroup
    from groupspec.coordinator.consumer.member import ConsumerMember
    from groupspec.invariants import check_record

    state = CoordinatorState()
    g = ConsumerGroup("cg", group_epoch=3, assignment_epoch=3)
    g.members["m"] = ConsumerMember("m", member_epoch=3, previous_member_epoch=2)
    state.consumer_groups["cg"] = g

    def commit(epoch: int, member: str = "m") -> r.OffsetCommitted:
        return r.OffsetCommitted("cg", "t", 0, 10, None, 0, epoch, member)

    assert check_record(state, commit(3)) == []
    [stale] = check_record(state, commit(2))
    assert stale.invariant == "NoStaleCommitInv" and "member epoch 2" in stale.detail
    [stranger] = check_record(state, commit(3, "x"))
    assert "non-member" in stranger.detail
    # the coordinator loading a group replays its commits with epoch -1 and no member
    assert check_record(state, commit(-1, "")) == []
