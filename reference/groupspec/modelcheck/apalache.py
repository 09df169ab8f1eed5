"""Running Apalache (a symbolic, SMT-based model checker for TLA+) on a model, where it is
installed.

Apalache ships as a GitHub release, a Docker image and a Nix package, none of which this
project downloads: where ``apalache-mc`` is on PATH it is used, and where it is not the
runner says so in one line, with how to install it.

The same .cfg file describes the model to both checkers. Apalache does not bind
CONSTANTS from a .cfg's model values, so the runner writes a small wrapper module next to
a copy of the spec, ``APMC.tla``, whose ``ConstInit`` gives each constant its value from
the .cfg, with model values as Apalache's uninterpreted literals (``"c1_OF_CLIENT"``), and
whose ``ApalacheStateInv`` is the conjunction of the .cfg's INVARIANTS (state invariants)
and ``ApalacheActionInv`` that of the action invariants ``XInv`` behind its action
properties ``XProp == [][XInv]_vars``; Apalache checks each in its own run. The bound is the
length of the behaviours explored (``--length``), not the generation constraint TLC uses.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

INSTALL_HINT = (
    "Apalache is not installed (no `apalache-mc` on PATH); install a release from "
    "https://github.com/apalache-mc/apalache/releases (needs Java 17) and put its bin/ on "
    "PATH, or use `--checker tlc`"
)

#: The uninterpreted type of each model-value constant of ConsumerGroup.tla.
CONSTANT_TYPES: dict[str, str] = {
    "Clients": "CLIENT",
    "StaticClients": "CLIENT",
    "NoClient": "CLIENT",
    "MemberIds": "MEMBER",
    "NoMember": "MEMBER",
    "Partitions": "PARTITION",
}

#: Constants of the TLC wrapper (MC.tla) that the core spec does not declare.
WRAPPER_CONSTANTS = frozenset({"MaxGeneration"})


class ConfigError(ValueError):
    """A .cfg file the runner cannot translate, with the file and line."""


@dataclass
class Config:
    """The parts of a TLC .cfg file the Apalache runner needs."""

    constants: dict[str, str] = field(default_factory=dict)
    invariants: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)


def parse_cfg(text: str, *, name: str = "cfg") -> Config:
    """CONSTANTS assignments, INVARIANTS and PROPERTIES of a TLC configuration."""
    cfg = Config()
    section = ""
    keywords = {"CONSTANTS", "CONSTANT", "INVARIANTS", "INVARIANT", "PROPERTIES", "PROPERTY"}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("\\*", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        if head in keywords:
            section = head.rstrip("S") + "S"
            line = rest.strip()
            if not line:
                continue
        elif head.isupper() and head.isalpha():
            section = head  # INIT, NEXT, SYMMETRY, ...: not needed here
            continue
        if section == "CONSTANTS":
            key, eq, value = line.partition("=")
            if not eq:
                raise ConfigError(f"{name}:{number}: expected `NAME = value`, found {line!r}")
            cfg.constants[key.strip()] = value.strip()
        elif section == "INVARIANTS":
            cfg.invariants += line.split()
        elif section == "PROPERTIES":
            cfg.properties += line.split()
    return cfg


def _literal(value: str, type_name: str | None, model_values: set[str]) -> str:
    """A .cfg value as an Apalache expression (model values as typed literals)."""

    def replace(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in model_values and type_name is not None:
            return f'"{word}_OF_{type_name}"'
        return word

    return re.sub(r"(?<![\"\w])[A-Za-z_]\w*(?![\"\w])", replace, value)


def wrapper_module(cfg: Config, *, spec_module: str, operators: set[str]) -> str:
    """The text of APMC.tla for ``cfg``: ConstInit, ApalacheStateInv, ApalacheActionInv."""
    # `c1 = c1` declares a model value; `NoClient = NoClient` binds a declared constant
    # to a model value of the same name.
    model_values = {k for k, v in cfg.constants.items() if k == v}
    declared_only = model_values - set(CONSTANT_TYPES)
    lines = [f"{'-' * 20} MODULE APMC {'-' * 20}", f"EXTENDS {spec_module}", ""]
    lines.append("ConstInit ==")
    assigned = 0
    for name, value in cfg.constants.items():
        if name in declared_only or name in WRAPPER_CONSTANTS:
            continue
        literal = _literal(value, CONSTANT_TYPES.get(name), model_values)
        lines.append(f"    /\\ {name} = {literal}")
        assigned += 1
    if not assigned:
        lines.append("    TRUE")
    lines.append("")
    state, action = split_invariants(cfg, operators)
    lines.append("\\* The .cfg's INVARIANTS: predicates of one state.")
    lines.append("ApalacheStateInv ==")
    lines += [f"    /\\ {inv}" for inv in state] or ["    TRUE"]
    lines.append("")
    lines.append("\\* The action invariants XInv behind the .cfg's PROPERTIES XProp == [][XInv]_vars:")
    lines.append("\\* predicates of a step (primed variables).")
    lines.append("ApalacheActionInv ==")
    lines += [f"    /\\ {inv}" for inv in action] or ["    TRUE"]
    lines.append("=" * 54)
    return "\n".join(lines) + "\n"


def split_invariants(cfg: Config, operators: set[str]) -> tuple[list[str], list[str]]:
    """The state invariants (the .cfg's INVARIANTS) and the action invariants (``XInv``
    for each property ``XProp`` the spec defines as ``[][XInv]_vars``). Temporal
    properties without such an action invariant (liveness) are left out."""
    action: list[str] = []
    for prop in cfg.properties:
        name = prop[: -len("Prop")] + "Inv" if prop.endswith("Prop") else ""
        if name in operators:
            action.append(name)
    return list(cfg.invariants), action


def defined_operators(spec: Path) -> set[str]:
    """Names defined at the start of a line (``Name ==``) in the spec's modules."""
    names: set[str] = set()
    for path in spec.glob("*.tla"):
        names |= set(re.findall(r"^(\w+)(?:\(.*?\))?\s*==", path.read_text("utf-8"), re.M))
    return names


