"""`import attnreg` stays light: the heavy optional packages load where they are used.

scikit-learn (and SciPy with it), pandas, matplotlib, ... took seconds of `import attnreg`; the
package now loads its estimators on first use (a PEP 562 module ``__getattr__``). These tests
check which modules a fresh interpreter has imported, never seconds: timings differ by machine.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

import attnreg

# Top-level packages `import attnreg` must not import (the child reports those it imported).
HEAVY = {"sklearn", "scipy", "pandas", "matplotlib", "torch", "dask", "distributed",
         "statsmodels", "formulaic", "tqdm"}


def _run(code: str, tmp_path) -> dict:
    """Run code in a fresh interpreter that finds the attnreg this process imports; it prints
    one JSON line."""
    env = dict(os.environ)
    here = str(pathlib.Path(importlib.util.find_spec("attnreg").origin).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


HEAVY_LOADED = (
    "import json, sys\n"
    "def heavy():\n"
    f"    return sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r}))\n"
)


def test_import_attnreg_loads_no_heavy_package(tmp_path):
    out = _run(HEAVY_LOADED + "import attnreg\nprint(json.dumps({'heavy': heavy(), "
               "'file': attnreg.__file__}))\n", tmp_path)
    assert out["file"] == attnreg.__file__
    assert out["heavy"] == [], "import attnreg imported " + ", ".join(out["heavy"])


def test_dir_and_the_light_submodules_load_no_heavy_package(tmp_path):
    out = _run(HEAVY_LOADED + (
        "import attnreg\n"
        "names = dir(attnreg)\n"
        "import attnreg.dask\n"  # Dask itself loads when a function is called
        "attnreg.diagnostics.diagnose, attnreg.plot.cv_curve, attnreg.bandwidth.select_bandwidth\n"
        "attnreg.attention, attnreg.build_info(), attnreg.__version__, attnreg.show_progress\n"
        "attnreg.NumericalError, attnreg.RegressionSummary, attnreg.BandwidthResult\n"
        "print(json.dumps({'heavy': heavy(), 'names': names}))\n"), tmp_path)
    assert out["heavy"] == []
    assert set(attnreg.__all__) <= set(out["names"])


def test_estimators_load_on_first_use(tmp_path):
    out = _run(HEAVY_LOADED + (
        "import attnreg\n"
        "before = heavy()\n"
        "from attnreg import OLS\n"
        "print(json.dumps({'before': before, 'after': heavy(), 'module': OLS.__module__,\n"
        "                  'same': OLS is attnreg.OLS is sys.modules['attnreg.linear'].OLS}))\n"),
        tmp_path)
    assert out["before"] == []
    assert "sklearn" in out["after"]
    assert out["module"] == "attnreg.linear" and out["same"]


def test_every_public_name_resolves():
    assert len(set(attnreg.__all__)) == len(attnreg.__all__)
    names = dir(attnreg)
    for name in attnreg.__all__:
        assert getattr(attnreg, name) is not None, name
        assert name in names, name
    # The public names keep the modules that define them (pickles, docs).
    assert attnreg.OLS.__module__ == "attnreg.linear"
    assert attnreg.LocalLinear.__module__ == "attnreg.kernel"
    assert attnreg.ols.__module__ == "attnreg.formula"
    assert attnreg.select_bandwidth.__module__ == "attnreg.bandwidth"
    assert attnreg.__version__ == attnreg.build_info()["version"]


def test_submodules_are_attributes():
    import attnreg.linear

    for name in ["linear", "kernel", "semiparametric", "density", "effects", "formula",
                 "diagnostics", "bandwidth", "plot", "attention", "dask"]:
        mod = getattr(attnreg, name)
        assert mod.__name__ == f"attnreg.{name}"
    assert attnreg.linear is sys.modules["attnreg.linear"]
    assert attnreg.OLS is attnreg.linear.OLS
    assert attnreg.diagnostics.diagnose is not None


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        attnreg.not_a_name  # noqa: B018
    assert not hasattr(attnreg, "__wrapped__")
    assert getattr(attnreg, "OLSS", None) is None
