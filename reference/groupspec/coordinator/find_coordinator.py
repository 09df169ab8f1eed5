"""FindCoordinator: which ``__consumer_offsets`` partition (and so which broker) owns a group.

Source: group-coordinator/.../GroupCoordinatorService.java ``partitionFor`` and
core/.../coordinator/group/GroupMetadataManager.scala ``partitionFor``: the partition is
``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``, where ``hashCode`` is
Java's ``String.hashCode`` over UTF-16 code units with 32-bit overflow and ``Utils.abs``
(clients/.../common/utils/Utils.java) maps ``Integer.MIN_VALUE`` to 0 instead of leaving it
negative.
"""

from __future__ import annotations

import sys
from array import array
from functools import lru_cache

#: UTF-16 in this machine's byte order, so that an ``array("H")`` reads the code units.
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"

#: ``offsets.topic.num.partitions`` default (GroupCoordinatorConfig.OFFSETS_TOPIC_PARTITIONS_DEFAULT).
OFFSETS_TOPIC_NUM_PARTITIONS = 50
INT_MIN = -(2**31)


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: sum of UTF-16 code units times 31^k, as a signed int32.

    Linear in the length of ``s``: the running value is reduced to 32 bits at every step,
    which gives the same bits as Java's wrapping ``h = 31 * h + c`` (arithmetic modulo 2^32
    commutes with the reduction). Four code units are folded per step (Horner's rule with
    31^4) to halve the interpreter's work on long strings. Characters outside the BMP count
    as their two surrogate code units, and lone surrogates as themselves, as in Java."""
    units = array("H", s.encode(_UTF16_NATIVE, "surrogatepass"))
    head = len(units) % 4
    h = 0
    for c in units[:head]:
        h = (h * 31 + c) & 0xFFFFFFFF
    quads = iter(units[head:])
    for a, b, c, d in zip(quads, quads, quads, quads, strict=True):
        h = (h * 923521 + a * 29791 + b * 961 + c * 31 + d) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: like ``Math.abs`` but ``Integer.MIN_VALUE`` becomes 0."""
    return 0 if n == INT_MIN else abs(n)


@lru_cache(maxsize=4096)
def coordinator_partition(group_id: str, num_partitions: int = OFFSETS_TOPIC_NUM_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition whose leader coordinates ``group_id``
    (remembered: a replay puts its group into the groups' order at every creation and
    load, and a trace has few group ids)."""
    if num_partitions < 1:
        raise ValueError(f"offsets.topic.num.partitions must be at least 1, got {num_partitions}")
    return kafka_abs(java_string_hash(group_id)) % num_partitions
