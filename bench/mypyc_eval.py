"""Does compiling the hot modules with mypyc pay? (issue 20, item 3)

    python -m bench.mypyc_eval [--events N] [--rounds R] [--quick]

The package is already ``mypy --strict``, so mypyc (shipped with mypy, installed by
``ci/setup``) can compile its typed modules to C extensions. This measures whether that is
worth keeping: it copies ``reference/groupspec`` twice into a temporary directory, compiles
:data:`MODULES` in one copy with mypyc, generates one JSON Lines collection (``groupspec
pipeline generate``, seed 7) and times ``validate_path`` over it in a fresh subprocess per
copy, alternating pure and compiled for ``--rounds`` rounds (best of each), so both see the
same machine load. The verdicts of the two copies are compared too (they must be equal).

Two source changes are applied to the compiled copy only, and printed: mypyc 2.x crashes
(RecursionError in its type expansion) on the recursive alias ``_Link`` of
validate/replay.py, which the copy replaces by ``tuple[_Decision, object]``; and
protocol/records.py is left out, because its dataclass hierarchy fails at import when
compiled ("non-default argument follows default argument": mypyc orders inherited
dataclass fields differently).

Prints a table with the ratio, writes JSON to bench/results/mypyc.json and regenerates
bench/mypyc.md. Timing is never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.report import ROOT, machine, publish, this_run

#: the modules compiled (package-relative globs): the classic coordinator's handlers and
#: state, its timers and record replay, the invariants and the validator's replay. Left out,
#: each after a run of this benchmark failed with it: the trace codec (trace/codec.py,
#: jsonl.py, events.py) and the message classes, because the codec decodes by reading the
#: dataclasses' annotations at run time and compiled every line failed to decode ("cannot
#: decode type <class 'type'>"); coordinator/config.py and the other frozen dataclasses of
#: coordinator/, because the replay copies its state with pickle and a compiled frozen
#: dataclass cannot be unpickled (FrozenInstanceError); protocol/records.py (below).
MODULES: tuple[str, ...] = (
    "coordinator/classic/*.py",
    "coordinator/coordinator.py",
    "coordinator/replay.py",
    "coordinator/timers.py",
    "coordinator/state.py",
    "coordinator/offsets.py",
    "invariants.py",
    "validate/replay.py",
)

#: (module, pattern, replacement, why) applied to the compiled copy only
PATCHES: tuple[tuple[str, str, str, str], ...] = (
    ("validate/replay.py", r'^_Link = tuple\[_Decision, "_Link \| None"\]$',
     "_Link = tuple[_Decision, object]",
     "mypyc crashes (RecursionError) on the recursive type alias"),
    ("validate/replay.py", r"^(\s*)link = link\[1\]$",
     r"\1link = link[1]  # type: ignore[assignment]",
     "the loop that walks the links now reads `object` (the alias above)"),
)

_TIMER = r"""
import json, sys, time
from pathlib import Path
import groupspec
from groupspec.validate.validator import validate_path
files = sorted(Path(sys.argv[1]).glob("*.jsonl"))
validate_path(min(files, key=lambda f: f.stat().st_size))  # warm up
t0 = time.perf_counter()
reports = [validate_path(f).to_json() for f in files]
seconds = time.perf_counter() - t0
compiled = any(p.suffix == ".so" for p in Path(groupspec.__file__).parent.rglob("*.so"))
for r in reports:
    r.pop("source", None)
