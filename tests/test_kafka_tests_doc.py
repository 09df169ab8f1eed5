"""docs/kafka-tests/*.md map each of Kafka's unit tests to its port, one layout for all:

* a summary table ``| Kafka test class | methods | ported | not ported |``, one row per Kafka
  test class (and an optional ``all`` row, the sums);
* per class, a section ``## <class> ...`` holding a table ``| Kafka test | ported at | notes |``
  with one row per Kafka test method: ``| `testName` | `id`, `id` | notes |``, where an id is a
  pytest test (``tests/file.py::function`` or ``tests/file.py::Class::method``) or a scenario
  file (``tests/scenarios/name.txt``), and a row ported nowhere has ``—`` and a note that
  starts with "Not ported".

The checks: every id names an existing test whose file cites the Kafka test by name; every row
has a port or a reason; no Kafka test appears twice in a section; each section has exactly the
rows the summary counts (methods, ported, not ported), so a method left out fails. The names are
also checked against Kafka 4.1.2's own test sources (unpacked by
ci/setup.d/35-kafka-test-sources.sh; GROUPSPEC_KAFKA_TEST_SOURCES names another directory) (a section's names must be test methods of its
class, and all of them when the summary counts every one)."""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from groupspec.brokers.common import cache_dir

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs" / "kafka-tests").glob("*.md"))

_ROW = re.compile(r"^\| `(?P<kafka>(?:test|should)\w+)` \| (?P<where>[^|]*) \| (?P<note>[^|]*) \|$")
_IDS = re.compile(r"`[^`]+`(, `[^`]+`)*")
_SUMMARY_HEAD = re.compile(r"^\| Kafka test class \| methods \| ported \| not ported \|$")
_SUMMARY_ROW = re.compile(r"^\| (?P<cls>[^|]+?) \| (?P<n>\d+) \| (?P<p>\d+) \| (?P<np>\d+) \|$")
_SECTION = re.compile(r"^## (?P<cls>\w+)")
_JAVA_TEST = re.compile(r"@(?:Test|ParameterizedTest)\b[\s\S]*?\bvoid (\w+)\(")


@dataclass
class Row:
    kafka: str
    where: list[str]
    note: str
    line: int
    problem: str | None = None


@dataclass
class Doc:
    path: Path
    #: class -> (methods, ported, not ported), from the summary table
    summary: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: class -> its rows, from the section of that name
    sections: dict[str, list[Row]] = field(default_factory=dict)
    #: rows outside any section
    stray: list[Row] = field(default_factory=list)


def parse(path: Path) -> Doc:
    doc = Doc(path)
    section: str | None = None
    in_summary = False
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _SUMMARY_HEAD.match(line):
            in_summary = True
            continue
        if in_summary:
            m = _SUMMARY_ROW.match(line)
            if m:
                # the class is the cell's first word (the rest may say which of its tests)
                doc.summary[m["cls"].split()[0]] = (int(m["n"]), int(m["p"]), int(m["np"]))
                continue
            if not line.startswith("|---"):
                in_summary = False
        if line.startswith("## "):
            m = _SECTION.match(line)
            section = m["cls"] if m else None
            if section is not None:
                doc.sections.setdefault(section, [])
            continue
        m = _ROW.match(line)
        if m is None:
            if re.match(r"^\| `?(?:test|should)\w+", line):
                doc.stray.append(Row(line.split("|")[1].strip(), [], "", no, "not in the layout"))
            continue
        where, note = m["where"].strip(), m["note"].strip()
        row = Row(m["kafka"], [], note, no)
        if where == "—":
            pass
        elif _IDS.fullmatch(where):
            row.where = re.findall(r"`([^`]+)`", where)
        else:
            row.problem = f"ported-at cell {where!r} is neither — nor a list of `ids`"
        (doc.sections[section] if section is not None else doc.stray).append(row)
    return doc


@functools.cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def _functions(module: Path) -> set[str]:
    """The names of a test module's functions and of its classes' methods (Class::method)."""
    tree = ast.parse(_text(module))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{f.name}" for f in node.body if isinstance(f, ast.FunctionDef))
    return names


def missing(test_id: str) -> str | None:
    """Why ``test_id`` names no existing test (None: it does)."""
    path, _, name = test_id.partition("::")
    target = ROOT / path
    if not target.is_file():
        return f"{path}: no such file"
    if target.suffix == ".txt":
        if not target.parent.samefile(ROOT / "tests" / "scenarios") or name:
            return f"{test_id}: a scenario is named by its file alone, under tests/scenarios"
        return None
    if not name:
        return f"{test_id}: a pytest id names a function (file::function)"
    if re.sub(r"\[.*\]$", "", name) not in _functions(target):
        return f"{test_id}: no such test function"
    return None


