"""The reachable state graph of a model, as TLC exports it.

TLC writes the graph with ``-dump dot,actionlabels FILE``: one node per distinct state
(its label is the state, printed ``/\\ var = value`` line by line) and one edge per
transition, labelled with the action's name. This module runs TLC that way on a
cross-check model and reads the file back as :class:`StateGraph`: states as raw
variable texts (parsed lazily and cached: most states share their coordinator part) and
edges as (source, action, target).

A node's fingerprint is that of the model's VIEW, which leaves out ``last_action``; so the
label of a node shows one of the ``last_action`` values that reach it, and the cross-check
never reads ``last_action`` from a node: it recovers each step's parameters from the
difference between the two states.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from groupspec.modelcheck.models import spec_dir
from groupspec.modelcheck.tlc import CheckResult, Progress, run_tlc
from groupspec.modelcheck.values import parse_value

_NODE = re.compile(r'^(-?\d+) \[label="(.*)"(?:,style = filled)?\];?$')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+) \[label="([A-Za-z_][A-Za-z0-9_]*)"')
_VAR = re.compile(r"^/\\ ([A-Za-z_][A-Za-z0-9_]*) = ", re.MULTILINE)


class GraphError(RuntimeError):
    """TLC did not produce a state graph (with its verdict and explanation)."""


@dataclass
class StateGraph:
    #: fingerprint -> {variable: printed value}
    states: dict[str, dict[str, str]] = field(default_factory=dict)
    #: (source, action, target), duplicates removed
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    tlc: CheckResult | None = None


def _unescape(label: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(label):
        ch = label[i]
        if ch == "\\" and i + 1 < len(label):
            nxt = label[i + 1]
            out.append({"n": "\n", '"': '"', "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def split_state(text: str) -> dict[str, str]:
    starts = list(_VAR.finditer(text))
    return {
        m.group(1): text[m.end() : (starts[i + 1].start() if i + 1 < len(starts) else len(text))].strip()
        for i, m in enumerate(starts)
    }


def read_dot(path: Path) -> StateGraph:
    g = StateGraph()
    seen: set[tuple[str, str, str]] = set()
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            em = _EDGE.match(line)
            if em:
                e = (em.group(1), em.group(3), em.group(2))
                if e not in seen:
                    seen.add(e)
                    g.edges.append(e)
                continue
            nm = _NODE.match(line)
            if nm and nm.group(1) not in g.states:
                g.states[nm.group(1)] = split_state(_unescape(nm.group(2)))
    return g


def export(
    config: str,
    *,
    workers: int = 2,
    on_progress: Callable[[Progress], None] | None = None,
    timeout_s: float | None = None,
    module: str = "MC",
) -> StateGraph:
    """Run TLC on ``module`` (``MC``, the classic spec's wrapper, unless told) with
    ``config`` (a file in spec/) and read the state graph."""
    with tempfile.TemporaryDirectory(prefix="groupspec-graph-") as scratch:
        work = Path(scratch)
        for f in spec_dir().glob("*.tla"):
            shutil.copy(f, work / f.name)
        shutil.copy(spec_dir() / config, work / config)
        dot = work / "graph.dot"
        result = run_tlc(
            module, config, work, model=config, workers=workers, on_progress=on_progress,
            extra=["-dump", "dot,actionlabels", str(dot)], timeout_s=timeout_s,
        )
        if result.verdict != "pass" or not dot.exists():
            raise GraphError(f"TLC on {config}: {result.verdict}: {result.explanation}")
        graph = read_dot(dot)
        graph.tlc = result
        return graph


class ValueCache:
    """Printed values parsed once: states share most of their text."""

    def __init__(self, convert: Callable[[object], object]) -> None:
        self._cache: dict[str, object] = {}
        self._convert = convert

    def __call__(self, text: str) -> object:
        v = self._cache.get(text)
        if v is None:
            v = self._convert(parse_value(text))
            self._cache[text] = v
        return v
