"""The findings of a conformance result, and a timeline of the trace around each.

What is read from a verdict (``FileReport.to_json``) is kept narrow, so that the report
does not depend on the rest of the validator's output:

- per group: ``group_id``, ``verdict``, ``missing`` (``line``, ``what``), and its
  divergences: ``divergences`` (a list, when the validator lists several per group), else
  the one in ``violation`` (decisive) or ``divergence`` (where an inconclusive replay
  stopped);
- per divergence: ``seq``, ``line``, ``api``, ``connection``, ``client_id``,
  ``broker_answered``, ``protocol_allows`` (a list of answers), ``rule``, ``rule_summary``,
  ``kafka_source``, ``detail``, and, optionally: ``definite`` (decisive on its own; when
  absent, the group's verdict says), ``side`` (``broker`` or ``client``: who deviated),
  ``consequence_of`` (the seq of an earlier divergence it may be a consequence of) or
  ``consequence_of_earlier`` (a flag without the seq).

A :class:`Finding` is one divergence, with the fields where the broker's answer differs from
the nearest answer the protocol allows, and a :class:`Timeline`: the group's requests and
answers around it, at times in ms from the scenario's first recorded event, one column per
member (client id), so the members' views stand side by side. The same divergence listed
twice (same group, seq and rule) is one finding.

Pure: the trace comes in as its lines; reading files is the caller's (runner, report).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from groupspec.protocol import messages as m
from groupspec.trace.events import FetchEvent, WireExchange
from groupspec.trace.jsonl import read_events
from groupspec.validate.compare import summary

#: rows of the timeline kept before and after the finding's own row
BEFORE, AFTER = 8, 4

_NO_ANSWER = "no answer yet"


@dataclass(frozen=True)
class Field:
    """One token of an answer (``generation=0``, ``NONE``) and whether it differs from the
    nearest answer the protocol allows."""

    text: str
    differs: bool = False


@dataclass(frozen=True)
class Row:
    """One event of the timeline: a request sent or its answer received, by one member."""

    t_ms: int
    seq: int
    member: str
    kind: str  # "request" | "answer"
    fields: tuple[Field, ...]
    #: this row is the finding's answer
    finding: bool = False


@dataclass(frozen=True)
class Timeline:
    members: tuple[str, ...]
    rows: tuple[Row, ...]
    #: events of the group left out before and after the window
    earlier: int = 0
    later: int = 0


@dataclass(frozen=True)
class Finding:
    group_id: str
    #: "violation" (decisive) or "divergence" (where an inconclusive replay stopped)
    kind: str
    seq: int
    line: int
    api: str
    connection: str
    client_id: str
    broker_answered: str
    protocol_allows: tuple[str, ...]
    rule: str
    rule_summary: str
    kafka_source: str
    detail: str
    consequence_of_earlier: bool = False
    #: the seq of the earlier divergence it may be a consequence of, when the validator says
    consequence_of: int | None = None
    #: who deviated: "broker" or "client"
    side: str = "broker"
    #: the broker's answer split into fields, the differing ones marked
    answered_fields: tuple[Field, ...] = ()
    #: the allowed answer nearest to the broker's
    nearest_allowed: str = ""
    #: "generation: 0 (allowed 1)", one per differing field
    differences: tuple[str, ...] = ()
    timeline: Timeline | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def signature(self) -> tuple[str, str, tuple[str, ...]]:
        """What makes two findings the same deviation: rule, API and differing field names."""
        names = tuple(sorted({d.split(":", 1)[0] for d in self.differences}))
        return (self.rule, self.api, names)


# ------------------------------------------------------------------- fields and diffs
def split_fields(answer: str) -> list[str]:
    """``JoinGroup NONE generation=0 members=[a, b]`` -> tokens, split at spaces outside
    brackets, trailing commas dropped."""
    out: list[str] = []
    depth, cur = 0, ""
    for ch in answer:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth = max(depth - 1, 0)
        if ch == " " and depth == 0:
            if cur:
                out.append(cur.rstrip(","))
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur.rstrip(","))
    return [t for t in out if t]


def _key(token: str, i: int) -> str:
    return token.split("=", 1)[0] if "=" in token else f"#{i}"


def _value(token: str) -> str:
    return token.split("=", 1)[1] if "=" in token else token


def diff_fields(answered: str, allowed: Sequence[str]) -> tuple[list[Field], str, list[str]]:
    """The broker's answer as fields, each marked when it differs from the nearest allowed
    answer (the one with the fewest differing fields); that answer; and the differences in
    words. An answer where the protocol allows only none yet differs as a whole."""
    tokens = split_fields(answered)
    answers = [a for a in allowed if not a.startswith(_NO_ANSWER)]
    if not answers:
        return ([Field(t, True) for t in tokens], allowed[0] if allowed else "",
                ["answered: the protocol allows no answer yet"])
    best: tuple[int, str, list[bool], list[str]] | None = None
    for a in answers:
        theirs = {_key(t, i): _value(t) for i, t in enumerate(split_fields(a))}
        marks, words = [], []
        for i, t in enumerate(tokens):
            k = _key(t, i)
            differs = theirs.get(k) != _value(t)
            marks.append(differs)
            if differs:
                name = k if not k.startswith("#") else ("api" if i == 0 else "error" if i == 1 else f"field {i}")
                words.append(f"{name}: {_value(t)} (allowed: {theirs.get(k, 'absent')})")
        mine = {_key(t, i) for i, t in enumerate(tokens)}
        words += [f"{k}: absent (allowed: {v})" for k, v in theirs.items() if k not in mine and not k.startswith("#")]
        score = len(words)
        if best is None or score < best[0]:
            best = (score, a, marks, words)
    assert best is not None
    _, nearest, marks, words = best
    return [Field(t, d) for t, d in zip(tokens, marks, strict=True)], nearest, words


# ------------------------------------------------------------------- from the verdict
def _divergences(group: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if group.get("divergences"):
        decisive = group.get("verdict") == "violation"
        return [("violation" if d.get("definite", decisive) else "divergence", d)
                for d in group["divergences"]]
    if group.get("violation"):
        return [("violation", group["violation"])]
    if group.get("divergence"):
        return [("divergence", group["divergence"])]
    return []


def findings_of(validation: dict[str, Any], trace_lines: Sequence[str] | None = None) -> list[Finding]:
    """Every distinct divergence of a validator report, in trace order, each with its
    differing fields and (given the trace's lines) its timeline."""
    exchanges, fetches = timeline_events_of(trace_lines) if trace_lines is not None else (None, {})
    seen: set[tuple[str, int, str]] = set()
    out: list[Finding] = []
    for g in validation.get("groups", []):
        if g.get("verdict") == "conforming":
            continue
        for kind, d in _divergences(g):
            key = (g["group_id"], int(d["seq"]), str(d["rule"]))
            if key in seen:
                continue
            seen.add(key)
            allows = tuple(str(a) for a in d.get("protocol_allows", ()))
            fields, nearest, words = diff_fields(str(d["broker_answered"]), allows)
            f = Finding(
                group_id=g["group_id"], kind=kind, seq=int(d["seq"]), line=int(d["line"]),
                api=str(d.get("api") or ""), connection=str(d.get("connection") or ""),
                client_id=str(d.get("client_id") or ""), broker_answered=str(d["broker_answered"]),
                protocol_allows=allows, rule=str(d["rule"]), rule_summary=str(d.get("rule_summary") or ""),
                kafka_source=str(d.get("kafka_source") or ""), detail=str(d.get("detail") or ""),
                consequence_of_earlier=bool(d.get("consequence_of_earlier", False)
                                            or d.get("consequence_of") is not None),
                consequence_of=int(d["consequence_of"]) if d.get("consequence_of") is not None else None,
                side=str(d.get("side") or "broker"),
                answered_fields=tuple(fields), nearest_allowed=nearest, differences=tuple(words),
            )
            if exchanges is not None:
                f = _with_timeline(f, exchanges, fetches.get(f.seq))
            out.append(f)
    return sorted(out, key=lambda f: (f.seq, f.group_id))


# ------------------------------------------------------------------- timeline
def timeline_events_of(lines: Iterable[str]) -> tuple[list[WireExchange], dict[int, FetchEvent]]:
    """The trace's exchanges, and its Fetch events by seq (a client rule's finding may be one
    of them, ClientFetchesOwnedOnly, and its timeline is placed there), in one reading
    (lines that do not parse are the validator's business)."""
    exchanges: list[WireExchange] = []
    fetches: dict[int, FetchEvent] = {}
    for e in read_events(lines):
        if isinstance(e, WireExchange):
            exchanges.append(e)
        elif isinstance(e, FetchEvent):
            fetches[e.seq] = e
    return exchanges, fetches


def _fetch_text(e: FetchEvent) -> str:
    return "Fetch " + " ".join(f"{p.topic}-{p.partition}@{p.fetch_offset}" for p in e.partitions)


_UUID = re.compile(r"-([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def short_ids(text: str) -> str:
    """Member ids end in a UUID; its first 8 digits tell them apart in a timeline."""
    return _UUID.sub(r"-\1…", text)


def request_text(req: m.Request, api: str) -> str:
    parts = [api]
    for name in ("member_id", "generation_id", "group_instance_id"):
        v = getattr(req, name, None)
        if name == "member_id" and v == "":
            parts.append("(no member id yet)")
        elif v is not None and v != "":
            parts.append(f"{name.removesuffix('_id') if name == 'generation_id' else name}={v}")
    if isinstance(req, m.LeaveGroupRequest):
        ids = [x.member_id for x in req.members]
        if ids:
            parts.append(f"members=[{', '.join(ids)}]")
    if isinstance(req, m.OffsetCommitRequest):
        parts.append(f"partitions={len(req.partitions)}")
    return " ".join(parts)


def _with_timeline(f: Finding, exchanges: list[WireExchange], fetch: FetchEvent | None = None) -> Finding:
    """``fetch``: the Fetch event the finding is about (a client rule's), shown among the
    group's exchanges at its own time; without it a finding on a Fetch was drawn at the
    timeline's last event."""
    mine: list[WireExchange | FetchEvent] = [e for e in exchanges if e.group_id == f.group_id]
    if not exchanges or not mine:
        return f
    if fetch is not None and not any(e.seq == f.seq for e in mine):
        mine.append(fetch)
    start = min(e.sent_ms for e in exchanges)
    events: list[tuple[float, int, int, WireExchange | FetchEvent]] = []  # (time, order, seq, event)
    for e in mine:
        events.append((e.sent_ms, 0, e.seq, e))
        if e.received_ms is not None:
            events.append((e.received_ms, 1, e.seq, e))
    events.sort(key=lambda x: (x[0], x[2], x[1]))
    at = next((i for i, (_, o, s, _e) in enumerate(events) if s == f.seq and o == 1), None)
    if at is None:
        at = next((i for i, (_, o, s, _e) in enumerate(events) if s == f.seq), len(events) - 1)
    lo, hi = max(at - BEFORE, 0), min(at + AFTER + 1, len(events))
    rows: list[Row] = []
    members: list[str] = []
    for i in range(lo, hi):
        t, order, seq, e = events[i]
        if e.client_id not in members:
            members.append(e.client_id)
        if order == 0:
            text = _fetch_text(e) if isinstance(e, FetchEvent) else request_text(e.request, e.api)
            fields: tuple[Field, ...] = (Field("→ " + text),)
        elif i == at:
            fields = (Field("←"), *f.answered_fields)
        else:
            fields = (Field("← " + ("Fetch answered" if isinstance(e, FetchEvent) else summary(e.response))),)
        rows.append(Row(t_ms=round(t - start), seq=seq, member=e.client_id,
                        kind="request" if order == 0 else "answer", fields=fields, finding=i == at))
    # members in the order they first appear in the trace, the finding's first if tied
    first = {c: min(e.seq for e in mine if e.client_id == c) for c in members}
    members.sort(key=lambda c: first[c])
    return replace(f, timeline=Timeline(tuple(members), tuple(rows), lo, len(events) - hi))


@dataclass(frozen=True)
class Deviation:
    """Findings that are the same deviation (same rule, API and differing fields), across
    scenarios and clients."""

    rule: str
    api: str
    fields: tuple[str, ...]
    where: list[tuple[str, str, int]] = field(default_factory=list)  # (scenario, client, finding number)


def distinct_deviations(numbered: Sequence[tuple[int, str, str, Finding]]) -> list[Deviation]:
    """Group numbered findings (number, scenario, client, finding) by their signature."""
    by: dict[tuple[str, str, tuple[str, ...]], Deviation] = {}
    for n, scenario, client, f in numbered:
        sig = f.signature
        dev = by.setdefault(sig, Deviation(sig[0], sig[1], sig[2]))
        dev.where.append((scenario, client, n))
    return list(by.values())


def finding_from_json(data: dict[str, Any]) -> Finding:
    """A finding back from ``Finding.to_json`` (summary.json)."""
    tl = data.get("timeline")
    timeline = None
    if tl is not None:
        timeline = Timeline(
            tuple(tl["members"]),
            tuple(Row(r["t_ms"], r["seq"], r["member"], r["kind"],
                      tuple(Field(x["text"], x["differs"]) for x in r["fields"]), r["finding"])
                  for r in tl["rows"]),
            tl.get("earlier", 0), tl.get("later", 0))
    known = set(Finding.__dataclass_fields__) - {"timeline", "answered_fields"}
    plain = {k: v for k, v in data.items() if k in known}
    plain["protocol_allows"] = tuple(plain.get("protocol_allows", ()))
    plain["differences"] = tuple(plain.get("differences", ()))
    return Finding(**plain, answered_fields=tuple(Field(x["text"], x["differs"])
                                                  for x in data.get("answered_fields", ())),
                   timeline=timeline)
