"""Does compiling the hot modules with mypyc pay? (issue 20, item 3)

    python -m bench.mypyc_eval [--workload validate|generate] [--events N] [--rounds R] [--quick]

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

``--workload generate`` measures the generator the same way (issue 20's generator target):
:data:`GENERATE_MODULES` (the simulator's runner, the classic client, the classic
coordinator) are compiled in the copy, and each fresh process times ``generate(N, seed=7)``
by CPU time for Parquet and JSON Lines; the files' SHA-256 of the two copies must be equal.

Prints a table with the ratio, writes JSON to bench/results/mypyc.json (the generator's to
mypyc-generate.json) and regenerates bench/mypyc.md with both workloads' last full runs.
Timing is never asserted in the test suite.
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

#: the generator's modules (``--workload generate``): where a cProfile of ``generate(20000,
#: seed=7)`` spends its own time: the simulator's loop (sim/runner.py), the classic consumer
#: and its consumption, the classic coordinator that answers it (its handlers, fast path,
#: timers, state and offsets), the generator's merge and the trace writers' encoding (the
#: codec's encoders, JSON Lines, the columnar writer). Left out: the trace's event and
#: message classes (frozen dataclasses the runner and the merge build and copy through
#: ``__dict__``; the validator's run found compiled message classes break the codec).
GENERATE_MODULES: tuple[str, ...] = (
    "sim/runner.py",
    "client/classic/consumer.py",
    "client/consumption.py",
    "client/delayed_imbalance.py",
    "coordinator/classic/*.py",
    "coordinator/coordinator.py",
    "coordinator/timers.py",
    "coordinator/state.py",
    "coordinator/offsets.py",
    "pipeline/generate.py",
    "trace/codec.py",
    "trace/jsonl.py",
    "trace/columnar_write.py",
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


_GENERATE_TIMER = r"""
import hashlib, json, sys, tempfile, time
from pathlib import Path
import groupspec
from groupspec.pipeline.generate import generate
events = int(sys.argv[1])
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for fmt in ("parquet", "jsonl"):
        generate(2000, Path(tmp) / f"warm-{fmt}", seed=7, fmt=fmt)  # imports, first writes
        c0 = time.process_time()
        col = generate(events, Path(tmp) / fmt, seed=7, fmt=fmt)
        cpu = time.process_time() - c0
        h = hashlib.sha256()
        for f in sorted((Path(tmp) / fmt).glob("cluster-*")):
            h.update(f.read_bytes())
        out[fmt] = {"cpu_s": cpu, "events": col.events, "sha256": h.hexdigest()}
