"""Plots (matplotlib, imported only when a plot is drawn).

:func:`cv_curve` (bandwidth-selection objective), :func:`fit_with_bands` (one-regressor fit
with pointwise confidence bands), :func:`bootstrap_bands` (the same with pointwise and
simultaneous bootstrap bands), :func:`partial_effects` (partial dependence / ICE curves of
any estimator), :func:`attention_heatmap` (the attention weights of queries over the
training rows), :func:`plot_bands` (fit with conventional and robust bias-corrected pointwise
bands of :func:`attnreg.diagnostics.diagnose`, along one regressor with the others held at
their medians) and :func:`plot_tradeoff` (a
:func:`attnreg.diagnostics.tradeoff` table). Each returns the matplotlib Axes it drew into;
the last two are also importable from :mod:`attnreg.diagnostics`.
"""
from __future__ import annotations

import numpy as np

from ._deprecation import renamed


def cv_curve(result, ax=None):
    """Plot the bandwidth-selection objective curve with the chosen bandwidth marked.

    Parameters
    ----------
    result : attnreg.bandwidth.BandwidthResult
        From :func:`attnreg.select_bandwidth` with one continuous column (which computes the
        curve), or a fitted estimator's ``bandwidth_result_``.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.

    Returns
    -------
    matplotlib Axes
    """
    curve = getattr(result, "curve", None)
    if curve is None:
        raise ValueError(
            "result: has no objective curve (curves are computed for one continuous column "
            "with grid_size > 0); select on a single column to plot it"
        )
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    grid, values = (np.asarray(a, dtype=float) for a in curve)
    ok = np.isfinite(values)
    ax.plot(grid[ok], values[ok], marker=".", label=f"{result.method} objective")
    h = float(result.bandwidth[0])
    ax.axvline(h, color="C3", linestyle="--", label=f"selected h = {h:.4g}")
    ax.plot([h], [result.objective], marker="o", color="C3")
    ax.set_xscale("log")
    ax.set_xlabel("bandwidth h")
    ax.set_ylabel(result.method)
    ax.legend()
    return ax


@renamed(kind="cov_type")
def fit_with_bands(estimator, X, y=None, *, grid=None, level: float = 0.95,
                   cov_type: str = "HC3", rbc: bool = True, uniform: bool = False,
                   replications: int = 2000, random_state=None, ax=None,
                   ylabel: str | None = None):
    """Plot a one-regressor kernel fit with pointwise confidence bands and the data.

    The fit and its conventional (and robust bias-corrected) pointwise intervals come from
    :func:`attnreg.diagnostics.diagnose`; this is :func:`attnreg.diagnostics.plot_bands` with
    the data and a grid spanning it by default.

    Parameters
    ----------
    estimator : fitted attnreg.NadarayaWatson or attnreg.LocalLinear
        Fitted on one continuous column.
    X : array-like of shape (n_samples, 1) or (n_samples,)
        The training regressor (scattered with ``y``, and spanned by the default grid).
    y : array-like of shape (n_samples,), optional
        Responses to scatter.
    grid : array-like of shape (m,), optional
        Where to draw the fit; default 200 points across the range of ``X``.
    level : float, default=0.95
        Confidence level.
    cov_type : {"HC3", "HC2", "HC1", "HC0", "nonrobust", "nn"}, default="HC3"
        Variance estimator behind the bands (any case; formerly ``kind=``).
    rbc : bool, default=True
        Also draw the robust bias-corrected interval. Near a boundary, where the data thin
        out, it can be far wider than the data's range: it is then clipped (a quarter of the
        data's range beyond them) and its legend entry says so.
    uniform : bool, default=False
        Also draw the uniform (simultaneous over the grid) band of
        :func:`attnreg.diagnostics.diagnose` with ``uniform=True``: the RBC band when ``rbc``,
        else the conventional one (dotted; method and critical value in the legend).
    replications : int, default=2000
        Draws behind the uniform band.
    random_state : int, numpy Generator or None
        Seed of those draws.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.
    ylabel : str, optional
        Default: the name of ``y`` (a named pandas Series), else of the response the
        estimator was fitted on, else "fit". The x axis is named after the fitted column.

    Returns
    -------
    matplotlib Axes
    """
    Xa = _one_column(X, "fit_with_bands")
    import warnings

    with warnings.catch_warnings():
        # The grid is built from the one fitted column: fine for a DataFrame-fitted estimator.
        warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
        ax = plot_bands(estimator, X_grid=grid, X=Xa.ravel(), y=y, level=level, cov_type=cov_type,
                        ax=ax, rbc=rbc, uniform=uniform, replications=replications,
                        random_state=random_state)
    name = _feature_names(estimator)[0]
    ax.set_xlabel(name)
    ax.set_ylabel(_response_label(estimator, y, ylabel))
    return ax


