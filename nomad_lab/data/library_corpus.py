"""A large, openly licensed library for the library-scale study, collected from installed packages.

The library-growth books stop at a few megabytes; a user's library is manuals, reference docs and books
by the tens of megabytes. This collects such text from Debian documentation packages (anyone can install
them again, at a version the manifest records, under the licence it records), plus any folders a user
adds, into one corpus folder of ``*.md`` documents:

- each document starts with a title line and a provenance line (package, version, installed path,
  licence), then the text (gzip files are decompressed, HTML is reduced to its text);
- its file name starts with a hash of its origin, so the documents sorted by name (the order the growth
  study adds them in) interleave the sources instead of adding one package after another;
- ``library.json`` beside them lists every source (package, version, licence, files, bytes) and every
  document (file, origin, sha256 of the text written, bytes).
"""

from __future__ import annotations

import gzip
import hashlib
import html.parser
import json
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from nomad_lab.core.errors import NomadLabError
from nomad_lab.data.corpus import DOC_SUFFIX

__all__ = [
    "DEBIAN_SOURCES",
    "MANIFEST_NAME",
    "MIN_DOC_BYTES",
    "Library",
    "LibrarySource",
    "build_library",
    "html_text",
]

MANIFEST_NAME = "library.json"
BUILDS_NAME = "index_builds.json"
"""Beside the manifest: each embedder's last index build of the library (``nomad-lab library build``)."""
MIN_DOC_BYTES = 500
"""Shorter files (index stubs, one-line redirects) are skipped and counted: they are not library text."""


@dataclass(frozen=True)
class Library:
    """What a build wrote: per source (package, version, licence, files, bytes) and per document."""

    sources: list[dict[str, object]]
    documents: list[dict[str, object]]
    skipped_short: int
    total_bytes: int


@dataclass(frozen=True)
class LibrarySource:
    """One Debian package's documentation: the installed files whose path matches ``pattern``."""

    name: str  # short label used in file names
    package: str
    pattern: str  # regular expression on the installed path
    licence: str
    exclude: str = ""  # regular expression on the installed path: files left out (source listings)
    strip_repeated: bool = False  # generated HTML: drop the lines most of its pages repeat (navigation)


DEBIAN_SOURCES: tuple[LibrarySource, ...] = (
    LibrarySource(
        "linux",
        "linux-doc-6.1",
        r"/Documentation/.*\.(rst|txt)\.gz$",
        "GPL-2.0 (Linux kernel documentation; per-file terms in the package's copyright file)",
    ),
    LibrarySource(
        "python",
        "python3.11-doc",
        r"/html/_sources/.*\.rst\.txt$",
        "PSF-2.0 (Python 3.11 documentation)",
    ),
    LibrarySource(
        "perl", "perl-doc", r"/pod/.*\.pod$", "GPL-1.0-or-later OR Artistic-1.0 (Perl documentation)"
    ),
    LibrarySource(
        "debref",
        "debian-reference-en",
        r"/debian-reference/.*\.en\.html$",
        "GPL-2.0-or-later (Debian Reference)",
    ),
)
"""The default sources: about 50 MB of text together (see ``scripts/library_packages.sh``)."""


class _TextOnly(html.parser.HTMLParser):
    """Collects the text of an HTML page outside script and style elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in ("script", "style"):
            self.skipping += 1
        elif tag in ("p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "pre", "section"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.skipping:
            self.skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_text(markup: str) -> str:
    """The visible text of an HTML page, blank-line runs collapsed."""
    parser = _TextOnly()
    parser.feed(markup)
    parser.close()
    return re.sub(r"\n\s*\n+", "\n\n", "".join(parser.parts)).strip()


def read_text(path: Path) -> str:
    """A documentation file's text: gzip decompressed, HTML reduced to text, invalid UTF-8 replaced."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    return html_text(text) if re.search(r"\.html?(\.gz)?$", path.name) else text


REPEATED_SHARE = 0.02
"""A line found in more than this share of a generated source's pages (and in at least
:data:`REPEATED_MIN_PAGES` of them) is navigation or template, not prose."""
REPEATED_MIN_PAGES = 20


def strip_repeated_lines(texts: Sequence[str]) -> list[str]:
    """Each text without the lines that many of the texts repeat (a generated site's menus, footers,
    "Expand description" buttons), blank-line runs collapsed again.

    Why: API documentation generators wrap every page in the same navigation; left in, thousands of
    chunks share it and a question about "settings" or "search" finds them all. A line counts once per
    page; kept when it is in at most ``max(REPEATED_MIN_PAGES, REPEATED_SHARE * pages)`` pages."""
    from collections import Counter

    pages = Counter(line for text in texts for line in {ln.strip() for ln in text.splitlines()} if line)
    limit = max(REPEATED_MIN_PAGES, int(REPEATED_SHARE * len(texts)))
    common = {line for line, n in pages.items() if n > limit}
    kept = ("\n".join(ln for ln in text.splitlines() if ln.strip() not in common) for text in texts)
    return [re.sub(r"\n\s*\n+", "\n\n", text).strip() for text in kept]