compiled = any(p.suffix == ".so" for p in Path(groupspec.__file__).parent.rglob("*.so"))
print(json.dumps({"compiled": compiled, "formats": out}))
"""


def _copy(dest: Path) -> Path:
    shutil.copytree(ROOT / "reference" / "groupspec", dest / "groupspec",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
    return dest


def _compile(root: Path, modules: tuple[str, ...] = MODULES) -> tuple[list[str], float, list[str]]:
    applied: list[str] = []
    files = sorted({str(p.relative_to(root)) for g in modules for p in (root / "groupspec").glob(g)})
    for module, pattern, repl, why in PATCHES:
        if f"groupspec/{module}" not in files:
            continue  # only a module compiled needs its patch
        path = root / "groupspec" / module
        text = path.read_text(encoding="utf-8")
        new, n = re.subn(pattern, repl, text, flags=re.M)
        if n:
            path.write_text(new, encoding="utf-8")
            applied.append(f"{module}: {why}")
    # third-party modules without stubs (pyarrow, re2, ...) are Any, as in pyproject.toml
    (root / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n", encoding="utf-8")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=root, capture_output=True,
                          text=True, env={**os.environ, "MYPYPATH": str(root)})
    if proc.returncode != 0:
        tail = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                if not ln.startswith(("gcc", "creating", "copying", "building", "running"))]
        joined = "\n".join(tail[-20:])
        raise SystemExit(f"mypyc failed (exit {proc.returncode}):\n{joined}")
    return files, time.monotonic() - t0, applied


def _time(root: Path, collection: Path | str, script: str = _TIMER) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", script, str(collection)], cwd=root, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-12:])
        raise SystemExit(f"timing the {root.name} copy failed (exit {proc.returncode}):\n{tail}")
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


def run_generate(events: int, rounds: int) -> dict[str, Any]:
    """``--workload generate``: the generator's modules compiled, ``generate()`` timed by CPU
    time in a fresh process per copy and round (pure, then compiled), best of each."""
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="bench-mypyc-") as tmp:
        base = Path(tmp)
        pure = _copy(base / "pure")
        compiled = _copy(base / "compiled")
        print("compiling with mypyc ...", file=sys.stderr, flush=True)
        files, compile_s, applied = _compile(compiled, GENERATE_MODULES)
        best: dict[str, dict[str, float]] = {"pure": {}, "compiled": {}}
        digests: dict[str, dict[str, str]] = {"pure": {}, "compiled": {}}
        counts: dict[str, int] = {}
        for i in range(rounds):
            for name, root in (("pure", pure), ("compiled", compiled)):
                print(f"round {i + 1}/{rounds}: {name} ...", file=sys.stderr, flush=True)
                got = _time(root, str(events), _GENERATE_TIMER)
                if got["compiled"] != (name == "compiled"):
                    raise SystemExit(f"the {name} copy imported the wrong groupspec")
                for fmt, f in got["formats"].items():
                    best[name][fmt] = min(best[name].get(fmt, float("inf")), f["cpu_s"])
                    digests[name][fmt] = f["sha256"]
                    counts[fmt] = f["events"]
    formats = {
        fmt: {"events": counts[fmt], "pure_cpu_s": best["pure"][fmt],
              "compiled_cpu_s": best["compiled"][fmt],
              "speedup": best["pure"][fmt] / best["compiled"][fmt],
              "same_bytes": digests["pure"][fmt] == digests["compiled"][fmt]}
        for fmt in counts
    }
    return {
        "workload": "generate",
        "command": "python -m bench.mypyc_eval " + " ".join(sys.argv[1:]),
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "events": max(counts.values()),
        "rounds": rounds,
        "modules": files,
        "patches": applied,
        "compile_s": compile_s,
        "formats": formats,
        "speedup": min(f["speedup"] for f in formats.values()),
        "same_bytes": all(f["same_bytes"] for f in formats.values()),
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


def _last(name: str) -> Any:
    """The last full run's report of the other workload (bench/results/NAME), or None."""
    path = ROOT / "bench" / "results" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def table_generate(r: dict[str, Any]) -> list[str]:
    rows = [
        "| format | build | events | CPU seconds (best) | events/s (CPU time) | ratio to pure | same bytes |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for fmt, f in r["formats"].items():
        n = f["events"]
        rows += [
            f"| {fmt} | pure Python | {n:,} | {f['pure_cpu_s']:.2f} | {n / f['pure_cpu_s']:,.0f} | 1.00x | |",
            f"| {fmt} | mypyc ({len(r['modules'])} modules) | {n:,} | {f['compiled_cpu_s']:.2f} | "
            f"{n / f['compiled_cpu_s']:,.0f} | {f['speedup']:.2f}x | {'yes' if f['same_bytes'] else 'NO'} |",
        ]
    return rows


def targets_generate(r: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f"mypyc pays on the generator (>= {KEEP_AT}x the pure build, both formats)",
         f"{r['speedup']:.2f}x", "met: keep" if r["speedup"] >= KEEP_AT else "not met: not kept"),
        ("files byte-identical, pure and compiled", str(r["same_bytes"]),
         "met" if r["same_bytes"] else "FAILED"),
    ]


#: the generator's other measurements of 2026-11-27 (not re-measured by each run)
GENERATE_NOTES = [
    "The first run of this mode, on commit b651158 (before that day's last pure-Python "
    "changes to the runner, the merge and the JSON encoders; 3 rounds, load average about 2), "
    "gave 1.61x (Parquet) and 1.52x (JSON Lines), with the pure build at 34,894 and 36,788 "
    "events/s; a second, on commit 0547f67 at a load average of about 5, 1.37x and 1.37x. "
    "The pure build's CPU time is noisy on this shared machine, and the pure-Python changes "
    "took away some of what compiling gained. "
    "Instruction counts do not depend on the load: `generate(10000, seed=7)` on commit "
    "0547f67, pure against compiled (callgrind, the whole process less a one-group run's): "
    "JSON Lines 2,472 M against 1,848 M instructions (1.34x), Parquet 2,427 M against "
    "1,892 M (1.28x; pyarrow's share is the same in both).",
    "",
    "The table's run of 2026-11-27 (5 rounds, load average about 1.4) measured 1.44x for "
    "Parquet and 1.45x for JSON Lines, with the pure build at 40,410 and 40,140 events/s. "
    "The run above, of 2026-11-29 (commit 693b665), finds the pure build caught up on "
    "Parquet (the column-at-a-time writer, the shared skipped steps, the per-class JSON "
    "encoders): compiling gains 1.29x on JSON Lines and nothing on Parquet, where the "
    "compiled columnar writer's calls into pyarrow cost what its loops save. Neither build "
    "reaches the generator's 60,000 events/s in Parquet, the pipeline's default format.",
    "",
    "Keeping it would also take a build step: mypyc writes each compiled module's `.so` "
    "beside its `.py` in the package, where Python imports it in place of the source, so "
    "an editable install with a stale build runs old code after an edit (and tests test it) "
    "until it is rebuilt; the compiled copy would have to live apart from the source tree "
    "and be chosen explicitly.",
    "",
]


