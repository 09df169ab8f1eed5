"""Thin wrappers running the assignor properties of :mod:`properties.assignors`."""

from __future__ import annotations

import pytest

from groupspec.assignors.registry import OPTIMAL_VARIANTS, get_assignor
from properties import assignors as props


# Kafka's sticky assignors are not here: on claims of partitions that no longer exist they
# keep them or throw, as the jar does (tests/test_assignors_kafka_jar.py holds them to the
# jar); the guarantees below are groupspec's, of Range, RoundRobin and the optimal variants.
@pytest.mark.parametrize("name", ["range", "roundrobin", *OPTIMAL_VARIANTS.values()])
def test_valid_and_balanced(name: str) -> None:
    props.validity_and_balance_property(get_assignor(name))()


@pytest.mark.parametrize("name", ["sticky-optimal"])
def test_identical_subscriptions_move_the_closed_form_minimum(name: str) -> None:
    props.minimal_moves_identical_property(get_assignor(name))()


def test_closed_form_minimum_matches_z3() -> None:
    props.closed_form_matches_z3_property()()


@pytest.mark.parametrize("name", ["sticky-optimal"])
def test_different_subscriptions_reach_the_z3_optimum(name: str) -> None:
    props.optimal_general_property(get_assignor(name))()


@pytest.mark.parametrize("identical", [True, False])
def test_cooperative_rounds_converge_to_the_eager_result(identical: bool) -> None:
    props.cooperative_converges_property(identical)()


def test_range_matches_simple_and_kafka_python() -> None:
    props.range_matches_peers_property()()


def test_roundrobin_matches_simple_and_kafka_python() -> None:
    props.roundrobin_matches_peers_property()()


@pytest.mark.parametrize("name", list(OPTIMAL_VARIANTS.values()))
def test_identical_subscriptions_match_kafkas_constrained_builder(name: str) -> None:
    props.constrained_matches_kafka_property(get_assignor(name))()
