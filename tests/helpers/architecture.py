"""The package's import graph, read from the source (nothing is imported).

``python -m tests.helpers.architecture`` prints it as Graphviz DOT, one node per module, with the
layers as clusters; ``tests/test_architecture.py`` checks its rules.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acidtool"

# A module may import from its own layer and the layers below, never from one above.
# The table layer (the read engine, targets, facts, the snapshot and the read plan) stands on
# the byte adapters; the commands on it; the public API and the Spark source on the commands;
# acidtool.spark on those; the CLI on everything.
LAYERS = {"core": 0, "_gc": 0, "io": 1, "table": 2, "commands": 3, "api": 4, "hiveacid": 4,
          "spark": 5, "demo": 5, "cli": 6, "__init__": 7, "__main__": 7}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, e.g. acidtool.table.read
    target: str  # the imported module (or package), e.g. acidtool.io.orc
    line: int
    top_level: bool  # at module level (executed at import) or inside a function


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else LAYERS["__init__"]


def imports(known: dict[str, Path] | None = None) -> list[Import]:
    known = known or modules()
    out = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        top = {id(n) for n in tree.body} | {id(n) for s in tree.body if isinstance(s, ast.If)
                                            for n in s.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:  # "from . import x": x may be a module
                    sub = f"{target}.{alias.name}"
                    out.append(Import(name, sub if sub in known else target, node.lineno,
                                      id(node) in top))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("acidtool"):
                out.append(Import(name, node.module, node.lineno, id(node) in top))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("acidtool"):
                        out.append(Import(name, alias.name, node.lineno, id(node) in top))
    return out


def cycles(edges: list[Import]) -> list[list[str]]:
    """Cycles among module-level imports (those that run when a module is imported)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.top_level and e.source != e.target:
            graph.setdefault(e.source, set()).add(e.target)
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found


def dot() -> str:
    known = modules()
    lines = ["digraph acidtool {", "  rankdir=BT; node [shape=box, fontsize=10];"]
    for group in ("core", "io", "commands", "cli"):
        members = [m for m in known if m.startswith(f"acidtool.{group}")]
        lines.append(f'  subgraph "cluster_{group}" {{ label="{group}";')
        lines += [f'    "{m}";' for m in members]
        lines.append("  }")
    seen = set()
    for e in imports(known):
        if (e.source, e.target) not in seen and e.source != e.target:
            seen.add((e.source, e.target))
            style = "" if e.top_level else " [style=dashed]"
            lines.append(f'  "{e.source}" -> "{e.target}"{style};')
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(dot() + "\n")
