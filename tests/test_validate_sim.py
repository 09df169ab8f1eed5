"""Simulator traces are conforming: the reference coordinator's own runs, replayed through
the validator's search (member ids, orders, timers, failovers), explain themselves."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.validate import CONFORMING, validate_bytes


@functools.cache
def sim_trace(name: str, until_ms: int | None = None, protocol: str | None = None,
              static: bool = False) -> str:
    """The trace (JSON Lines text) of a bundled scenario, optionally cut short."""
    data = json.loads(bundled_scenarios()[name])
    data = apply_overrides(data, until_ms=until_ms, protocol=protocol, static=static)
    result = simulate(load_scenario_text(json.dumps(data), f"{name}.json"))
    out = io.StringIO()
    write_trace(result, out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "protocol", "static"),
    [
        ("default", None, False),          # cooperative-sticky, crash, static restart, late join
        ("default", "eager", True),        # eager range with static members
        ("eager", None, False),            # close, join, crash
        ("failover", None, False),         # two coordinator failovers, one mid-rebalance
        ("zombie", None, False),           # a paused member and a slow poller
        ("subscription-change", None, False),
    ],
)
def test_simulated_runs_conform(name: str, protocol: str | None, static: bool) -> None:
    text = sim_trace(name, protocol=protocol, static=static)
    report = validate_bytes(text.encode(), f"{name}.jsonl")
    # requests still unanswered when the run stops are written without a response (as the
    # recorder writes them); nothing else is a problem
    assert {p.kind for p in report.problems} <= {"missing_response"}
    assert not report.bad_input()
    [group] = report.groups
    assert group.verdict == CONFORMING, group
    assert group.exchanges > 100
    if name == "failover":
        assert any("failover" in n for n in group.notes)


def test_cli_conforming_exit_0_and_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "eager.jsonl"
    path.write_text(sim_trace("eager"))
    report = tmp_path / "report.json"
    assert main(["validate", str(path), "--format", "json", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert '"verdict": "conforming"' in out
    assert report.read_text() == out


def test_cli_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().out


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "exit status" in out and "inconclusive" in out
