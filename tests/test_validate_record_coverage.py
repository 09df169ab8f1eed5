"""Record checks across coordinator moves (issue 16, item 7): in a file merging several
groups' records, a CoordinatorUnloaded record concerns only the groups it unloaded; every
record of every group is checked, or the verdict says why not; the summary gives each
check's coverage."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.pipeline.generate import merge, simulate_group, write_trace_file
from groupspec.protocol.records import CoordinatorUnloaded
from groupspec.trace import events as ev
from groupspec.validate import CONFORMING, INCONCLUSIVE, validate_path


def _cluster(tmp_path: Path) -> Path:
    rng = random.Random(7)
    moved = simulate_group("moved", rng, ("failover",))
    stayed = simulate_group("stayed", rng, ())
    assert any(isinstance(e, ev.RecordEvent) and isinstance(e.record, CoordinatorUnloaded) for e in moved)
    path = tmp_path / "cluster.jsonl"
    write_trace_file([ev.Header(source="test", cluster="c"), *(e for _, _, e in merge([moved, stayed]))],
                     str(path), "jsonl")
    return path


def test_every_record_of_every_group_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _cluster(tmp_path)
    report = validate_path(path)
    for g in report.groups:
        assert g.verdict == CONFORMING, g
        done, total = g.coverage["record invariants"]
        assert done == total > 0, g.group_id
        assert not any("not checked" in n for n in g.notes)
    assert main(["validate", str(path)]) == 0
    assert "record invariants 100%" in capsys.readouterr().out


def test_a_record_that_does_not_fit_makes_the_group_inconclusive(tmp_path: Path) -> None:
    path = _cluster(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    # move the stayed group's creation to another group: its later records cannot be followed
    k = next(i for i, line in enumerate(lines) if '"GroupCreated"' in line and '"stayed"' in line)
    lines[k] = lines[k].replace('"group_id":"stayed"', '"group_id":"stayed-other"')
    path.write_text("".join(lines))
    by_id = {g.group_id: g for g in validate_path(path).groups}
    g = by_id["stayed"]
    assert g.verdict == INCONCLUSIVE, g
    done, total = g.coverage["record invariants"]
    assert done < total
    assert any("record invariants can follow" in m.what for m in g.missing), g.missing
