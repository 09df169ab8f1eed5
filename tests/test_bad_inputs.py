"""The regression corpus of issue 21: every bad input it lists, and what each must give.

Arguments and files (tests/bad_inputs/cases.json): exit status 2, the house message
(``error: FILE: PLACE: what`` or ``error: --option: what``) on stderr, nothing on stdout, no
traceback, nothing created. Trace lines (built here, as some are large): each bad line is
quarantined with its reason and every other line is still judged, in ``validate`` and in
``pipeline validate`` (the acceptance test, on Spark). Also: Ctrl-C is exit 130 without a
traceback, java_string_hash is linear and equals Java's, and an undecodable frame is
charged to its own connection. Everything runs in process except the Java comparison and
the Ctrl-C test, which need a real process.
"""

from __future__ import annotations

import functools
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.coordinator.find_coordinator import java_string_hash
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.trace.columnar import split_lines, write_lines
from groupspec.validate import CONFORMING, validate_bytes, validate_path
from groupspec.validate.load import load_path
from groupspec.validate.problems import TraceInputError

CORPUS = Path(__file__).parent / "bad_inputs"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))["cases"]
REPO = Path(__file__).resolve().parent.parent


@functools.cache
def valid_trace(scenario: str = "eager", until_ms: int = 40_000) -> bytes:
    """A short simulated trace of one bundled scenario: rebalances, commits, heartbeats."""
    data = apply_overrides(json.loads(bundled_scenarios()[scenario]), until_ms=until_ms)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), f"{scenario}.json")), out)
    return out.getvalue().encode()


def _fill(arg: str, tmp: Path) -> str:
    return arg.format(corpus=CORPUS, tmp=tmp, trace=tmp / "trace.jsonl", file=tmp / "file.txt")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_argument_or_file(case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "trace.jsonl").write_bytes(valid_trace())
    (tmp_path / "file.txt").write_text("a file, not a directory\n")
    argv = [_fill(a, tmp_path) for a in case["argv"]]
    started = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == case["exit"], (argv, out, err)
    assert _fill(case["stderr"], tmp_path) in err, err
    assert err.count("error: ") == 1 and err.rstrip().splitlines()[-1].startswith("error: "), err
    if "stderr_has_also" in case:
        assert case["stderr_has_also"] in err, err
    if "stderr_not" in case:
        assert case["stderr_not"] not in err, err
    assert "Traceback" not in out + err
    if not case.get("stdout_ok"):
        assert out == ""
    if "not_created" in case:
        assert not Path(_fill(case["not_created"], tmp_path)).exists()
    assert elapsed < 30, f"bad input must be found before the work starts ({elapsed:.1f} s)"


# ------------------------------------------------------------------ bad trace lines
def _lines() -> list[bytes]:
    return [x for x in valid_trace().split(b"\n") if x]


def _mutate(line: bytes, **changes: Any) -> bytes:
    obj = json.loads(line)
    obj.update(changes)
    return json.dumps(obj, allow_nan=True).encode()


def bad_lines() -> dict[str, bytes]:
    """Every kind of bad line the issue names, and a few more (name -> the line)."""
    ls = _lines()
    exchange = next(x for x in ls if b'"kind":"exchange"' in x and b'"api":"Heartbeat"' in x)
    return {
        "100k-deep JSON array": b"[" * 100_000 + b"]" * 100_000,
        "100k-deep object in a request": exchange.replace(
            b'"request":{', b'"request":{"x":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b","
        ),
        "seq beyond 64 bits": _mutate(exchange, seq=2**70),
        "sent_ms NaN": _mutate(exchange, sent_ms=float("nan")),
        "received_ms Infinity": _mutate(exchange, received_ms=float("inf")),
        "correlation id of 5000 digits": exchange.replace(b'"correlation_id":', b'"correlation_id":' + b"9" * 5000 + b",\"x\":"),
        "not UTF-8": b'{"kind":"exchange","group_id":"\xff\xfe"}',
        "a 3 MB line": b'{"kind":"exchange","api":"' + b"A" * 3_000_000 + b'"}',
        "not JSON": b"<html>502 Bad Gateway</html>",
        "a JSON array": b"[1, 2, 3]",
        "unknown kind": b'{"kind":"gossip","seq":3}',
        "api_version -1": _mutate(exchange, api_version=-1),
        "api_version beyond int16": _mutate(exchange, api_version=32_768),
    }


