"""Commands that show a table's bytes or rows: dump, meta, diff, decode."""
