"""The package's modules import each other in one direction only (issue 20): no circle, not
even through an import inside a function, which would only hide it. Imports under
`if TYPE_CHECKING:` are for annotations and never run, so they don't count."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "greenctx")
MODULES = sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree):
    """The ImportFrom / Import nodes that run, at any depth."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def imported_modules(module):
    """The package's modules that `module` imports ("__init__" for the package itself)."""
    with open(os.path.join(PACKAGE, module + ".py")) as f:
        tree = ast.parse(f.read())
    found = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "greenctx":
                    found.add(parts[1] if len(parts) > 1 else "__init__")
            continue
        if node.level == 0 and not (node.module or "").startswith("greenctx"):
            continue
        if node.level > 1:
            raise AssertionError(f"{module} imports from above the package")
        target = node.module.split(".")[-1] if node.module and node.module != "greenctx" \
            else None
        if target:
            found.add(target)
        else:  # from . import a, b: a submodule each, or a name of the package's __init__
            found.update(a.name if a.name in MODULES else "__init__" for a in node.names)
    found.discard(module)
    return found


def circles(graph):
    """Each set of modules that reach each other (Tarjan's strongly connected components of
    more than one module)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


GRAPH = {m: imported_modules(m) for m in MODULES}


def test_the_scan_sees_the_package():
    assert {"context", "_interop", "partition", "__init__"} <= set(MODULES)
    assert "_interop" in GRAPH["partition"] and "partition" in GRAPH["context"]
    assert "context" in GRAPH["__init__"] and "_capi" in GRAPH["_object"]


def test_the_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", MODULES)
def test_no_module_is_in_an_import_circle(module):
    for circle in circles(GRAPH):
        assert module not in circle, (
            f"{' <-> '.join(circle)} import each other: "
            + "; ".join(f"{m} imports {sorted(GRAPH[m] & set(circle))}" for m in circle))
