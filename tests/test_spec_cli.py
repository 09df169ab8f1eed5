"""``groupspec spec``: a mutant's counterexample as a timeline and as ITF that itf-py
reads; Apalache missing is one line and a non-zero exit; unknown models are usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import itf_py
import pytest

pytestmark = pytest.mark.java


def groupspec(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groupspec", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )


def test_mutant_prints_timeline_naming_the_invariant_and_writes_itf(tmp_path: Path) -> None:
    itf_file = tmp_path / "cex.itf.json"
    proc = groupspec(
        "spec", "check", "--model", "mutant-assignment-to-everyone", "--itf", str(itf_file)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # caught, as the manifest expects
    out = proc.stdout
    assert "VIOLATED OneOwnerPerGenerationInv" in out
    assert "Counterexample:" in out
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert steps[0].split()[:3] == ["step", "1", "-"]
    assert any("coordinator  SyncGroup" in line for line in steps)
    assert "=> OneOwnerPerGenerationInv does not hold" in out

    trace = itf_py.trace_from_json(json.loads(itf_file.read_text()))
    assert len(trace.states) == len(steps)
    last = trace.states[-1].values  # itf-py reads records as named tuples
    assert last["last_action"].name == "SyncGroup"
    assert last["group"].state == "Stable"
    # the leader gave every member every partition: two members received the same partitions
    received = last["received"]
    assert len({frozenset(v) for v in received.values()}) == 1


def test_json_output_and_exit_status_for_a_passing_model() -> None:
    proc = groupspec("spec", "check", "--model", "small", "--json")
    assert proc.returncode == 0, proc.stderr
    [row] = json.loads(proc.stdout)
    assert row["model"] == "small" and row["ok"] and row["verdict"] == "pass"
    assert row["distinct_states"] == row["expected_distinct_states"]
    assert "distinct states" in proc.stderr  # progress went to stderr


def test_apalache_missing_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no apalache-mc anywhere on PATH
    proc = subprocess.run(
        [sys.executable, "-m", "groupspec", "spec", "check", "--checker", "apalache"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Apalache is not installed" in lines[0]
    assert "releases" in lines[0]


def test_unknown_model_is_a_usage_error() -> None:
    proc = groupspec("spec", "check", "--model", "no-such-model")
    assert proc.returncode == 2
    assert "no model named 'no-such-model'" in proc.stderr
    assert "small" in proc.stderr


def test_main_job_prints_one_verdict_table() -> None:
    proc = groupspec("check", "--traces", "10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["part", "check", "verdict", "time"]
    spec_row = next(line for line in lines if "TLC small model" in line)
    assert " OK " in spec_row and "distinct states" in spec_row
    assert any(line.split()[:3] == ["reference", "scenario", "default"] and " OK " in line
               for line in lines)
    assert any(line.split()[:5] == ["crosscheck", "spec", "->", "reference", "(small)"] and " OK " in line
               for line in lines)
    assert any(line.split()[:6] == ["crosscheck", "reference", "->", "spec", "(10", "traces)"] and " OK " in line
               for line in lines)
    assert "all checks hold" in proc.stdout


def test_apalache_on_path_gets_cinit_inv_and_length(tmp_path: Path) -> None:
    """A stand-in apalache-mc records how it is called and what it is given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.txt"
    fake = bin_dir / "apalache-mc"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        f'cp APMC.tla {tmp_path}/APMC.seen.tla\n'
        "exit 0\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    proc = groupspec("spec", "check", "--checker", "apalache", "--length", "7", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "small: Apalache pass" in proc.stdout
    calls = [line.split() for line in log.read_text().splitlines()]
    assert len(calls) == 2  # one run for the state invariants, one for the action invariants
    for args, inv in zip(calls, ("ApalacheStateInv", "ApalacheActionInv"), strict=True):
        assert args[0] == "check"
        assert {"--init=Init", "--next=Next", "--cinit=ConstInit", f"--inv={inv}", "--length=7"} <= set(args)
        assert args[-1] == "APMC.tla"
    wrapper = (tmp_path / "APMC.seen.tla").read_text()
    assert 'Clients = {"c1_OF_CLIENT", "c2_OF_CLIENT"}' in wrapper
    assert "/\\ OneOwnerPerGenerationInv" in wrapper