def _response_label(estimator, y, ylabel) -> str:
    if ylabel is not None:
        return str(ylabel)
    name = getattr(y, "name", None) if y is not None and getattr(y, "ndim", 0) == 1 else None
    if name is None:
        name = getattr(estimator, "_y_name", None)
    return "fit" if name is None else str(name)


def _one_column(X, what: str) -> np.ndarray:
    Xa = np.asarray(X, dtype=np.float64)
    if Xa.ndim == 2 and Xa.shape[1] != 1 or Xa.ndim > 2:
        raise ValueError(
            f"X: {what} draws one regressor, got {Xa.shape[1]} columns; use partial_effects "
            "for several" + ("" if what != "fit_with_bands" else
                             ", or plot_bands(estimator, X=X, feature=...) for the bands along "
                             "one of them with the others at their medians")
        )
    return Xa.ravel()


@renamed(type="bootstrap", seed="random_state", kind="cov_type")
def bootstrap_bands(estimator, X, y=None, *, grid=None, replications: int = 999,
                    bootstrap: str = "rademacher", level: float = 0.95, random_state=1,
                    bias_corrected: bool = False, cov_type: str = "HC3", ax=None,
                    ylabel: str | None = None, progress=False):
    """Plot a one-regressor kernel fit with pointwise and simultaneous bootstrap bands.

    The bands are :func:`attnreg.diagnostics.bootstrap_bands` on a grid: the pointwise basic
    bootstrap interval (shaded) and the simultaneous sup-t band ``center -+ c se`` (dashed),
    which covers the whole curve at once with probability ``level``. Like
    :func:`fit_with_bands`, a band far beyond the data's range is clipped and its legend entry
    says so.

    Parameters
    ----------
    estimator : fitted attnreg.NadarayaWatson or attnreg.LocalLinear
        Fitted on one continuous column.
    X : array-like of shape (n_samples, 1) or (n_samples,)
        The training regressor (scattered with ``y`` and spanned by the default grid).
    y : array-like of shape (n_samples,), optional
        Responses to scatter; a named Series names the y axis.
    grid : array-like of shape (m,), optional
        Default 100 points across the range of ``X``.
    replications, bootstrap, level, random_state, bias_corrected, cov_type, progress
        As :func:`attnreg.diagnostics.bootstrap_bands`.
    ax : matplotlib Axes, optional
    ylabel : str, optional
        As :func:`fit_with_bands`.

    Returns
    -------
    matplotlib Axes
        Its first line is the centre (the fit, or the bias-corrected fit), then the two
        lines of the simultaneous band; ``ax.bootstrap_bands`` holds the drawn table.
    """
    import warnings

    import matplotlib.pyplot as plt
    import pandas as pd

    from ._pointwise import bootstrap_bands as pointwise_bootstrap_bands

    xt = _one_column(X, "bootstrap_bands")
    g = (np.linspace(xt.min(), xt.max(), 100) if grid is None
         else np.asarray(grid, dtype=np.float64).ravel())
    name = _feature_names(estimator)[0]
    Xg = (pd.DataFrame({name: g}) if getattr(estimator, "feature_names_in_", None) is not None
          else g[:, None])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
        b = pointwise_bootstrap_bands(estimator, Xg, replications=replications,
                                        bootstrap=bootstrap, level=level,
                                        random_state=random_state,
                                        bias_corrected=bias_corrected, cov_type=cov_type,
                                        progress=progress)
    if ax is None:
        _, ax = plt.subplots()
    what = "bias-corrected fit" if bias_corrected else "fit"
    ax.plot(g, b["center"], color="C0", label=what)
    artists = {
        "simultaneous": ax.plot(g, b["uniform_low"], "--", color="C3",
                                label=f"{level:.0%} simultaneous (sup-t, "
                                      f"c = {b.attrs['critical_value']:.2f})")[0],
    }
    ax.plot(g, b["uniform_high"], "--", color="C3")
    artists["pointwise"] = ax.fill_between(
        g, b["low"], b["high"], alpha=0.3, color="C0",
        label=f"{level:.0%} pointwise ({bootstrap} bootstrap, B = {replications})")
    if y is not None:
        ax.scatter(xt, np.asarray(y, dtype=np.float64).ravel(), s=6, alpha=0.4, color="grey",
                   zorder=0)
    base = np.asarray(y, dtype=np.float64).ravel() if y is not None else b["center"].to_numpy()
    lo, hi, clipped = _band_limits(
        base, b["center"], {"pointwise": (b["low"], b["high"]),
                            "simultaneous": (b["uniform_low"], b["uniform_high"])})
    ax.set_ylim(lo, hi)
    _clip_note(artists, clipped)
    ax.set_xlabel(name)
    ax.set_ylabel(_response_label(estimator, y, ylabel))
    ax.legend(fontsize=8)
    ax.bootstrap_bands = b.assign(grid=g)
    return ax


