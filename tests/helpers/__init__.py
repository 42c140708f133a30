"""Importable test helpers (builders and shared-data locators), kept out of conftest on purpose."""
