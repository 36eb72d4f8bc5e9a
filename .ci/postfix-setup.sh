#!/usr/bin/env bash
# Install and start a local-only Postfix (Debian 12) for the sendmail transport tests and the
# zero-configuration default: `sendmail -t -oi` hands a message to Postfix, which delivers mail
# for root to /var/mail/root. Run as root; safe to run again (it only reinstalls what is missing,
# then starts or reloads Postfix).
# tests/conftest.py (the `postfix` fixture) lowers message_size_limit for one test with
# `postconf -e` + `postfix reload` and restores it afterwards.
set -euo pipefail

die() { echo "postfix-setup: error: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root"

if ! [ -x /usr/sbin/postfix ]; then
  echo "postfix postfix/main_mailer_type select Local only" | debconf-set-selections
  echo "postfix postfix/mailname string $(hostname -f 2>/dev/null || hostname)" | debconf-set-selections
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=900 update -qq || true
  apt-get -o DPkg::Lock::Timeout=900 install -y -qq postfix >/dev/null
fi

# Local delivery only, straight into the mbox /var/mail/<user>; no aliasing of root elsewhere.
postconf -e "inet_interfaces = loopback-only" "mydestination = \$myhostname, localhost.\$mydomain, localhost" \
  "home_mailbox =" "mailbox_command =" "default_transport = error:local delivery only" \
  "relay_transport = error:local delivery only"
[ -f /etc/aliases ] || touch /etc/aliases
sed -i '/^root:/d' /etc/aliases
newaliases

# In a container there is no systemd: postfix start/reload is the portable way.
if postfix status >/dev/null 2>&1; then
  postfix reload >/dev/null 2>&1
else
  postfix start >/dev/null 2>&1 || postfix status >/dev/null 2>&1 || die "postfix did not start"
fi

# Check it end to end: a marked message must arrive in /var/mail/root.
marker="postfix-setup-$$-$(date +%s%N)"
printf 'To: root\nSubject: %s\n\n%s\n' "$marker" "$marker" | /usr/sbin/sendmail -t -oi
for _ in $(seq 1 100); do
  if grep -q "$marker" /var/mail/root 2>/dev/null; then echo "postfix-setup: ok, delivers to /var/mail/root"; exit 0; fi
  sleep 0.1
done
die "a test message did not reach /var/mail/root within 10 s (see /var/log/mail.log or postqueue -p)"
