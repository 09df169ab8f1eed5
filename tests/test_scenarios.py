"""Scenario tests as data files (etcd-raft style): tests/scenarios/*.txt.

Each file is a script of requests and clock ticks with the exact expected output; see
:mod:`groupspec.coordinator.scenario` for the format. ``GROUPSPEC_REWRITE=1 pytest
tests/test_scenarios.py`` rewrites the expectations from what the coordinator does; review
the diff against Kafka's source before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from groupspec.coordinator.scenario import ScenarioError, run_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
FILES = sorted(SCENARIOS.glob("*.txt"))
REWRITE = os.environ.get("GROUPSPEC_REWRITE", "") not in ("", "0")


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path: Path) -> None:
    text = path.read_text()
    first = text.split("\n", 1)[0]
    assert first.startswith("# ") and (".java" in first or ".scala" in first), (
        f"{path.name}: the first line must be a comment citing the Kafka source file and function"
    )
    rel = str(path.relative_to(Path(__file__).parent.parent))
    got = run_scenario(text, rel)
    if REWRITE:
        if got != text:
            path.write_text(got)
        return
    if got != text:
        diff = "".join(
            difflib.unified_diff(
                text.splitlines(keepends=True),
                got.splitlines(keepends=True),
                fromfile=f"{rel} (expected)",
                tofile=f"{rel} (actual)",
            )
        )
        pytest.fail(f"scenario output differs (GROUPSPEC_REWRITE=1 to accept):\n{diff}")


# ------------------------------------------------------------------ the format itself
GOOD = """\
# header
JoinGroup id=1 group=g client=c1 protocols=range:m
----
#1 JoinGroup MEMBER_ID_REQUIRED member_id=c1-1
+ GroupCreated g now_ms=0
+ PendingMemberAdded g member_id=c1-1 deadline_ms=10000
* GroupMetadataPersisted g protocol_type=null generation_id=0 protocol_name=null leader_id=null state_timestamp_ms=0 members=[]
"""


def test_runner_reproduces_a_correct_file() -> None:
    assert run_scenario(GOOD, "good.txt") == GOOD


def test_runner_reports_a_wrong_expectation() -> None:
    wrong = GOOD.replace("MEMBER_ID_REQUIRED", "NONE")
    assert run_scenario(wrong, "wrong.txt") == GOOD


def test_comments_and_blank_lines_survive_a_rewrite() -> None:
    text = "# a\n\n# b\ntick ms=5\n----\n\n# trailing\n"
    assert run_scenario(text, "c.txt") == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tick ms=1\n", "bad.txt:1: expected '----'"),
        ("# x\nnope a=1\n----\n", "bad.txt:2: unknown command 'nope'"),
        ("tick ms=1\n----\n\nJoinGroup id=1 group=g protocols=r:m bogus=1\n----\n",
         "bad.txt:4: JoinGroup: unknown argument(s) bogus"),
        ("Heartbeat id=1 group=g member=m\n----\n", "bad.txt:1: Heartbeat: missing argument gen="),
        ("tick ms=x\n----\n", "bad.txt:1: tick: ms= must be an integer"),
        ("tick ms=1\n----\n\nconfig group_max_size=2\n----\n",
         "bad.txt:4: config: config must come before"),
        ("----\n", "bad.txt:1: '----' without a command"),
        ("FindCoordinator id=1 key=g\n----\n\nFindCoordinator id=1 key=g\n----\n",
         "bad.txt:4: FindCoordinator: request id 1 was already used"),
        ("JoinGroup id=1 group=g protocols=r:m version=12\n----\n",
         "bad.txt:1: JoinGroup: invalid request"),
    ],
)
def test_bad_input_names_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as e:
        run_scenario(text, "bad.txt")
    assert message in str(e.value)
