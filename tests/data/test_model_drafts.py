"""A model's draft is kept only when its answer is a sentence of the passage verbatim, its question does
not copy that sentence, neither question leans on the prompt, points at the passage or at a thing it never
names, its refusal is about the passage's subject without being answered anywhere in its document, and
the model, asked back as a reader, quotes the answer for its question and NONE for its refusal; a run
with a model writes what its calls cost beside the drafts."""

from __future__ import annotations

import json
from pathlib import Path

import nomad_lab.cli.goldens as goldens
from nomad_lab.cli import main
from nomad_lab.data.model_drafts import (
    FRAMING,
    PROMPT,
    check_draft,
    copies,
    leans_on_prompt,
    left_open,
    model_draft,
    parse_reply,
    passages,
    reads_back,
    unanchored,
)
from nomad_lab.data.reader_quote import NONE
from tests.support.drafting import scripted_chat
from tests.support.paths import CORPUS

PASSAGE = (
    "The Kestrel K9 filter removes bacteria and protozoa. "
    "Its ceramic cartridge should be replaced after 4,500 litres. "
    "Scrub the cartridge with the supplied pad when the flow slows."
)
SENTENCES = tuple(s if s.endswith(".") else s + "." for s in PASSAGE.split(". "))
DOCUMENT = (
    *SENTENCES,
    "The gravity bag holds ten litres.",
    "The Kestrel replacement cartridge is sold at outdoor shops at a cost of 40 euros.",
)
"""The passage's document: two more sentences after it, the second answering a question about price."""
BASE = {"question": "When should the Kestrel cartridge be swapped?", "answer": "replaced after 4,500 litres"}


def test_the_reply_is_read_whatever_its_decoration() -> None:
    reply = "Sure!\n1. **QUESTION:** How often do I change it?\n2. Answer: \u201cIts ceramic cartridge.\u201d"
    reply += "\nUNANSWERED: x?"
    assert parse_reply(reply) == {
        "question": "How often do I change it?",
        "answer": "Its ceramic cartridge.",
        "unanswered": "x?",
    }


def test_an_answer_the_passage_does_not_say_is_rejected() -> None:
    fields = {"question": "When should the Kestrel cartridge be swapped?", "answer": "After 300 days of use."}
    drafted = check_draft(fields, PASSAGE, SENTENCES)
    assert drafted.question is None and "not a sentence of the passage" in drafted.rejected[0]


def test_a_copied_answer_is_widened_to_its_sentence_and_a_copying_question_rejected() -> None:
    fields = {
        "question": "When should the Kestrel cartridge be swapped?",
        "answer": "replaced after 4,500  litres",
    }
    drafted = check_draft(fields, PASSAGE, SENTENCES)
    assert drafted.question == fields["question"]
    assert drafted.answer == "Its ceramic cartridge should be replaced after 4,500 litres."
    copying = {
        "question": "Should the ceramic cartridge be replaced after 4,500 litres?",
        "answer": "4,500 litres",
    }
    assert "question: shares 5 words" in check_draft(copying, PASSAGE, SENTENCES).rejected[0]
    assert copies("What does the K9 filter remove?", SENTENCES[0]) is None


def test_a_refusal_must_be_about_the_subject_and_left_open() -> None:
    base = {
        "question": "When should the Kestrel cartridge be swapped?",
        "answer": "replaced after 4,500 litres",
    }
    about = check_draft({**base, "unanswered": "What does the Kestrel K9 filter cost?"}, PASSAGE, SENTENCES)
    assert about.refusal == "What does the Kestrel K9 filter cost?"
    elsewhere = check_draft({**base, "unanswered": "Who won the 1998 World Cup?"}, PASSAGE, SENTENCES)
    assert elsewhere.refusal is None and "not about the passage's subject" in elsewhere.rejected[-1]
    answered = {**base, "unanswered": "Does the Kestrel K9 filter remove bacteria and protozoa?"}
    assert check_draft(answered, PASSAGE, SENTENCES).refusal is None


def test_passages_spread_over_the_document_and_the_model_is_asked_once_each() -> None:
    sentences = [f"Sentence number {i} says a thing." for i in range(20)]
    chosen = passages(sentences, 2, start=13)
    assert [p.split()[2] for p in chosen] == ["12", "0"]  # the seeded one, then the next in turn
    asked: list[str] = []
    model_draft(lambda prompt: asked.append(prompt) or "QUESTION: x", "T", chosen[0], sentences)
    assert len(asked) == 1 and chosen[0] in asked[0]


