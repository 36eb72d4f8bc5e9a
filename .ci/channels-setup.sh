#!/usr/bin/env bash
# Test-only parts for the chat/push channel tests (tests/test_channels.py): a virtualenv with
# a real Matrix homeserver (matrix-synapse) and the real `apprise` CLI. Neither is ever a
# runtime dependency of gpualert.py. Safe to run again: an existing, working venv is kept.
# The tests start Synapse themselves (SQLite, loopback, a fresh data dir per session) and skip
# with a reason when this venv is missing. Environment: GPUALERT_TEST_VENV (default below).
#
# The suite runs as an ordinary user, so the venv is made from Debian's /usr/bin/python3: a
# venv's interpreter is a link to the one that made it, and pyenv's lives under /root (0700).
set -euo pipefail
VENV=${GPUALERT_TEST_VENV:-/opt/gpualert-test-venv}
BASE=/usr/bin/python3

# usable by anyone: checked as nobody, not as root, who can read everything
have() { runuser -u nobody -- "$VENV/bin/python" -c 'import synapse.app.homeserver' 2>/dev/null \
           && runuser -u nobody -- "$VENV/bin/apprise" --version >/dev/null 2>&1; }

if have; then
  echo "channels-setup: $VENV already has matrix-synapse and apprise"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
command -v openssl >/dev/null || { apt-get update -qq && apt-get install -y -qq openssl >/dev/null; }
rm -rf "$VENV"
"$BASE" -m venv "$VENV" 2>/dev/null || {
  rm -rf "$VENV"; apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null && "$BASE" -m venv "$VENV"; }
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q matrix-synapse apprise
chmod -R a+rX "$VENV"
have || { echo "channels-setup: error: synapse or apprise missing from $VENV, or not usable by other users" >&2; exit 1; }
echo "channels-setup: installed matrix-synapse and apprise into $VENV"
