"""Gating studies: floor sweeps, judge models, injection, library growth and the explore snapshot."""
