"""Studies: each measures one question over stored runs and writes rows, a table, a plot and files."""
