"""The labelling surface of ``notebooks/label.py``: one drafted question at a time, its whole top
passages in a scrollable frame, the decision controls below it (always in view), progress, and the
live figure.

Everything it decides goes through :class:`nomad_lab.eval.gating.label_sitting.LabelSession` (tested without
a browser); this module only draws widgets and routes clicks and keys to it. Keys are typed into the
small key box (a text field), so JupyterLab's own notebook shortcuts never see them.

What a person sees is explained on screen: each refusal kind's definition
(:data:`nomad_lab.data.refusal_kinds.KIND_DEFINITIONS`) beside its button, the draft's own guess
pre-selected (its kind, or its source document as the gold), the gold searchable among every document
of the library (a gold retrieval did not return is a retrieval miss, recorded as one), undo and back
(disabled, with a line saying so, while there is nothing to undo or go back to), and who is labelling.
The figure and its caption are :mod:`nomad_lab.studies.gating.label_figure`.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.first_run import DEFAULT_LABEL_DIR
from nomad_lab.core.workspace import corpus_path, in_workspace, store_path
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, SKIP, default_labeller
from nomad_lab.data.refusal_kinds import KIND_DEFINITIONS, KINDS
from nomad_lab.eval.gating.label_sitting import LabelSession
from nomad_lab.studies.gating.label_figure import figures_line, plot_history, replay
from nomad_lab.studies.gating.passage_view import passage_html

REFUSAL_KEYS = {kind.key: name for name, kind in KINDS.items()}
KEY_HELP = (
    f"keys: a save · 1-5 answerable (that passage) · {' '.join(REFUSAL_KEYS)} refusal · s skip · z undo · "
    "b back"
)
FRAME_CSS = (
    "<style>.nomad-label-frame{height:28em;overflow-y:auto;border:1px solid #ccc;padding:0 .8em;"
    "background:#fff}.nomad-label-frame mark{background:#fff2a8}.nomad-best{background:#dff0d8}"
    ".nomad-label-passage h4{margin:.4em 0}.nomad-label-passage pre{white-space:pre-wrap}"
    ".nomad-label-kinds{font-size:90%}</style>"
)
CHOICES = [
    ("answerable: the gold document below", ANSWERABLE),
    *((f"refusal: {name}", name) for name in KINDS),
    ("skip", SKIP),
]


class Labeller:
    """The widgets and their wiring; ``box`` is what the notebook displays."""

    def __init__(self, session: LabelSession) -> None:
        import ipywidgets as w  # heavy

        self.session = session
        self.current: str | None = None
        self.back_steps = 0
        self.history = replay(session)
        self.progress = w.IntProgress(min=0, description="decided")
        self.count = w.HTML()
        self.question = w.HTML()
        self.edit = w.Text(description="question", layout=w.Layout(width="95%"))
        self.passages = w.HTML()
        self.passages.add_class("nomad-label-passages")
        self.choice = w.ToggleButtons(options=CHOICES, description="decision", style={"button_width": "auto"})
        self.choice.add_class("nomad-label-choice")
        self.gold = w.Combobox(
            options=sorted(session.documents()),
            ensure_option=True,
            placeholder=f"type to search all {len(session.documents())} documents",
            description="gold",
            layout=w.Layout(width="60%"),
        )
        self.gold.add_class("nomad-label-gold")
        self.gold.observe(lambda _c: self._choose(ANSWERABLE), names="value")
        save = self._button("save (a)", self.save, "nomad-label-save", "primary")
        self.undo_button = self._button("undo (z)", self.undo, "nomad-label-undo")
        self.back_button = self._button("back (b)", self.back, "nomad-label-back")
        self.hint = w.HTML()
        self.hint.add_class("nomad-label-hint")
        who = html.escape(session.who or default_labeller())
        self.who = w.HTML(
            f"<small class='nomad-label-who'>labelling as <b>{who}</b> (the notebook's <code>who</code> "
            "or $NOMAD_LAB_LABELLER changes it)</small>"
        )
        self.gold_buttons = w.HBox()
        self.keys = w.Text(placeholder=KEY_HELP, description="key box", layout=w.Layout(width="60%"))
        self.keys.add_class("nomad-label-keys")
        self.keys.observe(self._on_key, names="value")
        self.message = w.HTML()
        self.message.add_class("nomad-label-message")
        self.figure = w.Image(format="png")
        self.figures_text = w.HTML()
        kinds = "".join(f"<li><b>{k}</b>: {html.escape(d)}</li>" for k, d in KIND_DEFINITIONS.items())
        self.box = w.VBox(
            [
                w.HTML(FRAME_CSS),
                w.HBox([self.progress, self.count, self.who]),
                self.question,
                self.edit,
                self.passages,
                self.gold_buttons,
                self.choice,
                self.gold,
                w.HBox([save, self.undo_button, self.back_button, self.hint]),
                self.keys,
                self.message,
                w.HTML(
                    "<div class='nomad-label-kinds'><b>answerable</b>: a document of the library states the "
                    f"answer (choose it as the gold, among the passages or by name); refusals:<ul>{kinds}"
                    "</ul></div>"
                ),
                self.figures_text,
                self.figure,
            ]
        )
        self.box.add_class("nomad-labeller")
        self.show_next()

    def _button(self, text: str, action: Any, css: str, style: str = "") -> Any:
        import ipywidgets as w  # heavy

        button = w.Button(description=text, layout=w.Layout(width="auto"), button_style=style)
        button.on_click(lambda _b: action())
        button.add_class(css)
        return button

    def _choose(self, value: str) -> None:
        if self.gold.value and value == ANSWERABLE:
            self.choice.value = ANSWERABLE

    def show_next(self, draft_id: str | None = None) -> None:
        """Draw ``draft_id`` (default: the first of the queue, or say that every draft is decided)."""
        decided, total = self.session.progress()
        self.progress.max, self.progress.value = total, decided
        self.count.value = f"<span class='nomad-label-count'>{decided} / {total} decided</span>"
        if draft_id is None:
            self.back_steps = 0
            queue = self.session.queue()
            draft_id = queue[0] if queue else None
        self.current = draft_id
        if draft_id is None:
            self.question.value = "<b>Every draft is decided.</b>"
            self.passages.value, self.gold_buttons.children = "", ()
        else:
            self._draw(draft_id)
        self._draw_figures()

    def _draw(self, draft_id: str) -> None:
        import ipywidgets as w  # heavy

        draft = self.session.draft(draft_id)
        earlier = self.session.decisions().get(draft_id)
        action, guess = self.session.suggestion(draft_id)
        if earlier is not None:  # back: the label given, to keep or change
            action, guess = earlier.action, earlier.gold or earlier.refusal_type
        source = html.escape(draft.draft.source if draft.draft else "")
        said = "answerable" if action == ANSWERABLE else f"refusal, {guess}" if action == REFUSAL else "skip"
        state = f"labelled before: {said}" if earlier is not None else f"the draft's guess: {said}"
        self.question.value = (
            f"<h3 class='nomad-label-question' data-id='{html.escape(draft.id)}'>{html.escape(draft.query)}"
            f"</h3><small>draft {html.escape(draft.id)} · {source} · <span class='nomad-label-guess'>"
            f"{html.escape(state)}</span> (pre-selected below; edit the question to label your own wording)"
            "</small>"
        )
        self.edit.value = earlier.query if earlier is not None else draft.query
        passages = self.session.passages(draft_id)
        documents = self.session.documents()
        cards = "".join(
            f"<div class='nomad-label-passage'><b>{k}. {html.escape(p.doc_id)}</b> (score {p.score:.2f})"
            f"{passage_html(p.text, draft.query, documents.get(p.doc_id))}</div><hr>"
            for k, p in enumerate(passages, start=1)
        )
        self.passages.value = (
            "<div class='nomad-label-frame'>"
            + (cards or "<p>(retrieval returned nothing: search the gold document below)</p>")
            + "</div>"
        )
        docs = list(dict.fromkeys(p.doc_id for p in passages))
        buttons = []
        for doc in docs:
            key = 1 + [p.doc_id for p in passages].index(doc)
            decide = lambda d=doc: self.decide(ANSWERABLE, gold=d)  # noqa: E731
            buttons.append(self._button(f"{key} answerable: {doc}", decide, "nomad-label-answerable"))
        self.gold_buttons.children = tuple(buttons) or (w.HTML("no passage retrieved"),)
        self.choice.value = guess if action == REFUSAL else action
        self.gold.value = guess if action == ANSWERABLE and guess in documents else ""

    def _draw_figures(self) -> None:
        decided = len(self.session.decisions())
        figures = self.session.figures()
        self.history = [(n, f) for n, f in self.history if n < decided] + (
            [(decided, figures)] if decided else []
        )
        caption = html.escape(figures_line(figures)).replace("\n", "<br>")
        self.figures_text.value = f"<p class='nomad-label-figures'>{caption}</p>"
        self._enable(decided)

    def _enable(self, decided: int) -> None:
        """Undo and back only when there is a decision to act on; the hint says how to enable them."""
        self.undo_button.disabled = decided == 0
        self.back_button.disabled = self.back_steps >= decided
        off = [b.description.split(" ")[0] for b in (self.undo_button, self.back_button) if b.disabled]
        if not off:
            self.hint.value = ""
        elif decided == 0:
            self.hint.value = f"<small>{' and '.join(off)}: enabled once a decision is saved</small>"
        else:
            self.hint.value = "<small>back: at the first decision; save or skip to move on</small>"
        self.figure.value = plot_history(self.history)

    def save(self) -> None:
        """Record the decision selected in the controls (the draft's guess unless changed)."""
        choice = self.choice.value
        if choice == ANSWERABLE:
            self.decide(ANSWERABLE, gold=self.gold.value or None)
        elif choice == SKIP:
            self.decide(SKIP)
        else:
            self.decide(REFUSAL, refusal_type=choice)

    def decide(self, action: str, **choice: Any) -> None:
        """Record a decision on the current draft (with the edited question), then show the next one."""
        if self.current is None:
            return
        try:
            draft = self.session.draft(self.current)
            query = self.edit.value if self.edit.value.strip() != draft.query else None
            decision = self.session.record(self.current, action, query=query, **choice)
        except NomadLabError as exc:
            self.message.value = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
            return
        what = decision.gold or decision.refusal_type or "skipped"
        miss = action == ANSWERABLE and not self.session.retrieved(decision)
        self.message.value = (
            f"saved {html.escape(decision.draft_id)}: {decision.action} ({html.escape(what)})"
            + (
                " · <b class='nomad-label-miss'>retrieval miss</b>: the gold is not among the top 5"
                if miss
                else ""
            )
        )
        self.show_next()

    def undo(self) -> None:
        """Take back the last decision and show its draft again."""
        undone = self.session.undo()
        if undone is None:
            self.message.value = "nothing to undo"
            return
        self.message.value = f"undone: {html.escape(undone.draft_id)} ({undone.action})"
        self.show_next(undone.draft_id)

    def back(self) -> None:
        """Show the draft decided before the one on screen (its label pre-selected), to keep or change."""
        order = list(dict.fromkeys(d.draft_id for d in reversed(self.session.labels.history())))
        if self.back_steps >= len(order):
            self.message.value = "no earlier decision"
            return
        self.back_steps += 1
        self.message.value = f"back {self.back_steps}: save keeps or changes its label"
        self.show_next(order[self.back_steps - 1])

    def _on_key(self, change: dict[str, Any]) -> None:
        typed = change["new"]
        if not typed:
            return
        key = typed[-1].lower()
        self.keys.value = ""
        if key == "a":
            self.save()
        elif key == "s":
            self.decide(SKIP)
        elif key == "z":
            self.undo()
        elif key == "b":
            self.back()
        elif key in REFUSAL_KEYS:
            self.decide(REFUSAL, refusal_type=REFUSAL_KEYS[key])
        elif key.isdigit() and self.current is not None:
            passages = self.session.passages(self.current)
            k = int(key)
            if 1 <= k <= len(passages):
                self.decide(ANSWERABLE, gold=passages[k - 1].doc_id)


def labeller(
    corpus: str | Path | None = None,
    goldens: str | Path | None = None,
    store: str | Path | None = None,
    who: str | None = None,
    refusals_first: bool = False,
) -> Any:
    """The labelling widget for ``goldens/drafts.jsonl`` over ``corpus`` (None: ``$NOMAD_LAB_CORPUS`` or
    the default corpus; ``goldens`` None: ``$NOMAD_LAB_LABEL_DIR``, else ``runs/label``, git-ignored, so
    a sitting run with the notebook's defaults changes no tracked file), labels written beside the drafts.

    ``who`` is recorded with each label (None: :func:`~nomad_lab.data.labels.default_labeller`, the
    account's name); ``refusals_first`` deals the refusal rounds before any answerable draft
    (:mod:`nomad_lab.data.draft_deal`). A missing input (no drafts in the folder, no corpus) is one
    markdown line saying what to run, not a traceback."""
    from IPython.display import Markdown  # heavy

    folder = goldens or os.environ.get("NOMAD_LAB_LABEL_DIR") or DEFAULT_LABEL_DIR
    try:
        session = LabelSession.open(
            corpus_path(corpus), in_workspace(folder), store_path(store), who, refusals_first=refusals_first
        )
    except NomadLabError as exc:
        return Markdown(str(exc).splitlines()[0])
    return Labeller(session).box
