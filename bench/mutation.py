"""Mutation testing: every rule, invariant and check shown to fail when it is broken.

``bench/mutants.toml`` is a curated list of semantic mutants of the reference coordinator,
the assignors, the invariants and the validator, in the style of the spec's mutants
(spec/models.json): each is a plausible bug, named, with the exact text it replaces in one
file, the tests expected to catch it, and what it covers (validator rules, invariant
functions). For each mutant this command copies the tree once per worker (never touching
the checkout), applies the edit, runs the catcher tests there, restores the file, and
prints a table: mutant, expected catcher, caught by, time.

A mutant is **caught** when a catcher test fails, **SURVIVED** when they all pass, and an
**ERROR** when its text is not found exactly once (the code moved on: re-target the
mutant), when pytest cannot run the tests (a collection error is not a catch), or when it
runs past the time limit. The run exits 0 only when every mutant is caught.

    python3 -m bench.mutation                     # the curated list, 2 workers
    python3 -m bench.mutation --write docs/mutation.md   # ... and regenerate the table
    python3 -m bench.mutation --only stale-commit-check-removed --only pending-members-inv-none
    python3 -m bench.mutation --auto [--limit N]  # nightly: operator mutants, report only

``--auto`` generates mutants mechanically (comparison and boolean operators, on every
line of the curated mutants' target files that holds one) and runs each against the
catchers the curated list names for that file. Equivalent mutants are expected among
them: it writes a report of the survivors for a person to read, and fails only on errors.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "bench" / "mutants.toml"
#: what a copy of the tree needs to run the tests
COPIED = ("reference", "properties", "tests", "examples", "spec", "bench", "pyproject.toml")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache",
                                 ".mypy_cache", ".ruff_cache", "*.egg-info")
#: at most this many mutants run at once (the machines have 2 cores)
MAX_WORKERS = 2
TIMEOUT_S = 300.0

CAUGHT, SURVIVED, ERROR = "caught", "SURVIVED", "ERROR"


class MutantListError(ValueError):
    """The curated list cannot be used, with the place."""


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    find: str
    replace: str
    catchers: tuple[str, ...]
    description: str
    covers: tuple[str, ...] = ()


@dataclass
class Outcome:
    mutant: Mutant
    status: str
    caught_by: str = ""
    seconds: float = 0.0
    detail: str = ""
    output: str = field(default="", repr=False)


# ---------------------------------------------------------------- the list
def load_mutants(path: Path = LIST) -> list[Mutant]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MutantListError(f"{path}: {exc}") from exc
    out: list[Mutant] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw.get("mutant", [])):
        where = f"{path.name}: mutant[{i}]"
        try:
            m = Mutant(
                name=str(entry["name"]),
                file=str(entry["file"]),
                find=str(entry["find"]),
                replace=str(entry["replace"]),
                catchers=tuple(str(c) for c in entry["catchers"]),
                description=str(entry["description"]),
                covers=tuple(str(c) for c in entry.get("covers", ())),
            )
        except KeyError as exc:
            raise MutantListError(f"{where}: missing field {exc}") from exc
        if m.name in seen:
            raise MutantListError(f"{where}: duplicate name {m.name!r}")
        if not m.catchers:
            raise MutantListError(f"{where} ({m.name}): no catcher tests")
        if m.find == m.replace:
            raise MutantListError(f"{where} ({m.name}): the replacement is the original")
        seen.add(m.name)
        out.append(m)
    if not out:
        raise MutantListError(f"{path}: no [[mutant]] entries")
    return out


def apply(text: str, m: Mutant) -> str:
    """``text`` with the mutant's edit; the snippet must occur exactly once."""
    count = text.count(m.find)
    if count != 1:
        raise MutantListError(
            f"{m.name}: the text to replace occurs {count} times in {m.file} (must be exactly "
            f"once; re-target the mutant): {m.find[:70]!r}"
        )
    return text.replace(m.find, m.replace)


# ---------------------------------------------------------------- running
def copy_tree(target: Path, source: Path = ROOT) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, target / name, ignore=IGNORED)
        elif src.is_file():
            shutil.copy2(src, target / name)
    # byte-compile once; a mutated file no longer matches its .pyc and is compiled afresh,
    # and the runs never write bytecode, so no stale .pyc can outlive a mutant
    for name in ("reference", "properties"):
        compileall.compile_dir(str(target / name), quiet=1)
    return target


def _pytest(tree: Path, tests: Sequence[str], timeout_s: float) -> tuple[int | None, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=f"{tree / 'reference'}{os.pathsep}{tree}", PYTHONDONTWRITEBYTECODE="1",
               CI="1", GROUPSPEC_HYPOTHESIS_PROFILE="ci")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "-rfE", "--no-header", "-W", "ignore::DeprecationWarning", *tests]
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        return None, out
    return proc.returncode, proc.stdout + proc.stderr


_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)


