"""A committed offset as the coordinator keeps it (OffsetMetadataManager's OffsetAndMetadata),
whichever protocol the group speaks."""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.protocol.messages import DEFAULT_RETENTION_TIME


@dataclass
class CommittedOffset:
    committed_offset: int
    metadata: str | None
    commit_timestamp_ms: int
    #: OffsetAndMetadata.leaderEpoch: the request's committed leader epoch, -1 for none
    leader_epoch: int = -1
    #: OffsetAndMetadata.expireTimestampMs: set by an OffsetCommit v2-v4 retention_time_ms
    #: (the commit's time plus it), None otherwise
    expire_timestamp_ms: int | None = None

    def expired(self, base_ms: int, now_ms: int, retention_ms: int) -> bool:
        """OffsetExpirationConditionImpl.isOffsetExpired: an offset with an expire timestamp
        expires at it; the others ``retention_ms`` (offsets.retention.ms) after ``base_ms``,
        the timestamp the group's condition counts from (the commit's, or when a classic
        group became Empty)."""
        if self.expire_timestamp_ms is not None:
            return now_ms >= self.expire_timestamp_ms
        return now_ms - base_ms >= retention_ms


def expire_timestamp(now_ms: int, retention_time_ms: int) -> int | None:
    """OffsetMetadataManager.expireTimestampMs: none for the default retention (-1), else
    now plus the request's retention time, as Java adds two longs (wrapping past 2**63: a
    retention of Long.MAX_VALUE gives a timestamp in the past, expired at the next check)."""
    if retention_time_ms == DEFAULT_RETENTION_TIME:
        return None
    return (now_ms + retention_time_ms + 2**63) % 2**64 - 2**63


def expire_timestamp_from_log(value: int | None) -> int | None:
    """An expire timestamp as a reload reads it back from the log: OffsetCommitValue keeps
    -1 for none, and OffsetAndMetadata.fromRecord reads -1 as none (Utils.ofSentinel), so a
    timestamp of -1 (now plus a retention time summing to it) does not survive a reload."""
    return None if value == -1 else value
