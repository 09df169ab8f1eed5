"""Kafka's protocol errors that the group protocol uses, with Kafka's names and numbers.

Source: clients/src/main/java/org/apache/kafka/common/protocol/Errors.java. The consumer
protocol (KIP-848) adds FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, UNSUPPORTED_ASSIGNOR,
STALE_MEMBER_EPOCH and INVALID_REGULAR_EXPRESSION, and answers TOPIC_AUTHORIZATION_FAILED
for a subscription the member may not describe. Names are
spelled exactly as Kafka spells them so that Python, TLA+ and trace files share one
vocabulary. Protocol errors are values; exceptions are reserved for bugs in the caller.
"""

from __future__ import annotations

from enum import Enum


class Error(Enum):
    """A Kafka protocol error; ``value`` is the wire error code."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    OFFSET_METADATA_TOO_LARGE = 12
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    NOT_ENOUGH_REPLICAS = 19
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNSTABLE_OFFSET_COMMIT = 88
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    INVALID_REGULAR_EXPRESSION = 128

    @property
    def code(self) -> int:
        return self.value

    @classmethod
    def from_code(cls, code: int) -> Error:
        """The error with wire code ``code``; ValueError names the code if it is unknown."""
        try:
            return cls(code)
        except ValueError:
            raise ValueError(f"unknown Kafka error code {code}") from None

    @classmethod
    def known(cls, code: int) -> Error | None:
        """The error with wire code ``code``, or None for a code outside the vocabulary (a
        transaction's error, which a TxnOffsetCommit answer may carry)."""
        try:
            return cls(code)
        except ValueError:
            return None

    @classmethod
    def from_name(cls, name: str) -> Error:
        try:
            return cls[name]
        except KeyError:
            raise ValueError(f"unknown Kafka error name {name!r}") from None
