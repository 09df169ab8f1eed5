#!/usr/bin/env bash
# Apache Kafka 4.1.2's own unit-test sources (kafka-clients and kafka-group-coordinator,
# classifier test-sources, from Maven Central), unpacked into
# ~/.cache/groupspec/kafka-4.1.2/test-sources ($GROUPSPEC_CACHE): tests/test_kafka_tests_doc.py
# checks docs/kafka-tests/*.md's method names against them. Idempotent: a filled cache is re-used.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${GROUPSPEC_CACHE:-$HOME/.cache/groupspec}/kafka-4.1.2"
target="$cache/test-sources"
[ -f "$target/.complete" ] && exit 0
staging="$cache/test-sources.partial"
rm -rf "$staging" && mkdir -p "$staging/jars"
for artifact in kafka-clients kafka-group-coordinator; do
    mvn -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        "-Dartifact=org.apache.kafka:$artifact:4.1.2:jar:test-sources" \
        "-DoutputDirectory=$staging/jars"
done
python3 - "$staging" <<'PY'
import sys, zipfile
from pathlib import Path
staging = Path(sys.argv[1])
for jar in sorted((staging / "jars").glob("*.jar")):
    zipfile.ZipFile(jar).extractall(staging / "src")
PY
rm -rf "$target" && mv "$staging/src" "$target" && rm -rf "$staging"
touch "$target/.complete"
