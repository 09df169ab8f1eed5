"""Rendering a simulation result for people (timeline, verdicts, metrics) and as JSON.

Pure functions from a :class:`SimulationResult` to strings or JSON-ready values; the CLI
prints them. :func:`write_trace` is the one writer: it takes a text stream that the caller
opened (trace format v1, :mod:`groupspec.trace.jsonl`).
"""

from __future__ import annotations

import re
from typing import IO, Any

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.sim.runner import SimulationResult
from groupspec.trace.jsonl import TraceWriter

_COUNTED_ID = re.compile(r"^(?P<prefix>.+)-(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def broker_config(c: CoordinatorConfig) -> dict[str, int]:
    """The broker settings a trace header carries (trace v1.2), by Kafka's names."""
    return {
        "group.consumer.session.timeout.ms": c.consumer_group_session_timeout_ms,
        "group.consumer.heartbeat.interval.ms": c.consumer_group_heartbeat_interval_ms,
    }


def short_member_id(member_id: str) -> str:
    """``c2-00000000-0000-0000-0000-000000000002`` -> ``c2#2`` (the reference coordinator's
    counting ids); other ids are returned unchanged."""
    mt = _COUNTED_ID.match(member_id)
    if mt is None:
        return member_id
    n = int(mt["uuid"].replace("-", ""), 16)
    return f"{mt['prefix']}#{n}" if n < 1_000_000 else member_id


def shorten_ids(text: str) -> str:
    return re.sub(r"\S+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", lambda mt: short_member_id(mt[0]), text)


def timeline_lines(result: SimulationResult) -> list[str]:
    """One line per meaningful event: time (seconds), who, what."""
    return [f"{e.at_ms / 1000:9.3f}s  {e.who:<12} {shorten_ids(e.what)}" for e in result.timeline]


def verdict_lines(result: SimulationResult) -> list[str]:
    out = ["verdicts:"]
    for v in result.verdicts:
        out.append(f"  {'PASS' if v.ok else 'FAIL'}  {v.name:<26} {shorten_ids(v.detail)}")
    return out


def metric_lines(result: SimulationResult) -> list[str]:
    mt = result.metrics
    return [
        "metrics:",
        f"  rebalances {int(mt['rebalances'])} (final generation {int(mt['final_generation'])}),"
        f" {int(mt['rebalance_ms_total'])} ms in rebalances,"
        f" {int(mt['partitions_moved'])} partition moves",
        f"  partition-time without an owner {int(mt['partition_unowned_ms'])} ms,"
        f" records processed twice {int(mt['records_processed_twice'])}",
    ]


def render_text(result: SimulationResult) -> str:
    sc = result.scenario
    head = [f"scenario {sc.name}: {sc.description}" if sc.description else f"scenario {sc.name}", ""]
    body = [*timeline_lines(result), "", *verdict_lines(result), "", *metric_lines(result)]
    status = "all invariants hold" if result.ok else "INVARIANT VIOLATED"
    return "\n".join([*head, *body, "", status]) + "\n"


def result_json(result: SimulationResult) -> dict[str, Any]:
    return {
        "scenario": result.scenario.name,
        "ok": result.ok,
        "timeline": [{"at_ms": e.at_ms, "who": e.who, "what": e.what} for e in result.timeline],
        "verdicts": [{"name": v.name, "ok": v.ok, "detail": v.detail} for v in result.verdicts],
        "metrics": result.metrics,
    }


def write_trace(result: SimulationResult, stream: IO[str]) -> int:
    """Write the run as a trace (format v1: header, exchanges, records, expiries) to an
    open text stream; returns the number of events written after the header."""
    writer = TraceWriter(stream, source="simulator", note=f"scenario {result.scenario.name}, seed {result.scenario.seed}",
                         broker_config=broker_config(result.scenario.coordinator))
    for event in result.trace:
        writer.write(event)
    return len(result.trace)
