"""Per-rebalance metrics of one group, from its wire exchanges (what any trace has).

The replay keeps no per-event state the pipeline could export, and a recording of a real
broker has no reference records, so the numbers come from the exchanges themselves. One
row per generation that some member joined (a successful JoinGroup response):

- ``started_ms``: the earliest of the JoinGroup requests sent (and the requests answered
  REBALANCE_IN_PROGRESS) after the previous generation's join phase completed; the
  coordinator may have begun the rebalance earlier (a session expiry is not on the wire).
- ``join_completed_ms``: the last successful JoinGroup response of the generation.
- ``ended_ms``: the last successful SyncGroup response of the generation (the join
  completion when no member synced); ``completed``: every member that joined synced.
- ``duration_ms`` = ended - started; ``generation``; ``members`` (who joined it);
  ``protocol`` (the selected assignor).
- ``partitions_moved``: partitions this generation handed to a member other than the one
  that held them last (a partition's first owner is not a move).
- ``unowned_partition_ms``: for each partition handed out, the time from its release by
  the previous holder to the SyncGroup response handing it out. Release is, for an eager
  protocol, the holder's JoinGroup request in this rebalance (it revokes everything before
  rejoining); for a cooperative one, the SyncGroup response that took it away (a partition
  kept by its holder is never unowned); a holder that left releases at its LeaveGroup; one
  that vanished (a crash) at ``started_ms``. A partition nobody held before counts from
  ``started_ms``.

Not computable from the wire: when a crashed member stopped processing, and the time a
partition stays unowned after the last rebalance of a trace (nobody is handed it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, pairs
from groupspec.protocol.errors import Error
from groupspec.validate.grouping import Exchange

TP = tuple[str, int]
COOPERATIVE = frozenset({"cooperative-sticky"})
#: JoinGroup responses of one completion arrive within this of the first (network delay)
_BURST_MS = 1000.0

#: (column, kind) of a rebalance row (kind as groupspec.pipeline.metrics)
REBALANCE_FIELDS: tuple[tuple[str, str], ...] = (
    ("generation", "int"),
    ("protocol", "str"),
    ("started_ms", "float"),
    ("join_completed_ms", "float"),
    ("ended_ms", "float"),
    ("duration_ms", "float"),
    ("completed", "bool"),
    ("members", "int"),
    ("partitions_moved", "int"),
    ("unowned_partition_ms", "float"),
)


@dataclass
class _Gen:
    generation: int
    protocol: str
    joins: list[Exchange] = field(default_factory=list)
    syncs: list[tuple[Exchange, str, set[TP]]] = field(default_factory=list)


def _key(req: Any) -> str:
    return str(getattr(req, "group_instance_id", None) or getattr(req, "member_id", ""))


def rebalance_metrics(exchanges: list[Exchange]) -> list[dict[str, Any]]:
    xs = sorted((x for x in exchanges if x.event.response is not None), key=lambda x: (x.received, x.seq))
    gens: dict[int, _Gen] = {}
    for x in xs:
        e = x.event
        if isinstance(e.response, m.JoinGroupResponse) and e.response.error is Error.NONE:
            g = e.response.generation_id
            gens.setdefault(g, _Gen(g, e.response.protocol_name or "")).joins.append(x)
        elif (isinstance(e.request, m.SyncGroupRequest) and isinstance(e.response, m.SyncGroupResponse)
              and e.response.error is Error.NONE and e.request.generation_id in gens):
            try:
                parts = pairs(Assignment.decode(e.response.assignment).partitions)
            except Exception:  # an undecodable assignment: the validator says so; no metric
                continue
            gens[e.request.generation_id].syncs.append((x, _key(e.request), parts))

    #: partition -> (last holder, when it got it, when it released it or None)
    owner: dict[TP, tuple[str, float, float | None]] = {}
    rows: list[dict[str, Any]] = []
    prev_done = float("-inf")
    for gen in sorted(gens.values(), key=lambda g: min(j.received for j in g.joins)):
        # the join phase completes once, answering every member; a later response of the
        # same generation is a static member replaced without a rebalance (KIP-345)
        first = min(j.received for j in gen.joins)
        phase = [j for j in gen.joins if j.received <= first + _BURST_MS]
        join_done = max(j.received for j in phase)
        starts = [x.sent for x in xs
                  if prev_done < x.sent <= join_done
                  and (_joins(x, gen.generation) or _rebalancing(x))]
        started = min(starts, default=min(j.sent for j in phase))
        cooperative = gen.protocol in COOPERATIVE
        joined_at = {_key(j.event.request): j.sent for j in phase}
        listed = max((len(j.event.response.members) for j in phase
                      if isinstance(j.event.response, m.JoinGroupResponse)), default=0)
        moved = 0
        unowned = 0.0
        syncs: list[tuple[Exchange, str, set[TP]]] = []
        for sync in gen.syncs:  # each member's first; a replaced static member's is not the rebalance's
            if sync[1] in joined_at and all(sync[1] != s[1] for s in syncs):
                syncs.append(sync)
        ended = max((x.received for x, _, _ in syncs), default=join_done)
        for x, who, parts in sorted(syncs, key=lambda s: s[0].received):
            got = x.received
            if cooperative:
                # what the holder no longer has is released when it learns so
                for tp, (holder, since, released) in list(owner.items()):
                    if holder == who and tp not in parts and released is None:
                        owner[tp] = (holder, since, got)
            for tp in parts:
                holder, since, released = owner.get(tp, ("", started, started))
                if holder == who and cooperative and released is None:
                    continue
                if holder and holder != who:
                    moved += 1
                if released is None:
                    if holder in joined_at and not cooperative:
                        released = joined_at[holder]
                    else:
                        released = _left_at(xs, holder, since, started)
                unowned += max(0.0, got - released)
                owner[tp] = (who, got, None)
        synced = {who for _, who, _ in syncs}
        rows.append({
            "generation": gen.generation,
            "protocol": gen.protocol,
            "started_ms": started,
            "join_completed_ms": join_done,
            "ended_ms": ended,
            "duration_ms": ended - started,
            "completed": set(joined_at) <= synced,
            "members": max(listed, len(joined_at)),
            "partitions_moved": moved,
            "unowned_partition_ms": unowned,
        })
        prev_done = join_done
    return rows


def _joins(x: Exchange, generation: int) -> bool:
    """A JoinGroup request that is part of the join phase of ``generation``."""
    r = x.event.response
    if not isinstance(x.event.request, m.JoinGroupRequest):
        return False
    return not (isinstance(r, m.JoinGroupResponse) and r.error is Error.NONE and r.generation_id != generation)


def _rebalancing(x: Exchange) -> bool:
    r = x.event.response
    err = getattr(r, "error", None)
    if err is Error.REBALANCE_IN_PROGRESS:
        return True
    if isinstance(r, m.OffsetCommitResponse):
        return any(p.error is Error.REBALANCE_IN_PROGRESS for p in r.partitions)
    return False


def _left_at(xs: list[Exchange], holder: str, since: float, fallback: float) -> float:
    """When ``holder`` sent a LeaveGroup after ``since`` (else ``fallback``)."""
    for x in xs:
        req = x.event.request
        if isinstance(req, m.LeaveGroupRequest) and x.sent >= since and any(
            holder in (mm.member_id, mm.group_instance_id) for mm in req.members
        ):
            return x.sent
    return fallback
