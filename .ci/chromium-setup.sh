#!/usr/bin/env bash
# Headless Chromium for the test that renders the HTML part of representative messages
# (tests/test_message_render.py). Without it that test skips with a reason.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if command -v chromium >/dev/null 2>&1; then
    chromium --version
    exit 0
fi
apt-get -o DPkg::Lock::Timeout=900 update -q
apt-get -o DPkg::Lock::Timeout=900 install -y -q chromium
chromium --version
