"""Counterexamples as ITF JSON, the Informal Trace Format that Apalache writes and Quint,
itf-py and the Apalache tool chain read (https://apalache-mc.org/docs/adr/015adr-trace.html).

Encoding of TLC values: integers as ``{"#bigint": "n"}``, strings and booleans as
themselves, records as objects, sets as ``{"#set": [...]}``, functions as
``{"#map": [[k, v], ...]}``, sequences and tuples as lists, and model values (uninterpreted
constants such as ``c1``) as their names. The ``#meta`` of the trace names the model, the
violated operator and, for a lasso, the loop index (0-based, ITF's convention).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupspec.modelcheck.tlc import Violation
from groupspec.modelcheck.values import Function, Value


def itf_value(value: Value) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Function):
        return {"#map": [[itf_value(k), itf_value(v)] for k, v in value.items()]}
    if isinstance(value, dict):
        return {k: itf_value(v) for k, v in value.items()}
    if isinstance(value, frozenset):
        return {"#set": sorted((itf_value(v) for v in value), key=json.dumps)}
    return [itf_value(v) for v in value]


def itf_trace(violation: Violation, *, model: str, source: str) -> dict[str, Any]:
    """The counterexample of ``violation`` as an ITF object."""
    names = sorted({name for state in violation.trace for name in state.values})
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": source,
        "description": f"counterexample of {model}: {violation.name or violation.kind} violated",
        "violated": violation.name,
        "violation_kind": violation.kind,
    }
    if violation.loop_to is not None:
        meta["loop"] = violation.loop_to - 1
    states = []
    for i, state in enumerate(violation.trace):
        item: dict[str, Any] = {"#meta": {"index": i, "action": state.action}}
        item.update({name: itf_value(v) for name, v in state.values.items()})
        states.append(item)
    return {"#meta": meta, "vars": names, "states": states}


def write_itf(violation: Violation, path: Path, *, model: str, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(itf_trace(violation, model=model, source=source), indent=1) + "\n",
        encoding="utf-8",
    )
