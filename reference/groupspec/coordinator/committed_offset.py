"""A committed offset as the coordinator keeps it (OffsetMetadataManager's OffsetAndMetadata),
whichever protocol the group speaks."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CommittedOffset:
    committed_offset: int
    metadata: str | None
    commit_timestamp_ms: int
    #: OffsetAndMetadata.leaderEpoch: the request's committed leader epoch, -1 for none
    leader_epoch: int = -1
