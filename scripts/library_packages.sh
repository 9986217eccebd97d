#!/usr/bin/env bash
# The Debian documentation packages `nomad-lab library build` reads. By default about 50 MB of text
# together: the Linux kernel documentation, the Python 3.11 docs, the Perl documentation and the Debian
# Reference. With --large, also the packages of the large library (nomad_lab/data/library_large.py:
# Rust, OpenJDK, GHC, Erlang, pandas, scikit-learn, SciPy, Django, PostgreSQL, Git, the Debian
# Administrator's Handbook, Scala, Octave, Maxima, GnuCash; about 2 GB installed, a few minutes to download).
set -euo pipefail
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
PACKAGES=(linux-doc-6.1 python3.11-doc perl-doc debian-reference-en)
if [ "${1:-}" = --large ]; then
  PACKAGES+=(rust-doc openjdk-17-doc ghc-doc erlang-doc python-pandas-doc python-sklearn-doc python-scipy-doc
    python-django-doc postgresql-doc-15 git-doc debian-handbook scala-doc octave-doc maxima-doc gnucash-docs)
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
