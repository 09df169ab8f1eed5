"""docs/kafka-tests/classic.md maps each of Kafka's classic-group unit tests to its port: every
"ported at" entry must name an existing test (a scenario file, or a test function of a test
file) that cites the Kafka test by name, and every row not ported must say why."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "kafka-tests" / "classic.md"


def _rows() -> list[tuple[str, list[str], str]]:
    rows = []
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.fullmatch(r"test\w+", cells[0]):
            continue
        rows.append((cells[0], re.findall(r"`([^`]+)`", cells[1]), cells[2]))
    return rows


def test_the_doc_has_rows_and_no_test_twice() -> None:
    names = [name for name, _, _ in _rows()]
    assert len(names) > 150
    assert len(names) == len(set(names))


def test_every_port_named_exists_and_cites_the_kafka_test() -> None:
    for name, ports, why in _rows():
        if not ports:
            assert why.startswith("Not ported"), f"{name}: neither a port nor a reason"
            continue
        for port in ports:
            path, _, func = port.partition("::")
            file = ROOT / path
            assert file.is_file(), f"{name}: {path} does not exist"
            text = file.read_text()
            assert re.search(rf"\b{name}\b", text), f"{name}: {path} does not cite it"
            if func:
                assert re.search(rf"^def {func}\(", text, re.M), f"{name}: no test {port}"
            else:
                assert path.startswith("tests/scenarios/") and path.endswith(".txt"), port
