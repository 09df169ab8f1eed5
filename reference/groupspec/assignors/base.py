"""The partition-assignor interfaces, shared by every assignor, the client model and the CLI.

Two sides run assignors. Client-side (:class:`Assignor`) mirrors Kafka's
``ConsumerPartitionAssignor`` (clients/.../consumer/ConsumerPartitionAssignor.java): in the
classic protocol the group leader calls ``assign`` with every member's subscription and the
partition counts it knows from metadata, and hands the result to the coordinator in
SyncGroup. Server-side (:class:`ServerAssignor`) mirrors ``ConsumerGroupPartitionAssignor``
(group-coordinator-api/.../api/assignor/): in the consumer protocol (KIP-848) the
coordinator itself computes the target assignment from a :class:`GroupSpec`. Assignors are
pure functions of their input.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from groupspec.assignors.server_spec import GroupAssignment, GroupSpec, SubscribedTopicMetadata
from groupspec.protocol.consumer_protocol import Assignment, Subscription, TopicPartitions

#: topic -> per partition (in partition order) the racks of its replicas; a ``None`` rack is a
#: replica on a broker without ``broker.rack``. Topics left out have no rack information,
#: which is what Kafka sees when it assigns from partition counts.
PartitionRacks = Mapping[str, Sequence[Sequence[str | None]]]


class Side(Enum):
    """Who runs an assignor: the classic group's leader, or the consumer-group coordinator."""

    CLIENT = "client"
    SERVER = "server"


class RebalanceProtocol(Enum):
    """ConsumerPartitionAssignor.RebalanceProtocol; the id orders them (COOPERATIVE wins)."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True)
class MemberSubscription:
    """One member as the leader sees it: its ids and its decoded subscription."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None


class Assignor(ABC):
    """A client-side partition assignor (a JoinGroup protocol of protocol type "consumer")."""

    #: The protocol name members vote for in JoinGroup, e.g. "range", "cooperative-sticky".
    name: ClassVar[str]
    side: ClassVar[Side] = Side.CLIENT
    #: Rebalance protocols this assignor supports, as Kafka's supportedProtocols().
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)
    #: ``AbstractPartitionAssignor.preferRackAwareLogic`` (a package-private hook Kafka's own
    #: tests set): take the rack-aware passes even when every partition has replicas on the
    #: same racks, as long as some member's rack holds replicas. Read by the rack-aware
    #: assignors (range, sticky, cooperative-sticky); set it on an instance.
    prefer_rack_aware_logic: bool = False

    @abstractmethod
    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSubscription],
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, Assignment]:
        """Assign the partitions of the subscribed topics to members.

        ``partitions_per_topic`` holds the leader's metadata: topics it does not know are
        skipped. ``partition_racks`` adds the replicas' racks (KIP-881); with the members'
        ``Subscription.rack_id`` it turns on the rack-aware passes of the assignors that
        have them. The result has an entry for every member (possibly empty).
        """

    def subscription_user_data(
        self, topics: tuple[str, ...], owned: TopicPartitions, generation_id: int
    ) -> bytes | None:
        """The userData this assignor puts in the member's subscription (None by default)."""
        return None


class ServerAssignor(ABC):
    """A server-side assignor of the consumer protocol (``ConsumerGroupPartitionAssignor``)."""

    #: The name members ask for in ConsumerGroupHeartbeat's ``ServerAssignor`` field.
    name: ClassVar[str]
    side: ClassVar[Side] = Side.SERVER

    @abstractmethod
    def assign(self, spec: GroupSpec, topics: SubscribedTopicMetadata) -> GroupAssignment:
        """The new target assignment; :class:`PartitionAssignorError` where Kafka throws
        ``PartitionAssignorException`` (a subscribed topic missing from the metadata)."""
