"""The sources of the large library (hundreds of megabytes): more Debian documentation packages.

Why these: a user's library is tens of megabytes to tens of gigabytes, and gating gets harder as it
grows, so a gate must be measured past the 51 MB of the default sources (``library_corpus``). These
packages install offline from Debian's registry (``scripts/library_packages.sh --large``), carry their
licence in their copyright file, and are real prose at scale: language and library references, user
guides, a handbook. Most are generated HTML, so their repeated navigation lines are stripped
(``strip_repeated``) and the library manifest records each source's bytes before and after, which is
how much prose is left. Rust's and Scala's source listings (pages of code) are left out.
"""

from __future__ import annotations

from nomad_lab.data.library_corpus import DEBIAN_SOURCES, LibrarySource

__all__ = ["ALL_SOURCES", "LARGE_SOURCES"]

LARGE_SOURCES: tuple[LibrarySource, ...] = (
    LibrarySource(
        "rust", "rust-doc", r"/html/.*\.html$", "MIT OR Apache-2.0 (Rust documentation)", r"/html/src/", True
    ),
    LibrarySource(
        "openjdk",
        "openjdk-17-doc",
        r"/api/.*\.html$",
        "GPL-2.0 WITH Classpath-exception-2.0 (OpenJDK 17 API documentation)",
        r"(index-files|-tree|class-use)/|/(index-all|allclasses|overview-tree)",
        True,
    ),
    LibrarySource(
        "ghc", "ghc-doc", r"\.html$", "BSD-3-Clause (GHC and its libraries' documentation)", "/src/", True
    ),
    LibrarySource("erlang", "erlang-doc", r"\.html$", "Apache-2.0 (Erlang/OTP documentation)", "", True),
    LibrarySource(
        "pandas", "python-pandas-doc", r"/html/.*\.html$", "BSD-3-Clause (pandas documentation)", "", True
    ),
    LibrarySource(
        "sklearn", "python-sklearn-doc", r"/_sources/.*\.txt$", "BSD-3-Clause (scikit-learn documentation)"
    ),
    LibrarySource(
        "scipy", "python-scipy-doc", r"/html/.*\.html$", "BSD-3-Clause (SciPy documentation)", "", True
    ),
    LibrarySource("django", "python-django-doc", r"\.html$", "BSD-3-Clause (Django documentation)", "", True),
    LibrarySource(
        "postgres",
        "postgresql-doc-15",
        r"/html/.*\.html$",
        "PostgreSQL (PostgreSQL 15 documentation)",
        "",
        True,
    ),
    LibrarySource("git", "git-doc", r"\.txt$", "GPL-2.0 (Git documentation)"),
    LibrarySource(
        "handbook",
        "debian-handbook",
        r"/html/en-US/.*\.html$",
        "GPL-2.0-or-later OR CC-BY-SA-3.0 (The Debian Administrator's Handbook)",
        "",
        True,
    ),
    LibrarySource("octave", "octave-doc", r"\.html$", "GPL-3.0-or-later (GNU Octave manuals)", "", True),
    LibrarySource("maxima", "maxima-doc", r"/html/.*\.html$", "GPL-2.0 (Maxima manual)", "", True),
    LibrarySource(
        "gnucash",
        "gnucash-docs",
        r"/gnucash-(guide|help)-en/.*\.html$",
        "GFDL-1.1-or-later (GnuCash guide and help)",
        "",
        True,
    ),
    LibrarySource(
        "scala",
        "scala-doc",
        r"/api/.*\.html$",
        "BSD-3-Clause (Scala 2.11 API documentation)",
        r"/index/",
        True,
    ),
)
"""About 2 GB of installed documentation; what is left as text is in the built library's manifest."""

ALL_SOURCES: tuple[LibrarySource, ...] = DEBIAN_SOURCES + LARGE_SOURCES
