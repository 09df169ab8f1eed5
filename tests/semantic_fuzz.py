"""Semantic fuzzing of the commands that read traces (helper of tests/test_fuzz_semantic.py).

Start from valid traces (the recordings under examples/, classic and KIP-848; slices of the
injected collection; simulated traces of both protocols) and change what they say, not how
it is written: member ids swapped, emptied or unknown; generations and epochs at the edges;
times negative, decreasing or huge; duplicate or missing requests; error codes the API
does not use; assignments naming unknown topics or negative partitions; events dropped,
duplicated, swapped, moved to another group or interleaved with another trace's. Most
results still decode (the line is well formed); the commands must judge them.

:func:`check` runs every command that reads a trace on one input and returns what went
wrong (nothing, for a correct command): ``groupspec validate`` (text and JSON), on the JSON
Lines file and on its Parquet form (the same report), ``groupspec trace convert`` both ways
(the bytes come back), and the conformance report's reading of a trace (wire summary,
findings with timelines, Markdown and HTML).

``python -m tests.semantic_fuzz --seeds 0-999`` runs it long, in one process, and writes
each crash's input to ``--out`` (default /tmp/semantic-fuzz).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import functools
import gzip
import io
import json
import random
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from groupspec.validate.validator import VALIDATOR_FAILED

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

#: the time one input may take through every command (s), and a trace's size for slices
TIME_LIMIT_S = 60.0
SLICE_EVENTS = 90

Doc = list[dict[str, Any]]


# ------------------------------------------------------------------ base traces
def _read_lines(path: Path) -> Doc:
    raw = path.read_bytes()
    if raw.startswith(b"\x1f\x8b"):
        raw = gzip.decompress(raw)
    return [json.loads(x) for x in raw.decode("utf-8").splitlines() if x.strip()]


def _group_of(obj: dict[str, Any]) -> str | None:
    g = obj.get("group_id")
    if isinstance(g, str):
        return g
    rec = obj.get("record")
    if isinstance(rec, dict) and isinstance(rec.get("group_id"), str):
        return str(rec["group_id"])
    return None


def _renumber(doc: Doc) -> Doc:
    return [{**o, "seq": i} for i, o in enumerate(doc)]


def _slices(path: Path, groups: int) -> list[tuple[str, Doc]]:
    """The first events of a few groups of a collection file, each a trace of its own."""
    lines = _read_lines(path)
    header, rest = lines[0], lines[1:]
    by_group: dict[str, Doc] = {}
    for o in rest:
        g = _group_of(o)
        if g is not None:
            by_group.setdefault(g, []).append(o)
    out = []
    for g in sorted(by_group)[:groups]:
        out.append((f"{path.name}:{g}", _renumber([header, *by_group[g][:SLICE_EVENTS]])))
    return out


def _simulated(name: str, group_protocol: str | None, until_ms: int) -> Doc:
    from groupspec.cli.simulate import bundled_scenarios
    from groupspec.sim.render import write_trace
    from groupspec.sim.runner import simulate
    from groupspec.sim.scenario import apply_overrides, load_scenario_text

    data = apply_overrides(json.loads(bundled_scenarios()[name]), until_ms=until_ms, group_protocol=group_protocol)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), f"{name}.json")), out)
    return [json.loads(x) for x in out.getvalue().splitlines() if x.strip()]


@functools.cache
def bases() -> tuple[tuple[str, Doc], ...]:
    """(name, trace) of every base trace, as JSON objects, one per line."""
    out: list[tuple[str, Doc]] = []
    files = sorted([*(EXAMPLES / "conformance").rglob("*.jsonl"),
                    *(EXAMPLES / "validator-false-positives").rglob("*.jsonl"),
                    *(EXAMPLES / "historical-bugs").rglob("*.jsonl"),
                    *(EXAMPLES / "wire-fuzz-open").rglob("*.jsonl")])
    for f in files:
        out.append((str(f.relative_to(EXAMPLES)), _read_lines(f)))
    for f in sorted((EXAMPLES / "injected").glob("*.jsonl.gz"))[:1]:
        out += _slices(f, 3)
    for name, proto in (("eager", None), ("zombie", None), ("default", "consumer"), ("failover", "consumer")):
        out.append((f"simulated {name} {proto or 'classic'}", _simulated(name, proto, 12_000)))
    return tuple(out)


# ------------------------------------------------------------------ odd values
ERRORS = ["NONE", "UNKNOWN_SERVER_ERROR", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS",
          "FENCED_INSTANCE_ID", "MEMBER_ID_REQUIRED", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR",
          "INCONSISTENT_GROUP_PROTOCOL", "GROUP_MAX_SIZE_REACHED", "FENCED_MEMBER_EPOCH",
          "STALE_MEMBER_EPOCH", "UNRELEASED_INSTANCE_ID", "UNSUPPORTED_ASSIGNOR", "INVALID_REQUEST",
          "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION", "NON_EMPTY_GROUP", "GROUP_ID_NOT_FOUND",
          "UNSUPPORTED_VERSION", "INVALID_SESSION_TIMEOUT", "OFFSET_METADATA_TOO_LARGE",
          "INVALID_COMMIT_OFFSET_SIZE", "COORDINATOR_NOT_AVAILABLE", "STALE_MEMBER_EPOCH", "NOT_LEADER_OR_FOLLOWER",
          "INVALID_GROUP_ID", "UNSTABLE_OFFSET_COMMIT", "INVALID_REGULAR_EXPRESSION", "GROUP_AUTHORIZATION_FAILED"]
INTS = [0, -1, -2, 1, 2, 3, 2**15 - 1, 2**31 - 1, -(2**31), 2**31, 2**32, 10**12, 2**53 + 1, 2**63 - 1, -(2**63)]
FLOATS = [0.0, -1.0, -1e12, 0.5, 1e15, 1e18, 9.2e18, 1e300, -1e300, 5e-324]
STRINGS = ["", " ", "x" * 5000, "\u00e9\u4e2d\U0001F600", "\x00", "\ud800", "null", "None", "-", "\n", "'\"",
           "consumer", "connect", "range", "cooperative-sticky", "uniform", "AAAAAAAAAAAAAAAAAAAAAA",
           "c1", "c1#2", "a", "g"]
#: the fields whose values say who, when and in which state (chosen more often than others)
HOT = ("member_id", "generation_id", "member_epoch", "group_instance_id", "instance_id", "protocol_type",
       "protocol_name", "error", "api_version", "correlation_id", "connection", "client_id", "sent_ms",
       "received_ms", "at_ms", "group_id", "leader", "assignment", "metadata", "partitions", "topics",
       "seq", "partition", "topic", "version", "committed_offset", "generation", "epoch", "timer",
       "subscribed_topic_names", "topic_partitions", "heartbeat_interval_ms", "session_timeout_ms",
       "rebalance_timeout_ms", "server_assignor", "subscribed_topic_regex", "group_epoch", "assignment_epoch",
       "members", "groups", "key", "group_state", "broker_config", "source", "topic_id", "fetch_offset",
       "high_watermark", "next_offset", "api_keys", "min_version", "max_version", "skip_assignment")


def _leaves_of(doc: Doc, keep: Callable[[Any], bool]) -> list[Any]:
    """Every leaf value of the events' JSON (dict values and list items, depth first) that
    ``keep`` accepts."""
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif keep(v):
            out.append(v)
    for o in doc:
        walk(o)
    return out


def _strings_of(doc: Doc) -> list[str]:
    return _leaves_of(doc, lambda v: isinstance(v, str))


def _ints_of(doc: Doc) -> list[int]:
    return _leaves_of(doc, lambda v: isinstance(v, int) and not isinstance(v, bool))


def _assignment_bytes(rng: random.Random, topics: list[str]) -> str:
    """A consumer-protocol assignment or subscription, odd inside (base64)."""
    from groupspec.protocol.consumer_protocol import Assignment, Subscription

    names = [*topics, "", "unknown-topic", "\u00e9", "x" * 300]
    parts = {rng.choice(names): tuple(rng.choice([-1, 0, 1, 2, 2**31 - 1, 7]) for _ in range(rng.randint(0, 3)))
             for _ in range(rng.randint(0, 3))}
    try:
        if rng.random() < 0.5:
            raw = Assignment(parts, rng.choice([None, b"", b"\x00\x01"])).encode(rng.randint(0, 3))
        else:
            raw = Subscription(tuple(rng.choice(names) for _ in range(rng.randint(0, 3))), None, parts,
                               rng.choice([-1, 0, 1, 2**31 - 1]), rng.choice([None, "r"])).encode(rng.randint(0, 3))
    except (ValueError, Exception):
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))
    if rng.random() < 0.2:
        raw = raw[: rng.randint(0, len(raw))]
    return base64.b64encode(raw).decode("ascii")


def odd_value(rng: random.Random, value: Any, key: str, doc: Doc) -> Any:
    """A value of ``value``'s JSON type that is odd for the field ``key``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        pick = rng.random()
        if pick < 0.55:
            return rng.choice(INTS)
        if pick < 0.8:
            return rng.choice(_ints_of(doc) or [0])
        return value + rng.choice([-1, 1, -1000, 1000])
    if isinstance(value, float):
        pick = rng.random()
        if pick < 0.4:
            return rng.choice(FLOATS)
        if pick < 0.8:
            return value + rng.choice([-1.0, 1.0, -50.0, 50.0, -5000.0, 5000.0, -1e6, 1e6, -1e9, 3.6e6])
        return float(rng.choice([0, -1, 1]))
    if isinstance(value, str):
        if key == "error":
            return rng.choice(ERRORS)
        if key in ("assignment", "metadata") and rng.random() < 0.8:
            return _assignment_bytes(rng, [s for s in _strings_of(doc) if 0 < len(s) < 40][:50])
        pick = rng.random()
        if pick < 0.45:
            return rng.choice([s for s in _strings_of(doc) if len(s) < 200] or [""])
        if pick < 0.85:
            return rng.choice(STRINGS)
        return value + rng.choice(["-x", "\u00e9", "0"])
    if isinstance(value, list):
        pick = rng.random()
        if not value or pick < 0.3:
            return []
        if pick < 0.5:
            return value + value
        if pick < 0.65:
            return list(reversed(value))
        if pick < 0.8:
            return value[:-1]
        return [copy.deepcopy(rng.choice(value)) for _ in range(rng.randint(1, 4))]
    if value is None:
        return rng.choice([None, "", 0, "x", [], -1])
    return value


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str, Any]]:
    """Every (path, key, value) under ``obj``, containers included."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield (*prefix, k), k, v
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            key = prefix[-1] if prefix and isinstance(prefix[-1], str) else ""
            yield (*prefix, i), key, v
            yield from _paths(v, (*prefix, i))


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


# ------------------------------------------------------------------ mutations
def m_field(rng: random.Random, doc: Doc, other: Doc) -> str:
    """One field of one event set to an odd value of its type (hot fields first)."""
    i = rng.randrange(len(doc))
    paths = [p for p in _paths(doc[i]) if p[1] != "kind"]
    if not paths:
        return "nothing"
    hot = [p for p in paths if p[1] in HOT]
    path, key, value = rng.choice(hot if hot and rng.random() < 0.8 else paths)
    new = odd_value(rng, value, key, doc)
    _set(doc[i], path, new)
    return f"line {i + 1}: {'.'.join(map(str, path))} = {str(new)[:40]!r}"


def m_same_field_everywhere(rng: random.Random, doc: Doc, other: Doc) -> str:
    """One id swapped for another across the whole trace (two members become one, etc.)."""
    strings = [s for s in set(_strings_of(doc)) if 0 < len(s) < 200]
    if len(strings) < 2:
        return "nothing"
    a, b = rng.sample(sorted(strings), 2)
    if rng.random() < 0.3:
        b = rng.choice(STRINGS)

    def walk(v: Any) -> Any:
        if v == a:
            return b
        if isinstance(v, dict):
            return {k: (walk(x) if k != "kind" else x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v
    doc[:] = [walk(o) for o in doc]
    return f"every {a[:30]!r} -> {b[:30]!r}"


def m_drop(rng: random.Random, doc: Doc, other: Doc) -> str:
    i = rng.randrange(len(doc))
    del doc[i]
    return f"line {i + 1} dropped"


def m_duplicate(rng: random.Random, doc: Doc, other: Doc) -> str:
    i = rng.randrange(len(doc))
    j = rng.randrange(len(doc) + 1)
    dup = copy.deepcopy(doc[i])
    if rng.random() < 0.5 and dup.get("kind") == "exchange" and dup.get("response") is not None:
        # the same request answered twice: another answer of the same API
        same = [o for o in doc if o.get("api") == dup.get("api") and o.get("response") is not None]
        dup["response"] = copy.deepcopy(rng.choice(same)["response"])
    doc.insert(j, dup)
    return f"line {i + 1} duplicated at {j + 1}"


def m_swap(rng: random.Random, doc: Doc, other: Doc) -> str:
    i, j = rng.randrange(len(doc)), rng.randrange(len(doc))
    doc[i], doc[j] = doc[j], doc[i]
    return f"lines {i + 1} and {j + 1} swapped"


def m_response(rng: random.Random, doc: Doc, other: Doc) -> str:
    """A response removed, or taken from another exchange of the same API."""
    xs = [o for o in doc if o.get("kind") == "exchange"]
    if not xs:
        return "nothing"
    x = rng.choice(xs)
    if rng.random() < 0.4:
        x["response"] = None
        x["received_ms"] = None if rng.random() < 0.7 else x.get("received_ms")
        return f"seq {x.get('seq')}: no response"
    same = [o for o in doc + other if o.get("api") == x.get("api") and o.get("response") is not None]
    if same:
        x["response"] = copy.deepcopy(rng.choice(same)["response"])
    return f"seq {x.get('seq')}: another response"


def m_request(rng: random.Random, doc: Doc, other: Doc) -> str:
    """A request taken from another exchange of the same API (another member, generation)."""
    xs = [o for o in doc if o.get("kind") == "exchange"]
    if not xs:
        return "nothing"
    x = rng.choice(xs)
    same = [o for o in doc + other if o.get("api") == x.get("api")]
    x["request"] = copy.deepcopy(rng.choice(same)["request"])
    return f"seq {x.get('seq')}: another request"


def m_group(rng: random.Random, doc: Doc, other: Doc) -> str:
    """Events moved to another group (an existing one, of the other trace, or a new one)."""
    groups = sorted({g for o in doc + other if (g := _group_of(o)) is not None})
    target = rng.choice([*groups, "", "other-group", "x" * 300])
    n = 0
    for o in doc:
        if _group_of(o) is not None and rng.random() < rng.choice([0.05, 0.3, 1.0]):
            n += 1
            if "group_id" in o:
                o["group_id"] = target
            if isinstance(o.get("record"), dict) and "group_id" in o["record"]:
                o["record"]["group_id"] = target
            req = o.get("request")
            if isinstance(req, dict):
                if "group_id" in req:
                    req["group_id"] = target
                if "key" in req:
                    req["key"] = target
                if "groups" in req and rng.random() < 0.5:
                    req["groups"] = [target]
    return f"{n} events to group {target[:30]!r}"


def m_interleave(rng: random.Random, doc: Doc, other: Doc) -> str:
    """Another trace's events (of another group, or of both protocols) mixed in."""
    take = [copy.deepcopy(o) for o in other[1:] if rng.random() < 0.7]
    for o in take:
        doc.insert(rng.randint(1, len(doc)), o)
    return f"{len(take)} events of another trace interleaved"


