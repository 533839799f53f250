#' Data-driven bandwidths for kernel regression
#'
#' Selects one bandwidth per regressor for local linear (`method = "ll"`) or local constant
#' (`method = "lc"`) regression, as `np::npregbw` does, for any kernel and mixed
#' continuous / categorical regressors.
#'
#' Criteria (`bwmethod`): `"cv.ls"` exact leave-one-out least-squares cross-validation,
#' \eqn{CV(h) = n^{-1} \sum_i (y_i - \hat m_{-i}(x_i))^2} (with `ridge > 0` the
#' leave-one-out fit is the exact refit); `"cv.aic"` the AICc of Hurvich, Simonoff and Tsai
#' (1998), \eqn{\ln \hat\sigma^2 + (1 + tr(L)/n) / (1 - (tr(L) + 2)/n)},
#' \eqn{\hat\sigma^2 = RSS/n}, as np's `cv.aic`; `"gcv"` \eqn{n RSS / (n - tr L)^2};
#' `"rot"` the normal-reference rule per continuous regressor; `"dpi"` the
#' Ruppert-Sheather-Wand plug-in ([dpi_bandwidth()]; one continuous regressor, Gaussian,
#' local linear).
#'
#' The searched criteria are minimised over \eqn{\log h} (continuous regressors) and
#' \eqn{\lambda} (factors, kept inside the kernel's range) by a bounded quasi-Newton method
#' with the exact gradient, computed in the same pass over the pairs as the criterion, from
#' `nstart` starting points (reproducible with `seed`). With one continuous regressor the
#' criterion is first computed over a grid of bandwidths (the curve that [plot.kbw()] draws;
#' from the binned criterion on large data, see `exact_curve`), whose best local minima start
#' the search. The search box of a continuous bandwidth starts at
#' the estimator's own limit: the smallest bandwidth at which every leave-one-out fit exists
#' (local constant: one neighbour whose kernel weight does not underflow; local linear: a
#' local design whose Cholesky pivots stay above 1e-8, so the fit keeps 8 digits), checked on
#' the criterion and raised where the criterion is undefined there. Degenerate data (a constant regressor, too few distinct values,
#' fewer than 5 rows) give an error naming the argument.
#'
#' @inheritParams kreg
#' @param subset,na.action As in [stats::lm()]: rows to use and what to do with missing values.
#' @param weights Optional observation weights (finite, \eqn{\ge 0}, not all 0; as in
#'   [stats::lm()]). They multiply each observation's kernel weight in every local fit and
#'   weight the criterion: cv.ls is \eqn{\sum_i w_i (y_i - m_{-i}(x_i))^2 / \sum_i w_i}, with
#'   \eqn{m_{-i}} the weighted fit without observation \eqn{i} (all of its weight leaves, so
#'   integer weights are sampling weights, not repeated rows); cv.aic and gcv use the weighted
#'   mean squared residual and the number of observations in their penalties. np's
#'   `npregbw()` takes no weights.
#' @param method `"ll"` (local linear) or `"lc"` (local constant).
#' @param bwmethod `"cv.ls"`, `"cv.aic"`, `"gcv"`, `"rot"` or `"dpi"`.
#' @param nstart Number of starting points of the search.
#' @param seed Seed of the random starting points.
#' @param grid_size Points of the criterion curve (one continuous regressor).
#' @param approx `"exact"` (default) or `"binned"` (`bwmethod = "cv.ls"`; one or two
#'   continuous regressors, no factors): the leave-one-out criterion from linearly binned data
#'   and FFT convolutions (Wand 1994, "Fast computation of multivariate kernel estimators",
#'   J. Comput. Graph. Statist. 3(4)), with its exact gradient; one pass over the data, then
#'   \eqn{O(G \log G)} per evaluation. Each point's own weight \eqn{K(0)} is taken out of
#'   moments interpolated at the point; the search starts at five grid spacings. The chosen
#'   bandwidth moves from the exact one by \eqn{O((\delta/h)^2)} (\eqn{\delta} the grid
#'   spacing): about \eqn{10^{-3}} relative when \eqn{h} spans 15 or more spacings.
#' @param approx_grid_size Grid points per continuous regressor for `approx = "binned"` (at
#'   least 10; `NULL`: 4001 for one regressor, finer than a binned fit's 401 because the
#'   minimiser of a flat criterion moves with small errors; 101 x 101 for two).
#' @param exact_curve How the criterion curve that seeds the search (one continuous
#'   regressor) is computed. `FALSE` (default): for `bwmethod = "cv.ls"` without weights, a
#'   kernel other than uniform, `approx = "exact"` and enough distinct values (500 for the
#'   Gaussian and other kernels without fast sums, whose exact pass costs \eqn{O(n^2)}; 1,000
#'   for the compact kernels' \eqn{O(n)} fast sums), from the binned criterion on 4001 points
#'   (one per distinct value below 1,000 for the Gaussian; about \eqn{10^{-4}} relative from
#'   the exact one on 4001 points, and far cheaper than one cross-validation pass per point);
#'   its local minima are refined on it and
#'   the best ones searched by the exact criterion with its exact gradient, so the bandwidth is
#'   still the exact criterion's local minimum (to the optimiser's tolerance) after a few exact
#'   evaluations. `curve` then holds the binned values (`NaN` below the binned grid's
#'   resolution where they were not needed) and `curve_exact` is `FALSE`. `TRUE`: the exact
#'   criterion at every curve point, as in every other case.
#' @param progress Show a status line (on stderr) with the number of criterion evaluations and
#'   the best value so far, redrawn in place. The search can be interrupted with Ctrl-C (Esc in
#'   the R GUI); it stops within one block of kernel sums with an R error.
#' @return An object of class `kbw`: `bw` (named, one per regressor), `objective`, `n_evals`,
#'   `converged`, `bwmethod`, `method`, `kernel`, `curve` (a data frame `bw`, `objective`
#'   for one continuous regressor, else `NULL`; see `exact_curve`), `curve_exact`, `lower`,
#'   `upper` (the search box),
#'   `at_bound` (per regressor: -1 when the bandwidth sits at the lower end of the box, 1 at
#'   the upper end, 0 inside). A bandwidth on the box gives a `warning()` naming the
#'   regressor, the value and the end: at the lower end the search stopped at the smallest
#'   bandwidth at which every leave-one-out fit exists (typical of a discrete variable, where
#'   the cell means win); at the upper end the variable is smoothed out (local linear: it
#'   enters linearly; local constant: it is irrelevant).
#' @seealso [kreg()] (which accepts a `kbw` object or a criterion name as `bw`).
#' @examples
#' b <- kbw(mpg ~ wt, data = mtcars)
#' b
#' plot(b)
#' kreg(mpg ~ wt, data = mtcars, bw = b)
#' d <- transform(mtcars, am = factor(am))
#' kbw(mpg ~ wt + am, data = d, method = "lc", bwmethod = "cv.aic")
#' @export
kbw <- function(formula, data, subset, weights, na.action, method = c("ll", "lc"),
                bwmethod = c("cv.ls", "cv.aic", "gcv", "rot", "dpi"), kernel = "gaussian",
                ridge = 0, ukertype = "aitchisonaitken", okertype = "liracine", nstart = 3L,
                seed = 0L, grid_size = 30L, progress = FALSE, n_threads = 0L,
                approx = c("exact", "binned"), approx_grid_size = NULL, exact_curve = FALSE,
                ...) {
  method <- match.arg(method)
  bwmethod <- match.arg(bwmethod)
  approx <- .kreg_approx_arg(approx)
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  w <- model.weights(mf)
  y <- model.response(mf, "numeric")
  if (is.null(y)) stop("formula: needs a response on the left of '~'", call. = FALSE)
  if (is.matrix(y) && ncol(y) > 1L) {
    stop("formula: bandwidth selection needs a single response", call. = FALSE)
  }
  spec <- .kreg_spec(mf)
  X <- .kreg_encode(spec, mf)
  b <- .kbw_fit(X, as.double(y), spec, method, bwmethod, kernel, ridge, ukertype, okertype,
                nstart, seed, grid_size, progress, n_threads, weights = w, approx = approx,
                approx_grid_size = approx_grid_size, exact_curve = exact_curve)
  .kbw_boundary_warning(b, "kbw")
  b
}

