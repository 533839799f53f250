"""Which attnreg objects the Python reference documents; used by conf.py (the API pages) and by
python-package/tests/test_docs_site.py (every public name is documented). No Sphinx import.
"""
from __future__ import annotations

import importlib
import inspect
import pathlib

import attnreg

# The public modules. attnreg's other submodules (kernel, linear, density, ...) hold the
# implementations of names re-exported by attnreg itself; python-package/tests/test_docs_site.py
# checks that every public name of every submodule is documented through this list.
PUBLIC_MODULES = ["attnreg", "attnreg.bandwidth", "attnreg.diagnostics", "attnreg.plot",
                  "attnreg.attention", "attnreg.dask", "attnreg.torch"]
PUBLIC_MODULES.append("attnreg.rd")  # regression discontinuity
PUBLIC_MODULES += ["attnreg.montecarlo", "attnreg.spectests"]  # Monte Carlo lab, specification tests
PUBLIC_MODULES.append("attnreg.datasets")  # data sets shipped with the package


def public_names(modname: str) -> list[str]:
    """The names a module's page documents: its __all__, else the public classes and functions
    it defines; a submodule leaves out what attnreg itself re-exports (documented there)."""
    mod = importlib.import_module(modname)
    if hasattr(mod, "__all__"):
        names = [n for n in mod.__all__ if n != "__version__"]
    else:
        names = [n for n, o in vars(mod).items() if not n.startswith("_")
                 and (inspect.isclass(o) or inspect.isfunction(o))
                 and getattr(o, "__module__", None) == modname]
    if modname != "attnreg":
        names = [n for n in names if getattr(attnreg, n, None) is not getattr(mod, n)]
    return names


def write_api_pages(api: pathlib.Path) -> None:
    """Write one autosummary page per public module, and their table of contents, into api."""
    api.mkdir(exist_ok=True)
    for old in api.glob("*.rst"):
        old.unlink()
    for modname in PUBLIC_MODULES:
        names = public_names(modname)
        mod = importlib.import_module(modname)
        reexported = ""
        if modname != "attnreg":
            same = [n for n, o in vars(mod).items() if not n.startswith("_")
                    and getattr(attnreg, n, None) is o and (inspect.isclass(o) or inspect.isfunction(o))
                    and getattr(o, "__module__", None) == modname]
            if same:
                reexported = ("Also defined here and documented under :mod:`attnreg`: "
                              + ", ".join(f":obj:`attnreg.{n}`" for n in same) + ".\n\n")
        lines = [f"``{modname}``", "=" * (len(modname) + 4), "",
                 f".. automodule:: {modname}", "   :no-members:", "",
                 f".. currentmodule:: {modname}", "", reexported,
                 ".. autosummary::", "   :toctree: ../generated", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names]
        (api / f"{modname}.rst").write_text("\n".join(lines) + "\n")
    toc = ["Modules", "=======", "", ".. toctree::", "   :maxdepth: 1", ""]
    (api / "index.rst").write_text("\n".join(toc + [f"   {m}" for m in PUBLIC_MODULES]) + "\n")


