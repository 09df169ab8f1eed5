"""What a consumer consumes, whichever group protocol assigns its partitions: a position
per owned partition (fetched from the committed offsets when it is assigned, as
``ConsumerCoordinator.refreshCommittedOffsets`` / the new consumer's ``OffsetFetch``), each
poll advancing positions towards the log end offsets and noting the ranges processed, and
the commits of those positions (``SubscriptionState`` and the commit managers of
clients/.../consumer/internals/). The classic and the KIP-848 consumer models share it.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from groupspec.protocol import messages as m

TP = tuple[str, int]


class Consumption:
    """A mixin of the consumer models: the attributes below and the methods on them."""

    owned: set[TP]
    positions: dict[TP, int]
    #: owned partitions whose committed offset is still being fetched
    awaiting_position: set[TP]
    committed: dict[TP, int]
    #: offsets carried by commits in flight, to record them when acknowledged
    sent_offsets: dict[tuple[int, TP], int]
    #: (partition, first offset, end offset) processed by the last poll (drained by the sim)
    processed: list[tuple[TP, int, int]]

    def _init_consumption(self) -> None:
        self.owned = set()
        self.positions = {}
        self.awaiting_position = set()
        self.committed = {}
        self.sent_offsets = {}
        self.processed = []

    def _drop(self, parts: set[TP]) -> None:
        """The partitions are no longer owned: their positions go too."""
        for tp in parts:
            self.positions.pop(tp, None)
            self.awaiting_position.discard(tp)
        self.owned -= parts

    def _consume(self, log_end_offsets: Mapping[TP, int], max_per_partition: int,
                 paused: Set[TP] = frozenset()) -> None:
        """One poll: each owned partition with a position reads up to ``max_per_partition``
        records towards its log end offset; ``paused`` ones (pending revocation) read none."""
        skip = self.awaiting_position | paused if paused else self.awaiting_position
        for tp in sorted(self.owned - skip if skip else self.owned):
            pos = self.positions.get(tp, 0)
            end = log_end_offsets.get(tp, 0)
            cap = pos + max_per_partition
            if cap < end:  # min(end, cap), as a comparison
                end = cap
            if end > pos:
                self.processed.append((tp, pos, end))
                self.positions[tp] = end

    def _uncommitted(self, parts: set[TP]) -> tuple[m.OffsetCommitPartition, ...]:
        """The positions of ``parts`` that differ from what was last committed."""
        return tuple(
            m.OffsetCommitPartition(t, p, self.positions[(t, p)])
            for (t, p) in sorted(parts)
            if (t, p) in self.positions and self.positions[(t, p)] != self.committed.get((t, p))
        )

    def _all_consumed(self, parts: set[TP]) -> tuple[m.OffsetCommitPartition, ...]:
        """SubscriptionState.allConsumed over ``parts``: every one with a position, committed
        before or not (the auto-commit sends them all, changed or not)."""
        positions = self.positions
        return tuple(m.OffsetCommitPartition(t, p, positions[(t, p)])
                     for (t, p) in sorted(parts) if (t, p) in positions)

    def _note_sent(self, rid: int, req: m.OffsetCommitRequest) -> None:
        for p in req.partitions:
            self.sent_offsets[(rid, (p.topic, p.partition))] = p.committed_offset

    def _acknowledged(self, rid: int, resp: m.OffsetCommitResponse) -> None:
        """A commit answered NONE for every partition: what was sent is committed (the
        positions may have moved on since)."""
        for p in resp.partitions:
            tp = (p.topic, p.partition)
            self.committed[tp] = self.sent_offsets.pop((rid, tp), self.committed.get(tp, 0))

    def _fetched(self, resp: m.OffsetFetchResponse) -> None:
        """Positions from the committed offsets (none committed: from the start)."""
        for p in resp.partitions:
            tp = (p.topic, p.partition)
            if tp in self.awaiting_position:
                self.awaiting_position.discard(tp)
                self.positions[tp] = max(p.committed_offset, 0)
                if p.committed_offset >= 0:
                    self.committed[tp] = p.committed_offset
