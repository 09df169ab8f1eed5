"""The conformance report: Markdown and HTML from a run's summary (``summary.json``).

Per broker, a verdict table (scenario x client), then one section per scenario and
client: what the scenario does, what the clients did, and for anything but a conforming
verdict the evidence the validator gave — the first divergent event with its seq and
line in the trace, what the broker answered, what the protocol allows, the rule and the
Kafka source it comes from — or what was missing, and the trace file to look at.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from groupspec.conformance.scenarios import BY_NAME
from groupspec.validate.verdict import deviation_key

_MARK = {"conforming": "conforming", "violation": "VIOLATION", "inconclusive": "inconclusive",
         "error": "ERROR"}


def load_summary(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _evidence(result: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs of evidence for one scenario result."""
    out: list[tuple[str, str]] = []
    val = result.get("validation") or {}
    if val.get("error"):
        out.append(("trace", str(val["error"])))
    for g in val.get("groups", []):
        if g["verdict"] == "conforming":
            continue
        d = g.get("violation") or g.get("divergence")
        others = _other_deviations(g, d)
        if d is not None:
            label = "violation" if g.get("violation") else "diverged (not decisive)"
            who = f" on connection {d['connection']} ({d['client_id']})" if d.get("connection") else ""
            out.append((label, f"group {g['group_id']}, seq {d['seq']} (line {d['line']}): "
                               f"{d['api'] or 'event'}{who}"))
            out.append(("broker answered", d["broker_answered"]))
            out.append(("protocol allows", " | ".join(d["protocol_allows"]) or "(see detail)"))
            out.append(("rule", f"{d['rule']}: {d['rule_summary']}"))
            out.append(("Kafka source", d["kafka_source"]))
            out.append(("detail", d["detail"]))
        for miss in g.get("missing", []):
            where = f"line {miss['line']}: " if miss.get("line") is not None else ""
            out.append(("missing", where + miss["what"]))
        for o in others:
            tags = [o.get("side", "broker"), "decisive" if o.get("definite", True) else "undecided"]
            if o.get("consequence_of") is not None:
                tags.append(f"may follow from seq {o['consequence_of']}")
            out.append(("also deviates", f"seq {o['seq']} (line {o['line']}) {o['api'] or 'event'}: "
                                         f"{o['rule']} [{', '.join(tags)}]: broker answered "
                                         f"{o['broker_answered']}; protocol allows "
                                         f"{' | '.join(o['protocol_allows']) or '(see detail)'}; "
                                         f"Kafka source {o['kafka_source']}"))
    problems = [p for p in val.get("problems", []) if p["kind"] != "missing_response"]
    for p in problems[:10]:
        out.append(("input problem", f"{p['kind']} at line {p['line']}: {p['message']}"))
    if result.get("run_error"):
        out.append(("run error", result["run_error"].strip()))
    return out


def _other_deviations(g: dict[str, Any], head: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The group's other distinct deviations (side, rule, API, broker's answer), the first
    occurrence of each, besides the headline ``head``."""
    seen: set[tuple[str, str, str, str]] = set()
    if head is not None:
        seen.add(_deviation(head))
    out: list[dict[str, Any]] = []
    for d in g.get("divergences", []):
        key = _deviation(d)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _deviation(d: dict[str, Any]) -> tuple[str, str, str, str]:
    return (d.get("side", "broker"), d["rule"], d["api"], deviation_key(d["broker_answered"]))


def _retries(result: dict[str, Any]) -> list[str]:
    return [f"attempt {i} could not be run as scripted ({e['verdict']}, trace `{e['trace']}`): "
            f"{e['run_error'].strip().splitlines()[0]}; run again"
            for i, e in enumerate(result.get("earlier", []), 1)]


def _clients(run: dict[str, Any]) -> list[str]:
    return list(run["clients"])


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


def _why(name: str) -> str:
    s = BY_NAME.get(name)
    return s.why if s is not None else ""


def _title(name: str, fallback: str) -> str:
    s = BY_NAME.get(name)
    return s.title if s is not None else fallback


def findings(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every result that is not conforming (violations first)."""
    order = {"violation": 0, "error": 1, "inconclusive": 2}
    bad = [r for r in run["results"] if r["verdict"] != "conforming" or r.get("run_error")]
    return sorted(bad, key=lambda r: order.get(r["verdict"], 3))