def test_a_backend_run_writes_the_model_seconds_per_passage_and_the_load(tmp_path: Path, monkeypatch) -> None:
    """``goldens draft --backend`` times every model call (not the templates) and writes the cost with
    the machine's load beside the drafts; a run without a model writes none."""
    monkeypatch.setattr(goldens, "model_chat", lambda spec, seed: scripted_chat())
    out = tmp_path / "drafts"
    argv = ["goldens", "draft", "--corpus", str(CORPUS), "--out", str(out), "--no-progress"]
    assert main([*argv, "--backend", "test:scripted", "--llm-per-doc", "1"]) == 0
    cost = json.loads((out / goldens.COST_FILE).read_text())
    drafts = [json.loads(line) for line in (out / "drafts.jsonl").read_text().splitlines()[2:]]
    kept = sum(d["draft"]["source"].startswith("llm") for d in drafts)
    assert cost["backend"] == "test:scripted" and cost["passages"] == 5  # one passage per document
    assert cost["calls"] == 5 + cost["kept"]["answerable"]  # each kept question was read back once
    assert cost["kept"]["answerable"] + cost["kept"]["refusal"] == kept > 0
    assert abs(cost["secondsPerPassage"] * 5 - cost["modelSeconds"]) <= 0.1
    assert {"loadBefore", "loadAfter", "othersCpuShare", "cpus"} <= set(cost["load"])
    plain = tmp_path / "plain"
    assert main(["goldens", "draft", "--corpus", str(CORPUS), "--out", str(plain), "--no-progress"]) == 0
    assert not (plain / goldens.COST_FILE).exists()


