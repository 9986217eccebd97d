"""``off-topic``: no document is about it ("What is the capital of Australia?" against a first-aid
library); the reference's question, *is the retrieved context about what was asked?*, is measured on these
alone, and a refusal whose tags name no kind is counted as one (the reference's reading of
``expectRefusal``)."""

from nomad_lab.data.kind_records import LEAK, RefusalKind

KIND = RefusalKind(
    name="off-topic",
    definition="no document of the library is about it; the context retrieved for it is off topic",
    question="is the context about the question?",
    counted=LEAK,
    key="o",
    order=0,
    tags=(
        "out-of-corpus",
        "missing-domain",
        "other-domain",
        "other-language",
        "general-knowledge",
        "chit-chat",
        "personal",
        "instruction",
        "gibberish",
        "prompt-injection",
        "coding",
    ),
)
