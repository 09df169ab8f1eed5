"""The KIP-848 consumer-protocol spec (spec/ConsumerProtocol.tla, wrapper spec/MCConsumer.tla)
without model checking: it stays in Apalache's fragment as the classic spec does (every
constant and variable, and every operator with parameters that an invariant or property of
its models uses, carries an ``@type``; the core module uses no TLC-only module), its models
name only operators the modules define, and every invariant and property its models check
is shown able to fail by a mutant or a finding of spec/models.json. TLC runs the models in
tests/test_spec_models.py."""

from __future__ import annotations

import re

from groupspec.modelcheck.annotations import missing_annotations
from groupspec.modelcheck.apalache import parse_cfg
from groupspec.modelcheck.models import load_manifest, spec_dir

SPEC = spec_dir()
CORE = "ConsumerProtocol"
WRAPPER = "MCConsumer"
MODELS = {n: m for n, m in load_manifest().items() if m.module == WRAPPER}


def _cfg(config: str) -> tuple[list[str], list[str]]:
    cfg = parse_cfg((SPEC / config).read_text(encoding="utf-8"), name=config)
    return cfg.invariants, cfg.properties


def _defined(module: str) -> set[str]:
    text = (SPEC / f"{module}.tla").read_text(encoding="utf-8")
    return set(re.findall(r"^(\w+)(?:\(.*?\))?\s*==", text, re.M))


def test_manifest_has_the_consumer_models_findings_and_mutants() -> None:
    assert {"consumer-small", "consumer-ci", "consumer-live", "nightly-consumer"} <= set(MODELS)
    assert MODELS["nightly-consumer"].nightly
    for name in ("consumer-small", "consumer-ci", "consumer-live", "consumer-subscribe"):
        assert MODELS[name].expect == "pass" and not MODELS[name].nightly
        assert MODELS[name].distinct_states is not None, f"{name}: no recorded state count"
    for name in (
        "mutant-consumer-assign-before-revoke",
        "mutant-consumer-stale-epoch-accepted",
        "mutant-consumer-epoch-ahead",
        "mutant-consumer-no-rebalance-timeout",
    ):
        assert MODELS[name].is_mutant and MODELS[name].expect != "pass", name
    assert MODELS["mutant-consumer-no-rebalance-timeout"].violates == "ConvergenceProp"


def test_models_check_only_operators_the_modules_define() -> None:
    defined = _defined(CORE) | _defined(WRAPPER)
    for model in MODELS.values():
        invariants, properties = _cfg(model.config)
        unknown = sorted(set(invariants + properties) - defined)
        assert unknown == [], f"{model.config}: {unknown}"


def test_every_checked_invariant_and_property_is_shown_able_to_fail() -> None:
    checked: set[str] = set()
    for model in MODELS.values():
        if model.expect == "pass" and not model.is_mutant:  # not the checked fix
            invariants, properties = _cfg(model.config)
            checked |= set(invariants) | set(properties)
    caught = {m.violates for m in MODELS.values() if m.expect != "pass"}
    # TypeInv and EpochMonotonicProp are sanity checks of the spec itself (an epoch
    # that goes back breaks MemberEpochBoundInv first); the conditional forms of the
    # two findings' invariants are shown able to fail through the findings.
    expected = checked - {"TypeInv", "EpochMonotonicProp",
                          "NoTwoOwnersUnlessTimingFaultOrStaleReportInv",
                          "NoTwoCommittersUnlessStaleReportInv"}
    assert expected <= caught, f"no mutant or finding for {sorted(expected - caught)}"
    assert {"NoTwoOwnersInv", "NoTwoCommittersInv"} <= caught  # the two findings


def test_every_constant_variable_and_invariant_operator_is_annotated() -> None:
    roots: set[str] = set()
    for model in MODELS.values():
        invariants, properties = _cfg(model.config)
        roots |= set(invariants) | set(properties)
    missing = missing_annotations(SPEC, sorted(roots), [CORE, WRAPPER])
    assert missing == [], "\n".join(str(m) for m in missing)


def test_core_uses_no_tlc_only_module() -> None:
    text = (SPEC / f"{CORE}.tla").read_text(encoding="utf-8")
    extends = [line for line in text.splitlines() if line.startswith("EXTENDS")]
    assert extends == ["EXTENDS Integers, FiniteSets"]
    assert "CHOOSE" not in re.sub(r"\\\*.*", "", text)  # explicit choices only


def test_no_nat_in_the_type_invariants() -> None:
    text = (SPEC / f"{CORE}.tla").read_text(encoding="utf-8")
    types = text[text.index("(* Type invariants") : text.index("(* Safety *)")]
    assert "Nat" not in types


def test_fault_kinds_of_the_models_are_the_specs() -> None:
    kinds = {"crash", "restart", "leave", "lose", "reconnect", "hang", "early_session",
             "early_rebalance"}
    text = (SPEC / f"{CORE}.tla").read_text(encoding="utf-8")
    assert set(re.findall(r'Fault\("(\w+)"\)', text)) | {"early_session", "early_rebalance"} == kinds
    for model in MODELS.values():
        cfg = parse_cfg((SPEC / model.config).read_text(encoding="utf-8"), name=model.config)
        used = set(re.findall(r'"(\w+)"', cfg.constants["FaultKinds"]))
        assert used <= kinds, f"{model.config}: {sorted(used - kinds)}"