def _mixed(tmp: Path) -> tuple[Path, list[int]]:
    """The valid trace with every bad line inserted (one every few lines); returns the
    path and the 1-based line numbers of the bad lines."""
    ls = _lines()
    bad = list(bad_lines().values())
    out: list[bytes] = []
    where: list[int] = []
    step = max(2, (len(ls) - 20) // len(bad))
    for i, line in enumerate(ls):
        out.append(line)
        if i >= 10 and bad and (i - 10) % step == 0:
            out.append(bad.pop(0))
            where.append(len(out))
    assert not bad
    path = tmp / "mixed.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path, where


def test_every_bad_line_is_quarantined_and_the_rest_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, where = _mixed(tmp_path)
    code = main(["validate", "--format", "json", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 2  # bad input, and no violation (a NaN time is not a finding)
    [report] = json.loads(out)["files"]
    problems = {p["line"]: p for p in report["problems"]}
    assert set(where) <= set(problems), (where, sorted(problems))
    assert "64-bit" in problems[where[2]]["message"] and "finite" in problems[where[3]]["message"]
    # the valid lines: all judged, one group, nothing but the bad lines dropped
    valid = validate_bytes(valid_trace(), "valid")
    assert [g["group_id"] for g in report["groups"]] == [g.group_id for g in valid.groups]
    assert sum(g["exchanges"] for g in report["groups"]) == sum(g.exchanges for g in valid.groups)
    assert sum(g["records"] for g in report["groups"]) == sum(g.records for g in valid.groups)
    assert all(g["verdict"] != "violation" for g in report["groups"])


@pytest.mark.parametrize("name", list(bad_lines()))
def test_each_bad_line_alone(name: str) -> None:
    ls = _lines()
    line = bad_lines()[name]
    started = time.monotonic()
    r = validate_bytes(b"\n".join([*ls[:20], line, *ls[20:]]) + b"\n", "t.jsonl")
    assert time.monotonic() - started < 20
    assert 21 in {p.line for p in r.problems}, [str(p.message)[:80] for p in r.problems]
    assert r.groups and r.groups[0].verdict != "violation"
    assert r.groups[0].exchanges == validate_bytes(valid_trace()).groups[0].exchanges


def test_pipeline_validate_quarantines_every_bad_line_and_judges_the_rest(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Acceptance: a directory mixing valid traces with the bad lines; the valid groups get
    their verdicts (as in process) and every bad line is in quarantine.parquet."""
    src = tmp_path / "in"
    src.mkdir()
    mixed, where = _mixed(src)
    (src / "valid.jsonl").write_bytes(valid_trace("default", 30_000))
    (src / "cut.jsonl").write_bytes(valid_trace("failover", 30_000)[:-40])  # truncated last line
    out = tmp_path / "out"
    code = main(["pipeline", "validate", str(src), "--out", str(out), "--partitions", "2"])
    stdout, err = capsys.readouterr()
    assert "Traceback" not in stdout + err
    assert code == 2, stdout + err  # bad input, no violation
    groups = pq.read_table(out / "groups.parquet").to_pylist()
    expected = {}
    for f in sorted(src.iterdir()):
        for g in validate_bytes(f.read_bytes(), str(f)).groups:
            expected[(str(f), g.group_id)] = g.verdict
    assert {(g["source"], g["group_id"]): g["verdict"] for g in groups} == expected
    valid = [v for (source, _), v in expected.items() if source == str(src / "valid.jsonl")]
    assert valid and all(v == CONFORMING for v in valid)
    q = pq.read_table(out / "quarantine.parquet").to_pylist()
    quarantined = {r["line"] for r in q if r["source"] == str(mixed) and r["dropped"]}
    assert set(where) <= quarantined, (where, sorted(quarantined))
    assert all(r["reason"] for r in q)
    cut = [r for r in q if r["source"] == str(src / "cut.jsonl")]
    assert [r["problem"] for r in cut] == ["truncated"]


# ------------------------------------------------------------------ the recorder's events
def test_a_decode_error_is_charged_to_its_connection_only() -> None:
    ls = _lines()
    n = len(ls)

    def decode_error(api_key: int | None, connection: str) -> bytes:
        return json.dumps({"kind": "decode_error", "seq": n, "connection": connection, "direction": "request",
                           "api_key": api_key, "api_version": None, "correlation_id": None, "at_ms": 1000.0,
                           "error": "garbage", "size": 9, "cluster": None}).encode()

    def verdicts(extra: bytes) -> list[str]:
        return [g.verdict for g in validate_bytes(b"\n".join([*ls, extra]) + b"\n").groups]

    # garbage from a client that served no group spoils no verdict
    assert verdicts(decode_error(None, "stranger#1")) == ["conforming"]
    # a JoinGroup nobody can place may have changed the group; on the group's own
    # connection, the group allows for it
    assert verdicts(decode_error(11, "stranger#1")) == ["inconclusive"]
    connection = json.loads(next(x for x in ls if b'"kind":"exchange"' in x and b'"JoinGroup"' in x))["connection"]
    assert verdicts(decode_error(None, connection)) == ["inconclusive"]


# ------------------------------------------------------------------ Ctrl-C
def test_ctrl_c_exits_130_without_a_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import groupspec.cli.simulate as cli_simulate

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_simulate, "simulate", interrupted)
    assert main(["simulate"]) == 130
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "interrupted" in err


def test_ctrl_c_on_a_real_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'reference'}{os.pathsep}{REPO}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "groupspec", "simulate", "default", "--until", "604800000", "--progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
        # (SIGINT reaches it as from a terminal: tests/conftest.py pytest_configure)
    )
    assert proc.stderr is not None
    proc.stderr.read(len("\rsimulated"))  # the run has started (past the imports)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"interrupted" in err


# ------------------------------------------------------------------ java_string_hash
def _java_hash_quadratic(s: str) -> int:
    """The definition as Java states it: sum of s[i] * 31^(n-1-i) over UTF-16 code units."""
    units = s.encode("utf-16-be", "surrogatepass")
    codes = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    h: int = sum(c * 31 ** (len(codes) - 1 - i) for i, c in enumerate(codes)) % 2**32
    return h - 2**32 if h >= 2**31 else h


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40))
def test_java_string_hash_equals_the_definition(s: str) -> None:
    assert java_string_hash(s) == _java_hash_quadratic(s)


def test_java_string_hash_equals_java(tmp_path: Path) -> None:
    """Random strings (BMP, non-BMP, lone surrogates) hashed by a real JVM."""
    rng = random.Random(21)
    pools = [(0x20, 0x7E), (0x80, 0xFFFF), (0x10000, 0x10FFFF), (0xD800, 0xDFFF)]
    strings = []
    for n in range(200):
        chars = []
        for _ in range(rng.randrange(0, 60) if n else 0):
            lo, hi = rng.choice(pools)
            chars.append(chr(rng.randint(lo, hi)))
        strings.append("".join(chars))
    strings.append("x" * 100_000 + "\U0001F600")
    # UTF-16 code units as hex, so that lone surrogates cross the process boundary intact
    lines = [s.encode("utf-16-be", "surrogatepass").hex() for s in strings]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "Hash.java").write_text(
        "import java.nio.file.*; import java.util.*;\n"
        "public class Hash { public static void main(String[] a) throws Exception {\n"
        "  for (String hex : Files.readAllLines(Paths.get(a[0]))) {\n"
        "    StringBuilder b = new StringBuilder();\n"
        "    for (int i = 0; i + 4 <= hex.length(); i += 4) b.append((char) Integer.parseInt(hex.substring(i, i + 4), 16));\n"
        "    System.out.println(b.toString().hashCode()); } } }\n"
    )
    got = subprocess.run(["java", str(tmp_path / "Hash.java"), str(tmp_path / "in.txt")],
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert [int(x) for x in got] == [java_string_hash(s) for s in strings]


def test_java_string_hash_is_linear_and_assign_takes_a_megabyte_member_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    java_string_hash("m" * 4_000_000)
    assert time.monotonic() - started < 10  # quadratic took hours on this
    doc = {"topics": {"orders": 6},
           "members": [{"member_id": "m" * 1_000_000 + str(i), "topics": ["orders"]} for i in range(3)]}
    (tmp_path / "in.json").write_text(json.dumps(doc))
    started = time.monotonic()
    assert main(["assign", "--assignor", "sticky", str(tmp_path / "in.json")]) == 0
    assert time.monotonic() - started < 20
    assert len(json.loads(capsys.readouterr().out)["assignment"]) == 3


def test_scan_rows_of_a_mixed_file_fit_their_arrow_types(tmp_path: Path) -> None:
    """Without Spark: the scan rows of the mixed file (the pipeline's first step) convert
    to their Arrow schema (a seq beyond 64 bits once raised OverflowError here), and every
    bad line has a problem row with its reason."""
    import pyarrow as pa

    from groupspec.pipeline.validate_rows import SCAN_COLUMNS, scan_file

    path, where = _mixed(tmp_path)
    rows = list(scan_file(str(path)))
    types = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_()}
    table = pa.Table.from_pylist(rows, schema=pa.schema([(n, types[t]) for n, t in SCAN_COLUMNS]))
    problems = [r for r in table.to_pylist() if r["role"] == "problem"]
    assert set(where) <= {r["line"] for r in problems if r["dropped"]}
    assert all(r["reason"] for r in problems)


#: a real Kafka 4.1.2 recording with DescribeGroups exchanges (wire fuzz)
DESCRIBES = REPO / "examples" / "validator-false-positives" / "describe-before-new-group-commits-kafka-4.1.2.jsonl"


def test_a_negative_api_version_is_a_bad_event_not_a_crash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by mutating real recordings (2026-11-29): a DescribeGroups exchange with
    api_version -1 reached the replay, which builds the request at the exchange's version,
    and raised ValueError out of ``groupspec validate``. The line is now a bad_event naming
    the field, and the rest of the file is judged; in the columnar Parquet layout (whose
    writer keeps such a line as text) a row of a file made otherwise is refused with its line."""
    events = [json.loads(x) for x in DESCRIBES.read_text(encoding="utf-8").splitlines()]
    line = next(i for i, e in enumerate(events, start=1) if e.get("api") == "DescribeGroups")
    events[line - 1]["api_version"] = -1
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    code = main(["validate", "--format", "json", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and code == 2
    [report] = json.loads(out)["files"]
    [problem] = [p for p in report["problems"] if p["line"] == line]
    assert problem["kind"] == "bad_event" and "api_version" in problem["message"] and "-1" in problem["message"]
    assert len(report["groups"]) == len(validate_path(DESCRIBES).groups)
    # the columnar layout: its writer keeps the line as text, read back as the same problem
    pq_path = tmp_path / "t.parquet"
    write_lines(split_lines(path.read_bytes()), pq_path)
    assert [p.line for p in load_path(pq_path).problems if p.kind == "bad_event"] == [line]
    # a columnar file made otherwise, with the version in its typed column: refused, naming the line
    good = tmp_path / "good.parquet"
    write_lines(split_lines(DESCRIBES.read_bytes()), good)
    table = pq.read_table(good)
    versions = table.column("api_version").to_pylist()
    versions[line - 1] = -1
    col = table.schema.get_field_index("api_version")
    forged = table.set_column(col, "api_version", pa.array(versions, table.schema.field(col).type))
    pq.write_table(forged.replace_schema_metadata(pq.ParquetFile(good).schema_arrow.metadata), tmp_path / "f.parquet")
    with pytest.raises(TraceInputError, match=rf"line {line}: a DescribeGroups exchange needs .* -1"):
        load_path(tmp_path / "f.parquet")


#: a real Kafka 4.1.2 recording whose member joins alone (wire fuzz seed 112)
TWICE = REPO / "examples" / "validator-false-positives" / "delete-groups-naming-a-group-twice-kafka-4.1.2.jsonl"


def test_a_join_listing_a_protocol_twice_is_inconclusive_not_a_crash(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Found by mutating real recordings (2026-11-29): a JoinGroup listing its one protocol
    twice made the reference's join completion raise AssertionError out of ``groupspec
    validate`` (the timer path caught only NotModelled). Kafka counts the name twice too
    (ClassicGroup.supportedProtocols), so no protocol is a candidate and its vote throws in
    the join completion; the reference says so (NotModelled), and the group is inconclusive
    naming it."""
    events = [json.loads(x) for x in TWICE.read_text(encoding="utf-8").splitlines()]
    line = max(i for i, e in enumerate(events, start=1) if e.get("api") == "JoinGroup"
               and e["response"] and e["response"]["error"] == "NONE" and len(e["request"]["protocols"]) == 1)
    join = events[line - 1]
    join["request"]["protocols"] = join["request"]["protocols"] * 2
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    code = main(["validate", "--format", "json", str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and code in (0, 1, 2)
    [report] = json.loads(out)["files"]
    [group] = [g for g in report["groups"] if g["group_id"] == join["group_id"]]
    assert group["verdict"] == "inconclusive"
    assert any("IllegalArgumentException" in m["what"] for m in group["missing"]), group["missing"]


def test_a_group_whose_judging_raises_costs_only_its_own_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing already validated is lost: should judging one group raise (a validator bug an
    odd trace reaches), that group is inconclusive naming the error and the bug, and every
    other group of the file keeps its verdict."""
    from groupspec.validate import validator

    raw = TWICE.read_bytes()
    before = {g.group_id: g.verdict for g in validate_bytes(raw).groups}
    assert len(before) == 2
    victim = sorted(before)[0]
    judge = validator._judge_group

    def broken(g: Any, config: Any) -> Any:
        if g.group_id == victim:
            raise KeyError("a validator bug")
        return judge(g, config)

    monkeypatch.setattr(validator, "_judge_group", broken)
    after = {g.group_id: g for g in validate_bytes(raw).groups}
    assert after[victim].verdict == "inconclusive"
    [missing] = after[victim].missing
    assert missing.what.startswith(validator.VALIDATOR_FAILED) and "KeyError" in missing.what
    assert {k: v.verdict for k, v in after.items() if k != victim} == {k: v for k, v in before.items() if k != victim}


#: a real Kafka 4.1.2 consumer-group recording (wire fuzz seed 7208)
CONCURRENT_JOIN = REPO / "examples" / "validator-false-positives" / "kip848" / \
    "offset-fetch-before-a-concurrent-join-kafka-4.1.2.jsonl"


def test_a_request_stamped_decades_early_does_not_step_through_the_decades(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by mutating real recordings (2026-11-29): one request's sent_ms set to
    2147483648 (January 1970) among 2026's made the replay's coordinator run its periodic
    offset-expiry check once per offsets.retention.check.interval.ms across the 56 years
    (some three million checks per replayed branch, over a minute), none of which expired
    anything. Those checks are now skipped (Coordinator._skip_idle_checks, equivalence in
    tests/test_offset_expiry_skip.py): the checks made are counted here."""
    from groupspec.coordinator.coordinator import Coordinator

    events = [json.loads(x) for x in CONCURRENT_JOIN.read_text(encoding="utf-8").splitlines()]
    events[4]["sent_ms"] = 2147483648
    checks = [0]
    expire_all = Coordinator._expire_all

    def counted(self: Coordinator, txn: Any) -> None:
        checks[0] += 1
        expire_all(self, txn)

    monkeypatch.setattr(Coordinator, "_expire_all", counted)
    report = validate_bytes("".join(json.dumps(e) + "\n" for e in events).encode())
    assert report.groups
    assert 0 < checks[0] < 10_000, checks[0]
