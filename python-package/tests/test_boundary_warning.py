"""BoundaryWarning when a selected bandwidth sits on the search box, and summary() notes for
variables whose bandwidth smooths them out."""
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg
from attnreg import BoundaryWarning


def _lower_data():
    # A discrete regressor with exact cells: leave-one-out local constant wants the cell means,
    # which it reaches only at the box's lower end (the estimator's limit, where the other
    # cells' weights underflow). (With noise in the cells a tiny borrowing from the neighbours
    # lowers the leave-one-out variance: a genuine interior optimum.)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, 200).astype(float)
    return x, x**2


def _upper_data():
    # A linear truth: local linear cross-validation runs h to the top of the box.
    rng = np.random.default_rng(0)
    x = rng.uniform(size=200)
    return x, 2 * x + rng.normal(0, 1.0, 200)


def _interior_data():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=200)
    return x, np.sin(6 * x) + rng.normal(0, 0.3, 200)


def test_exported_user_warning():
    assert issubclass(BoundaryWarning, UserWarning)
    assert "BoundaryWarning" in attnreg.__all__


def test_lower_end_warns_with_name_value_and_end():
    x, y = _lower_data()
    with pytest.warns(BoundaryWarning) as rec:
        r = attnreg.select_bandwidth(pd.DataFrame({"years": x}), y, "lc", "cv_ls")
    assert list(r.at_bound) == [-1]
    assert r.bandwidth[0] == pytest.approx(r.lower[0])
    msg = str(rec[0].message)
    assert "'years'" in msg and "lower end" in msg and f"{r.bandwidth[0]:.4g}" in msg
    assert "categorical" in msg  # what to do
    assert rec[0].filename == __file__  # points at the user's call


def test_upper_end_warns():
    x, y = _upper_data()
    with pytest.warns(BoundaryWarning, match=r"column 1: h = .* upper end") as rec:
        r = attnreg.select_bandwidth(x.reshape(-1, 1), y, "ll", "cv_ls")
    assert list(r.at_bound) == [1]
    assert r.bandwidth[0] == pytest.approx(r.upper[0])
    assert rec[0].filename == __file__


def test_interior_no_warning():
    x, y = _interior_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundaryWarning)
        r = attnreg.select_bandwidth(x, y, "ll", "cv_ls")
        m = attnreg.LocalLinear(bandwidth="cv_ls").fit(pd.DataFrame({"x": x}), y)
    assert list(r.at_bound) == [0]
    assert list(m.bandwidth_result_.at_bound) == [0]
    assert "Note:" not in repr(m.summary())


def test_rule_of_thumb_has_no_bound_flags():
    x, y = _interior_data()
    r = attnreg.select_bandwidth(x, y, "ll", "rot")
    assert list(r.at_bound) == [0]


@pytest.mark.parametrize("est", [attnreg.NadarayaWatson, attnreg.LocalLinear])
def test_estimator_with_selector_warns_at_users_fit(est):
    x, y = _lower_data() if est is attnreg.NadarayaWatson else _upper_data()
    with pytest.warns(BoundaryWarning, match="'edu'") as rec:
        m = est(bandwidth="cv.ls").fit(pd.DataFrame({"edu": x}), y)
    assert rec[0].filename == __file__
    assert f"{est.__name__}(bandwidth='cv.ls')" in str(rec[0].message)
    assert m.bandwidth_result_.at_bound[0] != 0


def _noise_frame():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=200)
    X = pd.DataFrame({"x": x, "noise": rng.normal(size=200)})
    return X, np.sin(6 * x) + rng.normal(0, 0.3, 200)


def test_summary_notes_irrelevant_continuous_regressor():
    X, y = _noise_frame()
    with pytest.warns(BoundaryWarning, match="'noise'"):
        m = attnreg.LocalLinear(bandwidth="cv_ls").fit(X, y)
    s = m.summary()
    assert m.bandwidth_[1] > 3 * X["noise"].std()
    assert m.bandwidth_[0] < 3 * X["x"].std()
    assert len(s.notes) == 1
    assert "'noise'" in s.notes[0] and "irrelevant regressor" in s.notes[0]
    assert "'x'" not in s.notes[0]
    assert "Note: 'noise'" in repr(s)


def test_summary_notes_categorical_lambda_at_upper_bound():
    rng = np.random.default_rng(1)
    x = rng.uniform(size=150)
    X = pd.DataFrame({"x": x, "g": pd.Categorical(rng.choice(["a", "b", "c"], 150))})
    y = np.sin(6 * x) + rng.normal(0, 0.3, 150)
    m = attnreg.LocalLinear(bandwidth=[0.08, 2.0 / 3.0]).fit(X, y)  # AA maximum (c-1)/c
    notes = m.summary().notes
    assert len(notes) == 1 and "'g'" in notes[0] and "lambda" in notes[0]
    assert "irrelevant regressor" in notes[0]
    m2 = attnreg.LocalLinear(bandwidth=[0.08, 0.1]).fit(X, y)
    assert m2.summary().notes == []


def test_summary_no_note_for_hand_bandwidth_within_3sd():
    X, y = _noise_frame()
    m = attnreg.LocalLinear(bandwidth=[0.08, 1.0]).fit(X, y)
    assert m.summary().notes == []
    m = attnreg.LocalLinear(bandwidth=[0.08, 3.5]).fit(X, y)
    assert len(m.summary().notes) == 1
