"""The conformance report, without a broker: built from a real Tansu recording
(examples/conformance/, Tansu answers the first JoinGroup with generation 0) and from a
verdict listing several divergences for one group, as the validator may.

Each finding appears once, with a timeline of the group around it at times relative to the
scenario's start, one column per member, the differing fields highlighted; the scenario
section links to it instead of repeating it; nothing in the Markdown, HTML or JSON is a
Python repr."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

from groupspec.conformance.findings import diff_fields, findings_of, split_fields
from groupspec.conformance.members import partitions_text
from groupspec.conformance.report import (
    attach_findings,
    render_html,
    render_markdown,
    write_reports,
)
from groupspec.validate import validate_path

ROOT = Path(__file__).resolve().parents[1]
TANSU = ROOT / "examples" / "conformance" / "tansu-eager-range-kafka-python.jsonl"
KAFKA = ROOT / "examples" / "validator-false-positives" / "kafka-leader-reelection.jsonl"

#: what Python prints and a reader should never see
REPRS = [
    re.compile(r"\bNone\b"), re.compile(r"\b(True|False)\b"), re.compile(r"\[\('"), re.compile(r"\{'"),
    re.compile(r"'\w+': "), re.compile(r"\bError\.[A-Z_]+"), re.compile(r"<[\w.]+ object at 0x"),
    re.compile(r"Traceback \(most recent call last\)"), re.compile(r"\b\w+\((\w+=)"),
]


def assert_no_reprs(text: str, where: str) -> None:
    for pattern in REPRS:
        hit = pattern.search(text)
        assert hit is None, f"{where}: Python repr {hit.group(0)!r} in ...{text[max(hit.start() - 80, 0):hit.end() + 80]}..."


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _result(out: Path, scenario: str, client: str, source: Path, notes: list[str]) -> dict[str, Any]:
    trace = out / "traces" / f"{scenario}--{client}.jsonl"
    trace.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, trace)
    v = validate_path(trace).to_json()
    for g in v["groups"]:  # the report's shape is tested here, not the validator's findings:
        g["divergences"] = g.get("divergences", [])[:1]  # one deviation per recorded group
    return {"scenario": scenario, "title": scenario, "client": client, "verdict": v["verdict"],
            "trace": str(trace.relative_to(out)), "duration_s": 9.5, "notes": notes, "run_error": None,
            "validation": v, "wire": {"exchanges": {}, "errors": []}, "earlier": []}


def make_run(out: Path) -> dict[str, Any]:
    """A Tansu-like run: eager-range violated with both clients (the same deviation), the
    leader-departure scenario conforming (a real Kafka recording), and a scenario whose
    group lists three divergences, one of them twice and one a consequence of another."""
    results = [
        _result(out, "eager-range", "kafka-python", TANSU, [f"settled: {partitions_text([('t', 0)])}"]),
        _result(out, "eager-range", "confluent-kafka", TANSU, []),
        _result(out, "leader-departure", "kafka-python", KAFKA, ["a joined alone first: the leader"]),
    ]
    several = copy.deepcopy(results[0])
    several["scenario"], several["trace"] = "slow-poll", "traces/slow-poll--kafka-python.jsonl"
    shutil.copy(TANSU, out / several["trace"])
    [group] = several["validation"]["groups"]
    first = group.pop("violation")
    later = {**first, "seq": 9, "line": 10, "api": "SyncGroup", "rule": "SyncAssignment",
             "broker_answered": "SyncGroup NONE assignment={t-0}",
             "protocol_allows": ["SyncGroup REBALANCE_IN_PROGRESS"], "definite": False,
             "consequence_of": 5, "side": "broker"}  # as the validator of issue 16 lists them
    group["divergences"] = [first, later, dict(first)]
    group["violation"] = None
    results.append(several)
    summary: dict[str, int] = {}
    for r in results:
        summary[r["verdict"]] = summary.get(r["verdict"], 0) + 1
    return {"broker": "tansu", "broker_detail": "tansu, started by the test", "started": "2026-01-01 00:00:00 UTC",
            "duration_s": 30.0, "clients": ["kafka-python", "confluent-kafka"], "summary": summary,
            "results": results}


def test_fields_split_outside_brackets_and_the_nearest_allowed_answer_is_chosen() -> None:
    assert split_fields("JoinGroup NONE generation=0 member_id=a, members=[a, b]") == [
        "JoinGroup", "NONE", "generation=0", "member_id=a", "members=[a, b]"]
    fields, nearest, words = diff_fields(
        "JoinGroup NONE generation=0 leader=a",
        ["no answer yet (the request stays parked)", "JoinGroup NONE generation=2 leader=b",
         "JoinGroup NONE generation=1 leader=a"])
    assert nearest == "JoinGroup NONE generation=1 leader=a"
    assert [f.text for f in fields if f.differs] == ["generation=0"]
    assert words == ["generation: 0 (allowed: 1)"]
    fields, _, words = diff_fields("Heartbeat NONE", ["no answer yet (the request stays parked)"])
    assert all(f.differs for f in fields) and words == ["answered: the protocol allows no answer yet"]
    _, _, words = diff_fields("OffsetCommit UNKNOWN_MEMBER_ID", ["OffsetCommit NONE"])
    assert words == ["error: UNKNOWN_MEMBER_ID (allowed: NONE)"]


def test_findings_take_a_list_per_group_and_keep_each_once(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    several = run["results"][3]
    lines = (tmp_path / several["trace"]).read_text(encoding="utf-8").splitlines()
    fs = findings_of(several["validation"], lines)
    assert [(f.seq, f.rule, f.consequence_of, f.kind) for f in fs] == [
        (5, "GenerationStartsAtOne", None, "violation"), (9, "SyncAssignment", 5, "divergence")]
    assert fs[1].differences == ("error: NONE (allowed: REBALANCE_IN_PROGRESS)", "assignment: {t-0} (allowed: absent)")
    conforming = findings_of(run["results"][2]["validation"], [])
    assert conforming == []


def test_timeline_is_relative_to_the_scenario_start_with_a_column_per_member(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    r = run["results"][0]
    [f] = findings_of(r["validation"], (tmp_path / r["trace"]).read_text(encoding="utf-8").splitlines())
    tl = f.timeline
    assert tl is not None and tl.members == ("a", "b")
    hit = [row for row in tl.rows if row.finding]
    assert len(hit) == 1 and hit[0].seq == 5 and hit[0].member == "a" and hit[0].kind == "answer"
    # the trace's first exchange was sent at 1795419030306.5 ms; the join was answered at ...3324.4
    assert hit[0].t_ms == 3018
    assert tl.rows[0].t_ms >= 0 and [row.t_ms for row in tl.rows] == sorted(row.t_ms for row in tl.rows)
    assert {row.member for row in tl.rows} == {"a", "b"}
    assert next(x.text for x in hit[0].fields if x.differs) == "generation=0"


def test_markdown_and_html_show_each_finding_once_with_its_timeline(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    md_path, html_path = write_reports(tmp_path, [run])
    md, page = md_path.read_text(encoding="utf-8"), html_path.read_text(encoding="utf-8")
    # four findings: one per eager-range client, two in slow-poll (the repeated one once)
    for n in (1, 2, 3, 4):
        assert md.count(f"**Finding {n}**") == 1 and page.count(f"<b>Finding {n}</b>") == 1
    assert "**Finding 5**" not in md
    assert md.count("- rule: GenerationStartsAtOne") == 3
    # the same deviation across scenarios and clients is named once, with where it was seen
    assert ("- GenerationStartsAtOne on JoinGroup, differing in generation: "
            "[1](#tansu-finding-1) eager-range / kafka-python, [2](#tansu-finding-2) eager-range / confluent-kafka, "
            "[3](#tansu-finding-3) slow-poll / kafka-python") in md
    assert "4 finding(s) in 3 result(s), 2 distinct deviation(s):" in md
    assert ("**Finding 4**: divergence, not decisive (may be a consequence of the divergence at seq 5): "
            "group eager-range-kafka-python-8b7963, seq 9 (line 10): SyncGroup") in md
    # the timeline: relative ms, members side by side, the finding's row marked, fields highlighted
    assert "| t (ms) | seq | a | b |" in md
    assert ("| 3018 | 5 | ← JoinGroup NONE **generation=0** protocol=range leader=a-f365ca43… "
            "member_id=a-f365ca43… members=[a-f365ca43…, b-b471f920…]  ◀ finding |  |") in md
    assert "| 40 | 4 |  | → JoinGroup (no member id yet) |" in md
    assert "<tr class=hit><td class='t'>3018</td><td class='t'>5</td>" in page
    assert "<mark>generation=0</mark>" in page
    assert "differs in: generation: 0 (allowed: 1)" in md
    # the scenario section links to the findings and does not repeat the evidence
    scenarios = md[md.index("### Scenarios"):]
    assert "see [finding 1](#tansu-finding-1)" in scenarios and "rule:" not in scenarios
    assert "see [finding 3](#tansu-finding-3), [finding 4](#tansu-finding-4)" in scenarios
    assert "<a href='#tansu-finding-1'>finding 1</a>" in page and "id='tansu-finding-1'" in page
    assert "settled: t-0" in md


def test_no_python_repr_in_markdown_html_or_json(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    run["results"][2]["notes"].append(f"instance-a owned {partitions_text([('t', 0), ('t', 1)])} before")
    run["results"][2]["notes"].append(f"owned {partitions_text([])}")
    write_reports(tmp_path, [run])
    assert_no_reprs((tmp_path / "report.md").read_text(encoding="utf-8"), "report.md")
    assert_no_reprs((tmp_path / "report.html").read_text(encoding="utf-8"), "report.html")
    data = attach_findings(run, tmp_path)
    for text in _strings(json.loads(json.dumps(data))):
        assert_no_reprs(text, "summary.json")
    # the check itself catches what it is for
    for bad in ("owned [('t', 0)]", "error None", "<groupspec.X object at 0x7f>", "Error.NONE"):
        try:
            assert_no_reprs(bad, "probe")
        except AssertionError:
            continue
        raise AssertionError(f"not caught: {bad}")


def test_a_summary_without_findings_renders_from_its_traces(tmp_path: Path) -> None:
    """summary.json from before findings were stored: the report reads the traces."""
    run = make_run(tmp_path)
    stored = attach_findings(run, tmp_path)
    assert render_markdown([stored]) == render_markdown([attach_findings(run, tmp_path)])
    assert "Finding 1" in render_html([stored])


def test_the_html_report_renders_in_a_real_browser(tmp_path: Path, render_in_browser: Any) -> None:
    """Chromium draws the page: the screenshot is not blank, the finding's highlighted
    field and the timeline's marked row are on it, and the DOM holds every finding."""
    run = make_run(tmp_path)
    _, page = write_reports(tmp_path, [run])
    shown = render_in_browser(page, (1280, 1800))
    assert shown.png.stat().st_size > 20_000
    colours = shown.colours()
    assert len(colours) > 200, f"{len(colours)} colours: a blank or broken page"
    white = colours.get((255, 255, 255), 0)
    assert white < 0.97 * sum(colours.values()), "the page is (almost) all white"
    # the verdict cells, the <mark> highlight and the timeline's finding row, in their colours
    for name, rgb in (("violation cell", (0xFB, 0xE0, 0xE0)), ("highlighted field", (0xFF, 0xD5, 0x4F)),
                      ("finding row", (0xFD, 0xEC, 0xEA))):
        assert colours.get(rgb, 0) > 200, f"no {name} on the page"
    for n in (1, 2, 3, 4):
        assert f"<b>Finding {n}</b>" in shown.dom
    assert "<mark>generation=0</mark>" in shown.dom and "◀ finding" in shown.dom


