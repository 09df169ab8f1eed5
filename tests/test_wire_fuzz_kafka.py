"""The wire fuzzer against a real Kafka 4.1.2 broker (groupspec.conformance.wire_fuzz):
random group requests at every wire version, from several connections, through the
recorder, judged by the validator.

In CI this checks the machinery: every sequence is recorded, decoded and judged, and the
sequences reach the answers the fuzzer exists for. Whether Kafka and the reference agree on
every recording is the nightly job's question (ci/nightly runs the command line, which exits
1 on a broker-side divergence): each divergence the fuzzer has met so far was a real gap,
and a gap met at random would fail CI at random. Classic groups and consumer groups
(KIP-848). Needs the cached Kafka jars (ci/setup.d/30-brokers.sh); a broker that cannot
start fails the test. About 15 s a sequence."""

from __future__ import annotations

import os
from pathlib import Path

from groupspec.brokers import KafkaBroker
from groupspec.conformance.wire_fuzz import run_sequence

#: sequences in CI, and their first seed (GROUPSPEC_WIRE_FUZZ_SEQUENCES / _SEED to widen)
SEQUENCES = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEQUENCES", "3"))
FIRST_SEED = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEED", "1000"))


def _fuzz(broker: KafkaBroker, out: Path, group_protocol: str) -> str:
    """SEQUENCES recorded and judged sequences of 40 steps. Returns the steps' log (what
    was sent and answered)."""
    results = [run_sequence((broker.host, broker.port), FIRST_SEED + k, out, ops=40, group_protocol=group_protocol)
               for k in range(SEQUENCES)]
    for r in results:
        # every group the sequence used was recorded and judged (its divergences, if any, are
        # the nightly job's findings)
        assert r.trace.stat().st_size > 0, f"seed {r.seed}: nothing recorded"
        assert len(r.verdicts) >= r.groups, f"seed {r.seed}: groups judged {sorted(r.verdicts)}"
    return "\n".join(line for r in results for line in r.log)


def test_fuzzed_classic_group_requests_are_recorded_and_judged(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    log = _fuzz(kafka_broker, tmp_path, "classic")
    # the fuzzer does reach the deviations it exists for, not only well-behaved traffic
    # (which errors a sequence meets depends on the broker's timing too: the near-certain
    # ones are required, and one at least of the others)
    for answer in ("MEMBER_ID_REQUIRED", "UNKNOWN_MEMBER_ID", "-> NONE"):
        assert answer in log, f"no request answered {answer} in {SEQUENCES} sequences"
    assert any(a in log for a in ("ILLEGAL_GENERATION", "REBALANCE_IN_PROGRESS", "INCONSISTENT_GROUP_PROTOCOL"))


def test_fuzzed_consumer_group_requests_are_recorded_and_judged(
    kafka_broker: KafkaBroker, tmp_path: Path,
) -> None:
    """Consumer groups (KIP-848): ConsumerGroupHeartbeat joins, heartbeats, stale and
    future epochs, unknown members, subscription changes, leaves and static leaves, and
    commits and fetches with member epochs."""
    log = _fuzz(kafka_broker, tmp_path, "consumer")
    for answer in ("ConsumerGroupHeartbeat v0", "ConsumerGroupHeartbeat v1", "-> NONE"):
        assert answer in log, f"nothing like {answer!r} in {SEQUENCES} sequences"
    assert any(a in log for a in ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID", "UNRELEASED_INSTANCE_ID"))
