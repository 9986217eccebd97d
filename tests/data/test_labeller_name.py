"""Who a label is recorded by: the account's name from getpass (a Jupyter kernel often has no $USER),
overridden by $NOMAD_LAB_LABELLER; "unknown" only when the account has no name at all."""

from __future__ import annotations

import getpass

from nomad_lab.data.labels import default_labeller


def test_the_account_name_comes_from_getpass_without_user(monkeypatch) -> None:
    for name in ("NOMAD_LAB_LABELLER", "USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(getpass, "getuser", lambda: "ada")
    assert default_labeller() == "ada"
    monkeypatch.setenv("NOMAD_LAB_LABELLER", "grace")
    assert default_labeller() == "grace"


def test_an_account_without_a_name_is_unknown(monkeypatch) -> None:
    def nameless() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.delenv("NOMAD_LAB_LABELLER", raising=False)
    monkeypatch.setattr(getpass, "getuser", nameless)
    assert default_labeller() == "unknown"