def m_times(rng: random.Random, doc: Doc, other: Doc) -> str:
    """The times of one connection (or all) shifted, reversed or made equal."""
    conns = sorted({str(o.get("connection")) for o in doc if "connection" in o})
    conn = rng.choice([*conns, "*"]) if conns else "*"
    how = rng.choice(["shift", "negative", "same", "reverse", "received_before_sent", "huge"])
    delta = rng.choice([-1e6, -5000.0, -100.0, 100.0, 5000.0, 1e6, 3.6e9])
    for o in doc:
        if conn != "*" and o.get("connection") != conn:
            continue
        for k in ("sent_ms", "received_ms", "at_ms"):
            v = o.get(k)
            if not isinstance(v, int | float) or isinstance(v, bool):
                continue
            if how == "shift":
                nv: float = v + delta
            elif how == "negative":
                nv = -abs(v)
            elif how == "same":
                nv = 1000.0
            elif how == "reverse":
                nv = 1e13 - v
            elif how == "received_before_sent":
                nv = v - 500 if k == "received_ms" else v
            else:
                nv = v * 1e5
            o[k] = int(nv) if (isinstance(v, int) or k == "at_ms") else nv
    return f"times of {conn}: {how}"


def m_header(rng: random.Random, doc: Doc, other: Doc) -> str:
    h = doc[0] if doc and doc[0].get("kind") == "header" else None
    pick = rng.random()
    if h is None or pick < 0.15:
        if h is not None:
            del doc[0]
            return "header dropped"
        doc.insert(0, {"kind": "header", "format": "groupspec-trace", "version": 1, "source": "recorder", "seq": 0})
        return "header added"
    if pick < 0.45:
        h["source"] = rng.choice(["recorder", "simulator", "", "reference", "x"])
    elif pick < 0.75:
        h["broker_config"] = {rng.choice(["group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
                                          "other"]): rng.choice([0, -1, 1, 2**31 - 1, 2**63 - 1, -(2**63)])
                              for _ in range(rng.randint(1, 2))}
    elif pick < 0.9:
        h["minor"] = rng.choice([0, 1, 2, 3, 99, -1])
    else:
        doc.insert(rng.randint(1, len(doc)), copy.deepcopy(h))
        return "a second header"
    return "header changed"


