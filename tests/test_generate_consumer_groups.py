"""``groupspec pipeline generate --group-protocol consumer|both``: KIP-848 groups in a generated
collection, judged conforming by the validator, with their injected violations found where
the manifest says and named by a rule the manifest lists."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from groupspec.pipeline.generate import (
    FAULTS,
    GROUP_PROTOCOLS,
    generate,
    group_scenario,
    plan_clusters,
)
from groupspec.pipeline.inject import VIOLATION_KINDS
from groupspec.sim.scenario import parse_scenario
from groupspec.trace.events import Event, Header, MetadataEvent, WireExchange
from groupspec.validate import validate_path
from groupspec.validate.load import load_path


def _verdicts(out: Path) -> dict[str, tuple[str, set[str]]]:
    """group id -> (verdict, the rules its divergences name), over every file of ``out``."""
    got: dict[str, tuple[str, set[str]]] = {}
    for f in sorted(out.glob("cluster-*")):
        for g in validate_path(f).groups:
            got[g.group_id] = (g.verdict, {d.rule for d in g.divergences})
    return got


def _events(path: Path) -> list[Event]:
    return [x.event for x in load_path(path).events]


def _apis(out: Path) -> dict[str, Counter[str]]:
    """group id -> how many exchanges of each API it has."""
    apis: dict[str, Counter[str]] = {}
    for f in sorted(out.glob("cluster-*")):
        for e in _events(f):
            if isinstance(e, WireExchange):
                apis.setdefault(e.group_id or e.connection.split("/")[0], Counter())[e.api] += 1
    return apis


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_consumer_groups_conform_and_their_violations_are_found(tmp_path: Path, fmt: str) -> None:
    col = generate(6000, tmp_path, inject_k=4, seed=5, fmt=fmt, clusters=2, group_protocol="consumer")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["group_protocol"] == "consumer" and len(manifest["injected"]) == 4
    assert {i["kind"] for i in manifest["injected"]} == set(VIOLATION_KINDS)
    verdicts = _verdicts(tmp_path)
    assert len(verdicts) == sum(c.groups for c in col.clusters)
    injected = {i["group_id"]: i for i in manifest["injected"]}
    for gid, (verdict, rules) in verdicts.items():
        if gid in injected:
            assert verdict == "violation", (gid, injected[gid]["detail"])
            assert rules & set(injected[gid]["rules"]), (gid, rules)
        else:
            assert verdict == "conforming", (gid, rules)
    for gid, apis in _apis(tmp_path).items():
        assert apis["ConsumerGroupHeartbeat"] and not apis["JoinGroup"] and not apis["SyncGroup"], gid
    for f in sorted(tmp_path.glob("cluster-*")):
        events = _events(f)
        header = events[0]
        assert isinstance(header, Header) and header.broker_config == {
            "group.consumer.session.timeout.ms": 10_000, "group.consumer.heartbeat.interval.ms": 3_000}
        # one image of the broker's topics for the file, holding every group's own topics
        images = [e for e in events if isinstance(e, MetadataEvent)]
        assert len(images) == 1
        groups = {e.group_id for e in events if isinstance(e, WireExchange) and e.group_id}
        assert {t.name.rpartition(".")[0] for t in images[0].topics} == groups


def test_consumer_violations_land_where_the_manifest_says(tmp_path: Path) -> None:
    col = generate(6000, tmp_path, inject_k=4, seed=9, fmt="jsonl", clusters=2, group_protocol="consumer")
    assert len(col.injected) == 4
    for inj in col.injected:
        row = json.loads(Path(inj.source).read_text(encoding="utf-8").splitlines()[inj.line - 1])
        assert row["seq"] == inj.seq and row["connection"].startswith(inj.group_id + "/")
        if inj.kind == "stale_commit":
            assert row["api"] == "OffsetCommit" and "member epoch" in inj.detail
        else:
            assert row["api"] == "ConsumerGroupHeartbeat" and "also holds" in inj.detail


def test_both_protocols_in_one_collection(tmp_path: Path) -> None:
    generate(12000, tmp_path, inject_k=2, seed=3, fmt="parquet", clusters=1, group_protocol="both")
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    injected = {i["group_id"] for i in manifest["injected"]}
    kinds = Counter("consumer" if apis["ConsumerGroupHeartbeat"] else "classic"
                    for apis in _apis(tmp_path).values())
    assert kinds["consumer"] >= 3 and kinds["classic"] >= 3, kinds
    for gid, (verdict, rules) in _verdicts(tmp_path).items():
        assert verdict == ("violation" if gid in injected else "conforming"), (gid, rules)


def test_a_consumer_group_is_the_classic_one_on_the_other_protocol() -> None:
    """The same draws make the same members, faults and times; the consumer group's topics
    are its own and the broker assigns with a server-side assignor drawn after them."""
    classic = group_scenario("g", random.Random(4), FAULTS)
    consumer = group_scenario("g", random.Random(4), FAULTS, "consumer")
    assert consumer["faults"] == classic["faults"] and consumer["until_ms"] == classic["until_ms"]
    assert [x["name"] for x in consumer["members"]] == [x["name"] for x in classic["members"]]
    assert consumer["topics"] == {f"g.{t}": n for t, n in classic["topics"].items()}
    assert consumer["defaults"]["group_protocol"] == "consumer"
    assert consumer["defaults"]["remote_assignor"] in ("uniform", "range")
    sc = parse_scenario(consumer, "g")
    assert all(ms.config.group_protocol == "consumer" for ms in sc.members)
    assert sc.coordinator.consumer_group_session_timeout_ms == 10_000


def test_an_unknown_group_protocol_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from groupspec.cli.main import main

    with pytest.raises(ValueError, match=r"--group-protocol: classic, consumer, both, not 'kip848'"):
        plan_clusters(100, tmp_path, group_protocol="kip848")
    assert main(["pipeline", "generate", "--events", "10", "--out", str(tmp_path / "x"),
                 "--group-protocol", "kip848"]) == 2
    assert "--group-protocol: invalid choice: 'kip848'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    # the parser's choices are the generator's
    assert GROUP_PROTOCOLS == ("classic", "consumer", "both")


def test_cli_generates_consumer_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from groupspec.cli.main import main

    out = tmp_path / "gen"
    assert main(["pipeline", "generate", "--events", "1500", "--out", str(out), "--no-spark",
                 "--group-protocol", "consumer", "--format", "jsonl", "--inject-violations", "1"]) == 0
    assert "1 violation(s) injected" in capsys.readouterr().out
    assert json.loads((out / "manifest.json").read_text())["group_protocol"] == "consumer"
    assert main(["validate", str(out / "cluster-000.jsonl")]) == 1
