"""The labelling surface of ``notebooks/label.ipynb``: one drafted question at a time, its top passages
with the question's words marked, buttons and keys for a decision, progress, and the live figures.

Everything it decides goes through :class:`nomad_lab.eval.gating.labelling.LabelSession` (tested without
a browser); this module only draws widgets and routes clicks and keys to it. Keys are typed into the
small key box (a text field), so JupyterLab's own notebook shortcuts never see them.
"""

from __future__ import annotations

import html
import io
import os
import re
from pathlib import Path
from typing import Any

from nomad_lab.core.errors import NomadLabError
from nomad_lab.core.workspace import DEFAULT_CORPUS_DIR, in_workspace, store_path
from nomad_lab.data.labels import ANSWERABLE, REFUSAL, REFUSAL_TYPES, SKIP
from nomad_lab.eval.gating.labelling import LabelSession
from nomad_lab.gate.coverage import stem, terms

REFUSAL_KEYS = dict(zip("nfot", REFUSAL_TYPES, strict=True))
"""Key -> refusal type: n near-domain, f adversarial/fictional, o out-of-corpus, t off-topic."""
KEY_HELP = "keys: 1-5 answerable (that passage's document) · n f o t refusal · s skip"


def mark_terms(text: str, query: str) -> str:
    """``text`` as HTML with every word sharing a stem with a content word of ``query`` in <mark>."""
    wanted = set(terms(query))
    out, last = [], 0
    for match in re.finditer(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?", text):
        out.append(html.escape(text[last : match.start()]))
        word = match.group(0)
        token = stem(word.lower().replace("’", "'"))
        out.append(f"<mark>{html.escape(word)}</mark>" if token in wanted else html.escape(word))
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _plot_history(history: list[tuple[int, dict[str, Any]]]) -> bytes:
    import matplotlib  # heavy

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # heavy

    figure, axes = plt.subplots(figsize=(6.0, 2.8), dpi=100)
    for name, colour in (("floor", "tab:blue"), ("gate", "tab:orange")):
        points = [(n, f[name]) for n, f in history if f.get(name)]
        if not points:
            continue
        x = [n for n, _ in points]
        axes.plot(x, [p["leak"] for _, p in points], marker="o", color=colour, label=f"{name}: leak")
        axes.fill_between(
            x, [p["leakLow"] for _, p in points], [p["leakHigh"] for _, p in points], color=colour, alpha=0.2
        )
    axes.set_xlabel("labels so far")
    axes.set_ylabel("leak at recall@5 >= 0.90")
    axes.set_ylim(0, 1)
    if axes.lines:
        axes.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


class Labeller:
    """The widgets and their wiring; ``box`` is what the notebook displays."""

    def __init__(self, session: LabelSession) -> None:
        import ipywidgets as w  # heavy

        self.session = session
        self.current: str | None = None
        self.history: list[tuple[int, dict[str, Any]]] = []
        self.progress = w.IntProgress(min=0, description="decided")
        self.count = w.HTML()
        self.question = w.HTML()
        self.passages = w.HTML()
        self.edit = w.Text(description="question", layout=w.Layout(width="95%"))
        self.gold_buttons = w.HBox()
        refusals = [
            self._button(f"{k} refusal: {t}", REFUSAL, refusal_type=t) for k, t in REFUSAL_KEYS.items()
        ]
        for button in refusals:
            button.add_class("nomad-label-refusal")
        skip = self._button("s skip", SKIP)
        skip.add_class("nomad-label-skip")
        self.keys = w.Text(placeholder=KEY_HELP, description="key box", layout=w.Layout(width="60%"))
        self.keys.add_class("nomad-label-keys")
        self.keys.observe(self._on_key, names="value")
        self.message = w.HTML()
        self.message.add_class("nomad-label-message")
        self.figure = w.Image(format="png")
        self.figures_text = w.HTML()
        self.box = w.VBox(
            [
                w.HBox([self.progress, self.count]),
                self.question,
                self.edit,
                self.passages,
                self.gold_buttons,
                w.HBox([*refusals, skip]),
                self.keys,
                self.message,
                self.figures_text,
                self.figure,
            ]
        )
        self.box.add_class("nomad-labeller")
        self.show_next()

    def _button(self, text: str, action: str, **choice: Any):
        import ipywidgets as w  # heavy

        button = w.Button(description=text, layout=w.Layout(width="auto"))
        button.on_click(lambda _b: self.decide(action, **choice))
        return button

    def show_next(self) -> None:
        """Draw the first draft of the queue (or say that every draft is decided), progress and figures."""
        import ipywidgets as w  # heavy

        decided, total = self.session.progress()
        self.progress.max, self.progress.value = total, decided
        self.count.value = f"<span class='nomad-label-count'>{decided} / {total} decided</span>"
        queue = self.session.queue()
        self.current = queue[0] if queue else None
        if self.current is None:
            self.question.value = "<b>Every draft is decided.</b>"
            self.passages.value, self.gold_buttons.children = "", ()
        else:
            draft = self.session.draft(self.current)
            source = html.escape(draft.draft.source if draft.draft else "")
            self.question.value = (
                f"<h3 class='nomad-label-question' data-id='{html.escape(draft.id)}'>"
                f"{html.escape(draft.query)}</h3><small>draft {html.escape(draft.id)} · {source}</small>"
            )
            self.edit.value = draft.query
            passages = self.session.passages(self.current)
            self.passages.value = (
                "".join(
                    f"<p class='nomad-label-passage'><b>{k}. {html.escape(p.doc_id)}</b> ({p.score:.2f}): "
                    f"{mark_terms(p.text[:700], draft.query)}</p>"
                    for k, p in enumerate(passages, start=1)
                )
                or "<p>(retrieval returned nothing)</p>"
            )
            docs = list(dict.fromkeys(p.doc_id for p in passages))
            buttons = []
            for doc in docs:
                key = 1 + [p.doc_id for p in passages].index(doc)
                button = self._button(f"{key} answerable: {doc}", ANSWERABLE, gold=doc)
                button.add_class("nomad-label-answerable")
                buttons.append(button)
            self.gold_buttons.children = tuple(buttons) or (w.HTML("no passage to take a gold from"),)
        self._draw_figures(decided)

    def _draw_figures(self, decided: int) -> None:
        figures = self.session.figures()
        if not self.history or self.history[-1][0] != decided:
            self.history.append((decided, figures))
        parts = [f"{figures['answerable']} answerable, {figures['refusals']} refusals labelled"]
        for name in ("floor", "gate"):
            f = figures.get(name)
            if f:
                parts.append(
                    f"{name}: leak {f['leak']:.1%} [{f['leakLow']:.1%}, {f['leakHigh']:.1%}] at recall@5 "
                    f"{f['recall']:.3f}"
                )
        self.figures_text.value = "<p class='nomad-label-figures'>" + " · ".join(parts) + "</p>"
        self.figure.value = _plot_history(self.history)

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
        self.message.value = (
            f"saved {html.escape(decision.draft_id)}: {decision.action} ({html.escape(what)})"
        )
        self.show_next()

    def _on_key(self, change: dict[str, Any]) -> None:
        typed = change["new"]
        if not typed:
            return
        key = typed[-1].lower()
        self.keys.value = ""
        if key == "s":
            self.decide(SKIP)
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
) -> Any:
    """The labelling widget for ``goldens/drafts.jsonl`` over ``corpus`` (None: ``$NOMAD_LAB_CORPUS`` or
    the default corpus; ``goldens`` None: ``$NOMAD_LAB_LABEL_DIR``), labels written beside the drafts."""
    corpus = in_workspace(corpus or os.environ.get("NOMAD_LAB_CORPUS") or DEFAULT_CORPUS_DIR)
    goldens = goldens or os.environ.get("NOMAD_LAB_LABEL_DIR")
    if not goldens:
        raise NomadLabError(
            "label: give the goldens folder holding drafts.jsonl (nomad-lab goldens draft --out DIR)"
        )
    session = LabelSession.open(corpus, in_workspace(goldens), store_path(store), who)
    return Labeller(session).box