def _feature_names(estimator) -> list:
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"x{j}" for j in range(int(estimator.n_features_in_))]


def _feature_index(names: list, feature, hint_array: str = "") -> int:
    """The column index of ``feature`` (a fitted column's name or an index); ``hint_array`` is
    added to the message when an array was passed where the feature belongs."""
    if isinstance(feature, str):
        if feature not in names:
            raise ValueError(f"feature: {feature!r} is not one of the fitted columns {names}")
        return names.index(feature)
    if isinstance(feature, (int, np.integer)) and 0 <= int(feature) < len(names):
        return int(feature)
    got = (repr(feature) if np.ndim(feature) == 0
           else f"a {type(feature).__name__} of shape {np.shape(feature)}")
    raise ValueError(f"feature: expected a column name or an index in [0, {len(names)}), got "
                     f"{got}{hint_array if np.ndim(feature) > 0 else ''}")


def _held_rows(estimator, X, j: int, values: np.ndarray):
    """Rows for a plot along column ``j``: column ``j`` takes ``values``, every other column of
    the training rows ``X`` its median (a categorical column its most frequent level, the first
    in level order on ties), as R's ``plot(fit, type = "partial")`` holds them. A DataFrame
    stays a DataFrame with X's dtypes."""
    import pandas as pd

    vt = str(getattr(estimator, "var_types_", "c" * len(_feature_names(estimator))))
    frame = isinstance(X, pd.DataFrame)
    m = len(values)
    cols = {}
    for k in range(len(vt)):
        col = X.iloc[:, k] if frame else np.asarray(X, dtype=np.float64)[:, k]
        if k == j:
            held = None
        elif vt[k] == "c":
            held = float(np.nanmedian(np.asarray(col, dtype=np.float64)))
        elif frame:
            counts = col.value_counts(sort=False, dropna=True)
            levels = (list(col.cat.categories) if isinstance(col.dtype, pd.CategoricalDtype)
                      else sorted(counts.index))
            counts = counts.reindex(levels, fill_value=0)
            held = counts.index[int(np.argmax(counts.to_numpy()))]
        else:
            codes, counts = np.unique(col[np.isfinite(col)], return_counts=True)
            held = codes[int(np.argmax(counts))]
        cols[k] = values if k == j else [held] * m
    if frame:
        return pd.DataFrame({X.columns[k]: pd.Series(
            cols[k], dtype=np.float64 if vt[k] == "c" else X.dtypes.iloc[k])
            for k in range(len(vt))})
    return np.column_stack([np.asarray(cols[k], dtype=np.float64) for k in range(len(vt))])


