"""Commands that judge a table and change nothing: validate (with its findings dataset), report,
upgrade-check."""
