"""``groupspec states``: the group-state transition table, as text, Markdown or Graphviz.

Drawn from :data:`groupspec.protocol.group_state.VALID_PREVIOUS_STATES`, the same table every
transition of the reference coordinator is checked against.
"""

from __future__ import annotations

import argparse
from typing import Any

from groupspec.protocol.group_state import VALID_PREVIOUS_STATES, GroupState, to_dot


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "states",
        help="print the group-state transition table (text, Markdown or Graphviz dot)",
        description="Print Kafka's classic group states and their valid previous states.",
    )
    p.add_argument("--format", choices=("text", "markdown", "dot"), default="text")
    p.set_defaults(func=run)


def render(fmt: str) -> str:
    if fmt == "dot":
        return to_dot()
    rows = [
        (target.value, ", ".join(s.value for s in GroupState if s in VALID_PREVIOUS_STATES[target]))
        for target in GroupState
    ]
    if fmt == "markdown":
        lines = ["| target | valid previous states |", "|---|---|"]
        lines += [f"| {t} | {p} |" for t, p in rows]
        return "\n".join(lines)
    width = max(len(t) for t, _ in rows)
    return "\n".join(f"{t.ljust(width)}  <-  {p}" for t, p in rows)


def run(args: argparse.Namespace) -> int:
    print(render(args.format))
    return 0