def _generate_section(r: dict[str, Any]) -> list[str]:
    from bench.report import targets_table

    return [
        "## The generator (`--workload generate`)",
        "",
        # this_run's bullets without its heading
        *this_run(r, f"about {r['events']:,} events from `generate(N, seed=7)`, each format")[2:],
        "",
        "Two copies of `reference/groupspec` as above; one has these modules compiled by mypyc "
        f"({r['compile_s']:.0f} s to compile): " + ", ".join(f"`{x}`" for x in r["modules"]) + ". "
        "They are the simulator's loop, the classic client, the classic coordinator, the merge "
        "and the trace writers' encoding, where a cProfile of `generate(20000, seed=7)` finds "
        "the generator's own time; the trace's event and message classes stay pure (the "
        "runner and the merge build and copy them through `__dict__`, and the validator's run "
        "found compiled message classes break the codec), as does pyarrow. Each of "
        f"{r['rounds']} rounds runs `generate()` for Parquet and for JSON Lines in a fresh "
        "process per copy, pure then compiled, timed by CPU time (`time.process_time`); the "
        "table keeps the best of each, and compares the SHA-256 of the cluster files the two "
        "copies wrote. Changes made to the compiled copy only: "
        + ("; ".join(x for x in r["patches"]
                     if any(x.startswith(m.removeprefix("groupspec/") + ":") for m in r["modules"]))
           or "none") + ".",
        "",
        *table_generate(r),
        "",
        *targets_table(targets_generate(r)),
        "",
        *GENERATE_NOTES,
    ]


def readme(r: dict[str, Any]) -> str:
    from bench.report import targets_table

    if r.get("workload") == "generate":
        gen_r: dict[str, Any] | None = r
        r = _last("mypyc.json")
    else:
        gen_r = _last("mypyc-generate.json")
    return "\n".join([
        "# mypyc evaluation (issue 20, item 3)",
        "",
        "<!-- Generated by `python -m bench.mypyc_eval`; edit bench/mypyc_eval.py, not this file. -->",
        "",
        "```sh",
        "python -m bench.mypyc_eval            # 40,000 events, 3 rounds",
        "python -m bench.mypyc_eval --quick    # 10,000 events, 1 round, no README",
        "python -m bench.mypyc_eval --workload generate   # the generator, 40,000 events, 3 rounds",
        "```",
        "",
        "## The validator (`--workload validate`, the default)",
        "",
        *[ln.replace("## This run", "### This run") for ln in
          this_run(r, f"{r['events']:,} events from `groupspec pipeline generate` (seed 7), JSON Lines")],
        "",
        "### Method",
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
        "### Results",
        "",
        *table(r),
        "",
        "### Decision",
        "",
        *targets_table(targets(r)),
        "",
        *(_generate_section(gen_r) if gen_r is not None else []),
        "mypyc is kept only if it pays at least "
        f"{KEEP_AT}x; below that, a C-extension build step in `ci/setup` (a compiler on every "
        "machine, a second build to keep in step with the source, monkeypatching and "
        "`dataclasses` limits in compiled modules) costs more than it gives.",
        "",
    ])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.mypyc_eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", choices=("validate", "generate"), default="validate",
                   help="what is timed: validate_path over a collection, or generate()")
    p.add_argument("--events", type=int, default=40_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="10,000 events, one round, no README")
    p.add_argument("--out", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.events, args.rounds = 10_000, 1
    if args.workload == "generate":
        report = run_generate(args.events, args.rounds)
        publish("mypyc-generate", report, table_generate(report), targets_generate(report),
                readme, args.quick, args.out)
        if not args.quick:  # one README for both workloads: publish wrote mypyc-generate.md
            (ROOT / "bench" / "mypyc-generate.md").replace(ROOT / "bench" / "mypyc.md")
        return 0 if report["same_bytes"] else 1
    report = run(args.events, args.rounds)
    publish("mypyc", report, table(report), targets(report), readme, args.quick, args.out)
    return 0 if report["verdicts_equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
