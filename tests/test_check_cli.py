"""`groupspec check` never reports success on checks it did not run: every part skipped,
a part that produced no row, or `--traces 0` is an error (exit 2), not "all checks hold"."""

from __future__ import annotations

import pytest

import groupspec.cli.check as check_cli
from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios


def test_every_part_skipped_is_an_error_not_success(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["check", "--skip", "spec", "--skip", "reference", "--skip", "crosscheck"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "all checks hold" not in out
    assert err.startswith("error: check: every part is skipped")


def test_traces_zero_is_refused_rather_than_dropping_the_row(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["check", "--skip", "spec", "--skip", "reference", "--traces", "0"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert "error: check: --traces: must be at least 1" in err


def test_a_part_that_produced_no_row_is_not_success(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_cli, "bundled_scenarios", dict)
    rc = main(["check", "--skip", "spec", "--skip", "crosscheck"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "all checks hold" not in out
    assert "error: check: no check ran" in err


def test_the_reference_part_alone_counts_its_rows(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["check", "--skip", "spec", "--skip", "crosscheck"])
    out = capsys.readouterr().out
    n = len(bundled_scenarios())
    assert n > 0
    assert rc == 0
    assert out.rstrip().endswith(f"all checks hold ({n} checks)")
