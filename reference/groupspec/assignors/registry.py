"""The assignors by their JoinGroup protocol names, as Kafka spells them."""

from __future__ import annotations

from groupspec.assignors.base import Assignor
from groupspec.assignors.cooperative_sticky import CooperativeStickyAssignor
from groupspec.assignors.range import RangeAssignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.sticky import StickyAssignor

_ASSIGNORS: dict[str, type[Assignor]] = {
    cls.name: cls
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}

#: "range", "roundrobin", "sticky", "cooperative-sticky".
ASSIGNOR_NAMES: tuple[str, ...] = tuple(_ASSIGNORS)


def get_assignor(name: str) -> Assignor:
    """A fresh assignor for ``name``; ValueError listing the known names otherwise."""
    cls = _ASSIGNORS.get(name)
    if cls is None:
        raise ValueError(f"unknown assignor {name!r}; known: {', '.join(ASSIGNOR_NAMES)}")
    return cls()
