"""Mutation testing in CI: the curated mutants of bench/mutants.toml are each caught by
the tests they name, and together they cover every validator rule of docs/validator.md
and every invariant function of groupspec.invariants (issue 22). The run copies the tree
(the checkout is never modified) and uses at most two processes; on two idle cores it
takes about three minutes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import groupspec.invariants as invariants
from bench.mutation import (
    CAUGHT,
    ERROR,
    ROOT,
    Mutant,
    MutantListError,
    apply,
    auto_mutants,
    load_mutants,
    operator_mutants,
    render_table,
    run_all,
    run_one,
)
from groupspec.validate.rules import RULES

MUTANTS = load_mutants()
COVERED = {c for m in MUTANTS for c in m.covers}

#: the seven mutants issue 22 found surviving
ISSUE_22 = {
    "static-members-inv-none",
    "pending-members-inv-none",
    "parked-requests-inv-none",
    "leader-comparison-removed",
    "sync-assignment-comparison-removed",
    "stale-commit-check-removed",
    "stale-commit-off-by-one-lenient",
}


def _documented_rules() -> set[str]:
    text = (ROOT / "docs" / "validator.md").read_text(encoding="utf-8")
    rules = text.split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", rules, re.MULTILINE))


def _invariant_functions() -> set[str]:
    return {
        name for name, obj in vars(invariants).items()
        if (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == invariants.__name__ and name != "Violation"
    }


def test_every_validator_rule_has_a_mutant() -> None:
    documented = _documented_rules()
    assert documented == set(RULES), "docs/validator.md and validate/rules.py disagree"
    assert not documented - COVERED, f"rules no mutant covers: {sorted(documented - COVERED)}"


def test_every_invariant_function_has_a_mutant() -> None:
    functions = _invariant_functions()
    assert {"static_members_consistent", "check_record", "InvariantMonitor"} <= functions
    assert not functions - COVERED, f"invariant functions no mutant covers: {sorted(functions - COVERED)}"


def test_the_mutants_issue_22_found_surviving_are_listed() -> None:
    assert {m.name for m in MUTANTS} >= ISSUE_22


def test_every_mutant_names_real_code_exactly_once() -> None:
    for m in MUTANTS:
        apply((ROOT / m.file).read_text(encoding="utf-8"), m)  # raises if not exactly once
        for c in m.catchers:
            assert (ROOT / c.split("::")[0]).is_file(), f"{m.name}: no test file {c}"


def test_a_mutant_whose_text_is_gone_is_an_error_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text("x = 1\nx = 1\n", encoding="utf-8")
    gone = Mutant("gone", "mod.py", "y = 2", "y = 3", ("tests/none.py",), "moved away")
    twice = Mutant("twice", "mod.py", "x = 1", "x = 2", ("tests/none.py",), "ambiguous")
    for m in (gone, twice):
        outcome = run_one(tmp_path, m)
        assert outcome.status == ERROR and "re-target the mutant" in outcome.detail
    assert (tmp_path / "mod.py").read_text(encoding="utf-8") == "x = 1\nx = 1\n"
    with pytest.raises(MutantListError, match="occurs 0 times"):
        apply("x = 1\n", gone)


def test_operator_mutants_flip_one_operator_on_a_unique_line() -> None:
    text = "def f(a, b):\n    if a == b and a is not None:\n        return a < b\n    return a in b\n"
    found = {(m.find.strip(), m.replace.strip()) for m in operator_mutants("f.py", text, ("t",))}
    assert found == {
        ("if a == b and a is not None:", "if a != b and a is not None:"),
        ("if a == b and a is not None:", "if a == b and a is None:"),
        ("if a == b and a is not None:", "if a == b or a is not None:"),
        ("return a < b", "return a <= b"),
        ("return a in b", "return a not in b"),
    }
    nightly = auto_mutants(MUTANTS)
    assert len(nightly) > len(MUTANTS)
    assert {m.file for m in nightly} == {m.file for m in MUTANTS}
    for m in nightly[:50]:
        apply((ROOT / m.file).read_text(encoding="utf-8"), m)


@pytest.mark.slow
def test_the_curated_mutants_are_all_caught() -> None:
    before = {m.file: (ROOT / m.file).read_text(encoding="utf-8") for m in MUTANTS}
    outcomes = run_all(MUTANTS)
    assert all((ROOT / f).read_text(encoding="utf-8") == text for f, text in before.items())
    assert [o.mutant.name for o in outcomes] == [m.name for m in MUTANTS]
    missed = [o for o in outcomes if o.status != CAUGHT]
    assert not missed, "\n" + render_table(missed, markdown=False) + "\n".join(
        o.output[-2000:] for o in missed[:2])
    for o in outcomes:
        assert o.caught_by.split("::")[0] in {c.split("::")[0] for c in o.mutant.catchers}
