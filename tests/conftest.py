"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from groupspec.brokers import KafkaBroker, TansuBroker


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession for the whole test run: two cores, few shuffle partitions, no
    UI. Spark failing to start is a test failure, never a skip (CI must run these tests)."""
    from groupspec.pipeline.spark import spark_session

    session = spark_session(
        "local[2]",
        {
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.driver.memory": "1g",
        },
        app_name="groupspec-tests",
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """One Apache Kafka broker (KRaft, loopback) for the whole run, shared by the live
    broker tests and the conformance suite. A broker that cannot start fails the tests
    that need it (never a skip): ci/setup.d/30-brokers.sh fills the cache."""
    from groupspec.brokers import KafkaBroker

    with KafkaBroker() as broker:
        yield broker


@pytest.fixture(scope="session")
def tansu_broker() -> Iterator[TansuBroker]:
    """One Tansu broker for the whole run (see kafka_broker)."""
    from groupspec.brokers import TansuBroker

    with TansuBroker() as broker:
        yield broker
