"""``python -m nomad_lab`` is the ``nomad-lab`` command."""

from nomad_lab.cli import main

raise SystemExit(main())