def apalache_executable() -> str | None:
    return shutil.which("apalache-mc")


@dataclass
class ApalacheResult:
    verdict: str  # pass | violation | error | not-installed
    explanation: str
    exit_code: int
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    output_tail: str = ""


#: The invariant operators of APMC.tla, one Apalache run each (state, then action).
INVARIANT_OPERATORS = ("ApalacheStateInv", "ApalacheActionInv")


def apalache_command(
    executable: str, *, length: int, workdir: Path, invariant: str = "ApalacheStateInv"
) -> list[str]:
    return [
        executable,
        "check",
        "--init=Init",
        "--next=Next",
        "--cinit=ConstInit",
        f"--inv={invariant}",
        f"--length={length}",
        f"--out-dir={workdir / ('apalache-out-' + invariant)}",
        "APMC.tla",
    ]


def run_apalache(spec: Path, config: str, *, length: int = 10) -> ApalacheResult:
    """Check the model of ``spec/config`` with Apalache, or say it is not installed."""
    executable = apalache_executable()
    if executable is None:
        return ApalacheResult("not-installed", INSTALL_HINT, 3)
    cfg = parse_cfg((spec / config).read_text(encoding="utf-8"), name=config)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="groupspec-apalache-") as scratch:
        work = Path(scratch)
        for path in spec.glob("*.tla"):
            shutil.copy2(path, work / path.name)
        (work / "APMC.tla").write_text(
            wrapper_module(cfg, spec_module="ConsumerGroup", operators=defined_operators(spec)),
            encoding="utf-8",
        )
        results = []
        for invariant in INVARIANT_OPERATORS:
            cmd = apalache_command(executable, length=length, workdir=work, invariant=invariant)
            proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
            results.append((invariant, cmd, proc))
            if proc.returncode != 0:
                break
    seconds = time.monotonic() - start
    invariant, cmd, proc = results[-1]
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
    # Apalache's exit codes: 0 no error, 12 counterexample found, others are failures.
    if proc.returncode == 0:
        return ApalacheResult(
            "pass", f"no error up to length {length} (state and action invariants)", 0,
            seconds, cmd, tail,
        )
    if proc.returncode == 12:
        return ApalacheResult(
            "violation", f"Apalache found a counterexample to {invariant}", 12, seconds, cmd, tail
        )
    return ApalacheResult(
        "error", f"apalache-mc exited with {proc.returncode}", proc.returncode, seconds, cmd, tail
    )