def test_a_question_leaning_on_the_prompt_is_rejected_and_counted(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A model question saying "according to the passage" is written for the prompt, not by a reader of
    the library: ``goldens draft`` rejects every one whose answer passed and prints how many under its own
    reason."""

    scripted = scripted_chat()

    def chat(prompt: str) -> str:  # the scripted answer, with a question leaning on the passage
        answer = scripted(prompt).split("\n")[1]
        return f"QUESTION: What comes first, according to the passage?\n{answer}"

    monkeypatch.setattr(goldens, "model_chat", lambda spec, seed: chat)
    out = tmp_path / "drafts"
    argv = ["goldens", "draft", "--corpus", str(CORPUS), "--out", str(out), "--no-progress"]
    assert main([*argv, "--backend", "test:scripted", "--llm-per-doc", "1"]) == 0
    drafts = [json.loads(line) for line in (out / "drafts.jsonl").read_text().splitlines()[2:]]
    assert not [d for d in drafts if d["draft"]["source"].startswith("llm:")]
    summary = capsys.readouterr().out.split("rejected by their checks: ")[1].splitlines()[0]
    counts = {why: int(n) for why, n in (part.rsplit(" ", 1) for part in summary.split("; "))}
    leaning = counts["question: points at a passage the user never sees"]
    assert leaning > 0 and leaning + counts.get("its answer is not a sentence of the passage", 0) == 5


def test_a_question_must_stand_alone_without_the_prompts_framing() -> None:
    assert all(phrase in PROMPT.lower() for phrase in FRAMING)  # the framing words are the prompt's own
    leaning = [
        "How can a reader of this library clean the cartridge?",
        "What does the Kestrel remove in a library of documents?",
        "How does the passage describe the cartridge?",
        "What does this document say about bacteria?",
        "What is removed, according to the text?",
        "What does the article say about flow?",
    ]
    assert all(leans_on_prompt(q) for q in leaning)
    standing = [
        "What does the Kestrel K9 filter remove?",
        "How do I change the text editor's font?",
        "Where is the setting in the text file stored?",
    ]
    assert [leans_on_prompt(q) for q in standing] == [None, None, None]
    drafted = check_draft(
        {**BASE, "question": "When is the cartridge replaced, per the excerpt?"}, PASSAGE, SENTENCES
    )
    assert (
        drafted.question is None
        and drafted.rejected[0] == "question: points at a passage the user never sees"
    )
    refusal = check_draft(
        {**BASE, "unanswered": "What does this passage leave open about the Kestrel?"}, PASSAGE, SENTENCES
    )
    assert (
        refusal.refusal is None and refusal.rejected[-1] == "refusal: points at a passage the user never sees"
    )
    assert check_draft(BASE, PASSAGE, SENTENCES).question == BASE["question"]


def test_a_refusal_its_document_answers_outside_the_passage_is_rejected() -> None:
    """The passage is the model's view, not the library's: a refusal answered by a later sentence of its
    document (in other words than the question's, so no copy) is no refusal; one the document leaves open
    is kept."""
    price = {**BASE, "unanswered": "How much does a Kestrel replacement cartridge cost?"}
    drafted = check_draft(price, PASSAGE, DOCUMENT)
    assert drafted.refusal is None
    assert drafted.rejected == ("refusal: a sentence elsewhere in its document answers it",)
    assert check_draft(price, PASSAGE, SENTENCES).refusal == price["unanswered"]  # the passage alone: open
    shipping = {**BASE, "unanswered": "How long does the Kestrel K9 filter take to ship?"}
    kept = check_draft(shipping, PASSAGE, DOCUMENT)
    assert kept.refusal == shipping["unanswered"] and kept.question == BASE["question"] and not kept.rejected


def test_a_question_pointing_at_what_it_never_names_is_rejected() -> None:
    """ "this", "these" and "those" point back at the passage the asker never saw; a question naming its
    subject stands alone."""
    pointing = [
        "How can users customize the settings of these administration interfaces?",
        "What does this option change?",
        "Which of those filters lasts longest?",
    ]
    assert all(unanchored(q) for q in pointing)
    assert unanchored("What does the Kestrel K9 filter remove?") is None
    assert unanchored("How thick is the thistle filter's mesh?") is None  # a word, not the pointer
    drafted = check_draft({**BASE, "question": "When should this cartridge be swapped?"}, PASSAGE, SENTENCES)
    assert drafted.question is None and drafted.rejected[:1] == (
        "question: 'this' points at something it never names",
    )
    refusal = check_draft({**BASE, "unanswered": "What do these filters cost?"}, PASSAGE, SENTENCES)
    assert (
        refusal.refusal is None
        and refusal.rejected[-1] == "refusal: 'these' points at something it never names"
    )


def _reader(reply: str, shown: list[str]):
    """A chat answering every read-back with ``reply``, keeping the prompts it was shown."""

    def chat(prompt: str) -> str:
        shown.append(prompt)
        return reply

    return chat


def test_a_question_is_kept_only_when_the_model_reads_back_its_answer_sentence() -> None:
    """Asked its own question as a reader of the passage, the model must quote the answer sentence (or a
    span of it); another sentence, NONE, or a quote the passage does not hold rejects the question."""
    answer = SENTENCES[1]
    prompts: list[str] = []
    assert reads_back(_reader(answer, prompts), BASE["question"], answer, PASSAGE) is None
    assert BASE["question"] in prompts[0] and all(
        s in prompts[0] for s in SENTENCES
    )  # the passage's sentences
    assert reads_back(_reader("replaced after 4,500 litres", []), BASE["question"], answer, PASSAGE) is None
    assert reads_back(_reader(SENTENCES[0], []), BASE["question"], answer, PASSAGE) == (
        "read back, the model quotes another sentence"
    )
    for reply in (NONE, "Every 300 days of use."):
        assert reads_back(_reader(reply, []), BASE["question"], answer, PASSAGE) == (
            "read back, the model quotes no sentence of the passage"
        )


def test_a_refusal_is_kept_only_when_the_model_reads_its_document_and_writes_none() -> None:
    """The read-back shows the document's sentences nearest to the refusal, outside the passage too; a
    quote of one of them, or an answer in the model's own words, rejects it: NONE keeps it."""
    refusal = "How much does a Kestrel replacement cartridge cost?"
    prompts: list[str] = []
    assert left_open(_reader(NONE, prompts), refusal, DOCUMENT) is None
    assert DOCUMENT[-1] in prompts[0]  # the price sentence, after the passage, is shown
    assert left_open(_reader(DOCUMENT[-1], []), refusal, DOCUMENT) == (
        "read back, the model quotes a sentence of its document"
    )
    assert left_open(_reader("It costs about 40 euros.", []), refusal, DOCUMENT) == (
        "read back, the model answers it in its own words"
    )
    many = [f"The Kestrel part number {i} is sold in shop {i}." for i in range(20)]
    shown: list[str] = []
    left_open(_reader(NONE, shown), "Which shop sells Kestrel part number 7?", many)
    assert shown[0].count("\n- ") == 8 and "part number 7 is" in shown[0]  # CHECKED_SENTENCES, nearest first


def test_a_draft_passing_the_checks_is_read_back_and_rejected_by_its_reader() -> None:
    """``model_draft`` asks the drafting prompt, then one read-back for each draft that passed the other
    checks; a read-back that fails rejects that draft under its own reason, ``read_back=False`` asks once."""
    replies = iter(
        [
            f"QUESTION: {BASE['question']}\nANSWER: {SENTENCES[1]}\n"
            "UNANSWERED: How long does the Kestrel K9 filter take to ship?",
            SENTENCES[0],  # the question's read-back quotes another sentence
            NONE,  # the refusal's read-back finds nothing
        ]
    )
    prompts: list[str] = []

    def chat(prompt: str) -> str:
        prompts.append(prompt)
        return next(replies)

    drafted = model_draft(chat, "Kestrel K9", PASSAGE, DOCUMENT)
    assert len(prompts) == 3
    assert drafted.question is None and drafted.answer is None
    assert drafted.refusal == "How long does the Kestrel K9 filter take to ship?"
    assert drafted.rejected == ("question: read back, the model quotes another sentence",)
    once: list[str] = []
    reply = f"QUESTION: {BASE['question']}\nANSWER: {SENTENCES[1]}"
    unread = model_draft(lambda p: once.append(p) or reply, "Kestrel K9", PASSAGE, DOCUMENT, read_back=False)
    assert len(once) == 1 and unread.question == BASE["question"]
