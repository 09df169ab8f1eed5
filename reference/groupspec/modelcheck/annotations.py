"""Apalache's type annotations in the spec, checked without Apalache.

Apalache's type checker (Snowcat) needs an ``\\* @type: ...;`` comment on every CONSTANT
and VARIABLE, and on operators whose parameter types it cannot infer; TLC ignores the
comments. So that the spec stays checkable by Apalache on machines where Apalache is
not installed, this module finds:

- every CONSTANT and VARIABLE declared without an ``@type`` comment right above it;
- every operator with parameters that an invariant or property uses (directly or
  through other operators) and that has no ``@type`` comment right above its definition.

It is a lexical check (comments, declarations and definitions at the start of a line),
which is how the spec is written; SANY, TLC's parser, checks the syntax separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_TYPE = re.compile(r"\\\*\s*@type:")
_DEF = re.compile(r"^([A-Za-z_]\w*)\s*(\(([^)]*)\))?\s*==")
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Missing:
    module: str
    line: int
    name: str
    kind: str  # constant | variable | operator

    def __str__(self) -> str:
        return f"{self.module}.tla:{self.line}: {self.kind} {self.name} has no @type annotation"


@dataclass
class Definition:
    module: str
    line: int
    name: str
    has_params: bool
    annotated: bool
    body: str


def _strip_comment(line: str) -> str:
    return line.split("\\*", 1)[0]


def _annotated_above(lines: list[str], index: int) -> bool:
    """Whether the comment block right above ``lines[index]`` holds an @type."""
    i = index - 1
    while i >= 0 and lines[i].strip().startswith(("\\*", "(*")):
        if _TYPE.search(lines[i]):
            return True
        i -= 1
    return False


def declarations(module: str, text: str) -> tuple[list[Missing], list[Definition]]:
    """The unannotated CONSTANTs and VARIABLEs of a module, and its definitions."""
    lines = text.splitlines()
    missing: list[Missing] = []
    defs: list[Definition] = []
    section = ""
    for i, raw in enumerate(lines):
        code = _strip_comment(raw).rstrip()
        stripped = code.strip()
        if re.match(r"^(CONSTANTS?|VARIABLES?)\b", code):
            section = "constant" if code.startswith("CONSTANT") else "variable"
            stripped = re.sub(r"^(CONSTANTS?|VARIABLES?)", "", stripped).strip()
        elif code and not code[0].isspace():
            section = ""
        if section and stripped:
            for name in (n.strip() for n in stripped.split(",")):
                if name and _IDENT.fullmatch(name) and not _annotated_above(lines, i):
                    missing.append(Missing(module, i + 1, name, section))
        m = _DEF.match(code)
        if m and not section:
            body_lines = [code[m.end() :]]
            j = i + 1
            while j < len(lines) and (
                not lines[j].strip() or lines[j][0].isspace() or lines[j].startswith("\\*")
            ):
                body_lines.append(_strip_comment(lines[j]))
                j += 1
            defs.append(
                Definition(
                    module,
                    i + 1,
                    m.group(1),
                    bool(m.group(2)),
                    _annotated_above(lines, i),
                    "\n".join(body_lines),
                )
            )
    return missing, defs


def missing_annotations(spec: Path, roots: list[str], modules: list[str]) -> list[Missing]:
    """Every missing annotation in ``modules`` (names without .tla) of ``spec``, for
    operators reachable from ``roots`` (the invariants and properties)."""
    missing: list[Missing] = []
    defs: dict[str, Definition] = {}
    for module in modules:
        text = (spec / f"{module}.tla").read_text(encoding="utf-8")
        found, module_defs = declarations(module, text)
        missing += found
        for d in module_defs:
            defs.setdefault(d.name, d)
    seen: set[str] = set()
    todo = [r for r in roots if r in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        d = defs[name]
        if d.has_params and not d.annotated:
            missing.append(Missing(d.module, d.line, name, "operator"))
        todo += [n for n in set(_IDENT.findall(d.body)) if n in defs and n not in seen]
    return sorted(missing, key=lambda m: (m.module, m.line))
