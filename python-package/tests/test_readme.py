"""Every code snippet in the README runs as pasted: the ```python blocks in order in one fresh
interpreter from the repository root, the ```r blocks in one Rscript session. The README keeps
its examples quick (the slow parts run on a 2,000-row subsample of the bundled CPS1988 data)."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import attnreg

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _blocks(lang: str) -> list[str]:
    if not README.exists():
        pytest.skip("not run from a source checkout")
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), flags=re.M | re.S)


def _run(cmd, cwd, timeout=600):
    env = dict(os.environ, MPLBACKEND="Agg")
    # the subprocess imports the attnreg this test imported (installed, or a checkout's src/)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(attnreg.__file__).parents[1])] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_readme_has_the_snippets_this_test_runs():
    assert len(_blocks("python")) >= 2
    assert len(_blocks("r")) >= 1
    # no placeholders of the kind that cannot be pasted
    for block in _blocks("python") + _blocks("r"):
        assert "(...)" not in block and "X_new" not in block


def test_python_snippets_run_as_pasted():
    code = "\n".join(_blocks("python"))
    res = _run([sys.executable, "-c", code], cwd=ROOT)
    assert res.returncode == 0, res.stderr[-4000:]


def test_r_snippets_run_as_pasted(tmp_path):
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("R is not installed")
    has_pkg = subprocess.run([rscript, "-e", 'quit(status = !requireNamespace("attnreg", quietly = TRUE))'],
                             capture_output=True)
    if has_pkg.returncode != 0:
        pytest.skip("the attnreg R package is not installed")
    script = tmp_path / "readme.R"
    script.write_text("\n".join(_blocks("r")))
    res = _run([rscript, str(script)], cwd=tmp_path)   # plots go to tmp_path/Rplots.pdf
    assert res.returncode == 0, res.stderr[-4000:]
