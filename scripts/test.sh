#!/usr/bin/env bash
# The whole test suite, as CI runs it: install what the tests need, start the private sound
# server the capture tests record from (scripts/start-test-audio.sh), then swift test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/start-test-audio.sh >/dev/null
swift test "$@"
