"""The coordinator's state: every group it hosts, and the metadata image.

The group kinds live with their protocol: :mod:`groupspec.coordinator.classic.group` for
the classic protocol, :mod:`groupspec.coordinator.consumer.group` for KIP-848's; committed
offsets in :mod:`groupspec.coordinator.committed_offset`. Changed only by
:func:`groupspec.coordinator.replay.apply_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from groupspec.coordinator.committed_offset import CommittedOffset

if TYPE_CHECKING:
    from groupspec.assignors.server_spec import TopicMetadata
    from groupspec.coordinator.classic.group import Group
    from groupspec.coordinator.consumer.group import ConsumerGroup


__all__ = ["CommittedOffset", "CoordinatorState", "ReplayError"]


class ReplayError(Exception):
    """A record that cannot be applied to the current state."""


@dataclass
class CoordinatorState:
    #: classic groups
    groups: dict[str, Group] = field(default_factory=dict)
    #: consumer groups (KIP-848); a group id is in at most one of the two maps
    consumer_groups: dict[str, ConsumerGroup] = field(default_factory=dict)
    #: offsets of a group id whose group was removed while they stayed (an empty classic
    #: group converted to a consumer group); the next group of that id takes them
    detached_offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = field(
        default_factory=dict
    )
    #: the metadata image's topics by name (what a consumer group's assignor sees); an
    #: input, set by ``Coordinator.set_topics``
    topics: dict[str, TopicMetadata] = field(default_factory=dict)
