"""docs/kafka-tests/offsets-and-service.md: every test named in its "ported at" column exists
(a scenario file, or a test function in a test module), and every row has either a port or
a reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "docs" / "kafka-tests" / "offsets-and-service.md"]

_ROW = re.compile(r"^\| `(?P<kafka>test\w+)` \| (?P<where>[^|]*) \| (?P<note>[^|]*) \|$")


def rows(doc: Path) -> list[tuple[str, list[str], str]]:
    """(Kafka test, ported-at ids, note) for every row of the doc's per-class tables."""
    out = []
    for line in doc.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            where = re.findall(r"`([^`]+)`", match["where"])
            out.append((match["kafka"], where, match["note"].strip()))
    return out


def _functions(module: Path) -> set[str]:
    """The names of a test module's functions and of its classes' methods (Class::method)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
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


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_ported_at_id_names_an_existing_test(doc: Path) -> None:
    table = rows(doc)
    assert len(table) > 200, "the doc's table was not found"
    problems = [f"{kafka}: {why}" for kafka, where, _ in table for test_id in where
                if (why := missing(test_id)) is not None]
    assert problems == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_row_has_a_port_or_a_reason(doc: Path) -> None:
    bare = [kafka for kafka, where, note in rows(doc) if not where and not note]
    assert bare == []


def test_a_missing_test_is_reported() -> None:
    assert missing("tests/test_kafka_tests_doc_offsets.py::test_a_missing_test_is_reported") is None
    assert missing("tests/scenarios/offsets.txt") is None
    assert missing("tests/test_kafka_tests_doc_offsets.py::no_such_test") is not None
    assert missing("tests/scenarios/no_such_scenario.txt") is not None
    assert missing("tests/no_such_module.py::test_x") is not None
