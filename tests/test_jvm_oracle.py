"""The JVM oracle runs Kafka's own classes: here Java's String.hashCode and Kafka's
coordinator placement (Utils.abs(hash) % partitions) against groupspec's, on random
strings including non-BMP characters and lone surrogates. Java is required (never skipped)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.coordinator.find_coordinator import coordinator_partition, java_string_hash
from groupspec.jvm import JvmOracle, JvmToolError

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


_strings = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=()), max_size=40)
    | st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=5),
    min_size=1,
    max_size=20,
)


@settings(deadline=None)
@given(strings=_strings, partitions=st.integers(min_value=1, max_value=1000))
def test_string_hash_and_partition_match_java(
    jvm: JvmOracle, strings: list[str], partitions: int
) -> None:
    java = jvm.call("JavaStringHash", {"strings": strings, "partitions": partitions})
    ours = [
        {"hash": java_string_hash(s), "partition": coordinator_partition(s, partitions)}
        for s in strings
    ]
    assert ours == java


def test_known_corner_cases_match_java(jvm: JvmOracle) -> None:
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE, which Utils.abs maps to 0.
    strings = ["", "a", "polygenelubricants", "\U0001f600", "x" * 10_000]
    java = jvm.call("JavaStringHash", {"strings": strings, "partitions": 50})
    assert java[2] == {"hash": -(2**31), "partition": 0}
    assert [j["hash"] for j in java] == [java_string_hash(s) for s in strings]


def test_a_java_exception_is_reported_with_the_tool_name(jvm: JvmOracle) -> None:
    with pytest.raises(JvmToolError, match="NoSuchTool"):
        jvm.call("NoSuchTool", {})
    # The JVM keeps serving after a failed request.
    assert jvm.call("JavaStringHash", {"strings": ["a"], "partitions": 1}) == [
        {"hash": 97, "partition": 0}
    ]
