"""The assignors by their JoinGroup protocol names, as Kafka spells them."""

from __future__ import annotations

from groupspec.assignors.base import Assignor
from groupspec.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    CooperativeStickyOptimalAssignor,
)
from groupspec.assignors.range import RangeAssignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.sticky import StickyAssignor, StickyOptimalAssignor

_ASSIGNORS: dict[str, type[Assignor]] = {
    cls.name: cls
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}

#: "range", "roundrobin", "sticky", "cooperative-sticky": Kafka's assignors, reproduced exactly.
ASSIGNOR_NAMES: tuple[str, ...] = tuple(_ASSIGNORS)

#: groupspec's own variants: the sticky assignors with the exact optimum on the general path.
OPTIMAL_VARIANTS: dict[str, str] = {
    "sticky": StickyOptimalAssignor.name,
    "cooperative-sticky": CooperativeStickyOptimalAssignor.name,
}
_ASSIGNORS.update(
    {cls.name: cls for cls in (StickyOptimalAssignor, CooperativeStickyOptimalAssignor)}
)


def get_assignor(name: str) -> Assignor:
    """A fresh assignor for ``name``; ValueError listing the known names otherwise."""
    cls = _ASSIGNORS.get(name)
    if cls is None:
        known = ", ".join((*ASSIGNOR_NAMES, *OPTIMAL_VARIANTS.values()))
        raise ValueError(f"unknown assignor {name!r}; known: {known}")
    return cls()
