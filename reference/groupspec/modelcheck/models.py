"""The model manifest, ``spec/models.json``: every model TLC checks, what it must give, and
the mutants of the spec that must fail.

Each entry names the TLA+ module and .cfg file, the expected result (``pass``, or the kind
of violation: ``invariant``, ``property``, ``liveness``), the violated operator for a
mutant, the distinct-state count TLC found when the entry was last measured (CI fails when
it changes unexpectedly), the worker count, and for a mutant its edits: exact text found
once in a spec file and replaced. A mutant runs on a copy of ``spec/``; the spec itself is
never edited. ``tlc_args`` are extra TLC options, e.g. a simulation profile
(``["-simulate", "num=20000", "-depth", "300", "-seed", "1"]``): random behaviours far beyond
the exhaustive models' bounds, with a fixed seed so that a run can be repeated.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

EXPECTS = ("pass", "invariant", "property", "liveness")


class ManifestError(ValueError):
    """A manifest entry that cannot be used, with the entry's name."""


@dataclass(frozen=True)
class Mutation:
    file: str
    find: str
    replace: str


@dataclass(frozen=True)
class Model:
    name: str
    module: str
    config: str
    expect: str
    description: str
    workers: int = 2
    distinct_states: int | None = None
    violates: str | None = None
    nightly: bool = False
    mutate: tuple[Mutation, ...] = field(default_factory=tuple)
    tlc_args: tuple[str, ...] = ()

    @property
    def is_mutant(self) -> bool:
        return bool(self.mutate)


def spec_dir() -> Path:
    """The ``spec/`` directory of this checkout (next to ``reference/``)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "spec" / "models.json"
        if candidate.is_file():
            return candidate.parent
    raise ManifestError(f"no spec/models.json above {here}")


def _model(name: str, raw: Any) -> Model:
    if not isinstance(raw, dict):
        raise ManifestError(f"models.json: {name}: an entry must be an object")
    try:
        expect = raw["expect"]
        if expect not in EXPECTS:
            raise ManifestError(f"models.json: {name}: expect {expect!r} is not one of {EXPECTS}")
        if expect != "pass" and not raw.get("violates"):
            raise ManifestError(f"models.json: {name}: a failing model must name `violates`")
        tlc_args = raw.get("tlc_args", [])
        if not isinstance(tlc_args, list) or not all(isinstance(a, str) for a in tlc_args):
            raise ManifestError(f"models.json: {name}: tlc_args must be a list of strings")
        edits = tuple(
            Mutation(str(e["file"]), str(e["find"]), str(e["replace"]))
            for e in raw.get("mutate", [])
        )
        return Model(
            name=name,
            module=str(raw["module"]),
            config=str(raw["config"]),
            expect=expect,
            description=str(raw.get("description", "")),
            workers=int(raw.get("workers", 2)),
            distinct_states=raw.get("distinct_states"),
            violates=raw.get("violates"),
            nightly=bool(raw.get("nightly", False)),
            mutate=edits,
            tlc_args=tuple(tlc_args),
        )
    except KeyError as exc:
        raise ManifestError(f"models.json: {name}: missing field {exc}") from exc


def load_manifest(directory: Path | None = None) -> dict[str, Model]:
    """Every model of ``directory/models.json`` (default: this checkout's spec/)."""
    directory = directory or spec_dir()
    path = directory / "models.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ManifestError(f"{path}: the manifest must be an object of models")
    return {name: _model(name, entry) for name, entry in raw.items()}


def materialize(model: Model, source: Path, target: Path) -> Path:
    """Copy the spec modules and configs of ``source`` into ``target`` and apply the
    model's edits there; return ``target``. Each edit's text must occur exactly once, so
    that a spec change that breaks a mutant is reported, not silently ignored."""
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.suffix in (".tla", ".cfg", ".json"):
            shutil.copy2(path, target / path.name)
    for edit in model.mutate:
        path = target / edit.file
        if not path.is_file():
            raise ManifestError(f"models.json: {model.name}: no file {edit.file}")
        text = path.read_text(encoding="utf-8")
        count = text.count(edit.find)
        if count != 1:
            raise ManifestError(
                f"models.json: {model.name}: the text to replace occurs {count} times in "
                f"{edit.file} (must be exactly once): {edit.find[:60]!r}"
            )
        path.write_text(text.replace(edit.find, edit.replace), encoding="utf-8")
    if model.expect in ("property", "liveness") and model.violates is not None:
        cfg = target / model.config
        cfg.write_text(
            narrow_properties(cfg.read_text(encoding="utf-8"), model.violates, model.name),
            encoding="utf-8",
        )
    return target


#: the .cfg keywords that open a section (TLC's ModelConfig)
_CFG_KEYWORDS = frozenset({
    "CONSTANT", "CONSTANTS", "INIT", "NEXT", "SPECIFICATION", "INVARIANT", "INVARIANTS",
    "PROPERTY", "PROPERTIES", "SYMMETRY", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS", "VIEW", "CHECK_DEADLOCK", "POSTCONDITION", "ALIAS",
})


def narrow_properties(cfg: str, keep: str, model: str = "") -> str:
    """The .cfg text ``cfg`` with its PROPERTIES section reduced to ``keep``. TLC names a
    violated invariant but not a violated temporal property, so a mutant aimed at one
    property is checked against that property alone: a failure can then only be it."""
    out: list[str] = []
    in_props = False
    emitted = False
    found: list[str] = []
    for line in cfg.splitlines(keepends=True):
        words = line.split()
        head = words[0] if words else ""
        if head in _CFG_KEYWORDS:
            in_props = head in ("PROPERTY", "PROPERTIES")
            if in_props:
                found += words[1:]
                if not emitted:
                    out.append(f"PROPERTIES\n    {keep}\n")
                    emitted = True
                continue
        elif in_props and words and not head.startswith("\\*"):
            found += words
            continue
        out.append(line)
    if keep not in found:
        raise ManifestError(
            f"models.json: {model}: {keep} is not among the properties the config checks "
            f"({', '.join(found) or 'none'})"
        )
    return "".join(out)


def record_distinct_states(name: str, count: int, directory: Path | None = None,
                           *, seconds: float | None = None, workers: int | None = None) -> None:
    """Write ``count`` as the measured distinct-state count of ``name`` in the manifest,
    keeping its order and layout; with ``seconds``, also how long TLC took, on how many
    workers and cores, and the date (``measured``), so a nightly model's cost is on record."""
    directory = directory or spec_dir()
    path = directory / "models.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw[name]["distinct_states"] = count
    if seconds is not None:
        raw[name]["measured"] = {
            "seconds": round(seconds),
            "workers": workers,
            "cores": os.cpu_count(),
            "date": datetime.now(UTC).date().isoformat(),
        }
    path.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
