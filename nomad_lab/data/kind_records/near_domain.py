"""``near-domain``: a sibling topic the library does not cover (snake bites beside a first-aid library that
covers burns and bleeding); topically close, so counted apart from both other kinds."""

from nomad_lab.data.kind_records import PASS, RefusalKind

KIND = RefusalKind(
    name="near-domain",
    definition="a sibling topic of one the library covers, which the library itself does not cover",
    question="a sibling topic the library lacks",
    counted=PASS,
    key="n",
    order=2,
)
