"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


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
