"""Validation rules: a registry of plain declarations, each a pure function of already-read facts.

Every rule has a code that is never reused, a short name, a default severity, the level of facts it
needs, a one-line summary and its documentation (what it checks, why Hive cares, an example, how to
fix). Findings are values; a finding may carry another severity than its rule's default where the
situation calls for it (a foreign file next to ACID directories is an error, in a plain landing
zone a warning).
"""

from . import metadata, names, rows  # noqa: F401 - each registers its rules
from .index import data_file_names
from .registry import (
                       REGISTRY,
                       SEVERITIES,
                       Finding,
                       Rule,
                       add_gathered,
                       check_partition,
                       check_partitions,
                       check_table,
                       in_code_order,
                       run_rules,
                       stray_values,
)

in_code_order()

__all__ = ["REGISTRY", "SEVERITIES", "Finding", "Rule", "add_gathered", "check_partition",
           "check_partitions", "check_table", "data_file_names", "run_rules", "stray_values"]
