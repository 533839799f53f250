"""The modules of attnreg import one another without a cycle.

Every import counts, also those inside functions (a deferred import hides a cycle from Python's
import machinery, not from the reader); only ``if TYPE_CHECKING:`` blocks are left out, as they
never run. ``from . import name`` is an import of the submodule ``name`` when there is one,
else of the package itself (its ``__init__``, which imports most modules). The package's
``__init__`` loads some submodules on first use (its ``__getattr__``, by name through
importlib): the submodules named in its tables ``_lazy_attributes`` (the values) and
``_lazy_submodules`` count as its imports.
"""
import ast
import importlib.util
import pathlib

# Located without importing the package (which would need the compiled core).
PKG = pathlib.Path(importlib.util.find_spec("attnreg").origin).parent


def _is_type_checking(node):
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree, modules):
    out = set()

    def visit(node):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                for alias in node.names:
                    out.add(alias.name if alias.name in modules else "__init__")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] == "attnreg":
                out.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "attnreg":
                    out.add(parts[1] if len(parts) > 1 else "__init__")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


LAZY_TABLES = ("_lazy_attributes", "_lazy_submodules")


def _lazy_imports(tree):
    """The submodules a module-level table of LAZY_TABLES names (dict values, set items)."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id in LAZY_TABLES for t in targets):
            continue
        table = ast.literal_eval(value)
        out |= set(table.values() if isinstance(table, dict) else table)
    return out


def import_graph():
    files = {p.stem: p for p in PKG.glob("*.py")}
    modules = set(files) | {"_core"}  # the compiled core, a submodule (maybe not built here)
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        graph[name] = (_imports(tree, modules) | _lazy_imports(tree)) - {name}
    return graph


def find_cycle(graph):
    """One cycle as a list of module names, or None."""
    state, stack = {}, []

    def dfs(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                c = dfs(v)
                if c:
                    return c
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            c = dfs(u)
            if c:
                return c
    return None


def test_find_cycle_detects_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_graph_sees_deferred_imports():
    g = import_graph()
    # kernel.py imports the diagnostics inside its methods: the walker must see it.
    assert "diagnostics" in g["kernel"]
    assert "kernel" in g["__init__"]
    # __init__ loads these on first use (its __getattr__): the walker reads its tables.
    assert {"linear", "formula", "dask", "torch"} <= g["__init__"]


def test_attnreg_import_graph_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
