"""Every public default against the one option table of the C++ core (option_spec.hpp).

A default written differently in a Python signature, a numpydoc ``default=`` line or a pybind
keyword default fails here with the option's name, so the layers cannot drift apart.
"""
import inspect
import re

import pytest

import attnreg
from attnreg import _core

SPEC = {(r["family"], r["name"]): r for r in _core.option_spec()}

# public callable -> (family, {python keyword: option name}); keywords not in the table (X, y,
# device, return_info, ...) are not options of the core.
ATTN = "attention"
FACES = {
    attnreg.attention.softmax: (ATTN, {}),
    attnreg.attention.nw_rbf: (ATTN, {}),
    attnreg.attention.lla: (ATTN, {"method": "algorithm"}),
    attnreg.attention.linear: (ATTN, {"tau": "feature_tau"}),
    attnreg.attention.mesa: ("mesa", {}),
    attnreg.attention.attention_weights: (ATTN, {"tau": "feature_tau"}),
    attnreg.attention.lla_partial: (ATTN, {}),
    # lla_finalize's causal defaults to the mask its partials were computed under (None).
    attnreg.attention.lla_finalize: (ATTN, {"causal": "causal of the partial"}),
    attnreg.attention.softmax_vjp: (ATTN, {}),
    attnreg.attention.nw_rbf_vjp: (ATTN, {}),
    attnreg.attention.lla_vjp: (ATTN, {"method": "algorithm"}),
    attnreg.NadarayaWatson.__init__: ("local_fit", {"approx": None, "grid_size": None}),
    attnreg.LocalLinear.__init__: ("local_fit", {"approx": None, "grid_size": None}),
    attnreg.LocalPolynomial.__init__: ("local_fit", {}),
    attnreg.select_bandwidth: ("bandwidth", {"random_state": "seed", "method": "method"}),
    attnreg.Ridge.__init__: ("ridge", {}),
    attnreg.PCR.__init__: ("pcr", {}),
    attnreg.AttentionRegression.__init__: ("attention_regression", {"random_state": "seed"}),
}
# The kernel estimators' approx / grid_size are the binned family's.
EXTRA = {"approx": ("bandwidth", "approx"), "grid_size": ("binned", "grid_size")}

MESA_SHARED = {"causal", "window", "n_threads"}


def _row(family, face_name, aliases):
    name = aliases.get(face_name, face_name)
    if name is None:
        return SPEC.get(EXTRA[face_name])
    row = SPEC.get((family, name))
    if row is None and family == "mesa" and name in MESA_SHARED:
        row = SPEC.get((ATTN, name))
    return row


def _agrees(face_default, row):
    if face_default is None:
        return row["none_ok"] or row["default"] is None
    if row["default"] is None:
        return False
    if row["type"] == "bool":
        return face_default is row["default"]
    if row["type"] in ("int", "double"):
        return not isinstance(face_default, (bool, str)) and face_default == row["default"]
    return face_default == row["default"]


def _face_defaults(fn):
    for p in inspect.signature(fn).parameters.values():
        if p.default is not inspect.Parameter.empty:
            yield p.name, p.default


@pytest.mark.parametrize("fn", list(FACES), ids=lambda f: f.__qualname__)
def test_signature_defaults_match_the_spec(fn):
    family, aliases = FACES[fn]
    checked = 0
    for name, default in _face_defaults(fn):
        row = _row(family, name, aliases)
        if row is None:
            continue
        checked += 1
        assert _agrees(default, row), (
            f"{fn.__qualname__}({name}={default!r}) differs from the option table's "
            f"{row['family']}.{row['name']} = {row['default']!r}")
    assert checked > 0


_DOC_DEFAULT = re.compile(r"^\s*(\w+)\s*:.*\bdefault=([^\s,)]+)", re.M)


def _literal(text):
    text = text.strip("`'\".")
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"True": True, "False": False, "None": None}.get(text, text)


@pytest.mark.parametrize("fn", list(FACES), ids=lambda f: f.__qualname__)
def test_docstring_defaults_match_the_spec(fn):
    family, aliases = FACES[fn]
    owner = fn
    if fn.__name__ == "__init__":
        owner = getattr(attnreg, fn.__qualname__.split(".")[0])
    doc = inspect.getdoc(owner) or ""
    for name, text in _DOC_DEFAULT.findall(doc):
        row = _row(family, name, aliases)
        if row is None:
            continue
        assert _agrees(_literal(text), row), (
            f"{fn.__qualname__}'s docstring states {name} default={text}; the option table's "
            f"{row['family']}.{row['name']} is {row['default']!r}")


def _pybind_defaults(fn):
    """Keyword defaults of a pybind11 function from its signature line."""
    sig = fn.__doc__.splitlines()[0]
    return dict(re.findall(r"(\w+): [\w.\[\], ]+? = ([^,)]+)", sig))


@pytest.mark.parametrize("fn,family", [
    (_core.LocalPolynomial.__init__, "local_fit"), (_core.BinnedLocalPolynomial.__init__, "binned"),
], ids=["LocalPolynomial", "BinnedLocalPolynomial"])
def test_binding_defaults_match_the_spec(fn, family):
    found = _pybind_defaults(fn)
    checked = 0
    for name, text in found.items():
        row = SPEC.get((family, name))
        if row is None or text == "None":
            continue
        checked += 1
        assert _agrees(_literal(text), row), (
            f"_core.{fn.__name__}({name}={text}) differs from {family}.{name} = {row['default']!r}")
    assert checked > 0