def m_seq(rng: random.Random, doc: Doc, other: Doc) -> str:
    how = rng.choice(["dup", "reverse", "gap", "edge"])
    if how == "dup" and len(doc) > 2:
        i = rng.randrange(1, len(doc))
        doc[i]["seq"] = doc[i - 1].get("seq", 0)
    elif how == "reverse":
        for i, o in enumerate(doc):
            o["seq"] = len(doc) - i
    elif how == "gap":
        for o in doc[rng.randrange(len(doc)):]:
            if isinstance(o.get("seq"), int):
                o["seq"] += 1000
    else:
        rng.choice(doc)["seq"] = rng.choice([-1, 2**31 - 1, 2**63 - 1, -(2**63)])
    return f"seq {how}"


def m_cross_protocol(rng: random.Random, doc: Doc, other: Doc) -> str:
    """KIP-848 exchanges (or records) in a classic group and the other way round: other's
    events renamed into one of doc's groups."""
    groups = sorted({g for o in doc if (g := _group_of(o))})
    if not groups:
        return "nothing"
    g = rng.choice(groups)
    take = [copy.deepcopy(o) for o in other[1:] if rng.random() < 0.4]
    for o in take:
        if "group_id" in o:
            o["group_id"] = g
        if isinstance(o.get("record"), dict) and "group_id" in o["record"]:
            o["record"]["group_id"] = g
        if isinstance(o.get("request"), dict):
            for k in ("group_id", "key"):
                if k in o["request"]:
                    o["request"][k] = g
            for k in ("groups", "group_ids", "groups_names"):
                if k in o["request"]:
                    o["request"][k] = [g]
        doc.insert(rng.randint(1, len(doc)), o)
    return f"{len(take)} events of another protocol's trace into group {g!r}"


