"""The example output of the docs pages that start Spark (export.md, spark.md) is what the
tool prints today: a module of its own, so that it runs beside the other pages' check."""

import pytest

from .test_docs import check_group


@pytest.mark.slow
def test_spark_pages_examples_are_current():
    check_group("spark")
