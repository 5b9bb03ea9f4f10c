"""The package's layering, read from its imports: stages import downwards only, sqlglot stays behind its
boundary, and no group of modules imports each other when they run.  (What an import costs at run time:
test_cli.py's and test_api.py's import tests.)"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "lineage_cli"
# Lowest first.  A module imports modules of its own stage or of a lower layer; stages that share a layer
# (harvest, imports, walk; check, serve) import none of each other, but the shared vocabulary at the bottom may
# build on itself (facets on model).  The package root is the public API over them all.
LAYERS = [
    {"model", "profiles", "errors", "facets", "yamlsafe", "terminal", "heap"},
    {"store"},
    {"harvest", "imports", "walk"},
    {"emit"},
    {"check", "serve", "spark"},
    {"commands"},
    {"cli"},
    {"__main__"},
]
RANK = {stage: rank for rank, stage in enumerate(LAYERS) for stage in stage}
SQLGLOT_BOUNDARY = "lineage_cli.harvest.sql"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(path: Path, include_typing: bool = True) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, function-level ones included, and those under
    ``if TYPE_CHECKING:`` unless ``include_typing`` is false."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if include_typing else {id(node) for block in _typing_blocks(tree) for node in ast.walk(block)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _typing_blocks(tree: ast.AST) -> list[ast.If]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]


def ours(name: str) -> str | None:
    """The module of ours that an imported name lives in, or None for another package."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def stage_of(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def runtime_dependencies() -> dict[str, set[str]]:
    """Each module's modules of ours that it imports when it runs (type-only imports make no cycle)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        wanted = {ours(name) for _, name in imports_of(path, include_typing=False) if name != "lineage_cli.__version__"}
        graph[module] = wanted - {None, module}  # type: ignore[operator]
    return graph


def test_every_stage_is_in_a_layer() -> None:
    stages = {stage_of(module) for module in MODULES} - {""}
    assert sorted(stages - set(RANK)) == []


def test_stages_import_only_downwards() -> None:
    wrong = []
    for module, path in MODULES.items():
        if module == "lineage_cli":
            continue  # the public API: lazy imports of every stage
        for line, name in imports_of(path):
            target = ours(name) if name != "lineage_cli.__version__" else None
            if target is None or stage_of(target) == stage_of(module):
                continue
            above, beside = (
                RANK[stage_of(target)] > RANK[stage_of(module)],
                RANK[stage_of(target)] == RANK[stage_of(module)],
            )
            if target == "lineage_cli" or above or (beside and RANK[stage_of(module)] > 0):
                wrong.append(f"{path.relative_to(REPO)}:{line}: {module} imports {target}")
    assert wrong == []


def test_only_the_sqlglot_boundary_imports_sqlglot() -> None:
    wrong = [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for module, path in MODULES.items()
        if not (module == SQLGLOT_BOUNDARY or module.startswith(SQLGLOT_BOUNDARY + "."))
        for line, name in imports_of(path)
        if name == "sqlglot" or name.startswith("sqlglot.")
    ]
    assert wrong == []


def test_no_group_of_modules_imports_each_other_when_they_run() -> None:
    graph = runtime_dependencies()
    assert [sorted(group) for group in _cycles(graph)] == []


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)
            elif step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                work.append((step, iter(sorted(graph[step]))))
            elif step in stack:
                low[node] = min(low[node], index[step])
    return groups


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
