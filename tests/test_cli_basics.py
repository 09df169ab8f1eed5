"""The small commands: coordinator-partition and states."""

from __future__ import annotations

import pytest

from groupspec.cli.main import main
from groupspec.coordinator.find_coordinator import coordinator_partition, java_string_hash


@pytest.mark.parametrize(
    ("group_id", "hash_code", "partition"),
    [
        # Values of Java's String.hashCode, computed with the JDK independently of this code.
        ("hello", 99162322, 22),
        ("polygenelubricants", -(2**31), 0),  # Integer.MIN_VALUE: Utils.abs maps it to 0
        ("", 0, 0),
        ("my-group", -1906497762, 12),
    ],
)
def test_partition_as_kafka_computes_it(group_id: str, hash_code: int, partition: int) -> None:
    assert java_string_hash(group_id) == hash_code
    assert coordinator_partition(group_id) == partition


def test_coordinator_partition_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coordinator-partition", "polygenelubricants"]) == 0
    assert capsys.readouterr().out.strip() == "0"
    assert main(["coordinator-partition", "--partitions", "0", "g"]) == 2


def test_states_table_is_kafkas(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["states", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| Stable | CompletingRebalance |" in out
    assert "| PreparingRebalance | Empty, CompletingRebalance, Stable |" in out
    assert main(["states", "--format", "dot"]) == 0
    assert '"CompletingRebalance" -> "Stable";' in capsys.readouterr().out