def run_one(tree: Path, m: Mutant, timeout_s: float = TIMEOUT_S) -> Outcome:
    start = time.monotonic()
    path = tree / m.file
    try:
        original = path.read_text(encoding="utf-8")
        mutated = apply(original, m)
    except (OSError, MutantListError) as exc:
        return Outcome(m, ERROR, detail=str(exc))
    path.write_text(mutated, encoding="utf-8")
    try:
        rc, out = _pytest(tree, m.catchers, timeout_s)
    finally:
        path.write_text(original, encoding="utf-8")
    seconds = time.monotonic() - start
    failed = _FAILED.findall(out)
    if rc is None:
        return Outcome(m, ERROR, seconds=seconds, detail=f"timed out after {timeout_s:.0f} s", output=out)
    if rc == 0:
        return Outcome(m, SURVIVED, seconds=seconds, detail="every catcher test passed", output=out)
    if rc == 1 and failed:
        return Outcome(m, CAUGHT, caught_by=failed[0], seconds=seconds, output=out)
    tail = " | ".join(line for line in out.strip().splitlines()[-3:])
    return Outcome(m, ERROR, seconds=seconds, detail=f"pytest exit {rc}: {tail}", output=out)


def baseline(tree: Path, mutants: Sequence[Mutant], timeout_s: float) -> str | None:
    """None when every catcher test passes on the unmutated tree, else why not."""
    tests = sorted({t for m in mutants for t in m.catchers})
    rc, out = _pytest(tree, tests, timeout_s * 2)
    if rc == 0:
        return None
    tail = " | ".join(out.strip().splitlines()[-3:])
    return f"the catcher tests do not pass on the unmutated tree (exit {rc}): {tail}"


@contextmanager
def trees(workers: int, source: Path = ROOT) -> Iterator[queue.Queue[Path]]:
    with tempfile.TemporaryDirectory(prefix="groupspec-mutation-") as scratch:
        free: queue.Queue[Path] = queue.Queue()
        for i in range(workers):
            free.put(copy_tree(Path(scratch) / f"tree-{i}", source))
        yield free


def run_all(mutants: Sequence[Mutant], workers: int = MAX_WORKERS, timeout_s: float = TIMEOUT_S,
            check_baseline: bool = True, source: Path = ROOT,
            progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    workers = max(1, min(workers, MAX_WORKERS))
    with trees(workers, source) as free:
        if check_baseline:
            tree = free.get()
            why = baseline(tree, mutants, timeout_s)
            free.put(tree)
            if why is not None:
                return [Outcome(m, ERROR, detail=why) for m in mutants]

        def task(m: Mutant) -> Outcome:
            tree = free.get()
            try:
                result = run_one(tree, m, timeout_s)
            finally:
                free.put(tree)
            if progress is not None:
                progress(result)
            return result

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(task, mutants))


# ---------------------------------------------------------------- automatic (nightly)
_SWAPS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="), ast.GtE: (">=", ">"), ast.Is: (" is ", " is not "),
    ast.IsNot: (" is not ", " is "), ast.In: (" in ", " not in "), ast.NotIn: (" not in ", " in "),
}


def operator_mutants(file: str, text: str, catchers: tuple[str, ...]) -> Iterator[Mutant]:
    """One mutant per comparison or boolean operator on a line that occurs once in the file
    (flipped: == and !=, < and <=, is and is not, in and not in, and and or)."""
    lines = text.splitlines(keepends=True)
    done: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(text)):
        edits: list[tuple[str, str]] = []
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            swap = _SWAPS.get(type(node.ops[0]))
            if swap is not None:
                edits.append(swap)
        elif isinstance(node, ast.BoolOp):
            edits.append((" and ", " or ") if isinstance(node.op, ast.And) else (" or ", " and "))
        if not edits or not isinstance(node, ast.expr) or node.lineno != node.end_lineno:
            continue
        lineno = node.lineno
        line = lines[lineno - 1]
        for old, new in edits:
            if line.count(old) != 1 or text.count(line) != 1 or (lineno, old) in done:
                continue
            if line.lstrip().startswith(("#", '"', "'")):
                continue
            done.add((lineno, old))
            yield Mutant(
                name=f"auto:{file}:{lineno}:{old.strip()}->{new.strip()}",
                file=file, find=line, replace=line.replace(old, new), catchers=catchers,
                description=f"`{old.strip()}` flipped to `{new.strip()}` at line {lineno}",
            )


def auto_mutants(curated: Sequence[Mutant], source: Path = ROOT) -> list[Mutant]:
    by_file: dict[str, set[str]] = {}
    for m in curated:
        by_file.setdefault(m.file, set()).update(m.catchers)
    out: list[Mutant] = []
    for file, catchers in sorted(by_file.items()):
        text = (source / file).read_text(encoding="utf-8")
        out.extend(operator_mutants(file, text, tuple(sorted(catchers))))
    return out


# ---------------------------------------------------------------- reporting
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(test: str) -> str:
    return test.removeprefix("tests/")