def test_a_broker_without_the_consumer_protocol_is_named_as_such() -> None:
    """Tansu 0.6 recorded with KIP-848 clients: its ApiVersions answers offer no
    ConsumerGroupHeartbeat, which the run names first (not only that no one joined)."""
    from groupspec.conformance.runner import apis_not_offered

    tansu = ROOT / "examples" / "conformance" / "tansu-kip848-crash-java.jsonl"
    assert apis_not_offered(tansu, {68: "ConsumerGroupHeartbeat"}) == ["ConsumerGroupHeartbeat (API key 68)"]
    assert apis_not_offered(tansu, {69: "ConsumerGroupDescribe"}) == []
    recorded_kafka = ROOT / "examples" / "validator-false-positives" / "kip848" / "heartbeat-before-a-join-kafka-4.1.2.jsonl"
    assert apis_not_offered(recorded_kafka, {68: "ConsumerGroupHeartbeat"}) == []


def test_a_finding_on_a_fetch_is_drawn_at_that_fetch() -> None:
    """Apache Kafka 4.1.2 and kafka-python 3 with requests held back at random (conformance
    --jitter-ms 40, cooperative-sticky): member b, told in generation 2 to give up two of its
    four partitions, went on fetching them (and its heartbeats stopped); the validator names
    the client (ClientFetchesOwnedOnly on the Fetch at line 27). The timeline was drawn at
    the group's last exchange, in member a's column, because a Fetch is not an exchange: it
    is now drawn at that Fetch, in b's column."""
    path = (ROOT / "examples" / "conformance" / "client-deviations"
            / "kafka-4.1.2-cooperative-sticky--kafka-python--jitter-keeps-revoked.jsonl")
    rep = validate_path(path)
    [g] = rep.groups
    assert g.verdict == "violation" and g.violation is not None
    assert (g.violation.rule, g.violation.side, g.violation.line, g.violation.client_id) == \
        ("ClientFetchesOwnedOnly", "client", 27, "b")
    [f] = [x for x in findings_of({"groups": [g.to_json()]}, path.read_text(encoding="utf-8").splitlines())
           if x.seq == g.violation.seq]
    assert f.timeline is not None
    [marked] = [r for r in f.timeline.rows if r.finding]
    assert (marked.seq, marked.member) == (g.violation.seq, "b")
    assert any(r.seq == marked.seq and r.kind == "request" and "Fetch" in r.fields[0].text
               for r in f.timeline.rows)
    assert "b" in f.timeline.members
