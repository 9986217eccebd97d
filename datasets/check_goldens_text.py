"""Check the golden suites and the corpus offline (standard library only).

For every suite in ``datasets/goldens/*.jsonl`` and the out-of-scope bank, this verifies the SPEC §8.1
rules:

* each non-comment, non-blank line is one JSON object with the allowed fields and types;
* ids are non-empty and unique across all suites; queries are non-empty after trimming;
* ``expectRefusal`` true requires empty ``relevantDocIds``; false requires a non-empty list;
* the optional ``standalone`` (a follow-up's self-contained rewrite) is a non-empty string, only on a
  golden with ``turns``;
* every relevantDocId is a corpus doc id (``datasets/corpus/<id>.md``);
* every mustInclude / mustNotInclude regex compiles in Python (and in JavaScript when ``node`` is on
  PATH), and avoids constructs that only one of the two engines accepts;

and the text rule: for every answerable golden, each mustInclude regex (case-insensitive) matches the
concatenated text of its relevant documents. For ``multi-turn`` and ``long-context`` goldens the
prior turns are searched too, because there the fact may have been given in the conversation.

It also checks the corpus shape: domain documents start with ``# <Title>`` and are 700 to 3,500
characters, except at most two long documents (over 3,000 characters; the chunk-boundary ones).

Usage::

    python datasets/check_goldens_text.py                         # exit 0 when everything passes
    python datasets/check_goldens_text.py CORPUS_DIR GOLDENS_DIR  # another corpus in the same format

Given another corpus, the same rules apply except the corpus shape above, which describes the default
corpus only; there every document must still start with ``# <Title>`` and have a lowercase-hyphenated id.
Ids stay unique across that corpus's suites and the out-of-scope bank.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

DATASETS = Path(__file__).resolve().parent
CORPUS = DATASETS / "corpus"
GOLDENS = DATASETS / "goldens"
# the out-of-scope bank: the same rules, and ids unique across it and the suites
BANK = DATASETS / "out_of_scope" / "bank.jsonl"

FIELDS = {
    "id",
    "query",
    "standalone",
    "turns",
    "relevantDocIds",
    "mustInclude",
    "mustNotInclude",
    "expectRefusal",
    "tags",
}
# Regex syntax that Python and JavaScript do not share (or treat differently).
NOT_PORTABLE = [
    (re.compile(r"\(\?P?<[=!]?[A-Za-z]"), "named group / lookbehind"),
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\(\?[aiLmsux]+[):]"), "inline flags"),
    (re.compile(r"\\[AZz]"), r"\A \Z \z anchors"),
    (re.compile(r"[*+?}]\+"), "possessive quantifier"),
    (re.compile(r"\(\?>"), "atomic group"),
]
DOMAIN_MIN, DOMAIN_MAX, CHUNK_CHARS, MAX_LONG = 700, 3500, 3000, 2


def load_corpus(corpus: Path = CORPUS) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.md"))}


def check_corpus(docs: dict[str, str], errors: list[str], shape: bool = True) -> None:
    """Ids and titles of every document; with ``shape``, the default corpus's size rules too."""
    long_docs = []
    for doc_id, text in docs.items():
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", doc_id):
            errors.append(f"corpus: doc id not lowercase-hyphenated: {doc_id}")
        if not text.startswith("# "):
            errors.append(f"corpus: {doc_id} does not start with '# <Title>'")
        if doc_id.startswith("distractor-") or not shape:
            continue
        n = len(text)
        if n > CHUNK_CHARS:
            long_docs.append(doc_id)
        elif n < DOMAIN_MIN or n > DOMAIN_MAX:
            errors.append(f"corpus: {doc_id} has {n} characters (want {DOMAIN_MIN}-{DOMAIN_MAX})")
    if shape and not 1 <= len(long_docs) <= MAX_LONG:
        errors.append(f"corpus: want 1-{MAX_LONG} domain docs over {CHUNK_CHARS} chars, got {long_docs}")


def load_suite(path: Path, errors: list[str]) -> list[dict]:
    goldens = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        where = f"{path.name}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: invalid JSON ({exc})")
            continue
        if not isinstance(obj, dict):
            errors.append(f"{where}: not a JSON object")
            continue
        extra = set(obj) - FIELDS
        if extra:
            errors.append(f"{where}: unknown fields {sorted(extra)}")
        obj["_where"] = where
        goldens.append(obj)
    if not goldens:
        errors.append(f"{path.name}: no goldens")
    return goldens


