"""Compaction: compaction-plan (the Initiator's choice, ``plan``), compact (``run``: the plan, the
lock, the journal, the renames; ``write``: the new directories' files)."""