.kbw_fit <- function(X, y, spec, method, bwmethod, kernel, ridge, ukertype, okertype,
                     nstart = 3L, seed = 0L, grid_size = 30L, progress = FALSE,
                     n_threads = 0L, weights = NULL, approx = "exact", approx_grid_size = NULL,
                     exact_curve = FALSE) {
  if (!is.logical(exact_curve) || length(exact_curve) != 1L || is.na(exact_curve)) {
    stop("exact_curve: must be TRUE or FALSE", call. = FALSE)
  }
  if (!is.null(weights) && (!is.numeric(weights) || length(weights) != length(y))) {
    stop("weights: need one number per observation (got ", length(weights), " for ",
         length(y), ")", call. = FALSE)
  }
  if (!is.numeric(nstart) || length(nstart) != 1L || nstart < 1) {
    stop("nstart: must be a single integer >= 1", call. = FALSE)
  }
  if (!is.numeric(seed) || length(seed) != 1L || seed < 0) {
    stop("seed: must be a single non-negative number", call. = FALSE)
  }
  if (!is.numeric(ridge) || length(ridge) != 1L) {
    stop("ridge: must be a single number >= 0", call. = FALSE)
  }
  r <- .kreg_core(.kbw_cpp(X, y, if (method == "ll") 1L else 0L, bwmethod, kernel, spec$types,
                           ukertype, okertype, as.double(ridge), as.integer(nstart),
                           as.double(seed), as.integer(grid_size), 0L, as.integer(n_threads),
                           isTRUE(progress),
                           if (is.null(weights)) numeric(0) else as.double(weights), approx,
                           .kreg_grid_arg(approx_grid_size, "approx_grid_size"),
                           exact_curve), spec)
  bw <- setNames(r$bw, spec$names)
  curve <- if (length(r$curve_grid)) {
    data.frame(bw = r$curve_grid, objective = r$curve_values)
  } else {
    NULL
  }
  structure(list(bw = bw, objective = r$objective, n_evals = r$n_evals,
                 converged = r$converged, bwmethod = bwmethod, method = method,
                 kernel = kernel, ridge = ridge, var_types = spec$types, curve = curve,
                 curve_exact = isTRUE(r$curve_exact),
                 lower = setNames(r$lower, spec$names), upper = setNames(r$upper, spec$names),
                 message = r$message, nobs = length(y),
                 at_bound = setNames(r$at_bound, spec$names)),
            class = "kbw")
}

