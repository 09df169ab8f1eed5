"""The assignors by their protocol names, as Kafka spells them, and the side that runs them.

Client-side assignors (``Side.CLIENT``) are the JoinGroup protocols a classic group's
leader runs; server-side ones (``Side.SERVER``) are what a consumer group's coordinator runs
(KIP-848; Kafka's ``group.consumer.assignors``, ``uniform`` first and so the default). The
name ``range`` exists on both sides, as in Kafka, with different classes.
"""

from __future__ import annotations

from groupspec.assignors.base import Assignor, ServerAssignor, Side
from groupspec.assignors.cooperative_sticky import (
    CooperativeStickyAssignor,
    CooperativeStickyOptimalAssignor,
)
from groupspec.assignors.range import RangeAssignor
from groupspec.assignors.roundrobin import RoundRobinAssignor
from groupspec.assignors.server_range import ServerRangeAssignor
from groupspec.assignors.sticky import StickyAssignor, StickyOptimalAssignor
from groupspec.assignors.uniform import UniformAssignor

_ASSIGNORS: dict[str, type[Assignor]] = {
    cls.name: cls
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}
_SERVER_ASSIGNORS: dict[str, type[ServerAssignor]] = {
    cls.name: cls for cls in (UniformAssignor, ServerRangeAssignor)
}

#: Client side: "range", "roundrobin", "sticky", "cooperative-sticky": Kafka's assignors,
#: reproduced exactly.
ASSIGNOR_NAMES: tuple[str, ...] = tuple(_ASSIGNORS)
#: Server side, the default first: "uniform", "range".
SERVER_ASSIGNOR_NAMES: tuple[str, ...] = tuple(_SERVER_ASSIGNORS)
#: Every (name, side) pair the registry knows.
ASSIGNOR_SIDES: tuple[tuple[str, Side], ...] = tuple(
    [(n, c.side) for n, c in _ASSIGNORS.items()]
    + [(n, c.side) for n, c in _SERVER_ASSIGNORS.items()]
)

#: groupspec's own variants: the sticky assignors with the exact optimum on the general path.
OPTIMAL_VARIANTS: dict[str, str] = {
    "sticky": StickyOptimalAssignor.name,
    "cooperative-sticky": CooperativeStickyOptimalAssignor.name,
}
_ASSIGNORS.update(
    {cls.name: cls for cls in (StickyOptimalAssignor, CooperativeStickyOptimalAssignor)}
)


def get_assignor(name: str) -> Assignor:
    """A fresh client-side assignor for ``name``; ValueError listing the known names otherwise."""
    cls = _ASSIGNORS.get(name)
    if cls is None:
        known = ", ".join((*ASSIGNOR_NAMES, *OPTIMAL_VARIANTS.values()))
        raise ValueError(f"unknown assignor {name!r}; known: {known}")
    return cls()


def get_server_assignor(name: str) -> ServerAssignor:
    """A fresh server-side assignor for ``name``; ValueError listing the known names otherwise."""
    cls = _SERVER_ASSIGNORS.get(name)
    if cls is None:
        raise ValueError(
            f"unknown server-side assignor {name!r}; known: {', '.join(SERVER_ASSIGNOR_NAMES)}"
        )
    return cls()
