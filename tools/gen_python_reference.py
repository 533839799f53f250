#!/usr/bin/env python3
"""Write docs/reference/python.md from the docstrings of the attnreg Python package.

Usage (from the repository root, with attnreg importable, e.g. PYTHONPATH=python-package/src):

    python3 tools/gen_python_reference.py            # rewrite docs/reference/python.md
    python3 tools/gen_python_reference.py --check    # exit 1 if the committed page is stale

The page lists, per module, every public class (constructor signature, docstring, and the
public methods attnreg defines) and function (signature, docstring). Docstrings are shown
verbatim (numpydoc text) in fenced blocks; nothing is written by hand, so the page cannot drift
from the code (python-package/tests/test_reference_docs.py runs the check).
"""
from __future__ import annotations

import argparse
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "reference" / "python.md"

# (module, names) in page order; None: the module's __all__.
SECTIONS = [
    ("attnreg", ["NadarayaWatson", "LocalLinear", "OLS", "Ridge", "PCR", "AttentionRegression",
                 "select_bandwidth", "BandwidthResult", "pseudo_out_of_sample", "kernel_constants",
                 "show_progress", "build_info", "NumericalError", "NoResidualDFWarning",
                 "BoundaryWarning", "ols", "ridge", "kreg", "RegressionSummary",
                 "KernelDensity", "ConditionalDensity", "ConditionalDistribution",
                 "ConditionalQuantile", "LocalPolynomial", "PartiallyLinear",
                 "SmoothCoefficient", "marginal_effects"]),
    ("attnreg.bandwidth", ["dpi", "PlugInResult", "bandwidth_objective"]),
    ("attnreg.diagnostics", None),
    ("attnreg.plot", ["cv_curve", "fit_with_bands", "bootstrap_bands", "partial_effects", "attention_heatmap"]),
    ("attnreg.attention", None),
    ("attnreg.dask", None),
]


def _doc(obj) -> str:
    d = inspect.getdoc(obj)
    return d.strip() if d else "(no docstring)"


def _signature(name: str, obj) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(...)"
    return f"{name}{sig}"


def _fence(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text}\n```\n"


def _own_methods(cls) -> list:
    """Public methods and properties defined by attnreg classes in cls's MRO (not sklearn's)."""
    seen, out = set(), []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("attnreg"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            if inspect.isfunction(member) or isinstance(member, property):
                seen.add(name)
                out.append((name, member))
    return sorted(out)


def _render(modname: str, name: str, obj) -> str:
    qual = f"{modname}.{name}"
    parts = []
    if inspect.isclass(obj):
        parts.append(f"### `{qual}`\n")
        if issubclass(obj, BaseException):
            parts.append(f"Exception (subclass of `{obj.__mro__[1].__name__}`).\n\n")
            parts.append(_fence(_doc(obj)))
            return "".join(parts)
        parts.append(_fence(_signature(name, obj), "python"))
        parts.append(_fence(_doc(obj)))
        for mname, member in _own_methods(obj):
            if isinstance(member, property):
                parts.append(f"#### `{name}.{mname}` (property)\n\n")
                parts.append(_fence(_doc(member)))
            else:
                parts.append(f"#### `{name}.{mname}`\n\n")
                parts.append(_fence(_signature(mname, member), "python"))
                parts.append(_fence(_doc(member)))
    else:
        parts.append(f"### `{qual}`\n\n")
        parts.append(_fence(_signature(name, obj), "python"))
        parts.append(_fence(_doc(obj)))
    return "".join(parts)


def generate() -> str:
    import importlib

    lines = [
        "# Python API reference\n\n",
        "Generated from the docstrings by `tools/gen_python_reference.py`; do not edit by hand "
        "(`python-package/tests/test_reference_docs.py` fails when this page is stale).\n\n",
    ]
    toc, body = [], []
    for modname, names in SECTIONS:
        mod = importlib.import_module(modname)
        names = list(mod.__all__) if names is None else names
        anchor = modname.replace(".", "")
        toc.append(f"- [`{modname}`](#{anchor}): " + ", ".join(f"`{n}`" for n in names) + "\n")
        body.append(f"## {modname}\n\n")
        body.append(_fence(_doc(mod)))
        for n in names:
            body.append(_render(modname, n, getattr(mod, n)))
            body.append("\n")
    return "".join(lines) + "".join(toc) + "\n" + "".join(body).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the committed page is stale")
    ap.add_argument("--output", type=pathlib.Path, default=OUT)
    args = ap.parse_args(argv)
    text = generate()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run python3 tools/gen_python_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"wrote {args.output} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
