"""The server-side assignor benchmark at its --quick size (20 x 10 x 20): both sides run
every case, agree on moves and sizes, and the report renders. No timing is asserted.
Java is required (never skipped)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import server_assignors as bench

pytestmark = pytest.mark.java


def test_quick_run_covers_every_case_and_agrees_with_kafka(tmp_path: Path) -> None:
    out = tmp_path / "quick.json"
    assert bench.main(["--quick", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    rows = report["rows"]
    assert [(r["assignor"], r["group"], r["scenario"]) for r in rows] == [
        (c.assignor, c.group, c.scenario) for c in bench.CASES
    ]
    size = bench.QUICK
    for r in rows:
        py, java = r["groupspec"], r["kafka"]
        assert r["same_shape"], r
        assert py["assigned"] == java["assigned"] == size.total
        assert py["best_s"] > 0 and java["best_s"] > 0
        members = size.members + {"fresh": 0, "leave": -1, "join": 1}[r["scenario"]]
        assert py["members"] == members
        if r["scenario"] == "leave":
            # The leaver's partitions move and, for the uniform assignor, nothing else.
            assert py["moves"] == size.total // size.members
    text = bench.readme(report)
    assert "| uniform | classes | join |" in text and "## Targets" in text


def test_subscription_classes_overlap_as_documented() -> None:
    size = bench.QUICK
    subs = [frozenset(bench.subscription(i, size, "classes")) for i in range(size.members)]
    assert len(set(subs)) == bench.CLASSES
    assert all(len(s) == size.topics // 2 for s in subs)
    for j in range(size.topics):
        assert sum(j in s for s in subs) == size.members // 2
