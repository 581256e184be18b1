"""The package's layers: imports only go down, no cycles, and the metric core is numpy/scipy only.

The layers, bottom up (README "Layout"): each module of ``src/leash`` belongs to the first entry
whose prefix names it; a module may import a module of its own layer or of a lower one.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "leash"
LAYERS = [
    ("leash._paths", "leash._config", "leash._argparse"),
    ("leash.core",),
    ("leash.io",),
    ("leash.generate",),
    ("leash.analysis",),
    ("leash.sources", "leash.simulate"),
    ("leash.artifacts",),
    ("leash.output",),
    ("leash.run",),
    ("leash.cli",),
    ("leash",),
]


def _name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    for i, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise AssertionError(f"{module} is in no layer of LAYERS")


def _imports(path: Path) -> set[str]:
    """The leash modules a file imports (at any depth of the file: lazy imports count too)."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "leash"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "leash":
                mod = node.module
            else:
                continue
            for a in node.names:  # `from . import x` imports the module leash.x
                sub = f"{mod}.{a.name}"
                found.add(sub if (SRC.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                          or (SRC.parent / sub.replace(".", "/")).is_dir() else mod)
    # ``from leash import __version__`` reads the package's version, not a layer
    return found - {name, "leash"}


MODULES = {_name(p): p for p in sorted(SRC.rglob("*.py"))}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module):
    if module == "leash":  # the package's __init__ re-exports the core and loads the rest lazily
        return
    up = sorted(m for m in _imports(MODULES[module]) if _layer(m) > _layer(module))
    assert not up, f"{module} (layer {_layer(module)}) imports upward: {up}"


def test_no_import_cycle():
    graph = {m: {t for t in _imports(p) if t in MODULES and t != "leash"}
             for m, p in MODULES.items() if m != "leash"}
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, m, t]))
            if t not in state:
                visit(t, [*path, m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_the_core_imports_without_pandas():
    code = ("import sys, leash.core; bad = {'pandas', 'scipy.stats', 'pyarrow', 'duckdb'} & "
            "set(sys.modules); assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_one_module_knows_the_repository():
    offenders = [n for n, p in MODULES.items() if n != "leash._paths"
                 and "__file__" in p.read_text(encoding="utf-8")]
    assert not offenders, f"compute paths from leash._paths, not __file__: {offenders}"
