"""The mypyc evaluation's decision and report, without compiling (that takes minutes and
runs as `python -m bench.mypyc_eval`): a build is kept only when it pays and gives the same
verdicts, and the source changes it makes to the compiled copy still apply to the source."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is not installed

from bench import mypyc_eval

PACKAGE = Path(__file__).resolve().parents[1] / "reference" / "groupspec"


def _report(pure: float, compiled: float, equal: bool) -> dict[str, Any]:
    return {
        "command": "python -m bench.mypyc_eval", "started": "s", "finished": "f",
        "machine": {"cpu": "cpu", "cores": 2, "python": "3.11", "platform": "linux",
                    "load_average": [0.0, 0.0, 0.0]},
        "events": 1000, "modules": ["groupspec/invariants.py"], "patches": [], "compile_s": 1.0,
        "pure_s": pure, "compiled_s": compiled, "speedup": pure / compiled, "verdicts_equal": equal,
    }


def test_kept_only_when_it_pays_and_verdicts_are_equal() -> None:
    verdicts = {t: v for t, _, v in mypyc_eval.targets(_report(2.0, 1.0, True))}
    assert all(v.startswith("met") for v in verdicts.values())
    slow = mypyc_eval.targets(_report(1.2, 1.0, True))
    assert slow[0][2] == "not met: not kept"
    wrong = mypyc_eval.targets(_report(2.0, 1.0, False))
    assert wrong[1][2] == "FAILED"


def test_report_names_the_modules_and_the_ratio() -> None:
    text = mypyc_eval.readme(_report(1.27, 1.0, True))
    assert "`groupspec/invariants.py`" in text and "1.27x" in text and "not kept" in text


def test_the_modules_and_the_source_patches_still_match_the_source() -> None:
    for pattern in (*mypyc_eval.MODULES, *mypyc_eval.GENERATE_MODULES):
        assert list(PACKAGE.glob(pattern)), f"{pattern} names no module"
    for module, find, _, why in mypyc_eval.PATCHES:
        text = (PACKAGE / module).read_text(encoding="utf-8")
        assert re.search(find, text, flags=re.M), f"{module}: the patch for '{why}' no longer applies"


def test_the_generator_report_names_both_formats_and_the_decision() -> None:
    fmt = {"events": 1000, "pure_cpu_s": 1.3, "compiled_cpu_s": 1.0, "speedup": 1.3, "same_bytes": True}
    r = {**_report(1.3, 1.0, True), "workload": "generate", "rounds": 1,
         "formats": {"parquet": fmt, "jsonl": fmt}, "same_bytes": True}
    verdicts = [v for _, _, v in mypyc_eval.targets_generate(r)]
    assert verdicts == ["not met: not kept", "met"]
    text = "\n".join(mypyc_eval._generate_section(r))
    assert "| parquet | mypyc (1 modules)" in text and "1.30x" in text
