"""The one base class for errors a user can fix: a bad file, a missing model, a locked store.

Why a marker class: the CLI must print such an error as one clean line (the message already names the
file, line or field and what is wrong) and exit non-zero, yet keep the traceback of a genuine bug. A
bare ``ValueError`` or ``RuntimeError`` cannot tell the two apart, so every module's own input error
(``GoldenError``, ``CorpusError``, ``DumpError``, ``StoreError``, ``ModelNotInstalled``,
``BackendError``, a bad backend spec) also derives from :class:`NomadLabError`, keeping its old base
so existing ``except ValueError`` callers behave as before. Standard library only.
"""

from __future__ import annotations

import os

__all__ = ["DEBUG_ENV", "NomadLabError"]

DEBUG_ENV = "NOMAD_LAB_DEBUG"
"""Set to 1 to see the traceback of a ``NomadLabError`` too (the CLI re-raises instead of printing)."""


class NomadLabError(Exception):
    """An error in what the user handed over or in the environment, with a message meant for them.

    In a notebook it is shown as that one line too: IPython renders an exception through its
    ``_render_traceback_`` when it has one, so a missing run or dump reads as the command to run, not
    a traceback, while the cell still fails (papermill and Run All stop on it). ``NOMAD_LAB_DEBUG=1``
    brings the traceback back."""

    def _render_traceback_(self) -> list[str]:
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            raise NotImplementedError  # IPython then shows the full traceback
        return [f"{type(self).__name__}: {self}"]