def partial_effects(estimator, X, feature, *, grid=None, grid_size: int = 50,
                    kind: str = "average", ax=None):
    """Plot how the prediction moves with one feature (partial dependence).

    For each grid value ``v`` the column ``feature`` of every row of ``X`` is set to ``v`` and
    the predictions are averaged (``kind="average"``: the partial dependence function) or
    drawn one line per row (``kind="individual"``: ICE curves, at most 100 rows).

    Parameters
    ----------
    estimator : fitted attnreg estimator
        Any of them (``predict`` is all that is used).
    X : array-like or pandas.DataFrame of shape (n_samples, n_features)
        Rows to average over (usually the training data).
    feature : int or str
        Column index, or column name when the estimator was fitted on a DataFrame.
    grid : array-like, optional
        Values of the feature; default ``grid_size`` points between its 5% and 95% quantiles
        for a numeric column, every category for a categorical one.
    grid_size : int, default=50
    kind : {"average", "individual"}, default="average"
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        Its first line holds (grid, average prediction) for ``kind="average"``.
    """
    import pandas as pd

    names = _feature_names(estimator)
    j = _feature_index(names, feature, " (partial_effects takes no y: call "
                                       "partial_effects(estimator, X, feature))")
    if kind not in ("average", "individual"):
        raise ValueError(f"kind: must be 'average' or 'individual', got {kind!r}")
    frame = isinstance(X, pd.DataFrame)
    col = X.iloc[:, j] if frame else np.asarray(X)[:, j]
    categorical = frame and not pd.api.types.is_numeric_dtype(col.dtype)
    if grid is None:
        if categorical:
            grid = (list(col.cat.categories) if isinstance(col.dtype, pd.CategoricalDtype)
                    else sorted(pd.unique(col.dropna())))
        else:
            lo, hi = np.nanquantile(np.asarray(col, dtype=np.float64), [0.05, 0.95])
            grid = np.linspace(lo, hi, int(grid_size))
    grid = list(grid)
    rows = X if kind == "average" else (X.iloc[:100] if frame else np.asarray(X)[:100])
    curves = []
    for v in grid:
        Xv = rows.copy() if frame else np.array(rows, dtype=np.float64, copy=True)
        if frame:
            Xv.iloc[:, j] = pd.Series([v] * len(Xv), index=Xv.index, dtype=col.dtype)
        else:
            Xv[:, j] = v
        p = np.asarray(estimator.predict(Xv), dtype=np.float64)
        curves.append(p if p.ndim == 1 else p[:, 0])
    curves = np.array(curves)  # (grid, rows)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    xs = np.arange(len(grid)) if categorical else np.asarray(grid, dtype=np.float64)
    if kind == "average":
        ax.plot(xs, curves.mean(axis=1), marker="o" if categorical else None, color="C0",
                label="average prediction")
    else:
        ax.plot(xs, curves, color="C0", alpha=0.3, linewidth=0.8)
        ax.plot(xs, curves.mean(axis=1), color="C3", label="average")
    if categorical:
        ax.set_xticks(xs)
        ax.set_xticklabels([str(g) for g in grid])
    ax.set_xlabel(names[j])
    ax.set_ylabel("prediction")
    ax.legend()
    return ax


