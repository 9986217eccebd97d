"""The share of sampled template drafts a labeller keeps as written, before and after the drafter's checks.

Why: a draft a person must rewrite or skip costs a labelling decision and gives nothing; the share kept
unedited is what the well-formedness check (``nomad_lab.data.draft_text.well_formed``) is for. The
verdicts are a labeller's, stored with the sample in ``results/labelling/draft_verdicts.json`` (who gave
them is said there); this reads them and writes the shares to ``results/labelling/draft_share.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nomad_lab.eval.provenance import provenance_record, write_provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verdicts", default="results/labelling/draft_verdicts.json")
    parser.add_argument("--out", default="results/labelling/draft_share.json")
    args = parser.parse_args()
    verdicts = json.loads(Path(args.verdicts).read_text())
    shares = {}
    for side in ("before", "after"):
        drafts = verdicts[side]["drafts"]
        kept = sum(d["kept"] for d in drafts)
        shares[side] = {"n": len(drafts), "kept": kept, "keptShare": kept / len(drafts)}
    summary = {"who": verdicts["who"], "library": verdicts["library"], **shares}
    summary["ratio"] = shares["after"]["keptShare"] / shares["before"]["keptShare"]
    out = Path(args.out)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    write_provenance(out.parent, provenance_record(), file=out.name)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
