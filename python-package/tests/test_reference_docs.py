"""docs/reference/python.md is generated from the docstrings and must be up to date."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gen_python_reference.py"


def _tool():
    if not TOOL.exists():
        pytest.skip("not run from a source checkout")
    spec = importlib.util.spec_from_file_location("gen_python_reference", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reference_page_is_up_to_date():
    tool = _tool()
    page = ROOT / "docs" / "reference" / "python.md"
    assert page.exists(), "run: python3 tools/gen_python_reference.py"
    assert page.read_text() == tool.generate(), (
        "docs/reference/python.md is stale: run python3 tools/gen_python_reference.py")


def test_every_public_name_is_documented():
    tool = _tool()
    import attnreg

    text = tool.generate()
    for name in attnreg.__all__:
        if name == "__version__":
            continue
        assert f"`attnreg.{name}`" in text, name
    assert "(no docstring)" not in text
