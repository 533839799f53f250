"""The package by topic: every name attnreg.diagnostics exported before the split is still there
and is the very object of its new home; pickles of the result classes written under the old
module path still load; ``attnreg.__init__`` defines ``__all__`` once, as one literal, and
every name in it resolves."""
from __future__ import annotations

import ast
import importlib
import io
import pickle
import pickletools

import numpy as np
import pytest

import attnreg

# attnreg.diagnostics.__all__ before the split, and where each name lives now.
MOVED = {
    "diagnose": "diagnostics", "summary": "diagnostics", "KernelSummary": "diagnostics",
    "tradeoff": "diagnostics", "bootstrap_bands": "diagnostics",
    "mse_dpi": "bandwidth", "imse_dpi": "bandwidth",
    "monte_carlo": "montecarlo", "rate_study": "montecarlo", "simulate_design": "montecarlo",
    "significance_test": "spectests", "SignificanceTestResult": "spectests",
    "specification_test": "spectests", "SpecificationTestResult": "spectests",
    "plot_bands": "plot", "plot_tradeoff": "plot",
}


def test_every_old_diagnostics_name_is_the_object_at_its_home():
    from attnreg import diagnostics

    assert set(diagnostics.__all__) == set(MOVED)
    for name, home in MOVED.items():
        old = getattr(diagnostics, name)
        new = getattr(importlib.import_module(f"attnreg.{home}"), name)
        assert old is new, name
        # the documented path: the object says it lives at its new public home
        assert old.__module__ == f"attnreg.{home}", name
        exec(f"from attnreg.diagnostics import {name} as a\nfrom attnreg.{home} import {name} as b\n"
             "assert a is b", {})
    for home in set(MOVED.values()):
        mod = importlib.import_module(f"attnreg.{home}")
        assert getattr(attnreg, home) is mod  # reachable as an attribute after `import attnreg`


def _old_pickle(obj) -> bytes:
    """obj pickled as the module before the split wrote it: the class under attnreg.diagnostics."""
    data = pickle.dumps(obj, protocol=2)
    mod = type(obj).__module__.encode()
    assert mod in data
    out = data.replace(b"c" + mod + b"\n", b"cattnreg.diagnostics\n")
    assert out != data
    pickletools.dis(out, out=io.StringIO())  # still a well-formed pickle
    return out


def test_old_pickles_of_the_result_classes_load():
    from attnreg import spectests

    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (60, 1))
    y = x[:, 0] ** 2 + 0.2 * rng.standard_normal(60)
    m = attnreg.LocalLinear(bandwidth=0.4).fit(x, y)
    for obj in (spectests.significance_test(m, replications=19, random_state=1),
                spectests.specification_test(x, y, replications=19, random_state=1)):
        back = pickle.loads(_old_pickle(obj))
        assert type(back) is type(obj)
        assert repr(back) == repr(obj)


def test_init_defines_all_once_and_every_name_resolves():
    tree = ast.parse(open(attnreg.__file__).read())
    writes = [n for n in ast.walk(tree)
              if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
              and any(isinstance(t, ast.Name) and t.id == "__all__"
                      for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    assert len(writes) == 1 and isinstance(writes[0], ast.Assign)
    assert isinstance(writes[0].value, ast.List)
    assert all(isinstance(e, ast.Constant) for e in writes[0].value.elts)  # a literal
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
             and n.func.value.id in ("__all__", "_lazy_submodules", "_lazy_attributes")]
    assert calls == []  # no .add / .append / .extend after the literals
    assert len(set(attnreg.__all__)) == len(attnreg.__all__)
    for name in attnreg.__all__:
        assert getattr(attnreg, name) is not None, name


@pytest.mark.parametrize("name", ["montecarlo", "spectests", "plot", "bandwidth"])
def test_new_homes_import_on_their_own(name):
    mod = importlib.import_module(f"attnreg.{name}")
    for n in getattr(mod, "__all__", []):
        assert hasattr(mod, n), n
