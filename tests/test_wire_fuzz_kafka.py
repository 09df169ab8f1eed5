"""The wire fuzzer against a real Kafka 4.1.2 broker (groupspec.conformance.wire_fuzz):
random classic-group requests at every wire version, from several connections, through
the recorder, judged by the validator. Kafka is the authority, so no recording may hold a
divergence on the broker's side; the fuzzer's own client-rule breaches are expected.

Classic groups and consumer groups (KIP-848). Needs the cached Kafka jars (ci/setup.d/30-brokers.sh); a broker that cannot start fails
the test. About 15 s a sequence; the nightly profile runs more (ci/nightly)."""

from __future__ import annotations

import os
from pathlib import Path

from groupspec.brokers import KafkaBroker
from groupspec.conformance.wire_fuzz import run_sequence

#: sequences in CI, and their first seed (GROUPSPEC_WIRE_FUZZ_SEQUENCES / _SEED to widen)
SEQUENCES = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEQUENCES", "3"))
FIRST_SEED = int(os.environ.get("GROUPSPEC_WIRE_FUZZ_SEED", "1000"))


def test_kafka_answers_every_fuzzed_request_as_the_reference_does(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    results = [run_sequence((kafka_broker.host, kafka_broker.port), FIRST_SEED + k, tmp_path, ops=40)
               for k in range(SEQUENCES)]
    for r in results:
        assert r.trace.stat().st_size > 0 and r.verdicts, f"seed {r.seed}: nothing recorded"
        assert not r.details, f"seed {r.seed} ({r.trace}):\n" + "\n".join(r.details)
    # the fuzzer does reach the deviations it exists for, not only well-behaved traffic
    log = "\n".join(line for r in results for line in r.log)
    for answer in ("MEMBER_ID_REQUIRED", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "-> NONE"):
        assert answer in log, f"no request answered {answer} in {SEQUENCES} sequences"


def test_kafka_answers_every_fuzzed_consumer_group_request_as_the_reference_does(
    kafka_broker: KafkaBroker, tmp_path: Path,
) -> None:
    """Consumer groups (KIP-848): ConsumerGroupHeartbeat joins, heartbeats, stale and
    future epochs, unknown members, subscription changes, leaves and static leaves, and
    commits and fetches with member epochs."""
    results = [run_sequence((kafka_broker.host, kafka_broker.port), FIRST_SEED + k, tmp_path, ops=40,
                            group_protocol="consumer") for k in range(SEQUENCES)]
    for r in results:
        assert r.trace.stat().st_size > 0 and r.verdicts, f"seed {r.seed}: nothing recorded"
        assert not r.details, f"seed {r.seed} ({r.trace}):\n" + "\n".join(r.details)
    log = "\n".join(line for r in results for line in r.log)
    for answer in ("FENCED_MEMBER_EPOCH", "ConsumerGroupHeartbeat v0", "ConsumerGroupHeartbeat v1", "-> NONE"):
        assert answer in log, f"nothing like {answer!r} in {SEQUENCES} sequences"
