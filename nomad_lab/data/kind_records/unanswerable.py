"""``unanswerable``: a document is about the entity or subject, none states what is asked ("How many hours
can a tourniquet stay on?" against a bleeding-control page that never says); the context is on topic, so
only a sufficiency check (does any passage state the answer?) can tell."""

from nomad_lab.data.kind_records import PASS, RefusalKind

KIND = RefusalKind(
    name="unanswerable",
    definition="a document is about its entity or subject, but none states what is asked",
    question="does a passage state the answer?",
    counted=PASS,
    key="u",
    order=1,
    tags=("adversarial", "fictional", "adversarial/fictional"),
)