# A warning() when a selected bandwidth sits on the edge of its search box (the core's per-column
# at_bound flag: -1 lower end, +1 upper end), naming the regressor, the value, the end and what
# to do. `who` names the user's call.
.kbw_boundary_warning <- function(b, who) {
  ab <- b$at_bound
  if (is.null(ab) || !any(ab != 0L)) return(invisible(NULL))
  types <- strsplit(b$var_types, "")[[1]]
  parts <- vapply(which(ab != 0L), function(j) {
    cont <- types[j] == "c"
    lower <- ab[j] < 0L
    advice <- if (lower && cont) {
      paste("the search stopped at the smallest bandwidth at which every leave-one-out",
            "fit exists (typical of a discrete variable, where the cell means win: make it a",
            "factor, or pass a bandwidth by hand)")
    } else if (lower) {
      "its categories are kept apart entirely (cell means)"
    } else if (cont) {
      paste("the variable is smoothed out: local linear treats it as entering linearly,",
            "local constant as irrelevant (check it with a significance test, drop it, or",
            "pass a bandwidth by hand)")
    } else {
      paste("the variable is smoothed out (all categories pooled): read it as irrelevant",
            "(check it with a significance test or drop it)")
    }
    sprintf("'%s': %s = %s is at the %s end of the search box [%s, %s]; %s", names(ab)[j],
            if (cont) "h" else "lambda", format(signif(b$bw[[j]], 4)),
            if (lower) "lower" else "upper", format(signif(b$lower[[j]], 4)),
            format(signif(b$upper[[j]], 4)), advice)
  }, character(1))
  warning(who, ": the ", b$bwmethod, " bandwidth sits on the edge of its search box for ",
          paste(parts, collapse = "; "), call. = FALSE)
}

#' @export
print.kbw <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Bandwidth selection:", x$bwmethod, "for",
      if (x$method == "ll") "local linear" else "local constant", "regression,", x$kernel,
      "kernel,", x$nobs, "observations\n")
  print(signif(x$bw, digits))
  cat("Objective:", format(x$objective, digits = digits), " evaluations:", x$n_evals,
      " converged:", x$converged, "\n")
  invisible(x)
}

#' Plot the bandwidth-selection criterion curve
#'
#' Draws the criterion over its bandwidth grid (one continuous regressor) with the selected
#' bandwidth marked, in base graphics.
#'
#' @param x A `kbw` object.
#' @param ... Passed to [graphics::plot()].
#' @return `x$curve`, invisibly.
#' @examples
#' b <- kbw(mpg ~ wt, data = mtcars, bwmethod = "cv.aic")
#' plot(b)
#' @export
plot.kbw <- function(x, ...) {
  if (is.null(x$curve)) {
    stop("plot: the criterion curve is only computed for one continuous regressor",
         call. = FALSE)
  }
  ok <- is.finite(x$curve$objective)
  plot(x$curve$bw[ok], x$curve$objective[ok], log = "x", type = "b", pch = 20,
       xlab = "bandwidth", ylab = x$bwmethod, ...)
  graphics::abline(v = x$bw[1], lty = 2, col = "firebrick")
  graphics::points(x$bw[1], x$objective, pch = 19, col = "firebrick")
  invisible(x$curve)
}
