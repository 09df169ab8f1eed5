"""``groupspec spec check --record`` writes the count and, for the nightly models, how long
TLC took, without disturbing the rest of the manifest."""

from __future__ import annotations

import json
import os
from pathlib import Path

from groupspec.modelcheck.models import load_manifest, record_distinct_states


def test_record_writes_count_time_workers_and_keeps_the_rest(tmp_path: Path) -> None:
    manifest = {
        "a": {"module": "MC", "config": "a.cfg", "expect": "pass", "distinct_states": None},
        "b": {"module": "MC", "config": "b.cfg", "expect": "pass", "distinct_states": 7},
    }
    (tmp_path / "models.json").write_text(json.dumps(manifest, indent=2) + "\n")
    record_distinct_states("a", 12_345_678, tmp_path, seconds=3601.4, workers=2)
    raw = json.loads((tmp_path / "models.json").read_text())
    assert list(raw) == ["a", "b"]
    assert raw["a"]["distinct_states"] == 12_345_678
    measured = raw["a"]["measured"]
    assert measured["seconds"] == 3601 and measured["workers"] == 2
    assert measured["cores"] == os.cpu_count() and len(measured["date"]) == 10
    assert raw["b"] == manifest["b"]
    # the manifest still loads, and a count without a time leaves no `measured`
    assert load_manifest(tmp_path)["a"].distinct_states == 12_345_678
    record_distinct_states("b", 8, tmp_path)
    assert "measured" not in json.loads((tmp_path / "models.json").read_text())["b"]
