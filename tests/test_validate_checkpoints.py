"""The replay's checkpoints are a cost, not a decision: how often the search copies its
state (``CHECKPOINT_EVERY`` decisions while backtracking, ``QUIET_CHECKPOINT_EVERY``
before its first failure) changes how many decisions a revisited choice point replays, never
what the replay finds. Every group's replay result (divergences, answers allowed,
alternatives explored, failovers) on the injected collection, whose divergences make the
search backtrack, is the same with a copy at every choice point as with the defaults, and
the defaults do replay long runs of decisions there (the sparse case is exercised).
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path
from typing import Any

import pytest

from groupspec.validate import replay as rp
from groupspec.validate.grouping import group_trace
from groupspec.validate.load import load_path

HERE = Path(__file__).resolve().parent.parent / "examples" / "injected"


@pytest.fixture(scope="module")
def groups(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    tmp = tmp_path_factory.mktemp("injected-checkpoints")
    out = []
    for f in sorted(HERE.glob("cluster-*.jsonl.gz")):
        p = tmp / f.name.removesuffix(".gz")
        p.write_bytes(gzip.decompress(f.read_bytes()))
        out += [g for _, g in sorted(group_trace(load_path(p)).groups.items()) if g.exchanges]
    assert out
    return out


def _results(groups: list[Any]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(rp.replay_group(g.exchanges, rp.ReplayConfig())) for g in groups]


def test_replay_results_do_not_depend_on_checkpoint_spacing(groups: list[Any]) -> None:
    replayed: list[int] = []
    original = rp.Replayer._restore

    def counting(self: rp.Replayer, mark: rp._Mark) -> rp._Branch:
        n, link = 0, mark.since
        while link is not None:
            n, link = n + 1, link[1]
        replayed.append(n)
        return original(self, mark)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rp.Replayer, "_restore", counting)
        sparse = _results(groups)
    assert any(r["found"] for r in sparse), "the collection makes the search backtrack"
    assert max(replayed) > rp.CHECKPOINT_EVERY, "a restore replays more than a dense spacing would"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rp, "CHECKPOINT_EVERY", 1)
        mp.setattr(rp, "QUIET_CHECKPOINT_EVERY", 1)
        dense = _results(groups)
    assert sparse == dense
