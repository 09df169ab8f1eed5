"""The conformance report: Markdown and HTML from a run's summary (``summary.json``).

Per broker: a verdict table (scenario x client); the distinct deviations (findings that are
the same rule broken in the same fields, across scenarios and clients); then the
**findings**, each shown once: the divergent event (group, seq and line in the trace, API,
connection, client), the broker's answer with the fields that differ from the nearest
answer the protocol allows highlighted, that answer and the others allowed, the rule and
the Kafka source it comes from, and a timeline of the group around it (times in ms from
the scenario's first recorded event, one column per member); what was missing for an
inconclusive verdict; then per scenario what it does and why, and per client the verdict,
what the clients did, and links to its findings (never the evidence again).

The findings come from the result's ``findings`` (:mod:`.findings`, written by the runner
into summary.json); a summary without them (an older run) gets them here, from its
verdicts and traces. No Python value is printed as Python: every text is built here.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from groupspec.conformance.findings import (
    Field,
    Finding,
    Timeline,
    distinct_deviations,
    finding_from_json,
    findings_of,
    short_ids,
)
from groupspec.conformance.scenarios import BY_NAME, Scenario

_MARK = {"conforming": "conforming", "violation": "VIOLATION", "inconclusive": "inconclusive",
         "error": "ERROR"}


def load_summary(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def attach_findings(run: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """The run with ``findings`` on every result (from its trace, when missing)."""
    results = []
    for r in run["results"]:
        if "findings" not in r:
            trace = out_dir / r["trace"]
            try:
                lines: list[str] | None = trace.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = None
            r = {**r, "findings": [f.to_json() for f in findings_of(r.get("validation") or {}, lines)]}
        results.append(r)
    return {**run, "results": results}


def _findings(result: dict[str, Any]) -> list[Finding]:
    return [finding_from_json(f) for f in result.get("findings", [])]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _other_evidence(result: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs besides the findings: missing events, input problems, run error."""
    out: list[tuple[str, str]] = []
    val = result.get("validation") or {}
    if val.get("error"):
        out.append(("trace", str(val["error"])))
    for g in val.get("groups", []):
        for miss in g.get("missing", []):
            where = f"line {miss['line']}: " if miss.get("line") is not None else ""
            out.append(("missing", f"group {g['group_id']}, {where}{miss['what']}"))
    problems = [p for p in val.get("problems", []) if p["kind"] != "missing_response"]
    for p in problems[:10]:
        out.append(("input problem", f"{p['kind']} at line {p['line']}: {p['message']}"))
    if result.get("run_error"):
        out.append(("run error", _first_line(result["run_error"])
                    + f" (member logs under logs/{result['scenario']}--{result['client']}/)"))
    return out


def _retries(result: dict[str, Any]) -> list[str]:
    return [f"attempt {i} could not be run as scripted ({e['verdict']}, trace {e['trace']}): "
            f"{_first_line(e['run_error'])}; run again"
            for i, e in enumerate(result.get("earlier", []), 1)]


