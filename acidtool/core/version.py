"""acidtool's version (pyproject.toml says the same; a test holds them together)."""

__version__ = "0.1.0"
