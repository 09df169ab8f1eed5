"""``groupspec conformance --broker kafka|tansu|HOST:PORT``: run the conformance suite's
scripted scenarios with real client libraries through the recorder, validate each trace,
and write a report (docs/conformance.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groupspec.cli.inputs import fail, output_dir

EPILOG = """\
scenarios (in order), --group-protocol classic:
{scenarios}

scenarios (in order), --group-protocol consumer (KIP-848; clients confluent-kafka, java):
{consumer_scenarios}

scenarios (in order), --group-protocol mixed (classic and consumer-protocol members in one
group; clients are pairs CLASSIC+CONSUMER, default {mixed_clients}):
{mixed_scenarios}

output (in --out DIR):
  report.md, report.html   per broker, per client, per scenario: verdict and evidence
  summary.json             the same as data (verdicts, the validator's reports, notes)
  traces/                  one trace per scenario and client (groupspec validate reads them)
  logs/                    each member process's output

exit status:
  0  every scenario conforming with every client
  1  some scenario shows a violation (a finding: the report says where)
  2  no violation, but some verdict inconclusive or some scenario could not be run
"""


def register(sub: Any) -> None:
    from groupspec.conformance.consumer_scenarios import CONSUMER_SCENARIOS
    from groupspec.conformance.drivers import CLIENTS, CONSUMER_CLIENTS
    from groupspec.conformance.mixed_scenarios import MIXED_CLIENTS, MIXED_SCENARIOS
    from groupspec.conformance.scenarios import SCENARIOS

    listing = "\n".join(f"  {s.name:<22}{s.title}" for s in SCENARIOS)
    consumer_listing = "\n".join(f"  {s.name:<22}{s.title}" for s in CONSUMER_SCENARIOS)
    mixed_listing = "\n".join(f"  {s.name:<22}{s.title}" for s in MIXED_SCENARIOS)
    p: argparse.ArgumentParser = sub.add_parser(
        "conformance",
        help="run scripted scenarios with real clients against a broker and report verdicts",
        description=(
            "Start the broker (kafka or tansu, on loopback) or use a running one (HOST:PORT), "
            "put the recorder in front of it, run each scenario with each client library "
            "through the recorder, validate each scenario's trace, and write a report."
        ),
        epilog=EPILOG.format(scenarios=listing, consumer_scenarios=consumer_listing,
                             mixed_scenarios=mixed_listing, mixed_clients=",".join(MIXED_CLIENTS)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--broker", required=True, metavar="kafka|tansu|HOST:PORT",
                   help="kafka or tansu (started and stopped here), or the address of a running broker")
    p.add_argument("--group-protocol", choices=("classic", "consumer", "mixed"), default="classic",
                   help="the group protocol the clients speak: classic (JoinGroup/SyncGroup, the "
                        "default), consumer (KIP-848, group.protocol=consumer), or mixed (members "
                        "of both in one group: online upgrade and downgrade)")
    p.add_argument("--clients", metavar="LIST",
                   help=f"comma-separated client libraries (default {','.join(CLIENTS)}; with "
                        f"--group-protocol consumer {','.join(CONSUMER_CLIENTS)}; with "
                        f"--group-protocol mixed, pairs CLASSIC+CONSUMER, {','.join(MIXED_CLIENTS)})")
    p.add_argument("--scenarios", metavar="LIST",
                   help="comma-separated scenario names (default: all, in the order above)")
    p.add_argument("--out", default="conformance-report", metavar="DIR",
                   help="where the report, summary and traces go (default conformance-report)")
    p.add_argument("--label", metavar="NAME", help="the broker's name in the report (default: --broker)")
    p.add_argument("--sequential", action="store_true",
                   help="run the clients one after the other rather than side by side")
    p.add_argument("--jitter-ms", type=float, default=0.0, metavar="MS",
                   help="delay each request on its way to the broker by up to MS ms at random, so "
                        "the same scenario reaches the broker in other interleavings (default 0: "
                        "none); the traces stay exact, since each request is stamped before the wait")
    p.set_defaults(func=run)



def run(args: argparse.Namespace) -> int:
    from groupspec.brokers import BrokerError
    from groupspec.conformance.consumer_scenarios import CONSUMER_BY_NAME, CONSUMER_SCENARIOS
    from groupspec.conformance.drivers import CLIENTS, CONSUMER_CLIENTS
    from groupspec.conformance.mixed_scenarios import (
        MIXED_BY_NAME,
        MIXED_CLIENTS,
        MIXED_PAIRS,
        MIXED_SCENARIOS,
    )
    from groupspec.conformance.report import write_reports
    from groupspec.conformance.runner import exit_code, run_conformance
    from groupspec.conformance.scenarios import BY_NAME, SCENARIOS

    protocol = args.group_protocol
    known, default, scenario_list, by_name = {
        "classic": (CLIENTS, CLIENTS, SCENARIOS, BY_NAME),
        "consumer": (CONSUMER_CLIENTS, CONSUMER_CLIENTS, CONSUMER_SCENARIOS, CONSUMER_BY_NAME),
        "mixed": (MIXED_PAIRS, MIXED_CLIENTS, MIXED_SCENARIOS, MIXED_BY_NAME),
    }[protocol]
    clients = [c.strip() for c in (args.clients or ",".join(default)).split(",") if c.strip()]
    unknown = [c for c in clients if c not in known]
    if not clients or unknown:
        print(f"error: --clients: unknown {', '.join(unknown) or '(none given)'} "
              f"(known{'' if protocol == 'classic' else ' with --group-protocol ' + protocol}: "
              f"{', '.join(known)})",
              file=sys.stderr)
        return 2
    scenarios = list(scenario_list)
    if args.scenarios:
        names = [n.strip() for n in args.scenarios.split(",") if n.strip()]
        bad = [n for n in names if n not in by_name]
        if bad or not names:
            print(f"error: --scenarios: unknown {', '.join(bad) or '(none given)'} "
                  f"(known: {', '.join(by_name)})", file=sys.stderr)
            return 2
        scenarios = [by_name[n] for n in names]
    if args.broker not in ("kafka", "tansu"):
        from groupspec.recorder import parse_address

        try:
            parse_address(args.broker)
        except ValueError as e:
            print(f"error: --broker: {e} (or kafka, tansu)", file=sys.stderr)
            return 2
    if not (0 <= args.jitter_ms <= 60_000):
        print(f"error: --jitter-ms: {args.jitter_ms} is not between 0 and 60000", file=sys.stderr)
        return 2
    out = output_dir(args.out, "--out")
    try:
        result = run_conformance(args.broker, clients, scenarios, out,
                                 parallel=not args.sequential, label=args.label,
                                 group_protocol=args.group_protocol, jitter_ms=args.jitter_ms)
    except BrokerError as e:
        return fail("--broker", str(e))
    md, page = write_reports(out, [result.to_json()])
    summary = ", ".join(f"{n} {v}" for v, n in sorted(result.summary().items()))
    print(f"{result.broker}: {summary} ({result.duration_s:.0f} s)", file=sys.stderr)
    print(f"report: {md} and {page}; traces in {out / 'traces'}", file=sys.stderr)
    return exit_code(result)
