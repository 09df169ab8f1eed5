"""The checks every assignor applies to its input before assigning.

Assignors are called by the leader with what it decoded from JoinGroup; a caller that hands
over duplicated member ids or negative partition counts has a bug, and gets a ValueError
naming the offending member or topic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from groupspec.assignors.base import MemberSubscription, PartitionRacks


def check_input(
    partitions_per_topic: Mapping[str, int], members: Sequence[MemberSubscription]
) -> None:
    for topic, n in partitions_per_topic.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"partitions_per_topic[{topic!r}]: expected a count >= 0, got {n!r}")
    seen: set[str] = set()
    for i, m in enumerate(members):
        if m.member_id in seen:
            raise ValueError(f"members[{i}]: duplicate member_id {m.member_id!r}")
        seen.add(m.member_id)


def known_subscribed_topics(
    partitions_per_topic: Mapping[str, int], members: Sequence[MemberSubscription]
) -> dict[str, int]:
    """The topics someone subscribes to that the leader's metadata has partitions for.

    ``AbstractPartitionAssignor.assign`` builds its partition map from the union of the
    subscriptions and skips topics without metadata or without partitions.
    """
    out: dict[str, int] = {}
    # Members usually share their topic tuples; look at each distinct one once.
    for topics in {m.subscription.topics: None for m in members}:
        for t in topics:
            n = partitions_per_topic.get(t, 0)
            if n > 0:
                out[t] = n
    return out


def topic_set(
    cache: dict[tuple[str, ...], frozenset[str]], topics: tuple[str, ...]
) -> frozenset[str]:
    """``frozenset(topics)``, shared between members with equal topic tuples."""
    out = cache.get(topics)
    if out is None:
        out = cache[topics] = frozenset(topics)
    return out


def check_racks(partitions_per_topic: Mapping[str, int], partition_racks: PartitionRacks | None) -> None:
    """Replica racks, where given, must list one entry per partition."""
    for topic, racks in (partition_racks or {}).items():
        n = partitions_per_topic.get(topic)
        if n is None:
            continue  # racks of a topic nobody asks about
        if len(racks) != n:
            raise ValueError(
                f"partition_racks[{topic!r}]: expected racks for {n} partitions, got {len(racks)}"
            )
        for p, rs in enumerate(racks):
            if isinstance(rs, str) or not all(r is None or isinstance(r, str) for r in rs):
                raise ValueError(
                    f"partition_racks[{topic!r}][{p}]: expected a list of rack ids (or null)"
                )
