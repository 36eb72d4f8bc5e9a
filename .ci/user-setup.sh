#!/usr/bin/env bash
# The ordinary user the test suite runs as (CI's user pass): a fresh account with its own HOME,
# a copy of the clone it owns, and the Python interpreters it may use (pyenv's, copied where an
# ordinary user can execute them: root's home is 0700, so pyenv's own folder is out of reach).
# Run as root; safe to run again. Prints the clone's path. Environment: GPUALERT_CI_USER.
set -euo pipefail
CI_USER=${GPUALERT_CI_USER:-gpualert-ci}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PYTHONS=/opt/gpualert-pythons   # a user-readable pyenv root: versions/<v>/bin/python3

die() { echo "user-setup: error: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root"

id "$CI_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$CI_USER"
HOME_DIR=$(getent passwd "$CI_USER" | cut -d: -f6)

# pyenv's interpreters (3.6-3.13 and 2.7, for the install and compatibility tests); the big
# site-packages of the machine's main 3.11 (torch) are left behind: the user's 3.11 is Debian's.
if command -v pyenv >/dev/null 2>&1 && [ ! -e "$PYTHONS/.complete" ]; then
  command -v patchelf >/dev/null || { apt-get update -qq && apt-get install -y -qq patchelf >/dev/null; }
  mkdir -p "$PYTHONS/versions"
  for v in "$(pyenv root)"/versions/*; do
    name=$(basename "$v")
    [ -e "$PYTHONS/versions/$name" ] && continue
    case "$name" in 3.11.*) continue ;; esac
    cp -a "$v" "$PYTHONS/versions/$name"
    # pyenv links each interpreter to its libpython by absolute path (RPATH into /root):
    # point it at the copy beside it
    for bin in "$PYTHONS/versions/$name"/bin/python*; do
      [ -L "$bin" ] || ! head -c 4 "$bin" | grep -q ELF || patchelf --set-rpath '$ORIGIN/../lib' "$bin"
    done
  done
  chmod -R a+rX "$PYTHONS"
  touch "$PYTHONS/.complete"
fi

# The clone, owned by the user, in its home (what a user who cloned it would have).
CLONE="$HOME_DIR/gpualert"
rm -rf "$CLONE"
mkdir -p "$CLONE"
(cd "$SRC" && tar --exclude=./.venv -cf - .) | (cd "$CLONE" && tar -xf -)
chown -R "$CI_USER:" "$CLONE"
# its own, empty mailbox for the Postfix tests
touch "/var/mail/$CI_USER" && chown "$CI_USER:mail" "/var/mail/$CI_USER" && chmod 0660 "/var/mail/$CI_USER"
echo "$CLONE"
