# hypothesis's pytest plugin imports these late (at a failure, at the end of the run), and with
# pytest's assertion rewriting such a late import hit CPython 3.11.7's "AST constructor recursion
# depth mismatch" in ast.parse after a test had run in a py4j JVM: imported up front.
import hypothesis  # noqa: F401
import hypothesis.internal.observability  # noqa: F401
import pytest

from .helpers.spark import spark_session


@pytest.fixture(scope="session", autouse=True)
def _state_dir(tmp_path_factory):
    """Journals and locks that a test does not place go to the run's own directory, never the
    user's ~/.local/state/acidtool (the default a command falls back to)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ACIDTOOL_STATE_DIR", str(tmp_path_factory.mktemp("acidtool-state")))
        yield


@pytest.fixture(scope="session")
def spark():
    return spark_session()


@pytest.fixture(scope="session")
def jvm(spark):
    return spark._jvm


def _hive_jvm(version: str):
    from .helpers.hivejvm import VERSIONS, HiveJVM, fetch
    from .helpers.spark import java_problem

    problem = java_problem()
    if problem is None:
        try:
            import py4j  # noqa: F401 - with pyspark
        except ImportError:
            problem = "py4j is not installed (pip install -e '.[spark]')"
    problem = problem or fetch(VERSIONS[version])
    if problem:
        pytest.skip(f"Hive {VERSIONS[version]}: {problem}")
    return HiveJVM.start(VERSIONS[version])


@pytest.fixture(scope="session")
def hive31():
    """Hive 3.1's own classes in a JVM of their own (one per test session)."""
    jvm = _hive_jvm("3")
    yield jvm
    jvm.stop()


@pytest.fixture(scope="session")
def hive40():
    """Hive 4.0's own classes in a JVM of their own (one per test session)."""
    jvm = _hive_jvm("4")
    yield jvm
    jvm.stop()


@pytest.fixture(scope="session")
def minidfs():
    """A real HDFS (MiniDFSCluster) on 127.0.0.1, one per test session."""
    from .helpers.hivejvm import fetch
    from .helpers.minidfs import ARTIFACTS, MiniDFS
    from .helpers.spark import java_problem

    problem = java_problem()
    if problem is None:
        try:
            import py4j  # noqa: F401 - with pyspark
            import requests  # noqa: F401 - fsspec's WebHDFS client
        except ImportError as exc:
            problem = f"{exc.name} is not installed (pip install -e '.[spark,test]')"
    problem = problem or fetch("", wanted=ARTIFACTS)
    if problem:
        pytest.skip(f"MiniDFSCluster: {problem}")
    cluster = MiniDFS.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def _metastores():
    """The metastores started so far, by version: each starts at its first test and stops at
    the end of the session, so that tests of any order (and a worker of ``pytest -n``) start
    each version once."""
    started: dict = {}
    yield started
    for server in started.values():
        if not isinstance(server, str):
            server.stop()


@pytest.fixture(params=["2", "3", "4"], ids=["hms2.3", "hms3.1", "hms4.0"])
def metastore(request, _metastores):
    """A real Hive metastore (2.3.10, 3.1.3, 4.0.1) on 127.0.0.1, one per version per test
    session (per worker under ``pytest -n``)."""
    from .helpers.metastore import Metastore, problem

    version = request.param
    if version not in _metastores:
        why = problem(version)
        _metastores[version] = f"Hive {version} metastore: {why}" if why else \
            Metastore.start(version)
    server = _metastores[version]
    if isinstance(server, str):
        pytest.skip(server)
    return server


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The modules holding a test marked ``slow`` run first (in their order), the rest after:
    under ``make test``'s two workers (``--dist loadfile --no-loadscope-reorder``) the long
    modules start at once and the short ones fill in around them, instead of one long module
    running alone at the end. ``pytest -m "not slow"`` leaves them out for a quick run."""
    def module(item):
        return item.nodeid.split("::")[0]

    slow = {module(item) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: module(item) not in slow)
