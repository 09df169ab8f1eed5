"""A spec mutant aimed at a temporal property is checked against that property alone (TLC
does not name a violated temporal property, so with two properties in the config any
liveness failure would have counted): the materialized config lists exactly the named
property and keeps every invariant. No TLC needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupspec.modelcheck.models import (
    ManifestError,
    load_manifest,
    materialize,
    narrow_properties,
    spec_dir,
)

MODELS = load_manifest()
PROPERTY_MUTANTS = [m for m in MODELS.values() if m.is_mutant and m.expect in ("property", "liveness")]


def _section(cfg: str, keyword: str) -> list[str]:
    out: list[str] = []
    inside = False
    for line in cfg.splitlines():
        words = line.split()
        if (words and words[0].isupper() and words[0].isalpha()) or words[:1] == ["CHECK_DEADLOCK"]:
            inside = words[0] in (keyword, keyword.rstrip("S"))
            out += words[1:] if inside else []
        elif inside and words and not words[0].startswith("\\*"):
            out += words
    return out


def test_both_liveness_mutants_are_aimed_at_one_of_two_properties() -> None:
    live = {m.violates for m in PROPERTY_MUTANTS if m.config == "MClive.cfg"}
    assert live == {"SyncAnsweredProp", "ConvergenceProp"}
    original = (spec_dir() / "MClive.cfg").read_text(encoding="utf-8")
    assert sorted(_section(original, "PROPERTIES")) == ["ConvergenceProp", "SyncAnsweredProp"]


@pytest.mark.parametrize("name", [m.name for m in PROPERTY_MUTANTS])
def test_a_property_mutant_checks_only_the_property_it_names(name: str, tmp_path: Path) -> None:
    model = MODELS[name]
    materialize(model, spec_dir(), tmp_path)
    checked = (tmp_path / model.config).read_text(encoding="utf-8")
    original = (spec_dir() / model.config).read_text(encoding="utf-8")
    assert _section(checked, "PROPERTIES") == [model.violates]
    assert _section(checked, "INVARIANTS") == _section(original, "INVARIANTS")
    assert _section(checked, "CONSTANTS") == _section(original, "CONSTANTS")


def test_narrowing_to_a_property_the_config_does_not_check_is_an_error() -> None:
    cfg = "SPECIFICATION Spec\nPROPERTIES\n    AProp\n    BProp\nCHECK_DEADLOCK FALSE\n"
    assert narrow_properties(cfg, "BProp") == "SPECIFICATION Spec\nPROPERTIES\n    BProp\nCHECK_DEADLOCK FALSE\n"
    assert narrow_properties("PROPERTY AProp BProp\n", "AProp") == "PROPERTIES\n    AProp\n"
    with pytest.raises(ManifestError, match="CProp is not among the properties"):
        narrow_properties(cfg, "CProp", "mutant-x")
