"""The Python reference (docs/python, built by tools/build-docs.sh with Sphinx) documents every
public name from its docstring, and the docstrings stand alone.

The Sphinx build itself (in CI: .ci/test.sh runs tools/build-docs.sh) fails on warnings; these
tests check the same coverage without Sphinx, so a missing docstring shows up in pytest too.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import pathlib
import pkgutil
import re

import pytest

import attnreg

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "python" / "_api.py"
INTERNAL = re.compile(r"seed 0\d|DESIGN\.md|the issue", re.IGNORECASE)


def _api():
    if not API.exists():
        pytest.skip("not run from a source checkout")
    spec = importlib.util.spec_from_file_location("attnreg_docs_api", API)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _documented(api) -> dict:
    """{qualified name: object} of every object with a page in the reference."""
    out = {}
    for modname in api.PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in api.public_names(modname):
            out[f"{modname}.{name}"] = getattr(mod, name)
    return out


def _own_members(cls):
    """Public methods and properties that attnreg classes in cls's MRO define."""
    seen = {}
    for klass in cls.__mro__:
        if not klass.__module__.startswith("attnreg"):
            continue
        for name, member in vars(klass).items():
            if not name.startswith("_") and name not in seen and (
                    inspect.isfunction(member) or isinstance(member, property)):
                seen[name] = member
    return seen


def test_every_public_name_has_a_page():
    api = _api()
    documented = _documented(api)
    objects = {id(o) for o in documented.values()}
    for name in attnreg.__all__:
        if name != "__version__":
            assert f"attnreg.{name}" in documented, name
    # Every public name of every public submodule (kernel, linear, ... included) is documented,
    # under its own module or as a name attnreg re-exports.
    for info in pkgutil.iter_modules(attnreg.__path__):
        if info.name.startswith("_"):
            continue
        modname = f"attnreg.{info.name}"
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or [
            n for n, o in vars(mod).items() if not n.startswith("_")
            and (inspect.isclass(o) or inspect.isfunction(o)) and getattr(o, "__module__", None) == modname]
        for n in names:
            assert id(getattr(mod, n)) in objects, (
                f"{modname}.{n} is public but has no page: export it from attnreg, or add "
                f"{modname} to PUBLIC_MODULES in docs/python/_api.py")


def test_documented_objects_have_docstrings_that_stand_alone():
    api = _api()
    for qual, obj in _documented(api).items():
        doc = inspect.getdoc(obj)
        assert doc and doc.strip(), f"{qual} has no docstring"
        assert not INTERNAL.search(doc), f"{qual}: {INTERNAL.search(doc).group(0)!r}"
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for name, member in _own_members(obj).items():
                mdoc = inspect.getdoc(member)
                assert mdoc and mdoc.strip(), f"{qual}.{name} has no docstring"
                assert not INTERNAL.search(mdoc), f"{qual}.{name}: {INTERNAL.search(mdoc).group(0)!r}"
    for modname in api.PUBLIC_MODULES:
        doc = inspect.getdoc(importlib.import_module(modname))
        assert doc and not INTERNAL.search(doc), modname