def problems(doc: Doc) -> list[str]:
    """Everything wrong with ``doc`` (empty: it passes)."""
    out = [f"line {r.line}: {r.kafka}: {r.problem}" for r in doc.stray]
    if not doc.summary:
        out.append("no summary table (| Kafka test class | methods | ported | not ported |)")
    classes = {c for c in doc.summary if c != "all"}
    for cls in sorted(classes - doc.sections.keys()):
        out.append(f"{cls}: in the summary but no section ## {cls}")
    for cls, rows in doc.sections.items():
        if rows and cls not in classes:
            out.append(f"{cls}: a section with rows but no line in the summary")
    for cls, rows in doc.sections.items():
        seen: set[str] = set()
        for r in rows:
            where = f"line {r.line}: {r.kafka}"
            if r.problem:
                out.append(f"{where}: {r.problem}")
            if r.kafka in seen:
                out.append(f"{where}: listed twice in {cls}")
            seen.add(r.kafka)
            if not r.where and not r.problem and not r.note.startswith("Not ported"):
                out.append(f"{where}: neither a port nor a reason starting 'Not ported'")
            for test_id in r.where:
                why = missing(test_id)
                if why is not None:
                    out.append(f"{where}: {why}")
                elif not re.search(rf"\b{r.kafka}\b", _text(ROOT / test_id.partition("::")[0])):
                    out.append(f"{where}: {test_id.partition('::')[0]} does not cite it")
        if cls in doc.summary:
            ported = sum(1 for r in rows if r.where)
            counts = (len(rows), ported, len(rows) - ported)
            if counts != doc.summary[cls]:
                out.append(f"{cls}: the summary says (methods, ported, not ported) = "
                           f"{doc.summary[cls]}, the table has {counts}")
    if "all" in doc.summary:
        sums = tuple(sum(v[i] for c, v in doc.summary.items() if c != "all") for i in range(3))
        if sums != doc.summary["all"]:
            out.append(f"the summary's all row {doc.summary['all']} is not the sum {sums}")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_the_doc_follows_the_layout_and_every_port_exists(doc: Path) -> None:
    parsed = parse(doc)
    assert sum(len(rows) for rows in parsed.sections.values()) > 0, "no table rows found"
    assert problems(parsed) == []


def test_the_three_docs_are_checked() -> None:
    assert {d.name for d in DOCS} >= {"classic.md", "offsets-and-service.md", "kip848-client.md"}


def _kafka_test_sources() -> Path:
    """Kafka 4.1.2's unpacked test sources: $GROUPSPEC_KAFKA_TEST_SOURCES, else the cache
    ci/setup.d/35-kafka-test-sources.sh fills. Missing, the test fails, saying how to get
    them, as every test of the suite that needs what ci/setup installs does: a skip would
    pass a check never made, and whether a run is CI's cannot be told reliably."""
    given = os.environ.get("GROUPSPEC_KAFKA_TEST_SOURCES")
    sources = Path(given) if given else cache_dir() / "kafka-4.1.2" / "test-sources"
    if not sources.is_dir():
        pytest.fail(f"Kafka's test sources are not at {sources}: run ci/setup (or "
                    "ci/setup.d/35-kafka-test-sources.sh) or set GROUPSPEC_KAFKA_TEST_SOURCES")
    return sources


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_the_names_are_kafka_test_methods(doc: Path) -> None:
    sources = _kafka_test_sources()
    parsed = parse(doc)
    wrong = []
    for cls, rows in parsed.sections.items():
        names = {r.kafka for r in rows}
        # a class name may occur in two modules (OffsetAndMetadataTest): the closer one
        candidates = [set(_JAVA_TEST.findall(f.read_text(encoding="utf-8")))
                      for f in sorted(sources.rglob(f"{cls}.java"))]
        if not candidates:
            continue
        methods = max(candidates, key=lambda found: len(found & names))
        wrong += [f"{cls}: {n} is not a test method of {cls}.java" for n in sorted(names - methods)]
        if parsed.summary.get(cls, (0,))[0] == len(methods):
            wrong += [f"{cls}: {n} is missing" for n in sorted(methods - names)]
    assert wrong == []


def test_a_missing_test_is_reported() -> None:
    assert missing("tests/test_kafka_tests_doc.py::test_a_missing_test_is_reported") is None
    assert missing("tests/scenarios/offsets.txt") is None
    assert missing("tests/test_kafka_tests_doc.py::no_such_test") is not None
    assert missing("tests/scenarios/no_such_scenario.txt") is not None
    assert missing("tests/no_such_module.py::test_x") is not None


def test_a_broken_doc_is_reported(tmp_path: Path) -> None:
    """Each check can fail: a row too few, a port that does not exist or does not cite the
    test, a row with neither port nor reason, a row twice, a bad cell."""
    ok = "tests/test_kafka_tests_doc.py::test_a_missing_test_is_reported"
    uncited = "test" + "CitedNowhere"  # (so that this file does not cite it)
    doc = tmp_path / "doc.md"
    doc.write_text("\n".join([
        "| Kafka test class | methods | ported | not ported |", "|---|---:|---:|---:|",
        "| FooTest | 6 | 2 | 4 |", "", "## FooTest", "",
        "| Kafka test | ported at | notes |", "|---|---|---|",
        f"| `test_a_missing_test_is_reported` | `{ok}` |  |",
        f"| `{uncited}` | `tests/test_kafka_tests_doc.py::test_a_broken_doc_is_reported` |  |",
        "| `testNoSuchPort` | `tests/test_kafka_tests_doc.py::no_such_test` |  |",
        "| `testNoReason` | — |  |",
        "| `testNoReason` | — | Not ported: twice |",
        "| `testBadCell` | somewhere |  |",
    ]))
    found = "\n".join(problems(parse(doc)))
    assert f"{uncited}: tests/test_kafka_tests_doc.py does not cite it" in found
    assert "testNoSuchPort: tests/test_kafka_tests_doc.py::no_such_test: no such test function" in found
    assert "testNoReason: neither a port nor a reason" in found
    assert "testNoReason: listed twice in FooTest" in found
    assert "testBadCell: ported-at cell 'somewhere'" in found
    assert "FooTest: the summary says (methods, ported, not ported) = (6, 2, 4), the table has (6, 3, 3)" in found