def m_truncate(rng: random.Random, doc: Doc, other: Doc) -> str:
    n = rng.randint(1, len(doc))
    if rng.random() < 0.5:
        del doc[n:]
        return f"first {n} lines kept"
    del doc[1:n]
    return f"lines 2..{n} dropped (the trace starts late)"


def m_list_item(rng: random.Random, doc: Doc, other: Doc) -> str:
    """One item of a list inside an exchange's request or response repeated or dropped (a
    JoinGroup naming its protocol twice, a commit naming a partition twice, a member gone
    from a leader's list): the shapes a well-formed client does not send, which the random
    fields of :func:`m_field` rarely reach (found a crash on 2026-11-29)."""
    lists = [(i, path, value) for i, o in enumerate(doc) if o.get("kind") == "exchange"
             for path, _, value in _paths({k: o[k] for k in ("request", "response") if o.get(k)})
             if isinstance(value, list) and value]
    if not lists:
        return "nothing"
    i, path, value = rng.choice(lists)
    k = rng.randrange(len(value))
    if rng.random() < 0.6:
        value.insert(k, copy.deepcopy(value[k]))
        what = "repeated"
    else:
        del value[k]
        what = "dropped"
    return f"line {i + 1}: {'.'.join(map(str, path))}[{k}] {what}"