def _run(argv: Sequence[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def package_files(package: str) -> tuple[str, list[Path]]:
    """An installed package's version and files (``dpkg-query``); a clear error if it is not installed."""
    version = _run(["dpkg-query", "-W", "-f=${Version}", package])
    listing = _run(["dpkg-query", "-L", package])
    if not version or listing is None:
        raise NomadLabError(
            f"library source {package}: not installed (install it with `apt-get install {package}`, "
            "or run scripts/library_packages.sh)"
        )
    return version, [Path(line) for line in listing.splitlines() if line.strip()]


def _slug(text: str, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[-limit:] or "doc"


def _origins(
    sources: Sequence[LibrarySource],
    extra_dirs: Sequence[Path],
    files_of: Callable[[str], tuple[str, list[Path]]],
) -> Iterable[tuple[dict[str, str], Path, str]]:
    """(source description, file, the path the document names) for every file of every source, in a
    stable order. A package file is named by its installed path; a folder's file by its path from the
    folder's parent, so the same folder elsewhere writes the same bytes (and keeps its embeddings)."""
    for source in sources:
        version, files = files_of(source.package)
        matcher = re.compile(source.pattern)
        described = {
            "name": source.name,
            "package": source.package,
            "version": version,
            "licence": source.licence,
        }
        excluded = re.compile(source.exclude) if source.exclude else None
        for path in sorted(p for p in files if matcher.search(str(p)) and p.is_file()):
            if excluded is None or not excluded.search(str(path)):
                yield described, path, str(path)
    for folder in extra_dirs:
        if not folder.is_dir():
            raise NomadLabError(f"library folder {folder}: not a directory")
        described = {
            "name": _slug(folder.name, 20),
            "package": "",
            "version": "",
            "licence": "see the file's own header",
        }
        for path in sorted(
            p for p in folder.rglob("*") if p.is_file() and p.suffix in (".md", ".txt", ".rst")
        ):
            yield described, path, str(path.relative_to(folder.parent))


def build_library(
    out_dir: str | Path,
    sources: Sequence[LibrarySource] = DEBIAN_SOURCES,
    extra_dirs: Sequence[str | Path] = (),
    *,
    files_of: Callable[[str], tuple[str, list[Path]]] = package_files,
    progress: bool = True,
) -> Library:
    """Write every source's documents into ``out_dir`` (stale ones removed) and its ``library.json``.

    Rebuilding with the same installed packages writes the same bytes, so the corpus fingerprint, and
    the embeddings cached under it, stay valid.
    """
    from tqdm import tqdm  # heavy

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    documents: list[dict[str, object]] = []
    per_source: dict[str, dict[str, object]] = {}
    counts: dict[str, tuple[int, int]] = {}  # source name -> (files, bytes)
    skipped = 0
    origins = list(_origins(sources, [Path(d) for d in extra_dirs], files_of))
    texts = [
        read_text(path).strip()
        for _, path, _ in tqdm(origins, desc="library", unit="file", disable=not progress)
    ]
    stripping = {s.name for s in sources if s.strip_repeated}
    before: dict[str, int] = {}
    for name in stripping:
        mine = [i for i, (source, _, _) in enumerate(origins) if source["name"] == name]
        before[name] = sum(len(texts[i].encode("utf-8")) for i in mine)
        for i, text in zip(mine, strip_repeated_lines([texts[i] for i in mine]), strict=True):
            texts[i] = text
    for (source, path, shown), text in zip(origins, texts, strict=True):
        if len(text.encode("utf-8")) < MIN_DOC_BYTES:
            skipped += 1
            continue
        origin = f"{source['package'] or source['name']}:{shown}"
        digest = hashlib.sha256(origin.encode()).hexdigest()[:8]
        name = f"{digest}-{source['name']}-{_slug(path.stem)}{DOC_SUFFIX}"
        where = (
            f"Debian package {source['package']} {source['version']}, {shown}" if source["package"] else shown
        )
        data = f"# {path.name}\n\nSource: {where} | Licence: {source['licence']}\n\n{text}\n".encode()
        target = out / name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        sha = hashlib.sha256(data).hexdigest()
        documents.append(
            {"file": name, "source": source["name"], "path": shown, "bytes": len(data), "sha256": sha}
        )
        per_source.setdefault(source["name"], dict(source))
        files, size = counts.get(source["name"], (0, 0))
        counts[source["name"]] = (files + 1, size + len(data))
    kept = {d["file"] for d in documents}
    for stale in out.glob(f"*{DOC_SUFFIX}"):
        if stale.name not in kept:
            stale.unlink()
    library = Library(
        sources=[
            {
                **per_source[n],
                "files": f,
                "bytes": b,
                **({"bytesBeforeStrip": before[n]} if n in before else {}),
            }
            for n, (f, b) in counts.items()
        ],
        documents=sorted(documents, key=lambda d: str(d["file"])),
        skipped_short=skipped,
        total_bytes=sum(b for _, b in counts.values()),
    )
    (out / MANIFEST_NAME).write_text(json.dumps(asdict(library), indent=1) + "\n")
    return library
