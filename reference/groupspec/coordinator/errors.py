"""What the reference coordinator raises on an input it cannot take: a record that does not
fit the state (ReplayError), an input Kafka handles in a way the reference does not model
(NotModelled). A module of their own, so that the group kinds raise them without importing
the state that holds the groups."""

from __future__ import annotations

__all__ = ["NotModelled", "ReplayError"]


class ReplayError(Exception):
    """A record that cannot be applied to the current state."""


class NotModelled(Exception):
    """An input Kafka handles in a way the reference does not model (each such case is a
    row of docs/deviations.md): the caller cannot judge what follows from it."""
