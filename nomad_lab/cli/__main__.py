"""``python -m nomad_lab.cli`` is the ``nomad-lab`` command (subprocesses use it without the console script)."""

from nomad_lab.cli import main

raise SystemExit(main())
