"""A passage as the labeller draws it: whole words, markup stripped, Markdown drawn, question words
marked, the best-matching sentence emphasized, nothing from the document passed through as HTML."""

from __future__ import annotations

from nomad_lab.studies.gating.passage_view import mark_words, passage_html, strip_markup, whole_words

DOCUMENT = (
    "# Boiling water\n\n"
    "<!-- editors: keep this short -->\n"
    'Bring water to a rolling boil. Boiling water for one minute kills germs; see {{domxref("Germ")}}.\n\n'
    "- Let it cool <b>covered</b>.\n"
    "- Store it in a [clean bottle](https://example.org/bottles).\n\n"
    "```\nboil --minutes 1\n```\n"
    "Use **bleach** only if you cannot boil.\n"
)


def test_a_chunk_cut_inside_words_is_widened_from_its_document() -> None:
    chunk = DOCUMENT[DOCUMENT.index("ing water to") : DOCUMENT.index("one min") + 5]  # "...one mi"
    widened = whole_words(chunk, DOCUMENT)
    assert widened.startswith("Bring water") and widened.endswith("one minute")
    assert whole_words("unknown text", DOCUMENT) == "unknown text"  # not found: left as it is


def test_markup_is_stripped_and_markdown_kept() -> None:
    stripped = strip_markup(DOCUMENT)
    assert "editors" not in stripped and "{{" not in stripped and "<b>" not in stripped
    assert "see Germ." in stripped and "clean bottle" in stripped and "https" not in stripped
    assert "**bleach**" in stripped and "# Boiling water" in stripped


def test_the_whole_passage_is_drawn_with_words_marked_and_the_best_sentence_emphasized() -> None:
    shown = passage_html(DOCUMENT, "How long do I boil water to kill germs?")
    assert "<h4><mark>Boiling</mark> <mark>water</mark></h4>" in shown
    assert "<ul><li>" in shown and "</li></ul>" in shown and "<pre>" in shown and "<b>bleach</b>" in shown
    assert shown.count("nomad-best") == 1
    best = shown[shown.index("nomad-best") :].split("</span>", 1)[0]
    assert "<mark>kill" in best and "<mark>germs</mark>" in best  # the sentence sharing the most words
    assert "bottle" in shown and "cool" in shown  # nothing cut: the end of the passage is there


def test_no_html_from_the_document_reaches_the_page() -> None:
    shown = passage_html("Try <script>alert(1)</script> & <img src=x onerror=y> now.", "try")
    assert "<script>" not in shown and "<img" not in shown and "&amp;" in shown
    marked = mark_words("Boiling water kills <germs>; boil it.", {"boil", "water"})
    assert marked.count("<mark>") == 3 and "&lt;germs&gt;" in marked


def test_a_markdown_table_is_drawn_as_a_table_its_words_still_marked() -> None:
    rows = "| altitude | boil for |\n|---|:--:|\n| sea level | 1 minute |\n| 2,000 m | 3 minutes |\n"
    text = "Boil times:\n\n" + rows
    shown = passage_html(text, "How long to boil at altitude?")
    assert "|" not in shown and shown.count("<tr>") == 3 and "<th><mark>altitude</mark></th>" in shown
    assert "<td>2,000 m</td>" in shown and "---" not in shown


def test_a_passage_cut_inside_a_paragraph_shows_an_ellipsis_where_it_was_cut() -> None:
    middle = DOCUMENT[DOCUMENT.index("ater for one") : DOCUMENT.index("kills ge") + 8]  # "...kills ge"
    shown = passage_html(middle, "boil", DOCUMENT)
    assert shown.startswith("<span class='nomad-cut'") and shown.endswith("…</span>")
    assert shown.count("nomad-cut") == 2  # starts and ends inside the paragraph
    whole = DOCUMENT[DOCUMENT.index("Bring") : DOCUMENT.index("}}.") + 3]  # the paragraph, to its line end
    assert "nomad-cut" not in passage_html(whole, "boil", DOCUMENT)
    assert passage_html("and then it boils", "boil").count("nomad-cut") == 2  # no document: its case, its end
