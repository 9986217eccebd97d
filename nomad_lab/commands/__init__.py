"""``nomad-lab`` subcommands: each module has ``register(subparsers)`` (see ``nomad_lab.cli``)."""