def attention_heatmap(estimator, X_query, *, max_keys: int | None = 500, sort_by=None,
                      ax=None, cmap=None):
    """Draw the attention (equivalent-kernel) weights of queries over the training rows.

    Parameters
    ----------
    estimator : fitted attnreg estimator with ``attention_weights``
        NadarayaWatson, LocalLinear, OLS, Ridge, PCR or AttentionRegression.
    X_query : array-like of shape (m, n_features)
        Query rows (the heatmap's rows, in the given order).
    max_keys : int or None, default=500
        Draw at most this many training rows (columns), those with the largest total absolute
        weight over the queries; None draws all.
    sort_by : array-like of shape (n_train,), optional
        Order the key columns by these values (e.g. ``X_train[:, 0]``), so that a smooth
        kernel shows as a band; the training order otherwise.
    ax : matplotlib Axes, optional
    cmap : str, optional
        Default ``"viridis"`` for non-negative weights, a diverging ``"RdBu_r"`` centred at zero
        when some weights are negative (local linear, least squares).

    Returns
    -------
    matplotlib Axes
        The image's array is the drawn (m, keys) weight matrix.
    """
    W = np.asarray(estimator.attention_weights(X_query), dtype=np.float64)
    keys = np.arange(W.shape[1])
    if max_keys is not None:
        if not isinstance(max_keys, (int, np.integer)) or max_keys < 1:
            raise ValueError(f"max_keys: must be None or an integer >= 1, got {max_keys!r}")
        if W.shape[1] > max_keys:
            keys = np.sort(np.argsort(-np.abs(W).sum(axis=0), kind="stable")[:max_keys])
    order = keys
    if sort_by is not None:
        sb = np.asarray(sort_by).ravel()
        if sb.shape[0] != W.shape[1]:
            raise ValueError(
                f"sort_by: needs one value per training row ({W.shape[1]}), got {sb.shape[0]}"
            )
        order = keys[np.argsort(sb[keys], kind="stable")]
    Wd = W[:, order]
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    negative = bool((W < 0).any())  # a signed estimator: centre the colours at zero
    if negative:
        vmax = float(np.abs(Wd).max()) or 1.0
        im = ax.imshow(Wd, aspect="auto", interpolation="nearest", cmap=cmap or "RdBu_r",
                       vmin=-vmax, vmax=vmax)
    else:
        im = ax.imshow(Wd, aspect="auto", interpolation="nearest", cmap=cmap or "viridis")
    ax.figure.colorbar(im, ax=ax, label="attention weight")
    ax.set_xlabel("training row (key)" + (", sorted" if sort_by is not None else ""))
    ax.set_ylabel("query")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return ax


def rd_weights(result, ax=None):
    """Plot the attention weights of a regression discontinuity estimate against x, per side.

    The conventional estimate of :func:`attnreg.rd.rdrobust` is ``a @ y``; this draws ``a``
    (rows with a nonzero weight) left and right of the cutoff, with the effective number of
    rows 1 / sum(a^2) of each side in the legend.

    Parameters
    ----------
    result : attnreg.rd.RDResult
        From :func:`attnreg.rd.rdrobust`.
    ax : matplotlib Axes, optional
        Drawn into a new figure when omitted.

    Returns
    -------
    matplotlib Axes
    """
    if not hasattr(result, "attention_weights") or not hasattr(result, "bandwidths"):
        raise ValueError("result: pass the result of attnreg.rd.rdrobust")
    import matplotlib.pyplot as plt

    w = result.attention_weights()
    if ax is None:
        _, ax = plt.subplots()
    nz = w.weights != 0
    sides = (("left", nz & (w.x < w.c), "C0"), ("right", nz & (w.x >= w.c), "C1"))
    for side, mask, color in sides:
        order = np.argsort(w.x[mask])
        ax.plot(w.x[mask][order], w.weights[mask][order], marker=".", linestyle="-", color=color,
                label=f"{side}: effective n = {w.effective_n[side]:.1f}")
    ax.axvline(w.c, color="0.5", linestyle=":")
    ax.axhline(0, color="0.8", linewidth=0.8)
    ax.set_xlabel("running variable x")
    ax.set_ylabel("attention weight a_i (estimate = a @ y)")
    ax.legend()
    return ax


def _band_limits(base, fit, bands, margin: float = 0.25):
    """The y range of a band plot: the data (or the fit) with the bands, but no band may widen
    it beyond ``margin`` times the data's range on either side. Returns (lo, hi, clipped) with
    ``clipped`` the names of the bands that leave that range somewhere."""
    base = np.asarray(base, dtype=np.float64)
    base = base[np.isfinite(base)]
    lo0, hi0 = float(base.min()), float(base.max())
    span = hi0 - lo0 or max(abs(hi0), 1.0) * 0.1
    allow_lo, allow_hi = lo0 - margin * span, hi0 + margin * span
    lo, hi = min(lo0, float(np.nanmin(fit))), max(hi0, float(np.nanmax(fit)))
    clipped = []
    for name, (low, high) in bands.items():
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        if not (np.isfinite(low).any() and np.isfinite(high).any()):
            continue
        lo = min(lo, max(float(np.nanmin(low)), allow_lo))
        hi = max(hi, min(float(np.nanmax(high)), allow_hi))
        if np.nanmin(low) < allow_lo or np.nanmax(high) > allow_hi:
            clipped.append(name)
    pad = 0.03 * (hi - lo or 1.0)
    return lo - pad, hi + pad, clipped