def _scenarios(run: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for r in run["results"]:
        if r["scenario"] not in seen:
            seen.append(r["scenario"])
    return seen


def _cell(run: dict[str, Any], scenario: str, client: str) -> dict[str, Any] | None:
    for r in run["results"]:
        if r["scenario"] == scenario and r["client"] == client:
            return dict(r)
    return None


def _scenario(name: str) -> Scenario | None:
    from groupspec.conformance.consumer_scenarios import CONSUMER_BY_NAME
    from groupspec.conformance.mixed_scenarios import MIXED_BY_NAME

    return BY_NAME.get(name) or CONSUMER_BY_NAME.get(name) or MIXED_BY_NAME.get(name)


def _why(name: str) -> str:
    s = _scenario(name)
    return s.why if s is not None else ""


def _title(name: str, fallback: str) -> str:
    s = _scenario(name)
    return s.title if s is not None else fallback


def _protocol_line(run: dict[str, Any]) -> list[str]:
    """The group protocol of a consumer-protocol or mixed run (a classic run says nothing)."""
    if run.get("group_protocol") == "consumer":
        return ["group protocol: consumer (KIP-848, group.protocol=consumer)"]
    if run.get("group_protocol") == "mixed":
        return ["group protocol: mixed (classic and consumer-protocol members in one group; "
                "clients CLASSIC+CONSUMER)"]
    return []


def findings(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every result that is not conforming or had a run error (violations first)."""
    order = {"violation": 0, "error": 1, "inconclusive": 2}
    bad = [r for r in run["results"] if r["verdict"] != "conforming" or r.get("run_error")]
    return sorted(bad, key=lambda r: order.get(r["verdict"], 3))


def _numbered(run: dict[str, Any]) -> list[tuple[int, str, str, Finding]]:
    out: list[tuple[int, str, str, Finding]] = []
    for r in findings(run):
        for f in _findings(r):
            out.append((len(out) + 1, r["scenario"], r["client"], f))
    return out


def _anchor(run: dict[str, Any], n: int) -> str:
    return f"{run['broker']}-finding-{n}"


def _verdict_counts(run: dict[str, Any]) -> str:
    return ", ".join(f"{n} {v}" for v, n in sorted(run["summary"].items()))


def _kind_words(f: Finding) -> str:
    words = "violation" if f.kind == "violation" else "divergence, not decisive"
    if f.side != "broker":
        words += f" by the {f.side}"
    if f.consequence_of is not None:
        words += f" (may be a consequence of the divergence at seq {f.consequence_of})"
    elif f.consequence_of_earlier:
        words += " (a consequence of an earlier divergence)"
    return words


def _deviation_text(dev_rule: str, api: str, fields: tuple[str, ...]) -> str:
    differs = f", differing in {', '.join(fields)}" if fields else ""
    return f"{dev_rule} on {api or 'an event'}{differs}"


# -------------------------------------------------------------------------- Markdown
def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _md_fields(fields: Iterable[Field], shorten: bool = False) -> str:
    out = []
    for x in fields:
        t = short_ids(x.text) if shorten else x.text
        out.append(f"**{t}**" if x.differs else t)
    return " ".join(out)


def _md_timeline(tl: Timeline) -> list[str]:
    lines = ["| t (ms) | seq | " + " | ".join(_md_cell(m) for m in tl.members) + " |",
             "|---:|---:|" + "---|" * len(tl.members)]
    for row in tl.rows:
        cells = ["" for _ in tl.members]
        text = _md_fields(row.fields, shorten=True) + ("  ◀ finding" if row.finding else "")
        cells[tl.members.index(row.member)] = _md_cell(text)
        lines.append(f"| {row.t_ms} | {row.seq} | " + " | ".join(cells) + " |")
    return lines


def _md_finding(run: dict[str, Any], n: int, f: Finding) -> list[str]:
    who = f" on connection {f.connection} ({f.client_id})" if f.connection else ""
    lines = [f"<a id=\"{_anchor(run, n)}\"></a>", f"**Finding {n}**: {_kind_words(f)}: group {f.group_id}, "
             f"seq {f.seq} (line {f.line}): {f.api or 'event'}{who}", "",
             f"- broker answered: {_md_fields(f.answered_fields)}"]
    if f.nearest_allowed:
        lines.append(f"- nearest answer the protocol allows: {f.nearest_allowed}")
    others = [a for a in f.protocol_allows if a != f.nearest_allowed]
    if others:
        lines.append(f"- also allowed: {' | '.join(others)}")
    if f.differences:
        lines.append(f"- differs in: {'; '.join(f.differences)}")
    lines += [f"- rule: {f.rule}: {f.rule_summary}", f"- Kafka source: {f.kafka_source}",
              f"- detail: {f.detail}"]
    if f.timeline is not None:
        tl = f.timeline
        lines += ["", f"Timeline of group {f.group_id} around seq {f.seq} (t: ms since the scenario's first "
                  "recorded event; one column per member; **bold**: differs from what the protocol allows"
                  + (f"; {tl.earlier} earlier and {tl.later} later events of the group not shown" if
                     tl.earlier or tl.later else "") + "):", ""]
        lines += _md_timeline(tl)
    lines.append("")
    return lines


def render_markdown(runs: Iterable[dict[str, Any]]) -> str:
    lines = ["# Conformance report", ""]
    lines += ["Scenarios run with real client libraries through `groupspec record`; each trace "
              "validated by `groupspec validate` (docs/conformance.md tells how to read this).", ""]
    for run in runs:
        clients = list(run["clients"])
        lines += [f"## Broker: {run['broker']}", ""]
        lines += [f"- broker: {run['broker_detail']}",
                  *(f"- {x}" for x in _protocol_line(run)),
                  f"- clients: {', '.join(clients)}",
                  f"- started: {run.get('started', '')}; took {run.get('duration_s', 0)} s",
                  f"- verdicts: {_verdict_counts(run)}", ""]
        lines.append("| scenario | " + " | ".join(clients) + " |")
        lines.append("|---|" + "---|" * len(clients))
        for name in _scenarios(run):
            cells = []
            for c in clients:
                r = _cell(run, name, c)
                cells.append("-" if r is None else _MARK.get(r["verdict"], r["verdict"])
                             + (" (run error)" if r.get("run_error") and r["verdict"] != "error" else ""))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        bad = findings(run)
        numbered = _numbered(run)
        number = {(s, c, f.group_id, f.seq, f.rule): n for n, s, c, f in numbered}
        lines += [f"### Findings ({len(bad)})", ""]
        if not bad:
            lines += ["Every scenario is conforming with every client.", ""]
        devs = distinct_deviations(numbered)
        if devs:
            lines += [f"{len(numbered)} finding(s) in {len(bad)} result(s), {len(devs)} distinct deviation(s):", ""]
            for d in devs:
                where = ", ".join(f"[{n}](#{_anchor(run, n)}) {s} / {c}" for s, c, n in d.where)
                lines.append(f"- {_deviation_text(d.rule, d.api, d.fields)}: {where}")
            lines.append("")
        for r in bad:
            lines += [f"#### **{r['scenario']} / {r['client']}: {_MARK.get(r['verdict'], r['verdict'])}** "
                      f"(trace `{r['trace']}`)", ""]
            for f in _findings(r):
                lines += _md_finding(run, number[(r["scenario"], r["client"], f.group_id, f.seq, f.rule)], f)
            for label, text in _other_evidence(r):
                lines.append(f"- {label}: {text}")
            lines.append("")
        lines += ["### Scenarios", ""]
        for name in _scenarios(run):
            first = next(r for r in run["results"] if r["scenario"] == name)
            lines += [f"#### {name}: {_title(name, first['title'])}", "", _why(name), ""]
            for c in clients:
                r = _cell(run, name, c)
                if r is None:
                    continue
                groups = r.get("validation", {}).get("groups", [])
                exchanges = sum(g["exchanges"] for g in groups)
                mine = [n for n, s, cl, _ in numbered if (s, cl) == (name, c)]
                see = ("; see " + ", ".join(f"[finding {n}](#{_anchor(run, n)})" for n in mine)) if mine else ""
                see += "; evidence under Findings" if not mine and r in bad else ""
                lines.append(f"- **{c}**: {_MARK.get(r['verdict'], r['verdict'])} "
                             f"({exchanges} exchanges, {r['duration_s']} s; trace `{r['trace']}`{see})")
                for note in [*_retries(r), *r.get("notes", [])]:
                    lines.append(f"  - {note}")
                for err in r.get("wire", {}).get("errors", []):
                    lines.append(f"  - broker error on the wire: {err}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# -------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}
.conforming{background:#e3f6e3}.violation{background:#fbe0e0;font-weight:bold}
.inconclusive{background:#fdf3d7}.error{background:#eee;font-weight:bold}
dl{margin:.3rem 0 1rem 1.5rem;display:grid;grid-template-columns:12rem 1fr;gap:.25rem 1rem}
dt{font-weight:bold}dd{margin:0;font-family:ui-monospace,monospace;font-size:.9em;white-space:pre-wrap}
.why{color:#555}ul.notes{color:#444;font-size:.9em}
.finding{border-left:4px solid #c0392b;padding-left:1rem;margin:1.5rem 0}
mark{background:#ffd54f;font-weight:bold;padding:0 .15em}
table.timeline{font-family:ui-monospace,monospace;font-size:.8em;width:100%;table-layout:fixed}
table.timeline th.t{width:4.5rem}
table.timeline td.t{text-align:right;color:#555}table.timeline tr.hit{background:#fdecea}
table.timeline td.req{color:#1f4e79}table.timeline td.ans{color:#1b5e20}
caption{text-align:left;font-size:.9em;color:#444;padding-bottom:.3rem}
"""


def _esc(text: object) -> str:
    return html.escape(str(text))


def _dl(pairs: list[tuple[str, str]], raw: frozenset[str] = frozenset()) -> str:
    """A definition list; values whose label is in ``raw`` are HTML already."""
    if not pairs:
        return ""
    return "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{v if k in raw else _esc(v)}</dd>" for k, v in pairs) + "</dl>"


def _html_fields(fields: Iterable[Field], shorten: bool = False) -> str:
    out = []
    for x in fields:
        t = _esc(short_ids(x.text) if shorten else x.text)
        out.append(f"<mark>{t}</mark>" if x.differs else t)
    return " ".join(out)


def _html_timeline(f: Finding, tl: Timeline) -> str:
    left = (f"; {tl.earlier} earlier and {tl.later} later events of the group not shown"
            if tl.earlier or tl.later else "")
    parts = [f"<table class='timeline'><caption>Timeline of group {_esc(f.group_id)} around seq {f.seq}: "
             f"t in ms since the scenario's first recorded event, one column per member, "
             f"<mark>marked</mark> fields differ from what the protocol allows{_esc(left)}</caption>",
             "<tr><th class='t'>t (ms)</th><th class='t'>seq</th>" + "".join(f"<th>{_esc(m)}</th>" for m in tl.members) + "</tr>"]
    for row in tl.rows:
        cls = "req" if row.kind == "request" else "ans"
        cells = ["<td></td>" for _ in tl.members]
        text = _html_fields(row.fields, shorten=True) + (" ◀ finding" if row.finding else "")
        cells[tl.members.index(row.member)] = f"<td class='{cls}'>{text}</td>"
        parts.append(f"<tr{' class=hit' if row.finding else ''}><td class='t'>{row.t_ms}</td>"
                     f"<td class='t'>{row.seq}</td>" + "".join(cells) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def _html_finding(run: dict[str, Any], n: int, f: Finding) -> str:
    who = f" on connection {f.connection} ({f.client_id})" if f.connection else ""
    pairs = [("broker answered", _html_fields(f.answered_fields))]
    if f.nearest_allowed:
        pairs.append(("nearest allowed answer", _esc(f.nearest_allowed)))
    others = [a for a in f.protocol_allows if a != f.nearest_allowed]
    if others:
        pairs.append(("also allowed", _esc(" | ".join(others))))
    if f.differences:
        pairs.append(("differs in", _esc("; ".join(f.differences))))
    pairs += [("rule", _esc(f"{f.rule}: {f.rule_summary}")), ("Kafka source", _esc(f.kafka_source)),
              ("detail", _esc(f.detail))]
    out = (f"<div class='finding' id='{_esc(_anchor(run, n))}'><p><b>Finding {n}</b>: {_esc(_kind_words(f))}: "
           f"group {_esc(f.group_id)}, seq {f.seq} (line {f.line}): {_esc(f.api or 'event')}{_esc(who)}</p>"
           + _dl(pairs, frozenset(k for k, _ in pairs)))
    if f.timeline is not None:
        out += _html_timeline(f, f.timeline)
    return out + "</div>"


def render_html(runs: Iterable[dict[str, Any]]) -> str:
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Conformance report</title>",
             f"<style>{_CSS}</style></head><body><h1>Conformance report</h1>",
             "<p>Scenarios run with real client libraries through <code>groupspec record</code>; "
             "each trace validated by <code>groupspec validate</code>.</p>"]
    for run in runs:
        clients = list(run["clients"])
        parts.append(f"<h2>Broker: {_esc(run['broker'])}</h2><ul>"
                     f"<li>broker: {_esc(run['broker_detail'])}</li>"
                     + "".join(f"<li>{_esc(x)}</li>" for x in _protocol_line(run)) +
                     f"<li>clients: {_esc(', '.join(clients))}</li>"
                     f"<li>started: {_esc(run.get('started', ''))}; took {_esc(run.get('duration_s', 0))} s</li>"
                     f"<li>verdicts: {_esc(_verdict_counts(run))}</li></ul>")
        parts.append("<table><tr><th>scenario</th>" + "".join(f"<th>{_esc(c)}</th>" for c in clients) + "</tr>")
        for name in _scenarios(run):
            row = [f"<td><a href='#{_esc(run['broker'])}-{_esc(name)}'>{_esc(name)}</a></td>"]
            for c in clients:
                r = _cell(run, name, c)
                if r is None:
                    row.append("<td>-</td>")
                else:
                    row.append(f"<td class='{_esc(r['verdict'])}'>{_esc(_MARK.get(r['verdict'], r['verdict']))}</td>")
            parts.append("<tr>" + "".join(row) + "</tr>")
        parts.append("</table>")
        bad = findings(run)
        numbered = _numbered(run)
        number = {(s, c, f.group_id, f.seq, f.rule): n for n, s, c, f in numbered}
        parts.append(f"<h3>Findings ({len(bad)})</h3>")
        if not bad:
            parts.append("<p>Every scenario is conforming with every client.</p>")
        devs = distinct_deviations(numbered)
        if devs:
            parts.append(f"<p>{len(numbered)} finding(s) in {len(bad)} result(s), {len(devs)} distinct "
                         "deviation(s):</p><ul>")
            for d in devs:
                where = ", ".join(f"<a href='#{_esc(_anchor(run, n))}'>{n}</a> {_esc(s)} / {_esc(c)}"
                                  for s, c, n in d.where)
                parts.append(f"<li>{_esc(_deviation_text(d.rule, d.api, d.fields))}: {where}</li>")
            parts.append("</ul>")
        for r in bad:
            parts.append(f"<h4 class='{_esc(r['verdict'])}'>{_esc(r['scenario'])} / {_esc(r['client'])}: "
                         f"{_esc(_MARK.get(r['verdict'], r['verdict']))}</h4>"
                         f"<p>trace <code>{_esc(r['trace'])}</code></p>")
            for f in _findings(r):
                parts.append(_html_finding(run, number[(r["scenario"], r["client"], f.group_id, f.seq, f.rule)], f))
            parts.append(_dl(_other_evidence(r)))
        parts.append("<h3>Scenarios</h3>")
        for name in _scenarios(run):
            first = next(r for r in run["results"] if r["scenario"] == name)
            parts.append(f"<h4 id='{_esc(run['broker'])}-{_esc(name)}'>{_esc(name)}: "
                         f"{_esc(_title(name, first['title']))}</h4><p class='why'>{_esc(_why(name))}</p>")
            for c in clients:
                r = _cell(run, name, c)
                if r is None:
                    continue
                groups = r.get("validation", {}).get("groups", [])
                exchanges = sum(g["exchanges"] for g in groups)
                mine = [n for n, s, cl, _ in numbered if (s, cl) == (name, c)]
                see = ("; see " + ", ".join(f"<a href='#{_esc(_anchor(run, n))}'>finding {n}</a>"
                                            for n in mine)) if mine else ""
                see += "; evidence under Findings" if not mine and r in bad else ""
                parts.append(f"<p><b>{_esc(c)}</b>: <span class='{_esc(r['verdict'])}'>"
                             f"{_esc(_MARK.get(r['verdict'], r['verdict']))}</span> ({exchanges} exchanges, "
                             f"{_esc(r['duration_s'])} s; trace <code>{_esc(r['trace'])}</code>{see})</p>")
                notes = [*_retries(r), *r.get("notes", [])]
                notes += [f"broker error on the wire: {e}" for e in r.get("wire", {}).get("errors", [])]
                if notes:
                    parts.append("<ul class='notes'>" + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_reports(out_dir: Path, runs: list[dict[str, Any]]) -> tuple[Path, Path]:
    runs = [attach_findings(run, out_dir) for run in runs]
    md, page = out_dir / "report.md", out_dir / "report.html"
    # a trace may name a group or member with a lone surrogate ("\ud800" in its JSON), which
    # UTF-8 cannot encode: written as its escape, as the validator's text report shows it
    md.write_text(render_markdown(runs), encoding="utf-8", errors="backslashreplace")
    page.write_text(render_html(runs), encoding="utf-8", errors="backslashreplace")
    return md, page