def distinct_deviations(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every distinct deviation of the run (side, rule, API, what the broker answered),
    across scenarios and clients: the first occurrence, where else it was seen, and whether
    it was decisive anywhere."""
    by_key: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in run["results"]:
        for g in (r.get("validation") or {}).get("groups", []):
            for d in g.get("divergences", []):
                key = _deviation(d)
                where = f"{r['scenario']}/{r['client']} seq {d['seq']} (line {d['line']})"
                entry = by_key.setdefault(key, {"first": d, "where": [], "decisive": False,
                                                "trace": r["trace"]})
                entry["where"].append(where)
                entry["decisive"] = entry["decisive"] or (d.get("definite", True) and d.get("consequence_of") is None)
    return list(by_key.values())


def _distinct_lines(run: dict[str, Any]) -> list[str]:
    rows = distinct_deviations(run)
    if not rows:
        return []
    out = [f"### Distinct deviations ({len(rows)})", "",
           "Every divergence the validator listed, across scenarios and clients, once per rule, API and "
           "kind of answer (the replay goes on past each one; *may follow* means only seen where an "
           "earlier divergence could explain it).", "",
           "| side | rule | API | broker answered | decisive | seen in | Kafka source |", "|---|---|---|---|---|---|---|"]
    for e in rows:
        d = e["first"]
        seen = "; ".join(e["where"][:3]) + (f"; and {len(e['where']) - 3} more" if len(e["where"]) > 3 else "")
        out.append(f"| {d.get('side', 'broker')} | {d['rule']} | {d['api']} | {deviation_key(d['broker_answered'])} "
                   f"| {'yes' if e['decisive'] else 'may follow'} | {seen} | {d['kafka_source']} |")
    return [*out, ""]


def render_markdown(runs: Iterable[dict[str, Any]]) -> str:
    lines = ["# Conformance report", ""]
    lines += ["Scenarios run with real client libraries through `groupspec record`; each trace "
              "validated by `groupspec validate` (docs/conformance.md tells how to read this).", ""]
    for run in runs:
        lines += [f"## Broker: {run['broker']}", ""]
        lines += [f"- broker: {run['broker_detail']}",
                  f"- clients: {', '.join(run['clients'])}",
                  f"- started: {run.get('started', '')}; took {run.get('duration_s', 0)} s",
                  "- verdicts: " + ", ".join(f"{n} {v}" for v, n in sorted(run["summary"].items())),
                  ""]
        clients = _clients(run)
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
        lines += _distinct_lines(run)
        bad = findings(run)
        lines += [f"### Findings ({len(bad)})", ""]
        if not bad:
            lines += ["Every scenario is conforming with every client.", ""]
        for r in bad:
            lines += [f"- **{r['scenario']} / {r['client']}: {_MARK.get(r['verdict'], r['verdict'])}** "
                      f"(trace `{r['trace']}`)"]
            for label, text in _evidence(r):
                lines.append(f"  - {label}: {text}")
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
                lines.append(f"- **{c}**: {_MARK.get(r['verdict'], r['verdict'])} "
                             f"({exchanges} exchanges, {r['duration_s']} s; trace `{r['trace']}`)")
                for note in [*_retries(r), *r.get("notes", [])]:
                    lines.append(f"  - {note}")
                for err in r.get("wire", {}).get("errors", []):
                    lines.append(f"  - broker error on the wire: {err}")
                for label, text in _evidence(r):
                    lines.append(f"  - {label}: {text}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.conforming{background:#e3f6e3}.violation{background:#fbe0e0;font-weight:bold}
.inconclusive{background:#fdf3d7}.error{background:#eee;font-weight:bold}
dl{margin:.3rem 0 1rem 1.5rem}dt{font-weight:bold;float:left;clear:left;width:10rem}
dd{margin-left:10.5rem;font-family:ui-monospace,monospace;font-size:.9em;white-space:pre-wrap}
.why{color:#555}ul.notes{color:#444;font-size:.9em}
"""


def _esc(text: object) -> str:
    return html.escape(str(text))


def _dl(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    return "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in pairs) + "</dl>"


def render_html(runs: Iterable[dict[str, Any]]) -> str:
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Conformance report</title>",
             f"<style>{_CSS}</style></head><body><h1>Conformance report</h1>",
             "<p>Scenarios run with real client libraries through <code>groupspec record</code>; "
             "each trace validated by <code>groupspec validate</code>.</p>"]
    for run in runs:
        clients = _clients(run)
        parts.append(f"<h2>Broker: {_esc(run['broker'])}</h2><ul>"
                     f"<li>broker: {_esc(run['broker_detail'])}</li>"
                     f"<li>clients: {_esc(', '.join(clients))}</li>"
                     f"<li>started: {_esc(run.get('started', ''))}; took {_esc(run.get('duration_s', 0))} s</li>"
                     "<li>verdicts: " + _esc(", ".join(f"{n} {v}" for v, n in sorted(run["summary"].items())))
                     + "</li></ul>")
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
        rows = distinct_deviations(run)
        if rows:
            parts.append(f"<h3>Distinct deviations ({len(rows)})</h3><table><tr><th>side</th><th>rule</th>"
                         "<th>API</th><th>broker answered</th><th>decisive</th><th>seen in</th>"
                         "<th>Kafka source</th></tr>")
            for e in rows:
                d = e["first"]
                parts.append("<tr>" + "".join(f"<td>{_esc(x)}</td>" for x in (
                    d.get("side", "broker"), d["rule"], d["api"], deviation_key(d["broker_answered"]),
                    "yes" if e["decisive"] else "may follow", "; ".join(e["where"]), d["kafka_source"])) + "</tr>")
            parts.append("</table>")
        bad = findings(run)
        parts.append(f"<h3>Findings ({len(bad)})</h3>")
        if not bad:
            parts.append("<p>Every scenario is conforming with every client.</p>")
        for r in bad:
            parts.append(f"<h4 class='{_esc(r['verdict'])}'>{_esc(r['scenario'])} / {_esc(r['client'])}: "
                         f"{_esc(_MARK.get(r['verdict'], r['verdict']))}</h4>"
                         f"<p>trace <code>{_esc(r['trace'])}</code></p>" + _dl(_evidence(r)))
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
                parts.append(f"<p><b>{_esc(c)}</b>: <span class='{_esc(r['verdict'])}'>"
                             f"{_esc(_MARK.get(r['verdict'], r['verdict']))}</span> ({exchanges} exchanges, "
                             f"{_esc(r['duration_s'])} s; trace <code>{_esc(r['trace'])}</code>)</p>")
                notes = [*_retries(r), *r.get("notes", [])]
                notes += [f"broker error on the wire: {e}" for e in r.get("wire", {}).get("errors", [])]
                if notes:
                    parts.append("<ul class='notes'>" + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
                parts.append(_dl(_evidence(r)))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_reports(out_dir: Path, runs: list[dict[str, Any]]) -> tuple[Path, Path]:
    md, page = out_dir / "report.md", out_dir / "report.html"
    md.write_text(render_markdown(runs), encoding="utf-8")
    page.write_text(render_html(runs), encoding="utf-8")
    return md, page
