"""``groupspec simulate [SCENARIO]``: run the discrete-event simulator and print the
timeline and the invariant verdicts; the exit code is 1 when an invariant fails.

SCENARIO is a bundled scenario name (``--list`` shows them; ``default`` when omitted) or
a path to a scenario JSON file (format: :mod:`groupspec.sim.scenario`).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

from groupspec.cli.inputs import (
    InputError,
    int_in,
    output_file,
    read_text,
    report,
)
from groupspec.sim.render import render_text, result_json, write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import (
    FAULT_KINDS,
    MAX_MEMBERS,
    MAX_SIMULATED_MS,
    ScenarioError,
    apply_overrides,
    load_scenario_text,
    parse_fault_spec,
)


def bundled_scenarios() -> dict[str, str]:
    """Bundled scenario name -> its JSON text."""
    root = files("groupspec.sim").joinpath("scenarios")
    return {
        p.name.removesuffix(".json"): p.read_text(encoding="utf-8")
        for p in sorted(root.iterdir(), key=lambda p: p.name)
        if p.name.endswith(".json")
    }


def _fault_help() -> str:
    lines = [
        "faults (--fault KIND@MS[:key=value,...], repeatable; times in simulated ms):",
    ]
    for kind, (keys, what) in FAULT_KINDS.items():
        args = ",".join(f"{k}=..." for k in keys)
        lines.append(f"  {kind}@MS{':' + args if args else ''}")
        lines.append(f"      {what}")
    lines += [
        "",
        "examples:",
        "  groupspec simulate",
        "  groupspec simulate --protocol eager --fault pause@40000:member=c1,duration_ms=15000",
        "  groupspec simulate --no-faults --fault failover@50000 --trace run.jsonl",
        "",
        "exit status: 0 when every verdict passes, 1 when an invariant fails, 2 on bad input.",
    ]
    return "\n".join(lines)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "simulate",
        help="simulate a consumer group under faults; print the timeline and invariant verdicts",
        description=(
            "Run the reference coordinator, N consumers, a network and a fault schedule on a "
            "logical clock; print a timeline, the invariant verdicts (groupspec.invariants) "
            "and rebalance metrics."
        ),
        epilog=_fault_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", nargs="?", default="default", metavar="SCENARIO",
                   help="bundled scenario name or path to a scenario JSON file (default: default)")
    p.add_argument("--list", action="store_true", help="list the bundled scenarios and exit")
    p.add_argument("--members", type=int_in(1, MAX_MEMBERS), metavar="N",
                   help="keep the first N members, or add dynamic members started 200 ms apart")
    p.add_argument("--protocol", choices=("eager", "cooperative"),
                   help="eager (range) or cooperative (cooperative-sticky) for every member")
    p.add_argument("--assignor", metavar="NAME",
                   help="range, roundrobin, sticky or cooperative-sticky for every member")
    p.add_argument("--static", action="store_true", help="every member gets a group.instance.id")
    p.add_argument("--group-protocol", choices=("classic", "consumer"),
                   help="the group protocol of every member: classic (JoinGroup/SyncGroup) or "
                        "consumer (KIP-848, ConsumerGroupHeartbeat, assigned by the broker)")
    p.add_argument("--seed", type=int_in(-(2**63), 2**63 - 1), metavar="N", help="seed of the network's randomness (loss)")
    p.add_argument("--until", type=int_in(0, MAX_SIMULATED_MS), metavar="MS",
                   help=f"stop the simulated clock at MS (at most {MAX_SIMULATED_MS:,}, seven days)")
    p.add_argument("--fault", action="append", default=[], metavar="SPEC",
                   help="add a fault KIND@MS[:key=value,...] (see below); repeatable")
    p.add_argument("--no-faults", action="store_true", help="drop the scenario's own faults")
    p.add_argument("--trace", metavar="FILE", help="write the trace (JSON Lines, format v1) to FILE")
    p.add_argument("--json", action="store_true", help="print timeline, verdicts and metrics as JSON")
    p.add_argument("--progress", action="store_true",
                   help="report simulated time on stderr (on by default when stderr is a terminal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    bundled = bundled_scenarios()
    if args.list:
        for name, text in bundled.items():
            desc = json.loads(text).get("description", "")
            print(f"{name:<20} {desc}")
        return 0
    if args.trace:  # before the run, so that a bad path costs nothing
        output_file(args.trace, "--trace")
    if args.scenario in bundled:
        source, text = f"{args.scenario}.json", bundled[args.scenario]
    else:
        path = Path(args.scenario)
        if not path.exists():
            raise InputError("SCENARIO", f"{args.scenario!r} is neither a bundled scenario "
                                         f"({', '.join(bundled)}) nor a file")
        source, text = str(path), read_text(args.scenario)
    fault_places: dict[int, str] = {}
    try:
        faults = [parse_fault_spec(spec, f"--fault[{i}]") for i, spec in enumerate(args.fault)]
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # load_scenario_text reports the place
        if data is not None:
            data = apply_overrides(
                data, members=args.members, protocol=args.protocol, assignor=args.assignor,
                static=args.static, seed=args.seed, until_ms=args.until,
                faults=faults, replace_faults=args.no_faults, group_protocol=args.group_protocol,
            )
            text = json.dumps(data)
            # the faults given here are the last ones: errors in them name --fault, not the file
            n = len(data.get("faults", [])) if isinstance(data, dict) and isinstance(data.get("faults"), list) else 0
            fault_places = {n - len(faults) + i: f"--fault[{i}]" for i in range(len(faults))}
        scenario = load_scenario_text(text, source, fault_places)
    except ScenarioError as e:
        return report(e)
    show = args.progress or sys.stderr.isatty()

    def progress(now: int, until: int) -> None:
        print(f"\rsimulated {now / 1000:.0f} s of {until / 1000:.0f} s", end="", file=sys.stderr, flush=True)

    result = simulate(scenario, progress if show else None)
    if show:
        print(file=sys.stderr)
    if args.trace:
        with open(args.trace, "w", encoding="utf-8") as fh:
            n = write_trace(result, fh)
        print(f"trace: {n} events written to {args.trace}", file=sys.stderr)
    if args.json:
        print(json.dumps(result_json(result), indent=2))
    else:
        sys.stdout.write(render_text(result))
    return 0 if result.ok else 1
