# Two entry points (see README.md):
#   make demo   install acidtool and run it on a bundled example table
#   make test   install everything (Spark included) and run the whole test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_WRITE_IDS := shop.orders:5:9223372036854775807::5

.PHONY: demo test lint install install-all docs bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# An editable install is not byte-compiled (a wheel's is), and where PYTHONDONTWRITEBYTECODE
# is set nothing ever writes the .pyc files: each start of acidtool compiled the package again,
# some 80 ms. compileall writes them once (Python still checks them against the sources).
# compat: Spark finds Python data sources with pkgutil.iter_modules (the `hiveacid` source is
# pyspark_hiveacid.py), which cannot see the import hooks of setuptools' default editable
# install; compat's path entry it can (a regular `pip install acidtool` needs neither).
EDITABLE = --config-settings editable_mode=compat

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[iceberg]' $(EDITABLE)
	$(BIN)/python -m compileall -q acidtool

install-all: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[spark,test]' $(EDITABLE)
	$(BIN)/python -m compileall -q acidtool
	@sh scripts/ensure-java.sh
	@sh scripts/ensure-chromium.sh
	@$(BIN)/python -m tests.helpers.hivejvm fetch
	@$(BIN)/python -m tests.helpers.icebergspark fetch
	@$(BIN)/python -m tests.helpers.spark warm

demo: install
	rm -rf demo-table
	$(BIN)/python -m acidtool.demo demo-table
	$(BIN)/acidtool ls demo-table --write-ids '$(DEMO_WRITE_IDS)'

# Two test processes (pytest-xdist), a module at a time each, the modules with slow tests first
# (tests/conftest.py orders them): each process starts the JVMs its modules need once. Three
# processes on 2 cores were slower (31.5 minutes against 27.5 the same day). The 25 slowest
# tests are listed at the end, so that a CI log says where the time went.
TEST_PROCESSES ?= 2

test: install-all lint
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder \
		--durations=25

# The gates: ruff's lint and mypy's types, clean on acidtool/ (configured in pyproject.toml).
lint: install-all
	$(BIN)/ruff check acidtool
	$(BIN)/mypy

docs: install
	$(BIN)/python docs/update.py

bench: install
	$(BIN)/python benchmarks/bench_ls.py
	$(BIN)/python benchmarks/bench_dump.py
	$(BIN)/python benchmarks/bench_validate.py
	$(BIN)/python benchmarks/bench_read.py
	$(BIN)/python benchmarks/bench_read.py --memory
	$(BIN)/python benchmarks/bench_convert.py
	$(BIN)/python benchmarks/bench_hdfs.py
	$(BIN)/python benchmarks/bench_repair.py
	$(BIN)/python benchmarks/bench_warehouse.py
	$(BIN)/python benchmarks/bench_spark_read.py
	$(BIN)/python benchmarks/bench_spark_source.py
	$(BIN)/python benchmarks/bench_spark_start.py
	$(BIN)/python benchmarks/bench_spark_small_files.py
	$(BIN)/python benchmarks/bench_spark_first_read.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_export.py

clean:
	rm -rf $(VENV) demo-table build *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache
