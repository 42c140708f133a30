"""The layout shows the architecture: a pure core, io adapters, one module per command, a thin
CLI. These tests read the import graph from the source and fail when a change breaks a layer."""

import subprocess
import sys

import pytest

from .helpers.architecture import LAYERS, cycles, imports, layer, modules

MAX_LINES = 600
CLI_COMMAND_MAX_LINES = 250  # a cli module parses options and renders; the work is elsewhere

# What the core may import besides the standard library and itself: protobuf, which parses the
# ORC tail (orcproto, orcmessages) from bytes already read. It does no IO.
CORE_MAY_IMPORT = {"google"}


def test_every_module_has_a_layer():
    for name in modules():
        assert layer(name) in LAYERS.values(), name


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [f"{e.source}:{e.line} imports {e.target}" for e in imports()
              if e.target.startswith("acidtool.") and layer(e.target) > layer(e.source)]
    assert upward == []


def test_no_import_cycles():
    assert cycles(imports()) == []


def test_no_import_cycles_even_through_imports_inside_functions():
    """An import inside a function runs later, but a circle through it is a circle all the
    same: two modules that need each other are one module, or a third one picks between them
    (commands/convert_run.py picks convert's Spark and metastore variants)."""
    from .helpers.architecture import Import

    every = [Import(e.source, e.target, e.line, True) for e in imports()]
    assert cycles(every) == []


def _private_imports() -> list[tuple[str, int, str, str]]:
    """(module, line, imported module, name) of every ``from X import _name``."""
    import ast

    found = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                found += [(name, node.lineno, ("." * node.level) + (node.module or ""), a.name)
                          for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_names():
    """A name starting with "_" is its module's own: one another module needs is public."""
    found = [f"{m}:{line} imports {target}.{n}" for m, line, target, n in _private_imports()
             if target.startswith((".", "acidtool"))]
    assert found == []


def test_only_the_iceberg_adapter_touches_pyicebergs_private_names():
    """The export drives pyiceberg's writer and snapshot producers, which pyiceberg keeps
    private: one module does it (and pyproject.toml pins pyiceberg's minor version for it)."""
    users = {m for m, _, target, _ in _private_imports() if target.startswith("pyiceberg")}
    assert users <= {"acidtool.io.iceberg"}


def test_a_cycle_is_found_when_there_is_one():
    from .helpers.architecture import Import

    edges = [Import("a", "b", 1, True), Import("b", "c", 1, True), Import("c", "a", 1, True),
             Import("c", "d", 2, False)]
    assert cycles(edges) == [["a", "b", "c", "a"]]
    assert cycles(edges[:2]) == []


@pytest.mark.parametrize("name,path", sorted(modules().items()))
def test_modules_stay_small(name, path):
    lines = len(path.read_text().splitlines())
    limit = CLI_COMMAND_MAX_LINES if name.startswith("acidtool.cli.") and \
        not name.endswith((".output", ".app")) else MAX_LINES
    assert lines <= limit, f"{name} has {lines} lines (at most {limit})"


MAX_FUNCTION_LINES = 80


@pytest.mark.parametrize("name,path", sorted(modules().items()))
def test_functions_stay_short(name, path):
    """No function (its signature, docstring and body) over 80 lines: a CLI command's options
    are declared beside it, its rendering in a helper."""
    import ast

    long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{name}: {long}"


def _third_party(module_names: list[str]) -> set[str]:
    """The top-level packages, neither the standard library nor private, that importing the
    modules (in a fresh process) brings in."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"for m in {module_names!r}: __import__(m)\n"
        "new = {k.split('.')[0] for k in set(sys.modules) - before}\n"
        "std = set(sys.stdlib_module_names)\n"
        "print(','.join(sorted(n for n in new if n not in std and not n.startswith('_'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(filter(None, out.stdout.strip().split(","))) - {"acidtool"}


def test_core_imports_only_the_standard_library_and_protobuf():
    core = sorted(m for m in modules() if m.startswith("acidtool.core"))
    assert "acidtool.core.select" in core and "acidtool.core.rules.metadata" in core
    assert _third_party(core) <= CORE_MAY_IMPORT


def test_the_core_check_sees_a_third_party_import():
    """The same check on an io module finds pyarrow: it would fail for a core module."""
    assert "pyarrow" in _third_party(["acidtool.io.orc"])