def _clip_note(artists: dict, clipped) -> None:
    """Say in the legend which bands were clipped to the plot range."""
    for name in clipped:
        a = artists[name]
        a.set_label(f"{a.get_label()}, clipped to the plot range")


@renamed(kind="cov_type")
def plot_bands(estimator, X_grid=None, X=None, y=None, level: float = 0.95,
               cov_type: str = "HC3", ax=None, rbc: bool = True, uniform: bool = False,
               replications: int = 2000, random_state=None, feature=None):
    """Plot the fit with conventional and (optionally) RBC pointwise bands along one regressor.

    With one regressor the fit is drawn over ``X_grid`` (default 200 points over the range of
    ``X``) with the data. With several (any fit: the bias-corrected columns of
    :func:`attnreg.diagnostics.diagnose` exist for every fit), the fit is drawn along the
    continuous column ``feature`` (a name or an index; default the first continuous column)
    with every other column held at its median in the training rows ``X`` (a categorical one
    at its most frequent level), as R's ``plot(fit, type = "partial", bands = "rbc")`` draws
    it; ``X`` is then required and the training values of ``feature`` are marked on the x
    axis. With ``uniform=True`` also the uniform band over the grid from
    ``diagnose(..., uniform=True, replications=, random_state=)`` (dotted): the RBC one when
    ``rbc``, else the conventional one; its method and critical value are in the legend.
    The y axis spans the data ``y`` (or the fit and its conventional band) and the bands, but a
    band that runs far beyond the data (an RBC band at a boundary, where its variance explodes)
    does not set the scale: it is clipped to a quarter of the data's range beyond them, and its
    legend entry says so.

    Returns the Axes; ``ax.bands`` holds the drawn table (diagnose's columns with ``grid``).
    """
    import matplotlib.pyplot as plt

    from ._kernel_args import _fitted_core
    from ._pointwise import diagnose

    _fitted_core(estimator)
    names = _feature_names(estimator)
    vt = str(getattr(estimator, "var_types_", "c" * len(names)))
    if feature is None:
        if "c" not in vt:
            raise ValueError("feature: plot_bands draws along a continuous regressor and this "
                             "fit has none; use partial_effects for categorical columns")
        j = vt.index("c")
    else:
        j = _feature_index(names, feature)
        if vt[j] != "c":
            raise ValueError(f"feature: {names[j]!r} is categorical; plot_bands draws along a "
                             "continuous regressor (partial_effects plots categorical ones)")
    several = len(names) > 1
    if several and X is None:
        raise ValueError(f"X: with {len(names)} regressors give the training X: the columns "
                         f"other than {names[j]!r} are held at its medians (modes for "
                         "categorical columns)")
    xj = None
    if X is not None:
        import pandas as pd

        xj = (np.asarray(X.iloc[:, j], dtype=np.float64) if isinstance(X, pd.DataFrame)
              else np.asarray(X, dtype=np.float64).reshape(len(X), -1)[:, j])
    if X_grid is None:
        if xj is None:
            raise ValueError("X_grid: give the grid to plot on, or the training X to span")
        X_grid = np.linspace(np.nanmin(xj), np.nanmax(xj), 200)
    g = np.asarray(X_grid, dtype=np.float64).ravel()
    rows = _held_rows(estimator, X, j, g) if several else g[:, None]
    df = diagnose(estimator, rows, level=level, cov_type=cov_type, uniform=uniform,
                  replications=replications, random_state=random_state)
    if ax is None:
        _, ax = plt.subplots()
    if not several and X is not None and y is not None:
        ax.scatter(xj, np.asarray(y).ravel(), s=6, alpha=0.4, color="grey")
    elif several:
        ax.plot(xj, np.zeros_like(xj), "|", color="black", alpha=0.3, ms=6,
                transform=ax.get_xaxis_transform())
        ax.set_xlabel(names[j])
        ax.set_title(f"along {names[j]}; other regressors at their medians (modes)",
                     fontsize=9)
    fit = df["fit"].to_numpy()
    ax.plot(g, fit, color="C0", label="fit")
    artists = {"conventional": ax.fill_between(g, df["ci_low"], df["ci_high"], alpha=0.3,
                                               color="C0", label=f"{level:.0%} conventional")}
    bands = {"conventional": (df["ci_low"], df["ci_high"])}
    if rbc and np.isfinite(df["rbc_low"]).all():
        artists["RBC"] = ax.plot(g, df["rbc_low"], "--", color="C1",
                                 label=f"{level:.0%} robust bias-corrected")[0]
        ax.plot(g, df["rbc_high"], "--", color="C1")
        bands["RBC"] = (df["rbc_low"], df["rbc_high"])
    if uniform:
        use_rbc = "RBC" in bands
        lo_u, hi_u = (df["uniform_rbc_low"], df["uniform_rbc_high"]) if use_rbc else \
            (df["uniform_low"], df["uniform_high"])
        crit = df.attrs["crit_uniform_rbc" if use_rbc else "crit_uniform"]
        how = {"wild_t": "wild bootstrap-t", "gaussian": "Gaussian sup-t"}[
            df.attrs["uniform_method"]]
        artists["uniform"] = ax.plot(
            g, lo_u, ":", color="C2", lw=1.5,
            label=f"{level:.0%} uniform {'RBC' if use_rbc else 'conventional'} ({how}, "
                  f"c = {crit:.2f})")[0]
        ax.plot(g, hi_u, ":", color="C2", lw=1.5)
        bands["uniform"] = (lo_u, hi_u)
    # the scale: the data where given (with several regressors they are not drawn, but they
    # are the response's scale), else the fit with its conventional band
    base = (np.asarray(y, dtype=np.float64).ravel() if y is not None
            else np.concatenate([fit, df["ci_low"], df["ci_high"]]))
    lo, hi, clipped = _band_limits(base, df["fit"], bands)
    ax.set_ylim(lo, hi)
    _clip_note(artists, clipped)
    ax.legend(fontsize=8 if several else None)
    ax.bands = df.assign(grid=g)
    return ax


