#!/usr/bin/env bash
# A headless browser for the report tests (tests/test_reports_browser.py): Debian's
# chromium package renders the conformance and sweep HTML reports to a screenshot, so a
# page that does not render fails CI. Idempotent: an installed chromium is re-used.
set -euo pipefail
if ! command -v chromium >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
chromium --version
