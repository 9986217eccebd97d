#!/usr/bin/env bash
# The Debian documentation packages `nomad-lab library build` reads (about 50 MB of text together):
# the Linux kernel documentation, the Python 3.11 docs, the Perl documentation and the Debian Reference.
set -euo pipefail
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
  linux-doc-6.1 python3.11-doc perl-doc debian-reference-en
