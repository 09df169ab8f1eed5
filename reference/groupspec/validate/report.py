"""Rendering validation reports: text for a person, JSON for tools."""

from __future__ import annotations

import json
from typing import Any

from groupspec.validate.verdict import FileReport, GroupVerdict, exit_code


def _divergence_lines(label: str, d: Any) -> list[str]:
    client = getattr(d, "side", "broker") == "client"
    return [
        f"    {label} at seq {d.seq} (line {d.line}): {d.api or 'event'}"
        + (f" on connection {d.connection} ({d.client_id})" if d.connection else ""),
        f"      deviating side: {'client ' + repr(d.client_id) + ' on connection ' + d.connection if client else 'broker'}",
        f"      {'client' if client else 'broker'} {'sent' if client else 'answered'}: "
        f"{d.broker_answered.removeprefix('client sent: ')}",
        f"      {'a Kafka client sends' if client else 'protocol allows'}: {' | '.join(d.protocol_allows) or '(see detail)'}",
        f"      rule: {d.rule}: {d.rule_summary}",
        f"      Kafka source: {d.kafka_source}",
        f"      detail: {d.detail}",
    ]


def _findings_lines(g: GroupVerdict) -> list[str]:
    """Every divergence of the group, one block each (the headline one included)."""
    if len(g.divergences) < 2:
        return []
    distinct = len(g.distinct())
    more = " (stopped at the cap)" if g.divergences_truncated else ""
    out = [f"    {len(g.divergences)} divergences, {distinct} distinct{more}:"]
    for d in g.divergences:
        tags = [d.side]
        tags.append("decisive" if d.definite else f"undecided: {d.undecided_because}")
        if d.consequence_of is not None:
            tags.append(f"may follow from seq {d.consequence_of}")
        out += [
            f"    - seq {d.seq} (line {d.line}) {d.api or 'event'}: {d.rule} [{'; '.join(tags)}]",
            f"        broker answered: {d.broker_answered}",
            f"        protocol allows: {' | '.join(d.protocol_allows) or '(see detail)'}",
        ]
    return out


def _group_text(g: GroupVerdict) -> list[str]:
    delay = g.assumed.get("group.initial.rebalance.delay.ms")
    head = f"  group {g.group_id!r}: {g.verdict.upper()} ({g.exchanges} exchanges, {g.records} records"
    head += f", initial delay {delay} ms assumed" if delay is not None else ""
    head += ")"
    out = [head]
    if g.violation is not None:
        out += _divergence_lines("violation", g.violation)
    if g.divergence is not None:
        out += _divergence_lines("diverged", g.divergence)
    for miss in g.missing:
        where = f"line {miss.line}: " if miss.line is not None else ""
        out.append(f"    missing: {where}{miss.what}")
    out += _findings_lines(g)
    if g.search_used:
        out.append(f"    search: {g.search_used} of {g.search_budget} alternatives used (most for one divergence)")
    for note in g.notes[:10]:
        out.append(f"    note: {note}")
    if len(g.notes) > 10:
        out.append(f"    note: ... and {len(g.notes) - 10} more")
    return out


def _percent(done: int, total: int) -> str:
    if total == 0 or done == total:
        return "100%"
    return f"{min(99.9, 100 * done / total):.1f}%"


def render_text(reports: list[FileReport]) -> str:
    lines: list[str] = []
    for r in reports:
        lines.append(f"{r.source}: {r.worst()} ({r.events} events, {len(r.groups)} group(s))")
        if r.error:
            lines.append(f"  error: {r.error}")
        for p in r.problems[:50]:
            lines.append(f"  {p.kind} at line {p.line}: {p.message}")
        if len(r.problems) > 50:
            lines.append(f"  ... and {len(r.problems) - 50} more problems")
        for g in r.groups:
            lines += _group_text(g)
    code = exit_code(reports)
    counts: dict[str, int] = {}
    for r in reports:
        for g in r.groups:
            counts[g.verdict] = counts.get(g.verdict, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no groups"
    lines.append(f"summary: {summary}; exit code {code}")
    cover: dict[str, list[int]] = {}
    for r in reports:
        for g in r.groups:
            for name, (done, total) in g.coverage.items():
                c = cover.setdefault(name, [0, 0])
                c[0] += done
                c[1] += total
    if cover:
        lines.append("coverage: " + ", ".join(
            f"{name} {_percent(done, total)} ({done}/{total})" for name, (done, total) in cover.items()))
    return encodable("\n".join(lines) + "\n")


def encodable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (a lone surrogate, which a trace's JSON may
    hold as ``"\\ud800"`` in an id) as its escape, so that printing it cannot fail."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def render_json(reports: list[FileReport]) -> str:
    return json.dumps(
        {"exit_code": exit_code(reports), "files": [r.to_json() for r in reports]}, indent=2
    ) + "\n"