def check_golden(g: dict, docs: dict[str, str], errors: list[str]) -> list[str]:
    """Validate one golden; return its regexes for the JavaScript check."""
    where = f"{g['_where']} ({g.get('id')})"
    if not isinstance(g.get("id"), str) or not g["id"].strip():
        errors.append(f"{where}: id missing or empty")
    if not isinstance(g.get("query"), str) or not g["query"].strip():
        errors.append(f"{where}: query missing or empty")
    turns = g.get("turns", [])
    roles = ("user", "assistant")
    if not isinstance(turns, list) or any(
        not isinstance(t, dict) or t.get("role") not in roles or not isinstance(t.get("content"), str)
        for t in turns
    ):
        errors.append(f"{where}: turns must be [{{role: user|assistant, content}}]")
        turns = []
    if "standalone" in g and (not isinstance(g["standalone"], str) or not g["standalone"].strip()):
        errors.append(f"{where}: standalone must be a non-empty string")
    elif "standalone" in g and not turns:
        errors.append(f"{where}: standalone is only for follow-ups (a golden with turns)")
    for key in ("relevantDocIds", "mustInclude", "mustNotInclude", "tags"):
        value = g.get(key, [])
        if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
            errors.append(f"{where}: {key} must be a list of strings")
    if not isinstance(g.get("expectRefusal", False), bool):
        errors.append(f"{where}: expectRefusal must be a boolean")
    refusal = bool(g.get("expectRefusal", False))
    rel = g.get("relevantDocIds", [])
    if refusal and rel:
        errors.append(f"{where}: expectRefusal with non-empty relevantDocIds")
    if not refusal and not rel:
        errors.append(f"{where}: answerable golden with no relevantDocIds (can never be scored)")
    for doc_id in rel:
        if doc_id not in docs:
            errors.append(f"{where}: unknown doc id {doc_id!r}")
    patterns = list(g.get("mustInclude", [])) + list(g.get("mustNotInclude", []))
    for pat in patterns:
        try:
            re.compile(pat, re.IGNORECASE)
        except re.error as exc:
            errors.append(f"{where}: bad regex {pat!r}: {exc}")
        for bad, what in NOT_PORTABLE:
            if bad.search(pat):
                errors.append(f"{where}: regex {pat!r} uses {what} (not portable to JavaScript)")
    if not refusal and rel and all(d in docs for d in rel):
        text = "\n\n".join(docs[d] for d in rel)
        tags = set(g.get("tags", []))
        if tags & {"multi-turn", "long-context"}:
            text += "\n\n" + "\n\n".join(t["content"] for t in turns)
        for pat in g.get("mustInclude", []):
            try:
                if not re.search(pat, text, re.IGNORECASE):
                    errors.append(f"{where}: mustInclude {pat!r} not found in {rel}")
            except re.error:
                pass
    return patterns


def check_js(patterns: list[str], errors: list[str]) -> None:
    node = shutil.which("node")
    if not node:
        print("note: node not found, JavaScript regex check skipped")
        return
    script = (
        "const ps = JSON.parse(require('fs').readFileSync(0, 'utf8')); const bad = [];"
        "for (const p of ps) { try { new RegExp(p, 'i'); } catch (e) { bad.push(p + ': ' + e.message); } }"
        "console.log(JSON.stringify(bad));"
    )
    out = subprocess.run([node, "-e", script], input=json.dumps(patterns), capture_output=True, text=True)
    if out.returncode != 0:
        errors.append(f"node failed: {out.stderr.strip()}")
        return
    errors.extend(f"JavaScript rejects regex {b}" for b in json.loads(out.stdout))


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 3):
        print("usage: check_goldens_text.py [CORPUS_DIR GOLDENS_DIR]", file=sys.stderr)
        return 2
    corpus, goldens_dir = (Path(argv[1]), Path(argv[2])) if len(argv) == 3 else (CORPUS, GOLDENS)
    errors: list[str] = []
    docs = load_corpus(corpus)
    if not docs:
        errors.append(f"corpus: no .md documents in {corpus}")
    check_corpus(docs, errors, shape=len(argv) == 1)
    seen: dict[str, str] = {}
    patterns: list[str] = []
    counts: dict[str, int] = {}
    suites = sorted(goldens_dir.glob("*.jsonl"))
    if not suites:
        errors.append(f"no suites in {goldens_dir}")
    suites.append(BANK)
    for path in suites:
        goldens = load_suite(path, errors)
        counts[path.stem] = len(goldens)
        for g in goldens:
            gid = g.get("id")
            if isinstance(gid, str):
                if gid in seen:
                    errors.append(f"{g['_where']}: duplicate id {gid!r} (also {seen[gid]})")
                seen[gid] = g["_where"]
            patterns += check_golden(g, docs, errors)
    check_js(sorted(set(patterns)), errors)
    for e in errors:
        print("FAIL", e)
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"{len(docs)} corpus docs; suites: {summary}; {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
