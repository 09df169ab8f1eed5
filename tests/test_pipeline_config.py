"""Sweep configurations: validation names the bad key, impossible cells are skipped with a
reason, bundled configs are valid, and the CLI reports bad configs without starting Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.pipeline.config import (
    RunSpec,
    SweepConfigError,
    bundled_configs,
    load_config,
    load_config_text,
    parse_config,
)

ROOT = Path(__file__).resolve().parent.parent


def grid(**over: Any) -> dict[str, Any]:
    g: dict[str, Any] = {"churn": "crash", "protocol": "cooperative", "assignor": "cooperative-sticky",
                         "group_size": 3, "partitions": 6}
    g.update(over)
    return g


def config(**over: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "t", "seeds": 1, "grid": [grid()]}
    c.update(over)
    return c


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (config(colour="red"), "t: colour: unknown key"),
        (config(grid=[grid(), grid(assignor=["range", "rnage"])]),
         "t: grid[1].assignor[1]: unknown assignor 'rnage'; known: range, roundrobin, sticky, cooperative-sticky"),
        (config(grid=[grid(protocol="lazy")]), "t: grid[0].protocol: unknown protocol 'lazy'"),
        (config(grid=[grid(churn="meteor")]), "t: grid[0].churn: unknown churn pattern 'meteor'"),
        (config(grid=[grid(group_size="six")]), "t: grid[0].group_size: expected an integer, got 'six'"),
        (config(grid=[grid(partitions=[0])]), "t: grid[0].partitions[0]: must be >= 1, got 0"),
        (config(grid=[grid(delay_ms=-1)]), "t: grid[0].delay_ms: must be >= 0"),
        (config(grid=[{k: v for k, v in grid().items() if k != "partitions"}]), "t: grid[0].partitions: missing"),
        (config(grid=[grid(members=3)]), "t: grid[0].members: unknown key"),
        (config(seeds=0), "t: seeds: must be >= 1"),
        (config(seeds=[1, "x"]), "t: seeds[1]: expected an integer"),
        (config(consumer={"sesion_timeout_ms": 1}), "t: consumer.sesion_timeout_ms: unknown consumer setting"),
        (config(consumer={"session_timeout_ms": "10s"}), "t: consumer.session_timeout_ms: expected int"),
        (config(consumer={"heartbeat_interval_ms": 20_000}),
         "t: consumer: heartbeat.interval.ms (20000) must be below session.timeout.ms (10000)"),
        (config(coordinator={"group_max_sizes": 2}), "t: coordinator.group_max_sizes: unknown coordinator setting"),
        (config(churn={"crash": {"at_ms": 5}}), "t: churn.crash.at_ms: unknown setting of crash"),
        (config(churn={"flapping": {"times": 0}}), "t: churn.flapping.times: must be >= 1"),
        (config(churn={"earthquake": {}}), "t: churn.earthquake: unknown churn pattern"),
        (config(report={"baseline": "eager"}), "t: report.baseline: expected PROTOCOL/ASSIGNOR"),
        ({"name": "t", "seeds": 1}, "t: grid: missing"),
        (config(grid=[grid(protocol="cooperative", assignor="range")]),
         "t: grid: every cell is impossible, nothing to run (first reason: the range assignor supports only the eager protocol)"),
    ],
)
def test_bad_config_names_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(SweepConfigError) as e:
        parse_config(data, "t")
    assert message in str(e.value)


def test_toml_and_json_syntax_errors_name_the_file() -> None:
    with pytest.raises(SweepConfigError, match=r"x\.toml: not valid TOML"):
        load_config_text("seeds = = 3", "x.toml")
    with pytest.raises(SweepConfigError, match=r"x\.json:1:\d+: not valid JSON"):
        load_config_text('{"seeds": }', "x.json")


def test_impossible_cells_are_skipped_with_their_reason() -> None:
    cfg = parse_config(config(grid=[grid(protocol=["eager", "cooperative"], assignor=["range", "cooperative-sticky"],
                                         delay_ms=[0, 5000])]), "t")
    ids = {c.cell_id for c in cfg.cells}
    assert ids == {
        "crash/eager/range/n3/p6/d0",
        "crash/eager/cooperative-sticky/n3/p6/d0",
        "crash/cooperative/cooperative-sticky/n3/p6/d0",
        "crash/cooperative/cooperative-sticky/n3/p6/d5000",
    }
    lines = cfg.skip_lines()
    assert "skipped 2 cell(s) protocol=cooperative assignor=range: the range assignor supports only the eager protocol" in lines
    assert any(line.startswith("skipped 1 cell(s) protocol=eager assignor=range delay_ms=5000: a KIP-415 delay")
               for line in lines)
    small = parse_config(config(grid=[grid(group_size=[1, 2])]), "t")
    assert [c.group_size for c in small.cells] == [2]
    assert "needs a group of at least 2" in small.skip_lines()[0]


def test_grids_are_joined_without_duplicates_and_seeds_multiply() -> None:
    cfg = parse_config(config(seeds=[7, 11], grid=[grid(), grid(group_size=[3, 4])]), "t")
    assert [c.group_size for c in cfg.cells] == [3, 4]
    assert [r.run_id for r in cfg.runs()] == [
        "crash/cooperative/cooperative-sticky/n3/p6/d0/s7", "crash/cooperative/cooperative-sticky/n3/p6/d0/s11",
        "crash/cooperative/cooperative-sticky/n4/p6/d0/s7", "crash/cooperative/cooperative-sticky/n4/p6/d0/s11",
    ]
    assert cfg.with_seeds(3).seeds == (1, 2, 3)
    with pytest.raises(SweepConfigError, match="--seeds"):
        cfg.with_seeds(0)


def test_run_spec_round_trips_through_json() -> None:
    cfg = parse_config(config(consumer={"poll_interval_ms": 250}, churn={"crash": {"start_ms": 9000}}), "t")
    spec = cfg.runs()[0]
    assert RunSpec.from_json(spec.to_json()) == spec


def test_bundled_default_is_the_example_and_every_example_is_valid() -> None:
    assert bundled_configs()["default"] == (ROOT / "examples/sweeps/default.toml").read_text(encoding="utf-8")
    default = load_config("default")
    assert {c.churn for c in default.cells} == {"rolling-restart", "crash", "crash-restart", "scale-out", "flapping"}
    assert {c.protocol for c in default.cells} == {"eager", "cooperative", "static-eager", "static-cooperative"}
    assert {c.delay_ms for c in default.cells} == {0, 10_000, 30_000}
    # at least 5 seeds: the summary quotes each ratio with a bootstrap interval over them
    assert default.baseline == "eager/range" and len(default.seeds) == 10
    examples = sorted((ROOT / "examples/sweeps").glob("*.toml")) + sorted((ROOT / "examples/sweeps").glob("*.json"))
    assert {p.suffix for p in examples} == {".toml", ".json"}
    for path in examples:
        assert load_config(str(path)).cells


def test_json_and_toml_describe_the_same_sweep() -> None:
    toml = load_config_text(
        'seeds = 2\n[consumer]\npoll_interval_ms = 250\n[[grid]]\nchurn = "crash"\nprotocol = "cooperative"\n'
        'assignor = "cooperative-sticky"\ngroup_size = [3, 4]\npartitions = 6\ndelay_ms = [0, 5000]\n', "s.toml")
    json_ = load_config_text(
        '{"seeds": 2, "consumer": {"poll_interval_ms": 250}, "grid": [{"churn": "crash", "protocol": "cooperative",'
        ' "assignor": "cooperative-sticky", "group_size": [3, 4], "partitions": 6, "delay_ms": [0, 5000]}]}', "s.json")
    assert toml.runs() == json_.runs() and len(toml.runs()) == 8


def test_cli_bad_config_is_a_clear_error_before_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('seeds = 1\n[[grid]]\nchurn = "crash"\nprotocol = "eager"\nassignor = "rnage"\n'
                   "group_size = 3\npartitions = 6\n", encoding="utf-8")
    assert main(["pipeline", "sweep", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"error: {bad}: grid[0].assignor: unknown assignor 'rnage'" in err
    assert not (tmp_path / "out").exists()
    assert main(["pipeline", "sweep", "no-such-sweep", "--out", str(tmp_path / "out")]) == 2
    assert "neither a file nor a bundled sweep (default)" in capsys.readouterr().err


def test_cli_check_lists_cells_and_skips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipeline", "check", str(ROOT / "examples/sweeps/tiny.toml"), "--seeds", "4"]) == 0
    out = capsys.readouterr().out
    assert "rolling-restart/cooperative/cooperative-sticky/n3/p6/d0" in out
    assert "skipped 1 cell(s) protocol=cooperative assignor=range" in out
    assert out.rstrip().endswith("5 cell(s) x 4 seed(s) = 20 runs")