print(json.dumps({"seconds": seconds, "compiled": compiled, "verdicts": reports}))
"""


def _copy(dest: Path) -> Path:
    shutil.copytree(ROOT / "reference" / "groupspec", dest / "groupspec",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
    return dest


def _compile(root: Path) -> tuple[list[str], float, list[str]]:
    applied: list[str] = []
    for module, pattern, repl, why in PATCHES:
        path = root / "groupspec" / module
        text = path.read_text(encoding="utf-8")
        new, n = re.subn(pattern, repl, text, flags=re.M)
        if n:
            path.write_text(new, encoding="utf-8")
            applied.append(f"{module}: {why}")
    # third-party modules without stubs (pyarrow, re2, ...) are Any, as in pyproject.toml
    (root / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n", encoding="utf-8")
    files = sorted({str(p.relative_to(root)) for g in MODULES for p in (root / "groupspec").glob(g)})
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=root, capture_output=True,
                          text=True, env={**os.environ, "MYPYPATH": str(root)})
    if proc.returncode != 0:
        tail = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                if not ln.startswith(("gcc", "creating", "copying", "building", "running"))]
        joined = "\n".join(tail[-20:])
        raise SystemExit(f"mypyc failed (exit {proc.returncode}):\n{joined}")
    return files, time.monotonic() - t0, applied


def _time(root: Path, collection: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", _TIMER, str(collection)], cwd=root, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-12:])
        raise SystemExit(f"validating with the {root.name} copy failed (exit {proc.returncode}):\n{tail}")
    out: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return out


def run(events: int, rounds: int) -> dict[str, Any]:
    from groupspec.pipeline.generate import generate

    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="bench-mypyc-") as tmp:
        base = Path(tmp)
        pure = _copy(base / "pure")
        compiled = _copy(base / "compiled")
        print("compiling with mypyc ...", file=sys.stderr, flush=True)
        files, compile_s, applied = _compile(compiled)
        print(f"generating about {events:,} events ...", file=sys.stderr, flush=True)
        col = generate(events, base / "collection", seed=7, fmt="jsonl")
        best: dict[str, float] = {}
        verdicts: dict[str, Any] = {}
        for i in range(rounds):
            for name, root in (("pure", pure), ("compiled", compiled)):
                print(f"round {i + 1}/{rounds}: {name} ...", file=sys.stderr, flush=True)
                got = _time(root, base / "collection")
                if got["compiled"] != (name == "compiled"):
                    raise SystemExit(f"the {name} copy imported the wrong groupspec")
                best[name] = min(best.get(name, float("inf")), got["seconds"])
                verdicts[name] = got["verdicts"]
    equal = verdicts["pure"] == verdicts["compiled"]
    if not equal:
        # keep both for a person to compare (the first difference names the group)
        for name, v in verdicts.items():
            path = ROOT / "bench" / "results" / f"mypyc-verdicts-{name}.json"
            path.write_text(json.dumps(v, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return {
        "command": "python -m bench.mypyc_eval " + " ".join(sys.argv[1:]),
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "events": col.events,
        "modules": files,
        "patches": applied,
        "compile_s": compile_s,
        "pure_s": best["pure"],
        "compiled_s": best["compiled"],
        "speedup": best["pure"] / best["compiled"],
        "verdicts_equal": equal,
    }


#: a compiled build is kept only if it is at least this much faster
KEEP_AT = 1.5


def table(r: dict[str, Any]) -> list[str]:
    n = r["events"]
    return [
        "| build | events | seconds (best) | events/s | ratio to pure |",
        "|---|---:|---:|---:|---:|",
        f"| pure Python | {n:,} | {r['pure_s']:.2f} | {n / r['pure_s']:,.0f} | 1.00x |",
        f"| mypyc ({len(r['modules'])} modules) | {n:,} | {r['compiled_s']:.2f} | "
        f"{n / r['compiled_s']:,.0f} | {r['speedup']:.2f}x |",
    ]


def targets(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f"mypyc pays (>= {KEEP_AT}x the pure build)", f"{r['speedup']:.2f}x",
         "met: keep" if r["speedup"] >= KEEP_AT else "not met: not kept"),
        ("verdicts identical, pure and compiled", str(r["verdicts_equal"]),
         "met" if r["verdicts_equal"] else "FAILED"),
    ]


def readme(r: dict[str, Any]) -> str:
    from bench.report import targets_table

    return "\n".join([
        "# mypyc evaluation (issue 20, item 3)",
        "",
        "<!-- Generated by `python -m bench.mypyc_eval`; edit bench/mypyc_eval.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.mypyc_eval            # 40,000 events, 3 rounds",
        "python -m bench.mypyc_eval --quick    # 10,000 events, 1 round, no README",
        "```",
        "",
        *this_run(r, f"{r['events']:,} events from `groupspec pipeline generate` (seed 7), JSON Lines"),
        "",
        "## Method",
        "",
        "Two copies of `reference/groupspec` in a temporary directory; one has these modules "
        f"compiled by mypyc ({r['compile_s']:.0f} s to compile): "
        + ", ".join(f"`{m}`" for m in r["modules"]) + ". "
        "Each round times `validate_path` over the collection in a fresh process per copy, pure "
        "then compiled, so both see the same load; the table keeps the best of each. Changes "
        "made to the compiled copy only: " + ("; ".join(r["patches"]) or "none") + "; "
        "left out, each after a run with it failed: `protocol/records.py` (its dataclass "
        "hierarchy fails at import), the trace codec with the message classes (it decodes by "
        "reading the dataclasses' annotations at run time; compiled, every line failed to "
        "decode, which made the run look 1.6x faster while it validated nothing), and the "
        "frozen dataclasses of `coordinator/` such as `config.py` (the replay copies its state "
        "with pickle, and a compiled frozen dataclass cannot be unpickled).",
        "",
        "## Results",
        "",
        *table(r),
        "",
        "## Decision",
        "",
        *targets_table(targets(r)),
        "",
        "mypyc is kept only if it pays at least "
        f"{KEEP_AT}x; below that, a C-extension build step in `ci/setup` (a compiler on every "
        "machine, a second build to keep in step with the source, monkeypatching and "
        "`dataclasses` limits in compiled modules) costs more than it gives.",
        "",
    ])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.mypyc_eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=40_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="10,000 events, one round, no README")
    p.add_argument("--out", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events, args.rounds = 10_000, 1
    report = run(args.events, args.rounds)
    publish("mypyc", report, table(report), targets(report), readme, args.quick, args.out)
    return 0 if report["verdicts_equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