def test_table_rows_are_well_formed():
    types = {"int": int, "double": float, "bool": bool, "string": str}
    assert SPEC[(ATTN, "block_q")]["default"] == 64
    for (family, name), row in SPEC.items():
        assert row["doc"], f"{family}.{name} has no doc"
        if row["default"] is None:
            assert row["none_ok"], f"{family}.{name}"
        else:
            assert isinstance(row["default"], types[row["type"]]), f"{family}.{name}"


def test_attention_keywords_go_through_the_core_table():
    """The attention bindings take the table's keywords; any other is refused by name."""
    import numpy as np
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((5, 3)) for _ in range(3))
    out, _ = _core.attention_forward(Q, K, V, method="softmax", block_q=2, block_k=2)
    ref, _ = _core.attention_forward(Q, K, V)
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="block_size: not an option of attention"):
        _core.attention_forward(Q, K, V, block_size=8)
    with pytest.raises(ValueError, match="block_q: must be an integer"):
        _core.attention_forward(Q, K, V, block_q="8")
    with pytest.raises(ValueError, match="scale: must be a finite number or None"):
        _core.attention_forward(Q, K, V, scale=float("nan"))


# The inference vocabulary (the option table's "inference" family): every public callable that
# takes one of these concepts spells it the table's Python way, and no public signature keeps an
# old spelling (those live only as deprecated aliases, outside the signature).
INFERENCE = {
    attnreg.diagnostics.diagnose: {"cov_type", "level", "groups"},
    attnreg.LocalLinear.diagnose: {"cov_type", "level"},
    attnreg.diagnostics.plot_bands: {"cov_type", "level"},
    attnreg.diagnostics.tradeoff: {"cov_type"},
    attnreg.diagnostics.mse_dpi: {"cov_type"},
    attnreg.diagnostics.imse_dpi: {"cov_type"},
    attnreg.diagnostics.bootstrap_bands: {"replications", "bootstrap", "level", "random_state",
                                          "cov_type"},
    attnreg.plot.bootstrap_bands: {"replications", "bootstrap", "level", "random_state",
                                   "cov_type"},
    attnreg.plot.fit_with_bands: {"level", "cov_type"},
    attnreg.diagnostics.significance_test: {"replications", "bootstrap", "random_state"},
    attnreg.diagnostics.specification_test: {"replications", "bootstrap", "random_state"},
    attnreg.diagnostics.monte_carlo: {"replications", "random_state"},
    attnreg.diagnostics.rate_study: {"replications", "random_state"},
    attnreg.diagnostics.simulate_design: {"random_state"},
    attnreg.LocalLinear.gradient: {"replications", "random_state"},
    attnreg.marginal_effects: {"replications", "random_state"},
    attnreg.Ridge.conf_int: {"level"},
    attnreg.PCR.conf_int: {"level"},
    attnreg.OLS.conf_int: {"level"},
    attnreg.OLS.summary: {"level", "cov_type"},
    attnreg.OLS.predict: {"level", "cov_type"},
    attnreg.OLS.__init__: {"cov_type"},
    attnreg.Ridge.__init__: {"cov_type"},
    attnreg.PCR.__init__: {"cov_type"},
    attnreg.OLS.fit: {"groups"},
    attnreg.Ridge.fit: {"groups"},
    attnreg.PCR.fit: {"groups"},
}
OLD_SPELLINGS = {"kind", "seed", "rng", "n_boot", "cluster", "type"}


def _inference_rows():
    return {name: row for (family, name), row in SPEC.items() if family == "inference"}


def test_inference_family_names_both_faces():
    rows = _inference_rows()
    assert {n: (r["python"], r["r"]) for n, r in rows.items()} == {
        "cov_type": ("cov_type", "vcov"), "level": ("level", "level"),
        "groups": ("groups", "cluster"), "random_state": ("random_state", "seed"),
        "replications": ("replications", "R"), "bootstrap": ("bootstrap", "bootstrap")}
    assert rows["level"]["default"] == 0.95
    # Rows outside ATTNREG_FACE_SPELLINGS are spelled as their name in both faces.
    assert SPEC[(ATTN, "block_q")]["python"] == SPEC[(ATTN, "block_q")]["r"] == "block_q"
    assert SPEC[("ridge", "alpha")]["r"] == "lambda"


@pytest.mark.parametrize("fn", list(INFERENCE), ids=lambda f: f.__qualname__)
def test_inference_keywords_use_the_vocabulary(fn):
    rows = _inference_rows()
    params = inspect.signature(fn).parameters
    for concept in INFERENCE[fn]:
        spelled = rows[concept]["python"]
        assert spelled in params, f"{fn.__qualname__} has no {spelled}= ({concept})"
    old = OLD_SPELLINGS & set(params)
    if fn in (attnreg.marginal_effects,):
        old -= {"kind"}  # average / at_mean / pointwise: not a covariance type
    assert not old, f"{fn.__qualname__} still spells {sorted(old)} the old way"
    if "level" in params:
        assert params["level"].default == rows["level"]["default"]
    # A kernel cov_type default is the table's; OLS / Ridge / PCR default to "nonrobust".
    if "cov_type" in params and params["cov_type"].default not in (None, "nonrobust"):
        assert params["cov_type"].default == rows["cov_type"]["default"], fn.__qualname__