def plot_tradeoff(table, ax=None):
    """Plot a :func:`attnreg.diagnostics.tradeoff` table: bias^2, variance, MSE and CV against the bandwidth.

    One panel per estimator, both axes logarithmic, the bandwidths as plain numbers on the x
    axis (at most six labels, no overlap); the y axis is the integrated squared error."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ests = list(dict.fromkeys(table["estimator"]))
    if ax is None:
        _, ax = plt.subplots(1, len(ests), figsize=(5 * len(ests), 4), squeeze=False,
                             layout="constrained")
        ax = ax[0]
    ax = np.atleast_1d(ax)
    labels = {"bias2": "bias²", "variance": "variance", "mse": "MSE", "cv": "CV (leave-one-out)"}
    for a, e in zip(ax, ests):
        t = table[table.estimator == e].sort_values("bandwidth")
        for k, col in enumerate(("bias2", "variance", "mse", "cv")):
            a.plot(t["bandwidth"], t[col], marker="os^D"[k], ms=4, label=labels[col])
        a.set_xscale("log")
        a.set_yscale("log")
        h = t["bandwidth"].to_numpy(dtype=float)
        decades = np.log10(h.max() / h.min()) if h.min() > 0 else 0.0
        if decades < 2:  # a short log axis: label a few round values, not every minor tick
            a.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=6))
        a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        a.xaxis.set_minor_formatter(NullFormatter())
        a.set_xlabel("bandwidth h")
        a.set_ylabel("integrated squared error")
        name = {"local_linear": "local linear", "local_constant": "local constant",
                "ll": "local linear", "lc": "local constant"}.get(str(e), str(e))
        a.set_title(name)
        a.legend(fontsize=8)
    return ax
