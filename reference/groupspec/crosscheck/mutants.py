"""Seeded bugs in the reference, to prove the cross-check bites.

Each mutant is a context manager that patches one rule of the reference for the duration
of a check (and restores it on exit). The cross-check must catch every one in at least
one direction; `groupspec crosscheck --mutants` and tests/test_crosscheck.py run them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import groupspec.assignors.cooperative_sticky as cooperative_sticky
import groupspec.coordinator.classic.join_group as join_group
import groupspec.coordinator.coordinator as coordinator_module
import groupspec.coordinator.offsets as offsets
from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.classic.sync_group import remove_pending_sync_member
from groupspec.coordinator.context import Txn
from groupspec.protocol import messages as msg
from groupspec.protocol.consumer_protocol import Assignment
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    #: the rule it breaks and where the real one lives
    rule: str
    patch: Callable[[], contextlib.AbstractContextManager[None]]
    #: whether the exhaustive direction can see it (it replays the coordinator only)
    coordinator_side: bool


@contextlib.contextmanager
def _setattr(target: Any, name: str, value: Any) -> Iterator[None]:
    namespace = target.__dict__ if not isinstance(target, type) else None
    original = getattr(target, name)
    if namespace is not None:
        namespace[name] = value
    else:
        setattr(target, name, value)
    try:
        yield
    finally:
        if namespace is not None:
            namespace[name] = original
        else:
            setattr(target, name, original)


def _stale_commit_accepted() -> contextlib.AbstractContextManager[None]:
    original = offsets.validate_offset_commit

    def validate(group: Group, req: msg.OffsetCommitRequest) -> Error:
        error = original(group, req)
        return Error.NONE if error is Error.ILLEGAL_GENERATION else error

    return _setattr(offsets, "validate_offset_commit", validate)


def _follower_sync_answered_early() -> contextlib.AbstractContextManager[None]:
    handlers = coordinator_module.__dict__["_HANDLERS"]
    original = handlers[msg.SyncGroupRequest]

    def sync(coord: Any, txn: Txn, rid: int, req: msg.SyncGroupRequest) -> None:
        g = txn.state.groups.get(req.group_id)
        if (
            g is not None and g.state is GroupState.CompletingRebalance
            and req.member_id in g.members and not g.is_leader(req.member_id)
            and req.generation_id == g.generation_id
        ):
            # answered at once with what the member had, not parked for the leader's plan
            remove_pending_sync_member(txn, g, req.member_id)
            txn.respond(rid, msg.SyncGroupResponse(error=Error.NONE,
                                                   assignment=g.members[req.member_id].assignment))
            return
        original(coord, txn, rid, req)

    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        handlers[msg.SyncGroupRequest] = sync
        try:
            yield
        finally:
            handlers[msg.SyncGroupRequest] = original

    return patch()


def _static_rejoin_rebalances() -> contextlib.AbstractContextManager[None]:
    original = join_group._replace_static_member

    def replace(txn: Txn, request_id: int, req: msg.JoinGroupRequest, group: Group,
                old_id: str, new_id: str) -> None:
        was_stable = group.state is GroupState.Stable
        original(txn, request_id, req, group, old_id, new_id)
        if was_stable and group.state is GroupState.Stable:
            rb.prepare_rebalance(txn, group, "static member rejoined (mutant)")

    return _setattr(join_group, "_replace_static_member", replace)


def _cooperative_handover_before_revoke() -> contextlib.AbstractContextManager[None]:
    cls = cooperative_sticky.CooperativeStickyAssignor
    m = cooperative_sticky.__dict__

    def assign(self: Any, partitions_per_topic: Mapping[str, int],
               members: Sequence[Any], partition_racks: Any = None) -> dict[str, Assignment]:
        m["check_input"](partitions_per_topic, members)
        topics = m["known_subscribed_topics"](partitions_per_topic, members)
        sets: dict[tuple[str, ...], frozenset[str]] = {}
        sticky = [
            m["StickyMember"](x.member_id, m["_topic_set"](sets, x.subscription.topics),
                              x.subscription.owned_partitions,
                              m["member_generation"](x.subscription))
            for x in members
        ]
        result = m["sticky_assign"](topics, sticky)
        # the target handed out at once: no partition withheld while its owner revokes it
        return {x.member_id: Assignment(result.assignment[x.member_id]) for x in members}

    return _setattr(cls, "assign", assign)


MUTANTS: dict[str, Mutant] = {
    x.name: x
    for x in (
        Mutant("stale-commit-accepted",
               "OffsetCommit from an older generation accepted",
               "ClassicGroup.validateOffsetCommit (coordinator/offsets.py)",
               _stale_commit_accepted, True),
        Mutant("follower-sync-answered-early",
               "a follower's SyncGroup answered before the leader's assignment arrives",
               "GroupMetadataManager.classicGroupSyncToClassicGroup (coordinator/classic/sync_group.py)",
               _follower_sync_answered_early, True),
        Mutant("static-rejoin-rebalances",
               "a static member's rejoin in Stable starts a rebalance (KIP-345 says it must not)",
               "updateStaticMemberThenRebalanceOrCompleteJoin (coordinator/classic/join_group.py)",
               _static_rejoin_rebalances, True),
        Mutant("cooperative-handover-before-revoke",
               "CooperativeSticky hands a partition to its new owner in the round its old "
               "owner still holds it",
               "CooperativeStickyAssignor.adjustAssignment (assignors/cooperative_sticky.py)",
               _cooperative_handover_before_revoke, False),
    )
}
