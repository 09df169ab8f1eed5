"""``groupspec validate TRACE...``: replay each group of each trace on the reference
coordinator and print a verdict per group (docs/validator.md)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from groupspec.cli.inputs import broker_config_arg, fail, int_in, output_file
from groupspec.coordinator.config import (
    BROKER_SETTINGS,
    GROUP_CONFIG_NAMES,
    MIGRATION_POLICIES,
    GroupConfig,
)
from groupspec.validate import ReplayConfig, TraceInputError, exit_code, validate_path
from groupspec.validate.report import render_json, render_text
from groupspec.validate.validator import with_command_line
from groupspec.validate.verdict import FileReport

#: the largest --slack-ms / --initial-delay-ms: an int32 of milliseconds, as Kafka's configs
MAX_MS = 2**31 - 1

EPILOG = """\
verdicts (per group):
  conforming    the reference coordinator answers every request as the broker did, in
                some order and timing the recorded intervals allow
  violation     the first divergent event (seq and line), what the broker answered, what
                the protocol allows, the rule and the Kafka source it comes from
  inconclusive  the events do not decide: what is missing, with line numbers

exit status:
  0  every group of every trace conforming, and no bad input
  1  a violation in some group
  2  no violation, but some group inconclusive, or bad input (unreadable file or lines)

