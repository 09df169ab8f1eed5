#!/usr/bin/env bash
# The JVM oracle: compiles groupspec's small Java drivers (reference/groupspec/jvm/java/)
# against the Kafka 4.1.2 jars that 30-brokers.sh cached, so that differential tests run
# Apache Kafka's own assignors and rules. Idempotent: unchanged sources are not recompiled.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m groupspec.jvm build
