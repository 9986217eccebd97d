"""Helpers shared by the test modules: paths, fake servers, scripted backends, fixtures."""
