"""Parquet tables of a sweep, written and read on the driver with pyarrow.

The rows are small (one per run, per rebalance, per violated invariant, per aggregate), so
the driver writes each table as one Parquet file in the output directory; that works under
any master, local or a cluster whose executors cannot see the driver's disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from groupspec.pipeline.metrics import Columns, Row

_ARROW: dict[str, Any] = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}

#: the tables of a sweep directory, by file stem
TABLES: tuple[str, ...] = ("runs", "rebalances", "violations", "by_strategy", "rebalance_stats",
                           "violations_by_kind")


def arrow_schema(columns: Columns) -> Any:
    return pa.schema([(name, _ARROW[kind]) for name, kind in columns])


def write_table(path: Path, rows: list[Row], columns: Columns) -> None:
    """Write ``rows`` (dicts with exactly these columns) as one Parquet file."""
    names = [name for name, _ in columns]
    for i, row in enumerate(rows):
        if set(row) != set(names):
            extra, missing = sorted(set(row) - set(names)), sorted(set(names) - set(row))
            raise ValueError(f"{path.name}: row {i}: unexpected columns {extra}, missing {missing}")
    table = pa.Table.from_pylist(rows, schema=arrow_schema(columns))
    pq.write_table(table, path)


def read_table(path: Path) -> list[Row]:
    rows: list[Row] = pq.read_table(path).to_pylist()
    return rows
