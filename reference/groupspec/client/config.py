"""Consumer configuration with the Java client's defaults (ConsumerConfig, GroupRebalanceConfig).

The rebalance protocol is derived as Kafka does (ConsumerCoordinator constructor): the
highest protocol every configured assignor supports, so the default
``partition.assignment.strategy`` of [range, cooperative-sticky] runs EAGER.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from groupspec.assignors.base import RebalanceProtocol
from groupspec.assignors.registry import SERVER_ASSIGNOR_NAMES, get_assignor

#: group.protocol values (ConsumerConfig.GROUP_PROTOCOL_CONFIG)
GROUP_PROTOCOLS = ("classic", "consumer")


class GroupMembershipOperation(Enum):
    """CloseOptions.GroupMembershipOperation (KIP-1092): what close does about the group, for
    either protocol's consumer."""

    #: a dynamic member leaves, a static one stays (the behaviour before KIP-1092)
    DEFAULT = "DEFAULT"
    #: leave, static members too (the LeaveGroup names the member id alone)
    LEAVE_GROUP = "LEAVE_GROUP"
    #: stay, dynamic members too (the session timeout removes the member)
    REMAIN_IN_GROUP = "REMAIN_IN_GROUP"


@dataclass(frozen=True)
class ConsumerConfig:
    group_id: str
    client_id: str
    #: group.instance.id: set for a static member (KIP-345)
    group_instance_id: str | None = None
    #: partition.assignment.strategy, in preference order
    assignors: tuple[str, ...] = ("range", "cooperative-sticky")
    #: subscribe(topics) ...
    topics: tuple[str, ...] = ()
    #: ... or subscribe(pattern)
    pattern: str | None = None
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    #: max.poll.interval.ms, sent as the rebalance timeout
    max_poll_interval_ms: int = 300_000
    #: enable.auto.commit; when false the application commits after every poll and in its
    #: rebalance listener before partitions are revoked
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5_000
    retry_backoff_ms: int = 100
    #: request.timeout.ms (JoinGroup waits max(this, max.poll.interval.ms + 5000))
    request_timeout_ms: int = 30_000
    #: how often the application calls poll(), and how many records one poll processes per partition
    poll_interval_ms: int = 100
    max_poll_records_per_partition: int = 50
    join_group_version: int = 9
    #: close()'s timeout (KafkaConsumer.DEFAULT_CLOSE_TIMEOUT_MS): how long close waits for
    #: its commit (and the coordinator to commit to) before it leaves the group
    close_timeout_ms: int = 30_000
    #: KIP-415 scheduled.rebalance.max.delay.ms (Connect's option; 0 = off): as leader, hold
    #: a departed member's partitions back this long (client/delayed_imbalance.py)
    scheduled_rebalance_max_delay_ms: int = 0
    #: group.protocol: "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848,
    #: ConsumerGroupHeartbeat; the assignors above are then not used: the broker assigns)
    group_protocol: str = "classic"
    #: group.remote.assignor: the server-side assignor a consumer-protocol member asks for
    #: (None: the broker's default, the first of group.consumer.assignors)
    remote_assignor: str | None = None
    #: client.rack. Classic protocol (KIP-881): sent in the subscription for the leader's
    #: rack-aware assignors, and with it the leader watches its partitions' replica racks
    #: (GroupRebalanceConfig); a consumer-protocol member sends it in its heartbeat while
    #: joining. None or "" is no rack
    client_rack: str | None = None

    def __post_init__(self) -> None:
        if self.group_protocol not in GROUP_PROTOCOLS:
            raise ValueError(f"{self.client_id}: group.protocol must be one of "
                             f"{', '.join(GROUP_PROTOCOLS)}, got {self.group_protocol!r}")
        if self.remote_assignor is not None and self.remote_assignor not in SERVER_ASSIGNOR_NAMES:
            raise ValueError(f"{self.client_id}: group.remote.assignor {self.remote_assignor!r} is not a "
                             f"server-side assignor ({', '.join(SERVER_ASSIGNOR_NAMES)})")
        if not self.assignors:
            raise ValueError(f"{self.client_id}: partition.assignment.strategy is empty")
        for name in self.assignors:
            get_assignor(name)  # ValueError naming the unknown assignor
        if bool(self.topics) == (self.pattern is not None):
            raise ValueError(f"{self.client_id}: subscribe to topics or to a pattern, not both or neither")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"{self.client_id}: invalid pattern {self.pattern!r}: {e}") from None
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(
                f"{self.client_id}: heartbeat.interval.ms ({self.heartbeat_interval_ms}) must be "
                f"below session.timeout.ms ({self.session_timeout_ms})"
            )
        if self.scheduled_rebalance_max_delay_ms < 0:
            raise ValueError(f"{self.client_id}: scheduled_rebalance_max_delay_ms must be >= 0")
        for name in ("session_timeout_ms", "heartbeat_interval_ms", "max_poll_interval_ms",
                     "auto_commit_interval_ms", "poll_interval_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{self.client_id}: {name} must be > 0")

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        common = set(RebalanceProtocol)
        for name in self.assignors:
            common &= set(get_assignor(name).supported_protocols)
        if not common:
            raise ValueError(f"{self.client_id}: the assignors {self.assignors} share no rebalance protocol")
        return max(common, key=lambda p: p.value)

    def subscribed(self, topics: set[str] | frozenset[str]) -> tuple[str, ...]:
        """The topics this consumer subscribes to among those that exist."""
        if self.pattern is not None:
            rx = re.compile(self.pattern)
            return tuple(sorted(t for t in topics if rx.fullmatch(t)))
        return tuple(sorted(self.topics))
