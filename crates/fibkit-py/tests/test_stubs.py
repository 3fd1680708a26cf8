"""The type stubs (fibkit/__init__.pyi) name what the package has, with the
same parameters: a name added to the package without its stub, or a
parameter renamed, fails here."""

import ast
import inspect
import pathlib

import fibkit

STUB = pathlib.Path(fibkit.__file__).with_name("__init__.pyi")


def stub_tree():
    return ast.parse(STUB.read_text(encoding="utf-8"))


def parameters(function):
    """Parameter names of a stub function, `self` left out."""
    names = [argument.arg for argument in function.args.args]
    return [name for name in names if name != "self"]


def test_every_public_name_has_a_stub_and_every_stub_a_name():
    tree = stub_tree()
    stubbed = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    public = {name for name in fibkit.__all__ if name != "__version__"}
    assert stubbed - {"_Compiled"} == public
    assert (STUB.parent / "py.typed").exists()


def test_stub_signatures_match_the_runtime():
    tree = stub_tree()
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            runtime = inspect.signature(getattr(fibkit, node.name))
            assert parameters(node) == list(runtime.parameters), node.name
    for name in ("Fib", "Fib6", "Table", "BgpSpeaker", "Client"):
        cls = getattr(fibkit, name)
        methods = {}
        for base in ([classes["_Compiled"]] if name in ("Fib", "Fib6") else []) + [classes[name]]:
            methods.update({item.name: item for item in base.body if isinstance(item, ast.FunctionDef)})
        runtime_public = {attr for attr in dir(cls) if not attr.startswith("_")}
        assert {method for method in methods if not method.startswith("_")} == runtime_public, name
        for method, node in methods.items():
            if method.startswith("__") or any(getattr(d, "id", None) == "property" for d in node.decorator_list):
                continue
            runtime = inspect.signature(getattr(cls, method))
            names = [parameter for parameter in runtime.parameters if parameter != "self"]
            assert parameters(node) == names, f"{name}.{method}"
        if "__init__" in methods:
            assert parameters(methods["__init__"]) == list(inspect.signature(cls).parameters), name


def test_the_modules_stubs_match_their_modules():
    """fibkit.arrow, fibkit.dask, fibkit.spark and fibkit.duckdb: a stub
    for each public function, with the same parameters."""
    import importlib

    for name in ("arrow", "dask", "spark", "duckdb"):
        module = importlib.import_module(f"fibkit.{name}")
        tree = ast.parse(STUB.with_name(f"{name}.pyi").read_text(encoding="utf-8"))
        stubs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        public = getattr(module, "__all__", [n for n in stubs])
        assert set(stubs) == set(public), name
        for function, node in stubs.items():
            assert parameters(node) == list(inspect.signature(getattr(module, function)).parameters), (name, function)
