"""Every public function and method of the package is annotated (issue 30): users' type
checkers read the annotations (py.typed), and mypy (python.types) checks them against the
bodies. Public: a name without a leading underscore, in a module without one (__init__
included), or a dunder such as __init__ of a public class."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "greenctx")
MODULES = sorted(f for f in os.listdir(PACKAGE)
                 if f.endswith(".py") and (f == "__init__.py" or not f.startswith("_")))


def _public(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _functions(tree):
    """(qualified name, def) of each public function and public class's public method."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and _public(item.name):
                    yield f"{node.name}.{item.name}", item


def missing(source):
    """What lacks an annotation: 'f(x)', 'f -> return', one per gap."""
    out = []
    for name, fn in _functions(ast.parse(source)):
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        bound = params[:1] if params and params[0].arg in ("self", "cls") else []
        for a in params + [a for a in (args.vararg, args.kwarg) if a]:
            if a not in bound and a.annotation is None:
                out.append(f"{name}({a.arg})")
        if fn.returns is None:
            out.append(f"{name} -> return")
    return out


def test_the_check_finds_a_missing_annotation():
    assert missing("def f(x, y: int) -> int: ...\n"
                   "class C:\n    def g(self, *a) -> None: ...\n    def h(self): ...\n"
                   "    def _private(self, x): ...\ndef _helper(x): ...\n") == \
        ["f(x)", "C.g(a)", "C.h -> return"]


@pytest.mark.parametrize("module", MODULES)
def test_every_public_function_is_annotated(module):
    with open(os.path.join(PACKAGE, module)) as f:
        assert missing(f.read()) == [], f"greenctx/{module}: annotate these"
