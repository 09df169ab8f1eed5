"""The spec without model checking: every module parses (SANY), every constant, variable
and operator the invariants use carries an Apalache type annotation, the Apalache wrapper
the runner generates parses, and GroupStates.tla's table is the Python reference's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from groupspec.modelcheck.annotations import declarations, missing_annotations
from groupspec.modelcheck.apalache import (
    CONSTANT_TYPES,
    defined_operators,
    parse_cfg,
    wrapper_module,
)
from groupspec.modelcheck.install import java_executable, tlc_jar
from groupspec.modelcheck.models import load_manifest, spec_dir
from groupspec.modelcheck.sany import parse_module
from groupspec.protocol.group_state import VALID_PREVIOUS_STATES, GroupState

SPEC = spec_dir()
MODULES = sorted(p.stem for p in SPEC.glob("*.tla"))
CORE = ["ConsumerGroup", "Assignors", "GroupStates"]


def _configs() -> list[str]:
    return sorted({m.config for m in load_manifest().values()})


def _roots() -> list[str]:
    roots: set[str] = set()
    for config in _configs():
        cfg = parse_cfg((SPEC / config).read_text(encoding="utf-8"), name=config)
        roots |= set(cfg.invariants) | set(cfg.properties)
    return sorted(roots)


def test_every_constant_variable_and_invariant_operator_is_annotated() -> None:
    missing = missing_annotations(SPEC, _roots(), [*CORE, "MC", "MCStorm"])
    assert missing == [], "\n".join(str(m) for m in missing)


def test_the_checker_finds_a_missing_annotation() -> None:
    text = "CONSTANTS\n    \\* @type: Int;\n    N,\n    M\nVARIABLE x\nF(a) == a\n"
    missing, defs = declarations("T", text)
    assert [(m.name, m.kind, m.line) for m in missing] == [("M", "constant", 4), ("x", "variable", 5)]
    assert [(d.name, d.has_params, d.annotated) for d in defs] == [("F", True, False)]


def test_core_uses_no_tlc_only_module() -> None:
    for module in CORE:
        text = (SPEC / f"{module}.tla").read_text(encoding="utf-8")
        extends = [line for line in text.splitlines() if line.startswith("EXTENDS")]
        assert all("TLC" not in line.replace(",", " ").split() for line in extends), module


@pytest.mark.java
@pytest.mark.parametrize("module", MODULES)
def test_sany_parses(module: str) -> None:
    result = parse_module(SPEC, module)
    assert result.ok, result.output


@pytest.mark.java
@pytest.mark.parametrize("config", ["MCsmall.cfg", "MCstatic.cfg"])
def test_generated_apalache_wrapper_parses_and_binds_every_constant(
    config: str, tmp_path: Path
) -> None:
    cfg = parse_cfg((SPEC / config).read_text(encoding="utf-8"), name=config)
    for path in SPEC.glob("*.tla"):
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    text = wrapper_module(cfg, spec_module="ConsumerGroup", operators=defined_operators(SPEC))
    (tmp_path / "APMC.tla").write_text(text, encoding="utf-8")
    assert '"c1_OF_CLIENT"' in text and '"m1_OF_MEMBER"' in text
    for name in CONSTANT_TYPES:
        assert f"/\\ {name} = " in text
    state, action = text.split("ApalacheActionInv ==")
    assert "/\\ NoStaleCommitInv" in action  # the action property, as an action invariant
    assert "/\\ StickyAssignmentInv" in action and "/\\ OneOwnerPerGenerationInv" in state
    assert "NoStaleCommitInv" not in state and "OneOwnerPerGenerationInv" not in action
    result = parse_module(tmp_path, "APMC")
    assert result.ok, result.output


@pytest.mark.java
def test_group_states_table_equals_the_python_reference(tmp_path: Path) -> None:
    """TLC evaluates an ASSUME that GroupStates.tla's table equals the reference's."""

    def tla_set(states: frozenset[GroupState]) -> str:
        return "{" + ", ".join(sorted(f'"{s.value}"' for s in states)) + "}"

    python_table = " @@ ".join(
        f'"{target.value}" :> {tla_set(previous)}'
        for target, previous in VALID_PREVIOUS_STATES.items()
    )
    (tmp_path / "GroupStates.tla").write_text(
        (SPEC / "GroupStates.tla").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "Check.tla").write_text(
        "---- MODULE Check ----\nEXTENDS GroupStates, TLC\nVARIABLE x\n"
        f"ASSUME ValidPreviousStates = ({python_table})\n"
        "Init == x = 0\nNext == x' = x\n====\n",
        encoding="utf-8",
    )
    (tmp_path / "Check.cfg").write_text("INIT Init\nNEXT Next\n", encoding="utf-8")
    proc = subprocess.run(
        [java_executable(), f"-Djava.io.tmpdir={tmp_path}", "-cp", str(tlc_jar()), "tlc2.TLC",
         "-workers", "1", "-metadir", str(tmp_path / "states"), "-config", "Check.cfg", "Check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Model checking completed. No error has been found." in proc.stdout


@pytest.mark.java
def test_least_moves_bound_equals_the_brute_force_minimum(tmp_path: Path) -> None:
    """Assignors.tla computes the sticky contract's least number of moves with a min-cut
    bound over member sets (CanKeep), so that neither the leader's choice nor the checked
    properties quantify over sets of functions. TLC evaluates an ASSUME that this agrees
    with the brute-force minimum over every balanced assignment, for every member set of
    up to three, every partition set of up to three and every claim function (double
    claims included), and that the plans the leader sends (eager, and cooperative with the
    moving partitions withheld) pass PlanBalanced and PlanSticky exactly when they should."""
    (tmp_path / "Assignors.tla").write_text(
        (SPEC / "Assignors.tla").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "Check.tla").write_text(
        "---- MODULE Check ----\nEXTENDS Assignors, TLC\nVARIABLE x\n"
        'Ms == {"a", "b", "c"}\nPs == {1, 2, 3}\n'
        "ASSUME \\A ms \\in (SUBSET Ms) \\ {{}} : \\A ps \\in SUBSET Ps : "
        "\\A meta \\in [Ms -> SUBSET Ps] :\n"
        "  LET bal == {o \\in [ps -> ms] : IsBalanced(ms, ps, o)}\n"
        "      best == {o \\in bal : \\A o2 \\in bal : "
        "Moves(ms, ps, meta, o) <= Moves(ms, ps, meta, o2)}\n"
        "  IN \\A o \\in [ps -> ms] :\n"
        '     /\\ IsTarget("sticky", ms, ps, meta, o) <=> o \\in best\n'
        '     /\\ IsTarget("balanced", ms, ps, meta, o) <=> o \\in bal\n'
        '     /\\ \\A proto \\in {"eager", "cooperative"} :\n'
        "          LET plan == [m \\in Ms |-> Given(proto, ms, meta, o, m, ps)]\n"
        "          IN /\\ o \\in bal => PlanBalanced(ms, ps, plan)\n"
        "             /\\ o \\in bal => (PlanSticky(ms, meta, ps, plan) <=> o \\in best)\n"
        "Init == x = 0\nNext == x' = x\n====\n",
        encoding="utf-8",
    )
    (tmp_path / "Check.cfg").write_text("INIT Init\nNEXT Next\n", encoding="utf-8")
    proc = subprocess.run(
        [java_executable(), f"-Djava.io.tmpdir={tmp_path}", "-cp", str(tlc_jar()), "tlc2.TLC",
         "-workers", "1", "-metadir", str(tmp_path / "states"), "-config", "Check.cfg", "Check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Model checking completed. No error has been found." in proc.stdout