TRACE is JSON Lines (trace format v1, as `groupspec record` and `groupspec simulate
--trace` write) or its Parquet form; the format is told from the file's content.
"""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "validate",
        help="validate traces against the protocol: a verdict per group",
        description=(
            "Replay each group's wire exchanges on the reference coordinator, allowing for "
            "broker-chosen member ids, the orders the time intervals allow and leader-chosen "
            "assignments, and check what needs no replay (stale commits accepted, one owner "
            "per partition per generation, the assignor contract)."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (JSON Lines or Parquet)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--report", metavar="FILE", help="also write the report to FILE (in --format)")
    p.add_argument("--slack-ms", type=int_in(0, MAX_MS), default=ReplayConfig.slack_ms, metavar="MS",
                   help=f"how far timers may be off the recorded times (default {ReplayConfig.slack_ms})")
    p.add_argument("--initial-delay-ms", type=int_in(0, MAX_MS), action="append", metavar="MS",
                   help="group.initial.rebalance.delay.ms of the broker (repeatable; default: try 3000, then 0)")
    p.add_argument("--max-divergences", type=int_in(1, 1_000_000), default=ReplayConfig.max_divergences, metavar="N",
                   help="divergences listed per group: the replay resynchronises after each and goes on "
                        f"judging, up to N (default {ReplayConfig.max_divergences})")
    p.add_argument("--consumer-session-timeout-ms", type=int_in(1, MAX_MS), metavar="MS",
                   help="group.consumer.session.timeout.ms of the broker, for KIP-848 groups (default: "
                        "the trace header's, else Kafka's 45000)")
    p.add_argument("--consumer-heartbeat-interval-ms", type=int_in(1, MAX_MS), metavar="MS",
                   help="group.consumer.heartbeat.interval.ms of the broker (default: the trace "
                        "header's, else Kafka's 5000); once known, the interval accepted heartbeats "
                        "answer is judged")
    p.add_argument("--consumer-migration-policy", type=str.lower, choices=tuple(MIGRATION_POLICIES),
                   metavar="POLICY",
                   help="group.consumer.migration.policy of the broker: "
                        f"{', '.join(MIGRATION_POLICIES)} (default Kafka's, bidirectional). "
                        "Online upgrades and downgrades are judged as Kafka makes them")
    p.add_argument("--broker-config", type=broker_config_arg, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="a broker setting, by Kafka's name, that the wire does not show (repeatable): "
                        f"{', '.join(BROKER_SETTINGS)}. Default: the trace header's, else Kafka's "
                        "defaults; the flags above win over it")
    p.add_argument("--group-config", type=group_config_arg, action="append", default=[],
                   metavar="GROUP:NAME=VALUE[,NAME=VALUE]",
                   help="a group's dynamic settings on the broker (kafka-configs --entity-type "
                        f"groups): {', '.join(GROUP_CONFIG_NAMES)}; repeatable. A KIP-848 group's "
                        "heartbeat interval and session timeout are the group's, else the broker's")
    p.set_defaults(func=run)


def group_config_arg(text: str) -> tuple[str, dict[str, str]]:
    """An argparse type: ``GROUP:NAME=VALUE[,NAME=VALUE]`` (the group id is what comes before
    the last colon)."""
    group_id, colon, settings = text.rpartition(":")
    if not colon or not group_id:
        raise argparse.ArgumentTypeError(f"expected GROUP:NAME=VALUE, got {text!r}")
    out: dict[str, str] = {}
    for item in settings.split(","):
        name, eq, value = item.partition("=")
        if not eq:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE after {group_id!r}:, got {item!r}")
        out[name.strip()] = value.strip()
    try:
        GroupConfig.parse(out)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return group_id, out


group_config_arg.__name__ = "group config"


def run(args: argparse.Namespace) -> int:
    delays = tuple(args.initial_delay_ms) if args.initial_delay_ms else ReplayConfig.initial_delays_ms
    if args.report:  # before the work
        output_file(args.report, "--report")
    try:
        base = with_command_line(ReplayConfig(initial_delays_ms=delays), dict(args.broker_config),
                                 bool(args.initial_delay_ms))
    except ValueError as e:
        return fail("--broker-config", str(e))
    delays = base.initial_delays_ms
    # (the session timeout and the heartbeat interval set together: each is checked against
    # the other, GroupCoordinatorConfig's interval < session)
    kip848: dict[str, int] = {}
    if args.consumer_session_timeout_ms is not None:
        kip848["consumer_group_session_timeout_ms"] = args.consumer_session_timeout_ms
    if args.consumer_heartbeat_interval_ms is not None:
        kip848["consumer_group_heartbeat_interval_ms"] = args.consumer_heartbeat_interval_ms
        base = dataclasses.replace(base, heartbeat_interval_known=True)
    try:
        coordinator = dataclasses.replace(base.coordinator, **kip848)  # type: ignore[arg-type]
    except ValueError as e:
        text = str(e).replace("consumer_group_heartbeat_interval_ms", "--consumer-heartbeat-interval-ms")
        text = text.replace("consumer_group_session_timeout_ms", "--consumer-session-timeout-ms")
        return fail("--consumer-heartbeat-interval-ms", text)
    if args.consumer_migration_policy is not None:
        coordinator = dataclasses.replace(coordinator,
                                          consumer_group_migration_policy=args.consumer_migration_policy)
    settings: dict[str, dict[str, str]] = {}
    for group_id, values in args.group_config:
        settings.setdefault(group_id, {}).update(values)
    try:
        for group_id, values in settings.items():
            # (a group's session must outlast the heartbeat interval it sets)
            coordinator = coordinator.with_group_config(group_id, GroupConfig.parse(values))
    except ValueError as e:
        return fail("--group-config", str(e))
    config = dataclasses.replace(base, slack_ms=args.slack_ms, max_divergences=args.max_divergences,
                                 coordinator=coordinator)
    reports: list[FileReport] = []
    for path in args.traces:
        try:
            reports.append(validate_path(path, config))
        except TraceInputError as e:
            print(f"error: {e}", file=sys.stderr)  # and in the report, as the file's verdict
            reports.append(FileReport(path, 0, (), (), error=str(e)))
    text = render_json(reports) if args.format == "json" else render_text(reports)
    sys.stdout.write(text)
    if args.report:
        try:
            with open(args.report, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            return fail("--report", f"cannot write {args.report}: {e.strerror or e}")
    return exit_code(reports)
