import pytest

from .helpers.spark import spark_session


@pytest.fixture(scope="session")
def spark():
    return spark_session()


@pytest.fixture(scope="session")
def jvm(spark):
    return spark._jvm
