"""The consumer-protocol conformance suite (KIP-848) against Apache Kafka 4.1.2 with real
clients: confluent-kafka (librdkafka, ``group.protocol=consumer``) and kafka-clients' Java
consumer (``ConsumerDriver.java``). Kafka must be conforming on every scenario with both.

The run goes through the CLI, as a user runs it (``groupspec conformance --broker kafka
--group-protocol consumer``): it starts its own broker, with the consumer-group session
timeout and heartbeat interval groupspec sets (groupspec.brokers.kafka), and validates with
the same settings. Nothing is mocked and nothing is skipped: a broker or a JVM that cannot
start fails these tests. The run happens once per session; the tests read its summary.json,
reports and traces.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groupspec.conformance.consumer_scenarios import (
    CONSUMER_SCENARIOS,
    SESSION_MS,
    SHORT_REBALANCE_TIMEOUT_MS,
)
from groupspec.conformance.drivers import CONSUMER_CLIENTS
from groupspec.conformance.runner import validation_config
from groupspec.validate import validate_path

pytestmark = [pytest.mark.slow]

NAMES = [s.name for s in CONSUMER_SCENARIOS]
HEARTBEAT = "ConsumerGroupHeartbeat"


@pytest.fixture(scope="session")
def consumer_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int, str, dict[str, Any]]]:
    out = tmp_path_factory.mktemp("conformance-consumer")
    proc = subprocess.run(
        [sys.executable, "-m", "groupspec", "conformance", "--broker", "kafka",
         "--group-protocol", "consumer", "--out", str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert (out / "summary.json").is_file(), proc.stderr[-3000:]
    yield out, proc.returncode, proc.stderr, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def _events(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines() if line.strip()]


def _exchanges(trace: Path, api: str | None = None) -> list[dict[str, Any]]:
    return [e for e in _events(trace) if e.get("kind") == "exchange" and (api is None or e["api"] == api)]


def _assigned(exchange: dict[str, Any]) -> int | None:
    assignment = (exchange.get("response") or {}).get("assignment")
    if not assignment:
        return None
    return sum(len(t["partitions"]) for t in assignment["topic_partitions"])


@pytest.mark.java
def test_kafka_is_conforming_on_every_consumer_scenario_with_both_clients(
    consumer_run: tuple[Path, int, str, dict[str, Any]],
) -> None:
    out, code, stderr, summary = consumer_run
    assert code == 0, stderr[-3000:]
    assert summary["group_protocol"] == "consumer"
    assert set(CONSUMER_CLIENTS) == {"confluent-kafka", "java"}
    got = {(r["client"], r["scenario"]): r for r in summary["results"]}
    assert set(got) == {(c, n) for c in CONSUMER_CLIENTS for n in NAMES}
    assert len(NAMES) >= 6
    for (client, name), r in got.items():
        where = f"{name} / {client}"
        # the verdict first (test_conformance.py says why)
        assert r["verdict"] == "conforming", (
            f"{where}: {json.dumps(r['validation'], indent=1)[:4000]}\nrun error: {r['run_error']}")
        assert r["run_error"] is None, f"{where}: {r['run_error']}"
        [group] = r["validation"]["groups"]
        assert group["exchanges"] > 0
        # the trace on disk says the same when validated again with the run's settings
        assert validate_path(out / r["trace"], validation_config("kafka", "consumer")).worst() == "conforming"
        # the consumer protocol and nothing else: heartbeats, no JoinGroup or SyncGroup
        apis = {e["api"] for e in _exchanges(out / r["trace"])}
        assert HEARTBEAT in apis and not apis & {"JoinGroup", "SyncGroup", "Heartbeat"}, where
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Every scenario is conforming with every client." in md
    assert "group protocol: consumer" in md
    assert all(f"#### {n}:" in md for n in NAMES)
    for n in NAMES:  # progress per scenario
        assert f"/ {n}: CONFORMING" in stderr


@pytest.mark.java
def test_consumer_scenarios_exercise_what_they_say(consumer_run: tuple[Path, int, str, dict[str, Any]]) -> None:
    """Each scenario's trace holds the protocol events it is about, so a conforming verdict
    means Kafka handled them as the reference does, not that they never happened."""
    out, _, _, summary = consumer_run
    for r in summary["results"]:
        trace = out / r["trace"]
        where = f"{r['scenario']} / {r['client']}"
        beats = [e for e in _exchanges(trace, HEARTBEAT) if (e.get("response") or {}).get("error")]
        ok = [e for e in beats if e["response"]["error"] == "NONE"]
        leaves = {(e["client_id"], e["request"]["member_epoch"]) for e in beats if e["request"]["member_epoch"] < 0}
        joins = [e for e in ok if e["request"]["member_epoch"] == 0]
        commits = _exchanges(trace, "OffsetCommit")
        assert commits and all(e["api_version"] >= 9 for e in commits), where
        name = r["scenario"]
        if name == "join":
            assert sorted(e["client_id"] for e in joins) == ["a", "b", "c"], where
            # a owned every partition, then released some for b and c
            sizes = [n for e in ok if e["client_id"] == "a" and (n := _assigned(e)) is not None]
            assert sizes[0] == 4 and min(sizes) < 4, (where, sizes)
            assert {e["response"]["member_epoch"] for e in ok} >= {1, 2, 3}, where
        elif name == "leave":
            assert ("a", -1) in leaves, where
            assert _assigned([e for e in ok if e["client_id"] == "b" and _assigned(e) is not None][-1]) == 4, where
        elif name == "static-restart":
            assert ("a", -2) in leaves and ("a", -1) not in leaves, where  # a static member's leave
            rejoin = [e for e in joins if e["client_id"] == "a-restarted"]
            assert rejoin and rejoin[0]["request"]["instance_id"] == "instance-a", where
            assert any(n.endswith("(the same)") for n in r["notes"]), where
        elif name == "crash":
            assert not any(c == "b" for c, _ in leaves), where  # killed: no leave heartbeat
            assert any(n.startswith("b killed") for n in r["notes"]), where
        elif name == "slow-revocation":
            _check_fenced_by_rebalance_timeout(ok, beats, where)
        elif name == "stale-epoch-commit":
            stale = [e for e in commits if e["client_id"] == "a" and e["response"]["partitions"]
                     and all(p["error"] == "STALE_MEMBER_EPOCH" for p in e["response"]["partitions"])]
            assert len(stale) == 1, where
            epochs = [e["response"]["member_epoch"] for e in ok if e["client_id"] == "a"
                      and e["received_ms"] < stale[0]["sent_ms"]]
            assert stale[0]["request"]["generation_id"] < epochs[-1], where  # older than a's epoch
            later = [e for e in commits if e["client_id"] == "a" and e["seq"] > stale[0]["seq"]]
            assert later and all(p["error"] == "NONE" for p in later[0]["response"]["partitions"]), where
        elif name == "subscription-change":
            subs = [(e["client_id"], len(e["request"]["subscribed_topic_names"])) for e in beats
                    if e["request"]["subscribed_topic_names"]]
            assert ("b", 2) in subs, where
            t2_only = [e for e in beats if e["client_id"] == "a" and e["request"]["subscribed_topic_names"]
                       and all(t.split("-")[-2] == "t2" for t in e["request"]["subscribed_topic_names"])]
            assert t2_only, where
        elif name == "regex-subscription":
            # both subscribe by regex, never by name, and end up with both topics between them
            regexes = {e["client_id"] for e in beats if e["request"].get("subscribed_topic_regex")}
            assert regexes == {"a", "b"}, where
            assert not any(e["request"]["subscribed_topic_names"] for e in beats), where
            topics = {t["topic_id"] for e in ok for t in ((e["response"].get("assignment") or {})
                                                          .get("topic_partitions") or [])}
            assert len(topics) == 2, where
        else:
            raise AssertionError(f"no check for scenario {name}")


def _check_fenced_by_rebalance_timeout(ok: list[dict[str, Any]], beats: list[dict[str, Any]], where: str) -> None:
    """a was told to release partitions and did not; b got every partition after a's
    rebalance timeout and before its session timeout ran out; a, thawed, was no member."""
    told = next(e for e in ok if e["client_id"] == "a" and (n := _assigned(e)) is not None and n < 4)
    took = next(e for e in ok if e["client_id"] == "b" and e["seq"] > told["seq"] and _assigned(e) == 4)
    assert not [e for e in beats if e["client_id"] == "a" and told["seq"] < e["seq"] < took["seq"]], where
    waited = took["received_ms"] - told["received_ms"]
    assert SHORT_REBALANCE_TIMEOUT_MS - 200 <= waited < SESSION_MS, (where, waited)
    after = [e for e in beats if e["client_id"] == "a" and e["seq"] > took["seq"]]
    assert after and after[0]["response"]["error"] in ("UNKNOWN_MEMBER_ID", "FENCED_MEMBER_EPOCH"), where
    assert any(e["request"]["member_epoch"] == 0 and e["response"]["error"] == "NONE" for e in after), where


def test_consumer_protocol_cli_refuses_classic_only_clients() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "groupspec", "conformance", "--broker", "kafka", "--group-protocol", "consumer",
         "--clients", "kafka-python"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert "known with --group-protocol consumer: confluent-kafka, java" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "groupspec", "conformance", "--broker", "kafka", "--group-protocol", "consumer",
         "--scenarios", "zombie-commit"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2 and "unknown zombie-commit" in done.stderr
