"""Copies of the replay's state, taken at its choice points.

The replay keeps copies of the reference coordinator's state to come back to when a branch
fails. A pickle round trip makes such a copy several times faster than
:func:`copy.deepcopy`, which walks every object in Python: the state is plain dataclasses,
dicts, sets, tuples and enums, which pickle copies in C. The one function in it, the
member-id callback the coordinator is given, cannot be pickled and must be shared between
the copies, as deepcopy would share it: it is detached for the copy and given to both.
"""

from __future__ import annotations

import pickle
from typing import Protocol, TypeVar

from groupspec.coordinator.coordinator import Coordinator


class HoldsCoordinator(Protocol):
    coord: Coordinator


S = TypeVar("S", bound=HoldsCoordinator)


def copy_state(state: S) -> S:
    """A deep copy of ``state``, whose coordinator shares the original's member-id callbacks."""
    ids, consumer_ids = state.coord.member_ids, state.coord._consumer_member_ids
    state.coord.member_ids = None  # type: ignore[assignment]
    state.coord._consumer_member_ids = None
    try:
        data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        state.coord.member_ids, state.coord._consumer_member_ids = ids, consumer_ids
    copied: S = pickle.loads(data)
    copied.coord.member_ids, copied.coord._consumer_member_ids = ids, consumer_ids
    return copied
