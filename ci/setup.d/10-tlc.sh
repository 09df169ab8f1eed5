#!/usr/bin/env bash
# The TLC model checker for the TLA+ spec: the jar pinned (with its SHA-256) in
# groupspec.modelcheck.install, from Maven Central into ~/.cache/groupspec/tlc
# ($GROUPSPEC_CACHE). Idempotent: a cached jar is re-used. Apalache is not installed here
# (it ships only from GitHub, Docker and Nix); `groupspec spec check --checker apalache`
# uses it where it is on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v java >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
fi
python3 -m groupspec spec install
