"""Where the tests' inputs live, named once (test modules sit one folder deeper than the repository root)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
RETRIEVAL_FIXTURES = FIXTURES / "retrieval"
CORPUS, GOLDENS = RETRIEVAL_FIXTURES / "corpus", RETRIEVAL_FIXTURES / "goldens"
SEED_JS = TESTS / "seed_js"
