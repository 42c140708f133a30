"""``convert --spark``: the same conversion as a PySpark job (placeholder until implemented)."""


def spark_problem() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "--spark needs pyspark: pip install 'acidtool[spark]'"
    import shutil

    if not shutil.which("java"):
        return "--spark needs Java 17 (e.g. apt-get install openjdk-17-jre-headless)"
    return None
