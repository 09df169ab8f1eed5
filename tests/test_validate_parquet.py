"""Parquet traces: a JSON Lines trace copied to Parquet validates to identical verdicts
(line numbers, problems and all), and events written straight to Parquet read back."""

from __future__ import annotations

import base64
import functools
import io
import json
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.protocol.consumer_protocol import Assignment, from_pairs, pairs
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.trace import parquet
from groupspec.trace.jsonl import TraceLineError, read_events
from groupspec.validate import validate_path
from groupspec.validate.load import load_path


@functools.cache
def trace(name: str, until_ms: int) -> str:
    data = apply_overrides(json.loads(bundled_scenarios()[name]), until_ms=until_ms)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), f"{name}.json")), out)
    return out.getvalue()


def _same_verdicts(tmp_path: Path, text: str | bytes) -> dict[str, Any]:
    src = tmp_path / "t.jsonl"
    if isinstance(text, str):
        src.write_text(text)
    else:
        src.write_bytes(text)
    dst = tmp_path / "t.parquet"
    parquet.jsonl_to_parquet(src, dst)
    assert parquet.is_parquet(dst) and not parquet.is_parquet(src)
    a, b = validate_path(src).to_json(), validate_path(dst).to_json()
    a.pop("source")
    b.pop("source")
    for p in a["problems"] + b["problems"]:
        p["message"] = p["message"].replace(str(dst), "").replace(str(src), "")
    assert a == b
    return a


def test_conforming_trace_round_trip(tmp_path: Path) -> None:
    out = _same_verdicts(tmp_path, trace("default", 60_000))
    assert out["verdict"] == "conforming"


def test_violation_round_trip(tmp_path: Path) -> None:
    objs = [json.loads(x) for x in trace("eager", 60_000).splitlines()]
    syncs = [o for o in objs if o["kind"] == "exchange" and o["api"] == "SyncGroup"
             and o["response"]["error"] == "NONE" and o["response"]["assignment"]]
    a, b = syncs[0], next(s for s in syncs[1:] if s["request"]["generation_id"] == syncs[0]["request"]["generation_id"])
    pa = pairs(Assignment.decode(base64.b64decode(a["response"]["assignment"])).partitions)
    pb = pairs(Assignment.decode(base64.b64decode(b["response"]["assignment"])).partitions)
    b["response"]["assignment"] = base64.b64encode(Assignment(from_pairs(pa | pb)).encode()).decode()
    out = _same_verdicts(tmp_path, "".join(json.dumps(o) + "\n" for o in objs))
    assert out["verdict"] == "violation"
    assert out["groups"][0]["violation"]["seq"] == b["seq"]


def test_damaged_trace_round_trip(tmp_path: Path) -> None:
    raw = trace("eager", 30_000).encode().split(b"\n")
    raw[5] = raw[5][:30]
    raw[9] = b"\xff\xfe not utf-8"
    raw.insert(12, raw[11])
    out = _same_verdicts(tmp_path, b"\n".join(raw)[:-25])
    kinds = {p["kind"] for p in out["problems"]}
    assert {"malformed_json", "duplicate_event", "truncated"} <= kinds


def test_events_written_to_parquet_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = trace("eager", 30_000)
    events = [e for e in read_events(text.splitlines(keepends=True)) if not isinstance(e, TraceLineError)]
    path = tmp_path / "e.parquet"
    assert parquet.write_events(events, path) == len(events)
    loaded = load_path(path)
    assert loaded.problems == []
    assert [x.event for x in loaded.events] == events
    assert main(["validate", str(path)]) == 0
    assert "conforming" in capsys.readouterr().out


@pytest.mark.parametrize(("columns", "missing"), [
    ({"x": [1]}, "columns line, text, ended"),
    ({"line": [1], "text": ["{}"]}, "column ended "),
])
def test_a_parquet_file_of_neither_layout_is_named_with_what_it_lacks(
        tmp_path: Path, columns: dict[str, list[Any]], missing: str) -> None:
    """Not pyarrow's field-lookup text with its dataset internals: the file, the layouts, the
    columns it lacks and the ones it has. The Spark job's reader of file bytes says the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from groupspec.pipeline.validate_rows import validate_parquet_buffer
    from groupspec.validate.problems import TraceInputError

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table(columns), path)
    with pytest.raises(TraceInputError) as caught:
        load_path(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a readable Parquet trace: neither the columnar layout's")
    assert missing in message and f"the file's columns: {', '.join(columns)}" in message
    assert "__fragment_index" not in message and "\n" not in message
    rows = list(validate_parquet_buffer(pa.py_buffer(path.read_bytes()), str(path)))
    problem = next(r for r in rows if r["role"] == "problem")
    assert problem["reason"] == message
