"""``groupspec assign``: the example input, and errors that name the place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "assign"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["assign", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_example_sticky_with_previous(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "--assignor", "sticky",
        str(EXAMPLES / "group.json"),
        "--previous", str(EXAMPLES / "previous.json"),
    )
    assert code == 0
    doc = json.loads(out)
    # consumer-d is the only audit subscriber and takes one orders partition to balance
    # 11 partitions as 4/4/3; the audit partitions of the departed consumer-a move too.
    # Kafka 4.1.2's jar gives this answer (the general path's balance loop moves orders-0,
    # the first partition of the topic in its order); tests/test_assignors_kafka_jar.py
    # checks the assignor against the jar on random inputs.
    assert doc["assignment"] == {
        "consumer-b-7f3a": {"orders": [1, 2], "payments": [0, 1]},
        "consumer-c-19d0": {"orders": [3, 4, 5], "payments": [2]},
        "consumer-d-5be2": {"audit": [0, 1], "orders": [0]},
    }
    assert (doc["moves"], doc["minimum_moves"], doc["withheld"]) == (3, 3, 0)


def test_optimal_prints_the_optimum_and_compares_with_kafka(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "--assignor", "sticky", "--optimal",
        str(EXAMPLES / "group.json"),
        "--previous", str(EXAMPLES / "previous.json"),
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["assignor"] == "sticky-optimal"
    # Here the optimum ties with Kafka on balance and moves but picks orders-2.
    assert doc["assignment"]["consumer-d-5be2"] == {"audit": [0, 1], "orders": [2]}
    cmp = doc["kafka"]
    assert cmp["same"] is False
    assert cmp["optimal"] == cmp["kafka"] == {"spread": 1, "sum_of_squares": 41, "moves": 3}
    assert cmp["kafka_assignment"]["consumer-d-5be2"] == {"audit": [0, 1], "orders": [0]}
    code, _, err = run(capsys, "--assignor", "range", "--optimal", str(EXAMPLES / "group.json"))
    assert code == 2
    assert "--optimal: only for sticky, cooperative-sticky, not range" in err


def test_racks_in_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # KIP-881: each member takes the partitions with a replica in its rack.
    doc = {
        "topics": {"t": {"partitions": 4, "racks": [["b"], ["a"], ["b"], ["a"]]}, "u": 2},
        "members": [
            {"member_id": "m1", "topics": ["t"], "rack": "a"},
            {"member_id": "m2", "topics": ["t"], "rack": "b"},
        ],
    }
    path = tmp_path / "racks.json"
    path.write_text(json.dumps(doc))
    for name in ("range", "sticky", "cooperative-sticky"):
        code, out, _ = run(capsys, "--assignor", name, str(path))
        assert code == 0
        assert json.loads(out)["assignment"] == {"m1": {"t": [1, 3]}, "m2": {"t": [0, 2]}}


def test_example_cooperative_withholds_the_moving_partition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "--assignor", "cooperative-sticky",
        str(EXAMPLES / "group.json"),
        "--previous", str(EXAMPLES / "previous.json"),
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["assignment"]["consumer-d-5be2"] == {"audit": [0, 1]}
    assert (doc["moves"], doc["withheld"]) == (2, 1)


def test_unknown_assignor(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--assignor", "stiky", str(EXAMPLES / "group.json"))
    assert code == 2
    assert "--assignor: unknown assignor 'stiky'; known: range, roundrobin" in err


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"topics": {"t": {"partitions": 2, "racks": [["a"]]}}, "members": []},
            "topics.t.racks: expected a list of 2 replica rack lists, one per partition",
        ),
        (
            {"topics": {"t": {"partitions": 1, "racks": [[1]]}}, "members": []},
            "topics.t.racks[0]: expected a list of rack ids (or null)",
        ),
        (
            {"topics": {"t": {"count": 1}}, "members": []},
            "topics.t: unknown field(s) ['count']; known: ['partitions', 'racks']",
        ),
        (
            {"topics": {"t": 1}, "members": [{"member_id": "m", "topics": ["t"], "rack": 3}]},
            "members[0].rack: expected a string or null",
        ),
    ],
)
def test_bad_racks_name_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: object, message: str
) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "--assignor", "range", str(path))
    assert code == 2
    assert message in err
    assert err.startswith(f"error: {path}: ")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"members": []}, "missing field 'topics'"),
        ({"topics": {"t": 1}, "members": [{"topics": ["t"]}]}, "members[0]: missing field 'member_id'"),
        ({"topics": {"t": -1}, "members": []}, "topics.t: expected a partition count from 0 to 1,000,000"),
        ({"topics": {"t": 1}, "members": [{"member_id": "a", "topics": "t"}]}, "members[0].topics: expected a list"),
        (
            {"topics": {"t": 1}, "members": [{"member_id": "a", "topics": ["t"], "owned": {"t": ["x"]}}]},
            "members[0].owned.t: expected a list of partition numbers",
        ),
        (
            {"topics": {"t": 1}, "members": [{"member_id": "a", "topics": ["t"]}, {"member_id": "a", "topics": ["t"]}]},
            "members[1].member_id: duplicate member id 'a'",
        ),
    ],
)
def test_bad_input_names_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: object, message: str
) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "--assignor", "range", str(path))
    assert code == 2 and out == ""
    assert f"{path}: " in err and message in err


def test_invalid_json_names_line_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.json"
    path.write_text('{"topics": {}\n "members": []}')
    code, _, err = run(capsys, "--assignor", "range", str(path))
    assert code == 2 and f"{path}: line 2 column 2: invalid JSON" in err


def test_previous_owning_a_partition_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps({"x": {"orders": [0]}, "y": {"orders": [0]}}))
    code, _, err = run(capsys, "--assignor", "sticky", str(EXAMPLES / "group.json"), "--previous", str(prev))
    assert code == 2 and "previous['y']['orders']: partition 0 is owned by two members" in err
