"""Coordinator failover: the ``__consumer_offsets`` partition moves to another broker.

The old coordinator unloads every group (GroupMetadataManager.onUnloaded: the group goes
Dead; parked JoinGroups are answered NOT_COORDINATOR if it was PreparingRebalance, parked
SyncGroups if it was CompletingRebalance or Stable). The new coordinator rebuilds each
group from its persisted records alone (onLoaded): Stable if it has members, else Empty,
every member's session timer armed. In-flight rebalances are lost; members learn it from
NOT_COORDINATOR, rediscover the coordinator and rejoin.
"""

from __future__ import annotations

from groupspec.coordinator.classic import rebalance as rb
from groupspec.coordinator.classic.group import Group
from groupspec.coordinator.context import Txn
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from groupspec.protocol.messages import JoinGroupResponse, SyncGroupResponse

S = GroupState


def unload_all(txn: Txn) -> None:
    for group in list(txn.state.groups.values()):
        if group.state is S.Dead:
            continue
        before = group.state
        rb.transition(txn, group, S.Dead)
        for m in list(group.members.values()):
            if before is S.PreparingRebalance:
                rb.complete_join_future(
                    txn, group, m, JoinGroupResponse(error=Error.NOT_COORDINATOR, member_id=m.member_id)
                )
            elif before in (S.CompletingRebalance, S.Stable):
                rb.complete_sync_future(txn, group, m, SyncGroupResponse(error=Error.NOT_COORDINATOR))


def load_all(old: dict[str, Group], txn: Txn) -> None:
    """Emit a GroupLoaded record per group of ``old`` into the (empty) state of ``txn``."""
    for group in old.values():
        if group.persisted is None and not group.offsets:
            continue
        offsets = tuple(
            (t, p, c.committed_offset, c.metadata, c.commit_timestamp_ms)
            for (t, p), c in sorted(group.offsets.items())
        )
        txn.emit(r.GroupLoaded(group.group_id, group.persisted, offsets, txn.now_ms))
        loaded = txn.state.groups[group.group_id]
        for m in list(loaded.members.values()):
            rb.reschedule_heartbeat(txn, loaded, m.member_id, m.session_timeout_ms)
        if len(loaded.members) > txn.config.group_max_size:
            rb.prepare_rebalance(txn, loaded, "freshly loaded group is over group.max.size")
