"""The consumer group's member order (coordinator/consumer/timeline_order.py) against
Kafka 4.1.2's own TimelineHashMap (kafka-server-common, run by the JVM oracle): random
sequences of puts and removes of member-id-like keys, the iteration order compared after
each sequence. Java is required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.consumer.timeline_order import TimelineOrder
from groupspec.jvm import JvmOracle

pytestmark = pytest.mark.java

# a small pool, so that keys collide in slots and come back after removal
KEYS = st.sampled_from([f"m{k}" for k in range(12)] + ["2JhMtJI7Q7WS3LvaAGKCTA", "lOy1_-LnRO6Vc2BJyOl_9w",
                                                        "x4pDVEtISGaXb6Cr4CR19w", ""])
OPS = st.lists(st.tuples(st.sampled_from(["put", "put", "remove"]), KEYS), max_size=60)


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _ours(ops: list[tuple[str, str]]) -> list[str]:
    t: TimelineOrder[str] = TimelineOrder()
    for op, key in ops:
        if op == "put":
            t.put(key)
        else:
            t.remove(key)
    return t.order()


def test_member_order_matches_kafkas_timeline_hash_map(jvm: JvmOracle) -> None:
    @settings(deadline=None)
    @given(ops=OPS)
    def run(ops: list[tuple[str, str]]) -> None:
        assert _ours(ops) == jvm.call("TimelineOrder", {"ops": [list(o) for o in ops]})

    run()


def test_the_recorded_case_puts_the_later_joiner_first(jvm: JvmOracle) -> None:
    # Kafka 4.1.2, recorded (examples/validator-false-positives/kip848): b, a and c join, a
    # leaves; b and c share a bucket of the assignor's HashMap, so this order decided who
    # got a's partition
    b, a, c = "2JhMtJI7Q7WS3LvaAGKCTA", "x4pDVEtISGaXb6Cr4CR19w", "lOy1_-LnRO6Vc2BJyOl_9w"
    ops = [("put", b), ("put", a), ("put", c), ("remove", a)]
    assert _ours(ops) == jvm.call("TimelineOrder", {"ops": [list(o) for o in ops]}) == [c, b]
