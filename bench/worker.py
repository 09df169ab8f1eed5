"""One case in its own process: ``python -m bench.worker '<case as JSON>'``.

Prints one JSON object per line as the case goes (``ready``, ``timed``, ``memory``), so the
driver can stop a case that runs past its time cap and still keep what it learned.
"""

from __future__ import annotations

import json
import sys

from bench.common import SIZES, CaseSpec, Event, measure


def _emit(event: Event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    raw = json.loads(argv[0])
    spec = CaseSpec(
        impl=raw["impl"],
        assignor=raw["assignor"],
        size=SIZES[raw["size"]],
        scenario=raw["scenario"],
        runs=raw["runs"],
        repeat_budget_s=raw["repeat_budget_s"],
        memory_limit_s=raw["memory_limit_s"],
    )
    measure(spec, _emit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
