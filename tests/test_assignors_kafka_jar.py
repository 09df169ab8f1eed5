"""Differential test: every assignor against Apache Kafka 4.1.2's own (the kafka-clients
jar, run by the JVM oracle's ``KafkaAssignor`` tool) on random inputs from
:mod:`properties.kafka_jar`, requiring the identical assignment. Java is required (never
skipped). The CI profile runs ~100 inputs per assignor; GROUPSPEC_HYPOTHESIS_PROFILE=nightly
runs thousands."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings

import properties  # noqa: F401  (loads the Hypothesis profile)
from groupspec.assignors.kafka_sticky import KafkaAssignorError
from groupspec.assignors.registry import ASSIGNOR_NAMES, get_assignor
from groupspec.jvm import JvmOracle, JvmToolError
from properties.kafka_jar import assignor_cases, kafkas, ours

pytestmark = pytest.mark.java


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _examples() -> int:
    return max(100, settings().max_examples)


@pytest.mark.parametrize("name", ASSIGNOR_NAMES)
@pytest.mark.parametrize("racks", [False, True], ids=["no-racks", "racks"])
def test_assignor_matches_the_kafka_jar(jvm: JvmOracle, name: str, racks: bool) -> None:
    @settings(deadline=None, max_examples=_examples() // 2)
    @given(case=assignor_cases(name, racks=racks))
    def check(case: object) -> None:
        from properties.kafka_jar import AssignorCase

        assert isinstance(case, AssignorCase)
        try:
            expected = kafkas(jvm, name, case)
        except JvmToolError as e:
            # Kafka throws on this input (e.g. IllegalStateException when a claim names a
            # partition that does not exist): so must we, naming Java's exception.
            with pytest.raises(KafkaAssignorError) as ours_error:
                ours(get_assignor(name), case)
            assert str(ours_error.value).split(":")[0] in e.error
            return
        assert ours(get_assignor(name), case) == expected

    check()
