"""The verdicts on the committed injected collection (examples/injected/) stay exactly as
recorded: the validator's search, its timers and failovers, and every finding, before and
after any change to the replay, the loader or the trace layout (issue 20).

The collection is ``groupspec pipeline generate --events 30000 --inject-violations 12
--seed 2026 --clusters 3 --format jsonl --no-spark`` (gzipped). ``verdicts.json`` was written by
the validator as it was before the fast replay path and the columnar layout;
``GROUPSPEC_REWRITE=1 python3 -m pytest tests/test_injected_verdicts.py`` rewrites it, and
a rewrite is a behaviour change that needs explaining in its commit.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

from groupspec.validate import validate_path

HERE = Path(__file__).resolve().parent.parent / "examples" / "injected"
GOLDEN = HERE / "verdicts.json"
FILES = sorted(HERE.glob("cluster-*.jsonl.gz"))


def _unpacked(tmp: Path) -> list[Path]:
    out = []
    for f in FILES:
        p = tmp / f.name.removesuffix(".gz")
        p.write_bytes(gzip.decompress(f.read_bytes()))
        out.append(p)
    return out


def _verdicts(paths: list[Path]) -> dict[str, Any]:
    return {p.name: json.loads(json.dumps(validate_path(p).to_json())) for p in paths}


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _unpacked(tmp_path_factory.mktemp("injected"))


@pytest.fixture(scope="module")
def verdicts(unpacked: list[Path]) -> dict[str, Any]:
    got = _verdicts(unpacked)
    if os.environ.get("GROUPSPEC_REWRITE"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    return got


def _sourceless(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("source", "path")}


def test_collection_is_there() -> None:
    assert len(FILES) == 3 and GOLDEN.exists()


def test_verdicts_identical_to_the_recorded_ones(verdicts: dict[str, Any]) -> None:
    want = json.loads(GOLDEN.read_text())
    assert sorted(verdicts) == sorted(want)
    for name in want:
        got_groups = {g["group_id"]: g for g in verdicts[name]["groups"]}
        want_groups = {g["group_id"]: g for g in want[name]["groups"]}
        assert sorted(got_groups) == sorted(want_groups), name
        for gid, w in want_groups.items():
            assert got_groups[gid] == w, f"{name} {gid}"
        rest = {k: v for k, v in _sourceless(want[name]).items() if k != "groups"}
        assert {k: v for k, v in _sourceless(verdicts[name]).items() if k != "groups"} == rest


def test_every_injected_violation_is_found_and_nothing_else(verdicts: dict[str, Any]) -> None:
    manifest = json.loads((HERE / "manifest.json").read_text())
    injected = {(v["cluster"], v["group_id"]): v for v in manifest["injected"]}
    assert len(injected) == 12
    for name, report in verdicts.items():
        cluster = name.removesuffix(".jsonl")
        for g in report["groups"]:
            v = injected.get((cluster, g["group_id"]))
            if v is None:
                assert g["verdict"] == "conforming", (name, g["group_id"])
            else:
                assert g["verdict"] == "violation", (name, g["group_id"])
                assert g["divergences"][0]["seq"] == v["seq"]
                assert g["divergences"][0]["rule"] in v["rules"]