def render_table(outcomes: Sequence[Outcome], markdown: bool = True) -> str:
    rows = [(o.mutant.name, " ".join(_short(c) for c in o.mutant.catchers),
             _short(o.caught_by) if o.status == CAUGHT else f"**{o.status}**: {o.detail}",
             f"{o.seconds:.1f} s") for o in outcomes]
    if markdown:
        head = "| mutant | expected catcher | caught by | time |\n|---|---|---|---:|\n"
        return head + "".join(f"| {' | '.join(_cell(c) for c in r)} |\n" for r in rows)
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    return "".join(f"{r[0].ljust(widths[0])}  {r[2]}  ({r[3]})\n" for r in rows)


def render_doc(outcomes: Sequence[Outcome], command: str, total_s: float,
               load: tuple[tuple[float, ...], tuple[float, ...]] | None = None) -> str:
    caught = sum(o.status == CAUGHT for o in outcomes)
    lines = [
        "# Mutation testing",
        "",
        "<!-- Generated by `python3 -m bench.mutation --write docs/mutation.md`; edit "
        "bench/mutants.toml, not this file. -->",
        "",
        "Every validator rule (docs/validator.md), every invariant function "
        "(`groupspec.invariants`) and the main rules of the coordinator and the assignors "
        "are shown to fail when they are broken: `bench/mutants.toml` lists one or more "
        "plausible bugs for each (name, file, the exact text it replaces, the tests expected "
        "to catch it, what it covers), and `python3 -m bench.mutation` applies each to a "
        "copy of the tree and runs its catcher tests there. A mutant whose text is no longer "
        "found is an error, not a pass. `tests/test_mutation.py` runs the list in CI and "
        "fails if any mutant survives; `ci/nightly` adds an automatic run of operator "
        "mutants (`--auto`) over the same files, for a person to triage.",
        "",
        f"This run: `{command}`, {caught} of {len(outcomes)} mutants caught, "
        f"{total_s:.0f} s wall on at most {MAX_WORKERS} processes "
        "(times include pytest start-up; the machine is shared, so they are noisy"
        + (f": load average {load[0][0]:.1f} at the start, {load[1][0]:.1f} at the end"
           if load is not None else "") + ").",
        "",
        render_table(outcomes).rstrip(),
        "",
        "## The mutants",
        "",
        "| mutant | target | covers | plausible bug |",
        "|---|---|---|---|",
    ]
    for o in outcomes:
        m = o.mutant
        lines.append(f"| {m.name} | `{m.file.removeprefix('reference/')}` | "
                     f"{_cell(', '.join(m.covers))} | {_cell(m.description)} |")
    return "\n".join(lines) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m bench.mutation", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="run these mutants (repeatable)")
    p.add_argument("--workers", type=int, default=MAX_WORKERS, help=f"parallel runs (at most {MAX_WORKERS})")
    p.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per mutant")
    p.add_argument("--no-baseline", action="store_true", help="skip the run of every catcher on the unmutated tree")
    p.add_argument("--write", type=Path, metavar="FILE", help="write the Markdown report (docs/mutation.md)")
    p.add_argument("--auto", action="store_true", help="nightly: operator mutants of the curated targets, report only")
    p.add_argument("--limit", type=int, default=None, help="with --auto: at most this many mutants")
    args = p.parse_args(list(argv) if argv is not None else None)
    try:
        curated = load_mutants()
    except MutantListError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    mutants = auto_mutants(curated)[: args.limit] if args.auto else curated
    if args.only:
        unknown = sorted(set(args.only) - {m.name for m in mutants})
        if unknown:
            print(f"error: --only: no such mutant: {', '.join(unknown)}", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.name in set(args.only)]
    start = time.monotonic()
    load_before = os.getloadavg()
    done = [0]

    def progress(o: Outcome) -> None:
        done[0] += 1
        print(f"  [{done[0]}/{len(mutants)}] {o.mutant.name}: {o.status} "
              f"{_short(o.caught_by) or o.detail} ({o.seconds:.1f} s)", file=sys.stderr, flush=True)

    outcomes = run_all(mutants, args.workers, args.timeout, not args.no_baseline, progress=progress)
    total = time.monotonic() - start
    print(render_table(outcomes, markdown=False), end="")
    counts = {s: sum(o.status == s for o in outcomes) for s in (CAUGHT, SURVIVED, ERROR)}
    print(f"\n{counts[CAUGHT]} caught, {counts[SURVIVED]} survived, {counts[ERROR]} errors "
          f"of {len(outcomes)} mutants in {total:.0f} s")
    if args.write is not None:
        command = "python3 -m bench.mutation" + (" --auto" if args.auto else "") + f" --write {args.write}"
        args.write.parent.mkdir(parents=True, exist_ok=True)
        load = (load_before, os.getloadavg())
        args.write.write_text(render_doc(outcomes, command, total, load), encoding="utf-8")
    if args.auto:
        return 1 if counts[ERROR] else 0
    return 0 if counts[CAUGHT] == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
