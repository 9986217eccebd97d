"""``python -m nomad_lab.cli`` is the ``nomad-lab`` command (what subprocesses run)."""

from nomad_lab.cli import main

raise SystemExit(main())