MUTATIONS: tuple[Callable[[random.Random, Doc, Doc], str], ...] = (
    m_field, m_field, m_field, m_field, m_same_field_everywhere, m_drop, m_duplicate, m_swap, m_response,
    m_request, m_group, m_interleave, m_times, m_header, m_seq, m_cross_protocol, m_truncate,
    m_list_item, m_list_item,
)


def mutate(seed: int) -> tuple[str, bytes, list[str]]:
    """Input number ``seed``: (base name, trace bytes, what was done)."""
    rng = random.Random(seed)
    pool = bases()
    name, base = pool[rng.randrange(len(pool))]
    _, other = pool[rng.randrange(len(pool))]
    doc = copy.deepcopy(base)
    other = copy.deepcopy(other)
    done = []
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        if not doc:
            break
        done.append(rng.choice(MUTATIONS)(rng, doc, other))
    return name, encode(doc), done


def encode(doc: Doc) -> bytes:
    text = "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in doc)
    return text.encode("utf-8", "surrogatepass")


# ------------------------------------------------------------------ the commands
class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Hang` in the block once it has taken ``seconds`` of CPU time (this
    process's, so that a machine busy with other work does not make a slow input a hang)."""
    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds:.0f} s of CPU time")

    old = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``groupspec ARGV`` in this process: (exit status, stdout, stderr)."""
    from groupspec.cli.main import main

    # as a terminal's or a pipe's: stdout strict UTF-8, stderr with escapes for what is not
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, _text(out), _text(err)


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def _cli_problems(what: str, code: int, out: str, err: str) -> list[str]:
    bad = []
    if "Traceback" in out + err:
        bad.append(f"{what}: a traceback")
    if code not in (0, 1, 2):
        bad.append(f"{what}: exit status {code}")
    return bad


def check(raw: bytes, workdir: Path, parquet: bool = True, reports: bool = True) -> list[str]:
    """What is wrong with the commands' handling of the trace ``raw`` (nothing: all is well).
    An exception out of a command is returned as a problem with its traceback."""
    from groupspec.validate import exit_code, validate_path
    from groupspec.validate.report import render_json, render_text

    problems: list[str] = []
    src = workdir / "t.jsonl"
    src.write_bytes(raw)
    try:
        code, out, err = run_cli(["validate", str(src)])
    except Exception:
        return [f"validate: raised\n{traceback.format_exc()}"]
    problems += _cli_problems("validate", code, out, err)
    if VALIDATOR_FAILED in out:
        problems.append(f"validate: a group's judging raised: {out[-600:]!r}")
    if code == 1 and "VIOLATION" not in out:
        problems.append("validate: exit 1 without a violation printed")
    if code == 2 and not ("inconclusive" in out or "error: " in err or "bad input" in out
                          or "unreadable" in out or "problem" in out):
        problems.append(f"validate: exit 2 without saying why: {out[-300:]!r} {err[-300:]!r}")
    try:
        report = validate_path(src)
        as_json = json.loads(render_json([report]))
        text = render_text([report])
        if exit_code([report]) != code:
            problems.append(f"validate: exit {code}, report's {exit_code([report])}")
        if text != out:
            problems.append("validate: the text report differs between two runs")
    except Exception:
        return [*problems, f"validate (json): raised\n{traceback.format_exc()}"]
    if parquet:
        pq = workdir / "t.parquet"
        back = workdir / "back.jsonl"
        try:
            c1, o1, e1 = run_cli(["trace", "convert", "--quiet", str(src), str(pq)])
            problems += _cli_problems("convert to parquet", c1, o1, e1)
            if c1 == 0:
                c2, o2, e2 = run_cli(["trace", "convert", "--quiet", str(pq), str(back)])
                problems += _cli_problems("convert to jsonl", c2, o2, e2)
                if c2 == 0 and back.read_bytes() != raw:
                    problems.append("convert: the JSON Lines bytes do not come back from Parquet")
                pq_report = validate_path(pq).to_json()
                mine = {**as_json["files"][0]} if "files" in as_json else None
                if mine is not None:
                    a = {k: v for k, v in pq_report.items() if k != "source"}
                    b = {k: v for k, v in mine.items() if k != "source"}
                    if json.dumps(a, sort_keys=True).replace("t.parquet", "t.jsonl") != \
                            json.dumps(b, sort_keys=True):
                        problems.append("validate: the Parquet form's report differs from the JSON Lines one")
            else:
                problems.append(f"convert to parquet: exit {c1}: {e1[-300:]}")
        except Exception:
            problems.append(f"convert/parquet: raised\n{traceback.format_exc()}")
    problems += _pipeline_metrics(raw)
    if reports:
        try:
            problems += _conformance_report(raw, src, report.to_json(), workdir)
        except Exception:
            problems.append(f"conformance report: raised\n{traceback.format_exc()}")
    return problems


def check_fast(raw: bytes) -> list[str]:
    """:func:`check`'s validator part alone, in memory (for the long run's breadth)."""
    from groupspec.conformance.findings import findings_of
    from groupspec.validate import validate_bytes
    from groupspec.validate.report import render_json, render_text

    try:
        report = validate_bytes(raw, "t.jsonl")
        text = render_text([report])
        text.encode("utf-8")
        validation = json.loads(render_json([report]))["files"][0]
        findings_of(validation, raw.decode("utf-8", "replace").splitlines())
    except Exception:
        return [f"validate: raised\n{traceback.format_exc()}"]
    if VALIDATOR_FAILED in text:
        return [f"validate: a group's judging raised\n{text}"]
    return _pipeline_metrics(raw)


def _pipeline_metrics(raw: bytes) -> list[str]:
    """What ``groupspec pipeline validate`` computes per group besides the verdict (the
    rebalance metrics of rebalances.parquet)."""
    from groupspec.pipeline.validate_metrics import rebalance_metrics
    from groupspec.validate.grouping import group_trace
    from groupspec.validate.load import load_bytes

    try:
        for g in group_trace(load_bytes(raw, "t.jsonl")).groups.values():
            json.dumps(rebalance_metrics(g.exchanges))
    except Exception:
        return [f"pipeline rebalance metrics: raised\n{traceback.format_exc()}"]
    return []


def _conformance_report(raw: bytes, src: Path, validation: dict[str, Any], workdir: Path) -> list[str]:
    from groupspec.conformance.findings import findings_of
    from groupspec.conformance.report import attach_findings, write_reports
    from groupspec.conformance.runner import apis_not_offered, wire_summary

    wire = wire_summary(src)
    apis_not_offered(src, {68: "ConsumerGroupHeartbeat", 11: "JoinGroup"})
    lines = raw.decode("utf-8", "replace").splitlines()
    found = [f.to_json() for f in findings_of(validation, lines)]
    verdict = validation.get("verdict", "conforming")
    out = workdir / "report"
    (out / "traces").mkdir(parents=True, exist_ok=True)
    (out / "traces" / "s--c.jsonl").write_bytes(raw)
    result = {"scenario": "s", "title": "s", "client": "c", "verdict": verdict, "trace": "traces/s--c.jsonl",
              "duration_s": 1.0, "notes": [], "run_error": None, "validation": validation, "wire": wire,
              "earlier": []}
    run = {"broker": "b", "broker_detail": "b", "started": "", "duration_s": 1.0, "clients": ["c"],
           "summary": {verdict: 1}, "results": [{**result, "findings": found}]}
    write_reports(out, [run])
    attach_findings({**run, "results": [result]}, out)
    return []


# ------------------------------------------------------------------ the long run
def _seeds(text: str) -> range:
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.semantic_fuzz")
    p.add_argument("--seeds", default="0-99", help="A-B: the inputs to run")
    p.add_argument("--out", default="/tmp/semantic-fuzz", help="where crashing inputs are written")
    p.add_argument("--no-parquet", action="store_true")
    p.add_argument("--fast", action="store_true", help="the validator alone, in memory")
    p.add_argument("--time-limit", type=float, default=TIME_LIMIT_S)
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bases()
    found = 0
    t_all = time.monotonic()
    for seed in _seeds(args.seeds):
        name, raw, done = mutate(seed)
        t0 = time.process_time()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                with time_limit(args.time_limit):
                    problems = (check_fast(raw) if args.fast
                                else check(raw, Path(tmp), parquet=not args.no_parquet))
            except Hang:
                problems = [f"hang: over {args.time_limit} s\n{traceback.format_exc()}"]
        took = time.process_time() - t0
        if problems:
            found += 1
            (out / f"{seed}.jsonl").write_bytes(raw)
            (out / f"{seed}.txt").write_text(f"base {name}\n" + "\n".join(done) + "\n\n" + "\n\n".join(problems))
            print(f"seed {seed}: {name}: {'; '.join(done)}: {problems[0].splitlines()[0]}", flush=True)
        elif took > 10:
            print(f"seed {seed}: slow, {took:.0f} s of CPU ({name}: {'; '.join(done)})", flush=True)
    print(f"done: {len(_seeds(args.seeds))} inputs, {found} with problems, {time.monotonic() - t_all:.0f} s", flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
