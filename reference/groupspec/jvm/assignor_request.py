"""The request the ``KafkaAssignor`` oracle tool takes (see ``java/.../KafkaAssignor.java``),
built from the same input groupspec's assignors take, and its answer read back.

The members go over exactly as the leader hands them to an assignor: user data as bytes,
owned partitions in their order, the subscription's generation field and rack, so the jar
decodes what groupspec's assignors decode.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from groupspec.assignors.base import MemberSubscription, PartitionRacks
from groupspec.protocol.consumer_protocol import TopicPartitions


def kafka_assignor_request(
    assignor: str,
    partitions_per_topic: Mapping[str, int],
    members: Sequence[MemberSubscription],
    partition_racks: PartitionRacks | None = None,
    *,
    repeat: int = 0,
) -> dict[str, Any]:
    racks = partition_racks or {}
    topics = [
        {
            "name": t,
            "partitions": n,
            "racks": [list(r) for r in racks[t]] if t in racks else None,
        }
        for t, n in partitions_per_topic.items()
    ]
    out_members = []
    for m in members:
        s = m.subscription
        out_members.append(
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "topics": list(s.topics),
                "user_data": None
                if s.user_data is None
                else base64.b64encode(s.user_data).decode("ascii"),
                "owned": [[t, p] for t, ps in s.owned_partitions.items() for p in ps],
                "generation": s.generation_id,
                "rack": s.rack_id,
            }
        )
    return {"assignor": assignor, "topics": topics, "members": out_members, "repeat": repeat}


def kafka_assignment(answer: Mapping[str, Any]) -> dict[str, TopicPartitions]:
    """The tool's answer as member -> topic -> partitions (in the order Kafka listed them)."""
    out: dict[str, TopicPartitions] = {}
    for member, parts in answer["assignment"].items():
        by_topic: dict[str, list[int]] = {}
        for t, p in parts:
            by_topic.setdefault(t, []).append(p)
        out[member] = {t: tuple(ps) for t, ps in by_topic.items()}
    return out
