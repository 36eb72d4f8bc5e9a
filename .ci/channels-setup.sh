#!/usr/bin/env bash
# Test-only parts for the chat/push channel tests (tests/test_channels.py): a virtualenv with
# a real Matrix homeserver (matrix-synapse) and the real `apprise` CLI. Neither is ever a
# runtime dependency of gpualert.py. Safe to run again: an existing, working venv is kept.
# The tests start Synapse themselves (SQLite, loopback, a fresh data dir per session) and skip
# with a reason when this venv is missing. Environment: GPUALERT_TEST_VENV (default below).
set -euo pipefail
VENV=${GPUALERT_TEST_VENV:-/opt/gpualert-test-venv}

have() { "$VENV/bin/python" -c 'import synapse.app.homeserver' 2>/dev/null && [ -x "$VENV/bin/apprise" ]; }

if have; then
  echo "channels-setup: $VENV already has matrix-synapse and apprise"
  exit 0
fi
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
python3 -m venv "$VENV" 2>/dev/null || {
  apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null && python3 -m venv "$VENV"; }
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q matrix-synapse apprise
have || { echo "channels-setup: error: synapse or apprise missing from $VENV" >&2; exit 1; }
echo "channels-setup: installed matrix-synapse and apprise into $VENV"
