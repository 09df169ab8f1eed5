"""The five classic group states and the single table of valid previous states.

Source: group-coordinator/.../classic/ClassicGroupState.java (the enum and its
``validPreviousStates``) and core/.../coordinator/group/GroupMetadata.scala (the Scala
``GroupState`` objects). Every transition the reference coordinator makes is checked against
:data:`VALID_PREVIOUS_STATES` when its record is replayed; ``groupspec states --dot`` draws
the same table.

Theory of operation
-------------------
A group is created Empty. A member joining starts a rebalance (PreparingRebalance); when
every known member has rejoined, or the rebalance timeout passes, the join phase completes:
the generation grows by one and the group moves to CompletingRebalance (or back to Empty if
nobody is left). The leader's SyncGroup carries the assignment; once it is stored the group
is Stable. Joins, leaves, expiries and metadata changes send Stable or CompletingRebalance
back to PreparingRebalance. Dead is terminal: the group was deleted or its offsets partition
moved away.
"""

from __future__ import annotations

from enum import Enum


class GroupState(Enum):
    Empty = "Empty"
    PreparingRebalance = "PreparingRebalance"
    CompletingRebalance = "CompletingRebalance"
    Stable = "Stable"
    Dead = "Dead"


_S = GroupState

#: target state -> the states a group may be in just before entering it.
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    _S.Empty: frozenset({_S.PreparingRebalance}),
    _S.PreparingRebalance: frozenset({_S.Stable, _S.CompletingRebalance, _S.Empty}),
    _S.CompletingRebalance: frozenset({_S.PreparingRebalance}),
    _S.Stable: frozenset({_S.CompletingRebalance}),
    _S.Dead: frozenset(
        {_S.Stable, _S.PreparingRebalance, _S.CompletingRebalance, _S.Empty, _S.Dead}
    ),
}


def is_valid_transition(source: GroupState, target: GroupState) -> bool:
    return source in VALID_PREVIOUS_STATES[target]


def can_rebalance(state: GroupState) -> bool:
    """ClassicGroup.canRebalance: the states PreparingRebalance may be entered from."""
    return state in VALID_PREVIOUS_STATES[GroupState.PreparingRebalance]


def transition_edges() -> list[tuple[GroupState, GroupState]]:
    """Every valid (source, target) edge, in a stable order (for diagrams and the spec)."""
    order = list(GroupState)
    return [
        (src, dst)
        for dst in order
        for src in order
        if src in VALID_PREVIOUS_STATES[dst]
    ]


def to_dot() -> str:
    """The transition table as a Graphviz digraph."""
    lines = ["digraph GroupState {", "  rankdir=LR;"]
    for src, dst in transition_edges():
        lines.append(f'  "{src.value}" -> "{dst.value}";')
    lines.append("}")
    return "\n".join(lines)
