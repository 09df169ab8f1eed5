"""The coordinator's state: every group it hosts, and the committed offsets' shape.

The group kinds live with their protocol: :mod:`groupspec.coordinator.classic.group` for
the classic protocol. Changed only by :func:`groupspec.coordinator.replay.apply_record`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groupspec.coordinator.classic.group import Group


@dataclass
class CommittedOffset:
    committed_offset: int
    metadata: str | None
    commit_timestamp_ms: int


@dataclass
class CoordinatorState:
    groups: dict[str, Group] = field(default_factory=dict)
