"""The pure core: Hive's naming rules, bucket codec, snapshots and getAcidState.

Only the standard library is imported here (a test enforces it), so the core can be reasoned about
and tested without any filesystem or ORC reader.
"""
