"""Runners: notebook grids through papermill and judge-model grids on Dask."""
