# Bias-variance diagnostics and inference for kernel regression (linear smoothers). Every formula
# is in the C++ core (core/include/attnreg/inference/diagnostics.hpp); these functions convert and format.

.diag_kind <- function(kind) {
  kinds <- c("hc3", "hc2", "hc1", "hc0", "const", "cr1", "nn", "local")
  if (!is.character(kind) || length(kind) != 1L || !tolower(kind) %in% c(kinds, "nonrobust")) {
    stop("vcov: must be one of \"HC3\", \"HC2\", \"HC1\", \"HC0\", \"nonrobust\" (also ",
         "\"const\"), \"CR1\", \"nn\", \"local\" (any case)", call. = FALSE)
  }
  if (tolower(kind) == "nonrobust") "const" else tolower(kind)
}

.diag_output <- function(object) {
  if (ncol(object$y) != 1L) stop("fit: diagnostics need a single response", call. = FALSE)
  0L
}

#' Pointwise inference for a kernel regression fit
#'
#' Fit, standard error, estimated bias and MSE, conventional and robust bias-corrected (RBC)
#' confidence intervals at new points. The estimator is a linear smoother
#' \eqn{m(x) = \sum_i l_i(x) y_i}; its variance is \eqn{\sum_i l_i(x)^2 \omega_i} with
#' \eqn{\omega_i = \sigma^2 = RSS/(n - 2 tr L + tr L'L)} (`vcov = "nonrobust"`), or the
#' heteroskedasticity-robust \eqn{e_i^2} (HC0), \eqn{e_i^2 n/(n - tr L)} (HC1),
#' \eqn{e_i^2/(1 - L_{ii})} (HC2), \eqn{e_i^2/(1 - L_{ii})^2} (HC3), or cluster-robust CR1.
#' The bias is \eqn{\sum_{k>p} m^{(k)}(x)/k! \sum_i l_i(x)(x_i - x)^k} with the derivatives
#' from a pilot local polynomial of degree `pilot_degree` (default \eqn{\max(p+1, 2)}) and
#' bandwidth `pilot_bw` (default the fit's, \eqn{\rho = 1} as nprobust). The RBC interval of
#' Calonico, Cattaneo and Farrell (2018) centres at \eqn{m(x) - \hat B(x)} and uses the exact
#' variance of that (linear) estimator. With several regressors (local constant or local
#' linear fits) the bias is \eqn{\sum_{|a|=p+1..2} D^a m(x) b^a/a! \sum_i l_i(x) u_i^a},
#' \eqn{u_i = (x_i - x)/b} over the continuous columns (Ruppert and Wand 1994, Ann. Statist.
#' 22(3)), the derivatives from a pilot local quadratic with all squares and cross products
#' (categorical columns enter through their kernels as in the fit); its window at each point
#' holds at least \eqn{\max(21, 2(1 + d + d(d+1)/2))} distinct training rows with weight (all
#' when fewer), the continuous entries of `pilot_bw` multiplied by the smallest factor
#' \eqn{\ge 1} that does (nprobust's `bwcheck`). A fit without continuous
#' regressors has `NA` bias, MSE and RBC columns with a warning (`fit`, `se` and the
#' conventional interval are always computed).
#'
#' `uniform = TRUE` adds uniform (simultaneous over the rows of `newdata`) bands
#' \eqn{fit \pm c\,se} and \eqn{fit_{bc} \pm c_{bc}\,se_{bc}}; columns `uniform_low,
#' uniform_high, uniform_rbc_low, uniform_rbc_high`, critical values in
#' `attr(, "crit_uniform")` and `attr(, "crit_uniform_rbc")`, the method in
#' `attr(, "uniform_method")`. `uniform_method = "wild_t"`: the wild bootstrap-t (Mammen 1993,
#' Ann. Statist. 21(1)) of the sup-t statistic, `R` draws seeded with `seed`:
#' \eqn{y^* = \hat y + e v} with Rademacher \eqn{v} (one per cluster for `"CR1"`), the
#' residuals re-projected through the fit and the standard error recomputed with `vcov` in
#' every draw, so the band accounts for the noise of estimated standard errors.
#' `"gaussian"`: the quantile of \eqn{\max_k |Z_k|/sd_k}, \eqn{Z \sim N(0, W \Omega W')},
#' the standard errors treated as known (as lpdensity and binsreg build their bands; the only
#' method before `"wild_t"` became the default). `"auto"` (default): `"wild_t"` for HC0-HC3 and
#' CR1 (`"gaussian"` with a warning where the bootstrap's refits would not fit in memory: more
#' than 2e8 nonzero hat-matrix weights over the rows in the points' windows, e.g. the Gaussian
#' kernel with more than ~20,000 distinct training rows), `"gaussian"` for
#' `vcov = "nonrobust"`, `"nn"` and `"local"`. With robust standard errors in small windows the Gaussian
#' band undercovers (d = 3, n = 500, HC3: 0.70-0.79 at 0.95; the wild bootstrap-t 0.92).
#'
#' @param fit A `kreg` fit (single response).
#' @param newdata A data frame with the regressors; missing: the training data.
#' @param level Confidence level.
#' @param vcov Variance estimator (any case): `"HC3"`, `"HC2"`, `"HC1"`, `"HC0"`, `"nonrobust"`
#'   (also `"const"`), `"CR1"`, or
#'   `"nn"`: nearest-neighbour residuals (nprobust's default
#'   `vce = "nn"` with 3 neighbours, Calonico, Cattaneo and Farrell 2018,
#'   \doi{10.1080/01621459.2017.1285776}), \eqn{\sigma_i^2 = J/(J+1) (y_i - \bar y_{J(i)})^2}
#'   over the \eqn{J} nearest observations in \eqn{x} (whole tie groups) among those in the
#'   evaluation point's kernel window, as nprobust's `lprobust`.
#'   With several regressors the neighbours are the nearest in Euclidean distance on
#'   the continuous columns divided by their bandwidths, among the observations with the
#'   same categorical values (ties in distance kept whole; Abadie and Imbens 2006,
#'   Econometrica 74(1)).
#'   `"local"`: the local residual variance at each point, \eqn{\hat\sigma^2(x) = \sum_i w_i
#'   r_i^2 / \sum_i w_i (1 - H_{ii})} from the residuals \eqn{r_i} of a local polynomial of
#'   the pilot's degree (default \eqn{\max(p+1, 2)}: a local quadratic with all squares and
#'   cross products for local constant and local linear fits, so that the window's curvature
#'   leaves the residuals) at \eqn{x} with the fit's kernel weights \eqn{w_i} and local
#'   leverages \eqn{H_{ii}} (Fan and Gijbels 1996, Local Polynomial Modelling and Its
#'   Applications, ch. 4), so \eqn{Var = \hat\sigma^2(x) \sum_i l_i(x)^2} (and with the
#'   bias-corrected weights for RBC): it pools the window's residuals, much less noisy than
#'   HC0-HC3 in small windows, assuming the variance roughly constant over one bandwidth. Its
#'   intervals use per-point critical values (columns `crit`, `crit_bc`): the `level` quantile
#'   of \eqn{|t|} under the statistic's own null distribution (normal errors with a constant
#'   variance in the window, the reference Bell and McCaffrey 2002, Survey Methodology 28(2),
#'   and Imbens and Kolesar 2016, REStat 98(4), take for robust t-statistics), which accounts
#'   for the few residual degrees of freedom of \eqn{\hat\sigma^2(x)} and for its sharing
#'   rows with the estimate (core/include/attnreg/inference/diagnostics.hpp).
#' @param pilot_bw Pilot bandwidth for the bias (default the fit's bandwidth); with several
#'   regressors a vector, one entry per regressor.
#' @param uniform Also compute uniform bands (see Details).
#' @param R Number of multiplier draws for the uniform bands (>= 100).
#' @param seed Seed of the multiplier draws (a non-negative integer).
#' @param uniform_method `"auto"`, `"wild_t"` or `"gaussian"` (see Details).
#' @param pilot_degree Pilot degree (> the fit's degree).
#' @param cluster Cluster ids, one per training row, for `vcov = "CR1"`: integers or labels
#'   (a factor or character vector); `NA` and non-integer numbers are errors.
#' @return A data frame with columns `fit, se, bias, mse, ci_low, ci_high, rbc_low, rbc_high,
#'   fit_bc, se_bc, crit, crit_bc`: `ci = fit -+ crit se`, `rbc = fit_bc -+ crit_bc se_bc`,
#'   the critical values the normal quantile unless `critical_value` is `"null"` (the default
#'   for `vcov = "local"`).
#' @param critical_value Critical values of the pointwise intervals (columns `crit`,
#'   `crit_bc`): `"normal"`, the normal quantile (nprobust's and np's convention); `"null"`,
#'   the `level` quantile of \eqn{|t|} under the statistic's own finite-sample null, normal
#'   errors with a constant variance (the reference distribution of Bell and McCaffrey 2002,
#'   Survey Methodology 28(2), and Imbens and Kolesar 2016, REStat 98(4)), computed from the
#'   smoother row and the hat matrix, for `vcov = "HC0"`-`"HC3"` and `"local"`: it corrects
#'   the intervals for the noise of a robust variance estimated from few rows (several
#'   regressors, small windows, corners), where the normal quantile undercovers, at a cost of
#'   \eqn{|S|^2 n} per point (\eqn{|S|} the rows the point's smoother weighs); `"auto"`:
#'   `"null"` for `"local"`, `"normal"` otherwise.
#' @param kind Deprecated name of `vcov` (a warning; removed in the next release).
#' @examples
#' set.seed(1)
#' d <- data.frame(x = runif(200))
#' d$y <- sin(2 * pi * d$x) + rnorm(200, sd = 0.3)
#' f <- kreg(y ~ x, data = d, bw = 0.08)
#' diagnose(f, data.frame(x = c(0, 0.5, 1)))
#' @export
diagnose <- function(fit, newdata, level = 0.95, vcov = "HC3", pilot_bw = NULL,
                     pilot_degree = NULL, cluster = NULL, kind, uniform = FALSE, R = 2000L,
                     seed = 1L, uniform_method = c("auto", "wild_t", "gaussian"),
                     critical_value = c("auto", "normal", "null")) {
  if (!missing(kind)) vcov <- .renamed_arg("diagnose", "kind", "vcov", kind, missing(vcov))
  res <- .diagnose_frame(fit, if (missing(newdata)) NULL else newdata, level, vcov, pilot_bw,
                         pilot_degree, cluster, uniform = uniform, R = R, seed = seed,
                         uniform_method = uniform_method, critical_value = critical_value)
  note <- attr(res, "bias_note")
  if (nzchar(note)) warning("diagnose: ", note, "; those columns are NA", call. = FALSE)
  attr(res, "bias_note") <- NULL
  unote <- attr(res, "uniform_note")
  if (!is.null(unote)) warning("diagnose: ", unote, call. = FALSE)
  attr(res, "uniform_note") <- NULL
  res
}

# The number of draws behind uniform bands, checked (at least 100; `usual` for the message).
.uniform_draws <- function(R, usual) {
  if (!is.numeric(R) || length(R) != 1L || is.na(R) || R < 100 || R != round(R)) {
    stop("R: must be an integer >= 100 (e.g. ", usual, ")", call. = FALSE)
  }
  as.integer(R)
}

# diagnose() without the warning: the data frame with attribute "bias_note" (empty when the
# bias and RBC columns were computed, else why they are NA).
.diagnose_frame <- function(fit, newdata, level = 0.95, kind = "hc3", pilot_bw = NULL,
                            pilot_degree = NULL, cluster = NULL, uniform = FALSE, R = 2000L,
                            seed = 1L, uniform_method = "auto", critical_value = "auto") {
  if (!is.character(uniform_method) || length(uniform_method) < 1L ||
      !(uniform_method[1] %in% c("auto", "wild_t", "gaussian"))) {
    stop("uniform_method: must be \"auto\", \"wild_t\" or \"gaussian\"", call. = FALSE)
  }
  uniform_method <- uniform_method[1]
  if (!is.character(critical_value) || length(critical_value) < 1L ||
      !(critical_value[1] %in% c("auto", "normal", "null"))) {
    stop("critical_value: must be \"auto\", \"normal\" or \"null\"", call. = FALSE)
  }
  critical_value <- critical_value[1]
  if (!inherits(fit, "kreg")) stop("fit: must be a kreg fit", call. = FALSE)
  out <- .diag_output(fit)
  kind <- .diag_kind(kind)
  X <- if (missing(newdata) || is.null(newdata)) fit$state$X else .kreg_newx(fit, newdata)
  pilot_vec <- numeric(0)
  if (!is.null(pilot_bw)) {
    if (!is.numeric(pilot_bw) || anyNA(pilot_bw) || any(!is.finite(pilot_bw))) {
      stop("pilot_bw: must be positive numbers", call. = FALSE)
    }
    if (length(pilot_bw) == 1L && ncol(X) == 1L) {
      if (!(pilot_bw > 0)) stop("pilot_bw: must be a single positive number", call. = FALSE)
    } else if (length(pilot_bw) != ncol(X)) {
      stop("pilot_bw: needs one value per regressor (", ncol(X), "), got ", length(pilot_bw),
           call. = FALSE)
    } else {
      if (any(pilot_bw < 0)) stop("pilot_bw: must be non-negative", call. = FALSE)
      pilot_vec <- as.double(pilot_bw)
      pilot_bw <- NULL
    }
  }
  nrep <- 0L
  if (isTRUE(uniform)) {
    nrep <- .uniform_draws(R, 2000L)
    if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) || seed < 0 ||
        seed != round(seed)) {
      stop("seed: must be a non-negative integer", call. = FALSE)
    }
  } else if (!identical(uniform, FALSE)) {
    stop("uniform: must be TRUE or FALSE", call. = FALSE)
  }
  cl <- numeric(0)
  if (!is.null(cluster)) {
    if (!is.atomic(cluster) || !is.null(dim(cluster))) {
      stop("cluster: must be a vector of cluster ids (integers) or labels (factor/character)",
           call. = FALSE)
    }
    if (anyNA(cluster)) {
      stop("cluster: is NA/NaN at row ", which(is.na(cluster))[1], "; every training row needs ",
           "a cluster id (drop those rows or give them their own id)", call. = FALSE)
    }
    if (is.double(cluster) && any(cluster != round(cluster))) {
      stop("cluster: must be integer ids or labels; got a non-integer number (",
           format(cluster[cluster != round(cluster)][1]), ") - floats are not ids",
           call. = FALSE)
    }
    cl <- as.numeric(as.integer(factor(cluster)))
  } else if (kind == "cr1") {
    stop("cluster: vcov = \"CR1\" needs one cluster id per training row", call. = FALSE)
  }
  r <- .diag_pointwise_cpp(fit$state, X, kind, as.double(level),
                           if (is.null(pilot_degree)) -1L else as.integer(pilot_degree),
                           if (is.null(pilot_bw)) 0 else as.double(pilot_bw), cl, out,
                           pilot_vec, nrep, as.double(seed), uniform_method, critical_value)
  note <- r$bias_note
  r$bias_note <- NULL
  un <- r$uniform
  r$uniform <- NULL
  res <- as.data.frame(r)
  if (nrep > 0L) {
    for (col in c("uniform_low", "uniform_high", "uniform_rbc_low", "uniform_rbc_high")) {
      res[[col]] <- un[[col]]
    }
    attr(res, "crit_uniform") <- un$crit_uniform
    attr(res, "crit_uniform_rbc") <- un$crit_uniform_rbc
    attr(res, "uniform_method") <- un$uniform_method
    if (nzchar(un$uniform_note)) attr(res, "uniform_note") <- un$uniform_note
  }
  if (nzchar(note)) {
    # Not computable here (not a numerical failure): NA, not NaN, and say why once.
    for (col in c("bias", "mse", "rbc_low", "rbc_high", "fit_bc", "se_bc", "crit_bc")) {
      res[[col]] <- NA_real_
    }
  }
  attr(res, "bias_note") <- note
  if (!missing(newdata) && !is.null(newdata)) rownames(res) <- rownames(newdata)
  res
}

.diag_global <- function(object) .diag_global_cpp(object$state, .diag_output(object))

.diag_xy <- function(x, y) {
  if (!is.numeric(x) || !is.null(dim(x)) && ncol(as.matrix(x)) != 1L) {
    stop("x: must be a numeric vector (one continuous regressor)", call. = FALSE)
  }
  list(x = as.double(x), y = as.double(y))
}

# NULL -> 0 (the core's "default" sentinel); a value given must be one positive finite number.
.diag_opt_bw <- function(v, name) {
  if (is.null(v)) return(0)
  if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v <= 0) {
    stop(name, ": must be one positive finite number or NULL (for the default), got ",
         if (length(v) == 1L) format(v) else paste("length", length(v)), call. = FALSE)
  }
  as.double(v)
}

#' MSE- and IMSE-optimal plug-in bandwidths (as nprobust's mse-dpi / imse-dpi)
#'
#' `algorithm = "nprobust"` (default) follows the data-driven steps of Calonico, Cattaneo and
#' Farrell (2018, JASA 113, 767-779, \doi{10.1080/01621459.2017.1285776}) as their R package
#' nprobust's `lpbwselect(bwselect = "mse-dpi")` / `"imse-dpi"` implements them (Calonico,
#' Cattaneo and Farrell 2019, J. Stat. Softw. 91(8), \doi{10.18637/jss.v091.i08}): at each point
#' a rule-of-thumb bandwidth, then pilot bandwidths for the derivatives of order \eqn{q+1} and
#' \eqn{q+2} (\eqn{q = p + 1}), then the bias-correction bandwidth \eqn{b} and the bandwidth
#' \eqn{h}, each \eqn{[(2\nu+1) V / (2(o+1-\nu) n (B^2 + \code{bwregul}\, R))]^{1/(2o+3)}} with
#' the variance \eqn{V} from nearest-neighbour residuals (`vcov = "nn"`, 3 neighbours; or
#' `"hc0"`..`"hc3"`), the bias \eqn{B} from the equivalent-kernel moments times a pilot
#' derivative and a regularisation \eqn{R} (the pilot's variance); every bandwidth reaches at
#' least `bwcheck` observations and at most the far end of the data. For even \eqn{p - \nu}
#' the closed form is replaced by the minimiser of the MSE with the second bias term, unless
#' `interior = TRUE`. `imse_dpi` averages the final step's variance and squared-bias constants
#' over the grid (default 30 equally spaced points over the range of `x`). Kernels:
#' `"epanechnikov"` (nprobust's default), `"uniform"`, `"triangular"`, `"gaussian"`.
#'
#' `algorithm = "one_step"` is the simpler plug-in \eqn{h(x) = [V(x)/(2rnB(x)^2)]^{1/(2r+1)}}
#' (\eqn{r = p+1} for odd \eqn{p}, \eqn{p+2} for even) and
#' \eqn{h = [\sum_j V(x_j) / (2rn \sum_j B(x_j)^2)]^{1/(2r+1)}}, with \eqn{V} and \eqn{B}
#' estimated once at a rule-of-thumb preliminary bandwidth `h0` with a pilot polynomial of
#' bandwidth `pilot_bw` (default `2 * h0`); default `vcov = "nonrobust"` and, for `imse_dpi`, 30
#' quantiles of `x` from 5% to 95%.
#'
#' Several regressors (`x` a numeric matrix or data frame with \eqn{d \ge 2} continuous
#' columns): the MSE-optimal bandwidth *vector* of a local linear (or, `method = "lc"`, local
#' constant) fit with a product kernel, minimising
#' \eqn{(\sum_j a_j h_j^2)^2 + \code{bwregul}\, t' Cov(\hat a) t + V_0 / \prod_j h_j}
#' (\eqn{t_j = h_j^2}) numerically: the interior bias \eqn{\mu_2(K) tr(H \nabla^2 m)/2} (Ruppert
#' and Wand 1994, Ann. Statist. 22(3), Thm 2.1; local constant adds \eqn{\mu_2(K) m_j f_j / f}),
#' the variance \eqn{R(K)^d \sigma^2(x) / (n f(x) \prod_j h_j)}, all from a pilot local
#' quadratic with squares and cross products at `pilot_bw` (one value per column; default the
#' rule of thumb \eqn{b_j = C_K s_j n^{-1/(d+8)}}). A direction without curvature gets at most
#' the range of its column. `common_scale = TRUE` returns the closed-form minimiser over
#' \eqn{h_j = c s_j}. `eval_points`: a matrix with \eqn{d} columns (default the column medians;
#' for `imse_dpi` a product grid of marginal quantiles). `vcov`, `h0`, `deriv`,
#' `interior` and `algorithm = "one_step"` are univariate options and are refused.
#' `bias_terms = "absolute"` (the default of `mse_dpi` with several columns) minimises the
#' bound \eqn{(\sum_j |a_j| h_j^2)^2} on the squared leading bias instead, so that no direction
#' gets a large bandwidth because its bias term is cancelled by another's of opposite sign (the
#' vector for RBC intervals; at cancelling vectors the bias of order \eqn{h^4} that RBC does not
#' remove makes them undercover); `"signed"` (the default of `imse_dpi`) is the pure MSE
#' vector. `bwcheck` (default 21): every window used (the pilot's at each point, the fit's at
#' the result) holds at least \eqn{\max(bwcheck, 2(1 + d + d(d+1)/2))} distinct rows (all when
#' fewer), each vector multiplied by the smallest factor \eqn{\ge 1} that does; kernels with
#' unbounded support are unchanged; 0 = no minimum. Formulas: `docs/bandwidth.md`.
#'
#' @param x,y Numeric vectors (one continuous regressor), or `x` a matrix with several
#'   continuous columns.
#' @param common_scale With several columns of `x`: return the closed-form bandwidth
#'   \eqn{h_j = c s_j} (\eqn{s_j} the column's standard deviation) instead of the free vector.
#' @param eval_points Evaluation points; default the median of `x` (`mse_dpi`) or the grid
#'   described above (`imse_dpi`).
#' @param method `"ll"` (local linear, degree 1) or `"lc"` (local constant, degree 0).
#' @param kernel Kernel name.
#' @param vcov Variance estimator: `NULL` for the algorithm's default (`"nn"` / `"const"`).
#' @param kind Deprecated name of `vcov` (a warning; removed in the next release).
#' @param h0,pilot_bw Preliminary and pilot bandwidths of `algorithm = "one_step"` (default
#'   rule of thumb and `2 * h0`).
#' @param algorithm `"nprobust"` or `"one_step"`.
#' @param degree Polynomial degree 0..3 (overrides `method`).
#' @param deriv Derivative whose estimator the bandwidth is for (`"nprobust"` only).
#' @param bwcheck,bwregul,interior Options of `"nprobust"` (as in nprobust's `lpbwselect`):
#'   minimum number of observations in every window (0 = off), scale of the regularisation
#'   term, and whether every point is treated as interior.
#' @param pilot `TRUE` to return the bias-correction bandwidths `b` too (`"nprobust"` only).
#' @param bias_terms With several columns of `x`: `"absolute"` or `"signed"` (see Details);
#'   `NULL` for the function's default.
#' @return `mse_dpi`: one bandwidth per evaluation point. `imse_dpi`: one bandwidth. With
#'   `pilot = TRUE` a list with `h` and `b`. With several columns of `x`: a matrix with one
#'   bandwidth vector per evaluation point (a vector for one point) and, for `imse_dpi`, one
#'   vector; `b` is then the pilot vector.
#' @examples
#' set.seed(1); x <- runif(500); y <- x^2 + rnorm(500, sd = 0.2)
#' mse_dpi(x, y, c(0.25, 0.5)); imse_dpi(x, y)
#' imse_dpi(x, y, kernel = "epanechnikov", pilot = TRUE)
#' @export
mse_dpi <- function(x, y, eval_points = NULL, method = c("ll", "lc"), kernel = "gaussian",
                    vcov = NULL, h0 = NULL, pilot_bw = NULL, algorithm = c("nprobust", "one_step"),
                    degree = NULL, deriv = 0L, bwcheck = 21L, bwregul = 1, interior = FALSE,
                    pilot = FALSE, common_scale = FALSE, bias_terms = NULL, kind) {
  if (!missing(kind)) vcov <- .renamed_arg("mse_dpi", "kind", "vcov", kind, missing(vcov))
  xm <- .mv_dpi_x(x)
  if (!is.null(xm))
    return(.mv_dpi(xm, y, eval_points, FALSE, match.arg(method), kernel, vcov, h0, pilot_bw,
                   match.arg(algorithm), degree, deriv, bwcheck, interior, pilot, bwregul,
                   common_scale, if (is.null(bias_terms)) "absolute" else bias_terms))
  .mv_no_bias_terms(bias_terms)
  if (isTRUE(common_scale)) stop("common_scale: is for several columns of x", call. = FALSE)
  kind <- vcov
  d <- .diag_xy(x, y)
  if (is.null(eval_points)) eval_points <- stats::median(d$x)
  .diag_lpbw(d, as.double(eval_points), FALSE, match.arg(method), kernel, kind, h0, pilot_bw,
             match.arg(algorithm), degree, deriv, bwcheck, bwregul, interior, pilot)
}

#' @rdname mse_dpi
#' @export
imse_dpi <- function(x, y, eval_points = NULL, method = c("ll", "lc"), kernel = "gaussian",
                     vcov = NULL, h0 = NULL, pilot_bw = NULL,
                     algorithm = c("nprobust", "one_step"), degree = NULL, deriv = 0L,
                     bwcheck = 21L, bwregul = 1, interior = FALSE, pilot = FALSE,
                     common_scale = FALSE, bias_terms = NULL, kind) {
  if (!missing(kind)) vcov <- .renamed_arg("imse_dpi", "kind", "vcov", kind, missing(vcov))
  xm <- .mv_dpi_x(x)
  if (!is.null(xm))
    return(.mv_dpi(xm, y, eval_points, TRUE, match.arg(method), kernel, vcov, h0, pilot_bw,
                   match.arg(algorithm), degree, deriv, bwcheck, interior, pilot, bwregul,
                   common_scale, if (is.null(bias_terms)) "signed" else bias_terms))
  .mv_no_bias_terms(bias_terms)
  if (isTRUE(common_scale)) stop("common_scale: is for several columns of x", call. = FALSE)
  kind <- vcov
  d <- .diag_xy(x, y)
  algorithm <- match.arg(algorithm)
  if (is.null(eval_points)) {
    eval_points <- if (algorithm == "nprobust") numeric(0) else
      stats::quantile(d$x, seq(0.05, 0.95, length.out = 30))
  }
  .diag_lpbw(d, as.double(eval_points), TRUE, match.arg(method), kernel, kind, h0, pilot_bw,
             algorithm, degree, deriv, bwcheck, bwregul, interior, pilot)
}

.diag_int <- function(v, name) {
  if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v != round(v) || v < 0) {
    stop(name, ": must be one non-negative integer", call. = FALSE)
  }
  as.integer(v)
}

.diag_lpbw <- function(d, ev, imse, method, kernel, kind, h0, pilot_bw, algorithm, degree,
                       deriv, bwcheck, bwregul, interior, pilot) {
  p <- if (is.null(degree)) (if (method == "ll") 1L else 0L) else .diag_int(degree, "degree")
  deriv <- .diag_int(deriv, "deriv")
  if (algorithm == "one_step") {
    if (deriv != 0L) stop("deriv: algorithm = \"one_step\" selects bandwidths for the ",
                          "function itself only; use algorithm = \"nprobust\"", call. = FALSE)
    if (isTRUE(pilot)) stop("pilot: needs algorithm = \"nprobust\"", call. = FALSE)
    r <- .diag_dpi_cpp(d$x, d$y, ev, p, kernel, .diag_kind(if (is.null(kind)) "const" else kind),
                       .diag_opt_bw(h0, "h0"), .diag_opt_bw(pilot_bw, "pilot_bw"), -1L)
    return(if (imse) r$bandwidth else r$pointwise)
  }
  for (a in list(list(h0, "h0"), list(pilot_bw, "pilot_bw"))) {
    if (!is.null(a[[1]])) {
      .diag_opt_bw(a[[1]], a[[2]])
      stop(a[[2]], ": is an option of algorithm = \"one_step\"; the \"nprobust\" algorithm ",
           "chooses its preliminary bandwidths itself", call. = FALSE)
    }
  }
  if (!is.numeric(bwregul) || length(bwregul) != 1L) {
    stop("bwregul: must be one number >= 0", call. = FALSE)
  }
  r <- tryCatch(.lp_bwselect_cpp(d$x, d$y, ev, imse, p, deriv, kernel,
                                 .diag_kind(if (is.null(kind)) "nn" else kind),
                                 if (is.null(bwcheck)) 0L else .diag_int(bwcheck, "bwcheck"),
                                 as.double(bwregul), isTRUE(interior)),
                error = function(e) {  # the core's "kind:" is the R argument vcov
                  m <- conditionMessage(e)
                  if (!startsWith(m, "kind:")) stop(e)
                  stop(sub("^kind:", "vcov:", m), call. = FALSE)
                })
  if (imse) {
    if (isTRUE(pilot)) list(h = r$h_imse, b = r$b_imse) else r$h_imse
  } else {
    if (isTRUE(pilot)) list(h = r$h, b = r$b) else r$h
  }
}

#' Bias-variance trade-off over a bandwidth grid
#'
#' For local constant and local linear fits at each bandwidth: the estimated integrated squared
#' bias, variance and MSE (means over `eval_points`; one pilot for the bias, fixed across the
#' grid, default bandwidth twice the rule of thumb), with CV, GCV and tr L.
#'
#' @param x Numeric vector or matrix of continuous regressors.
#' @param y Response.
#' @param bandwidths Bandwidth grid.
#' @param eval_points Evaluation points (default 50 points over the range of a single `x`,
#'   else the training rows).
#' @param vcov Variance estimator (see [diagnose()]).
#' @param kind Deprecated name of `vcov` (a warning; removed in the next release).
#' @param kernel Kernel name.
#' @return A data frame: `method, bandwidth, bias2, variance, mse, cv, gcv, df`, class
#'   `kreg_tradeoff` (with a `plot` method).
#' @examples
#' set.seed(1); x <- runif(200); y <- sin(2 * pi * x) + rnorm(200, sd = 0.3)
#' tradeoff(x, y, c(0.03, 0.06, 0.12, 0.24))
#' @export
tradeoff <- function(x, y, bandwidths, eval_points = NULL, vcov = "nonrobust",
                     kernel = "gaussian", kind) {
  if (!missing(kind)) vcov <- .renamed_arg("tradeoff", "kind", "vcov", kind, missing(vcov))
  kind <- vcov
  X <- as.matrix(x)
  storage.mode(X) <- "double"
  if (nrow(X) != length(y)) stop("y: must have one value per row of x", call. = FALSE)
  if (!all(is.finite(X))) {
    stop("x: contains NaN or Inf at row ", (which(!is.finite(X))[1] - 1L) %% nrow(X) + 1L,
         " (remove or impute those rows)", call. = FALSE)
  }
  E <- if (is.null(eval_points)) {
    if (ncol(X) == 1L) matrix(seq(min(X), max(X), length.out = 50)) else X
  } else as.matrix(eval_points)
  res <- do.call(rbind, lapply(c(lc = 0L, ll = 1L), function(p) {
    t <- .diag_tradeoff_cpp(X, as.double(y), as.double(bandwidths), p, kernel, E,
                            .diag_kind(kind), -1L, 0)
    data.frame(method = if (p == 0L) "lc" else "ll", bandwidth = t$bandwidth, bias2 = t$bias2,
               variance = t$variance, mse = t$mse, cv = t$cv, gcv = t$gcv, df = t$df)
  }))
  rownames(res) <- NULL
  class(res) <- c("kreg_tradeoff", "data.frame")
  res
}

#' @export
plot.kreg_tradeoff <- function(x, ...) {
  op <- par(mfrow = c(1, 2))
  on.exit(par(op))
  for (m in c("lc", "ll")) {
    t <- x[x$method == m, ]
    Y <- as.matrix(t[, c("bias2", "variance", "mse", "cv")])
    yl <- range(Y[Y > 0], finite = TRUE)
    yl[2] <- yl[2] * (yl[2] / yl[1])^0.35  # headroom for the legend on the log axis
    matplot(t$bandwidth, Y, type = "b", log = "xy", pch = 1:4, lty = 1, xlab = "bandwidth h",
            ylab = "integrated squared error", cex.axis = 0.8, ylim = yl,
            main = if (m == "lc") "local constant" else "local linear", ...)
    legend("topleft", c("bias^2", "variance", "MSE", "CV (leave-one-out)"), col = 1:4,
           pch = 1:4, lty = 1, bty = "n", cex = 0.8)
  }
  invisible(x)
}

#' Monte Carlo bias, variance and MSE of kernel and linear regression
#'
#' One design `X` is drawn and held fixed; `f(X)` is evaluated once and `R` responses
#' `f(X) + noise * N(0, 1)` are drawn. Each estimator is a linear smoother with weights `W`
#' at the evaluation points, so the core summarises all replications at once.
#' `bw = "oracle"` chooses, per kernel estimator, the grid bandwidth with the smallest
#' empirical integrated MSE.
#'
#' Every draw comes from the core's generator, seeded with `seed` (or, when `seed` is
#' `NULL`, with a seed drawn from R's random number generator, so `set.seed()` decides it):
#' Python's `attnreg.diagnostics.monte_carlo` with the same `seed` (and the same function and
#' settings) gives the same numbers.
#'
#' @param f Function of a matrix (rows = points) returning one value per row.
#' @param n,d Sample size and dimension.
#' @param design `"uniform"` (\eqn{U(0, 1)^d}) or `"cone"` (Zuo et al. 2025, arXiv:2510.01450,
#'   App. E.1 eq. 51: \eqn{X_j = |Z_j|} for \eqn{j \le} `cone_dims`, \eqn{X_j = Z_j}
#'   otherwise, \eqn{Z \sim N(0, I_d)}: a Gaussian truncated to a cone).
#' @param noise Noise standard deviation.
#' @param R Replications.
#' @param seed `NULL` (default): a seed drawn from R's random number generator, so
#'   `set.seed()` beforehand reproduces the run; or a whole number, used as is (R's
#'   generator is not touched).
#' @param estimators Any of `"lc"` (local constant, also called `"nw"`), `"ll"`, `"ols"`,
#'   `"ridge"`.
#' @param bw `"oracle"` or a bandwidth (the same in every column).
#' @param bw_grid Bandwidth grid for the oracle (default \eqn{s n^{-1/(d+4)}} times 14
#'   log-spaced factors from 0.25 to 2.5, \eqn{s} = 0.3 for the uniform and 1 for the cone
#'   design).
#' @param eval_points Matrix of evaluation points (default 100 fresh design draws; 101 grid
#'   points for d = 1 uniform).
#' @param lambda Ridge penalty.
#' @param kernel Kernel of `"lc"` and `"ll"` (see [kreg()]).
#' @param cone_dims Number of leading columns folded to be non-negative in the cone design
#'   (`NULL`: all `d`).
#' @param progress Show a text progress bar (on stderr), one step per fit. Ctrl-C (Esc in
#'   the R GUI) stops the run between steps.
#' @return A list: `integrated` (data frame: estimator, bandwidth, bias2, variance, mse),
#'   `pointwise` (per estimator and point), `eval_points`, `X` (the design drawn).
#' @examples
#' mc <- monte_carlo(function(X) sin(2 * pi * X[, 1]), n = 100, R = 50, seed = 1)
#' mc$integrated
#' @export
monte_carlo <- function(f, n = 200L, d = 1L, design = c("uniform", "cone"), noise = 0.3,
                        R = 200L, seed = NULL, estimators = c("lc", "ll", "ols", "ridge"),
                        bw = "oracle", bw_grid = NULL, eval_points = NULL, lambda = 1,
                        kernel = "gaussian", cone_dims = NULL, progress = FALSE) {
  design <- match.arg(design)
  if (!is.function(f)) stop("f: must be a function of a matrix", call. = FALSE)
  whole <- function(v, name, low) {
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v != floor(v) || v < low ||
        v > .Machine$integer.max) {
      stop(name, ": must be a whole number >= ", low, call. = FALSE)
    }
    as.integer(v)
  }
  if (!is.numeric(R) || length(R) != 1L || !is.finite(R) || R < 2) {
    stop("R: needs at least 2 replications", call. = FALSE)
  }
  n <- whole(n, "n", 3); d <- whole(d, "d", 1); R <- whole(R, "R", 2)
  cone <- if (is.null(cone_dims)) 0L else whole(cone_dims, "cone_dims", 1)
  if (identical(bw, "oracle")) {
    h <- 0
  } else if (is.numeric(bw) && length(bw) == 1L && is.finite(bw) && bw > 0) {
    h <- as.double(bw)
  } else {
    stop("bw: use \"oracle\" or one number > 0", call. = FALSE)
  }
  seed <- .attnreg_seed(seed)
  s <- .mc_sample_cpp(n, d, design, cone, if (is.null(eval_points)) -1L else 0L, seed)
  X <- s$X
  E <- if (is.null(eval_points)) s$X_eval else as.matrix(eval_points)
  storage.mode(E) <- "double"
  values <- function(M) {
    v <- as.double(f(M))
    if (length(v) != nrow(M)) stop("f: must return one value per row of its argument", call. = FALSE)
    v
  }
  mtr <- values(X)
  truth <- values(E)
  Ysim <- .mc_responses_cpp(mtr, as.double(noise), R, seed)
  grid <- if (is.null(bw_grid)) .mc_default_grid_cpp(n, d, design) else as.double(bw_grid)
  done <- .attnreg_progress_on(progress)
  on.exit(done(), add = TRUE)
  res <- .mc_estimates_cpp(X, E, Ysim, truth, as.character(estimators), h, grid,
                           as.double(lambda), as.character(kernel))
  done(TRUE)
  rows <- lapply(res, function(r) {
    data.frame(estimator = r$estimator, bandwidth = r$bandwidth, bias2 = r$integrated_bias2,
               variance = r$integrated_variance, mse = r$integrated_mse)
  })
  pts <- lapply(res, function(r) {
    data.frame(estimator = r$estimator, point = seq_along(truth), bias = r$bias,
               variance = r$variance, mse = r$mse)
  })
  list(integrated = do.call(rbind, rows), pointwise = do.call(rbind, pts), eval_points = E, X = X)
}

#' Bootstrap confidence bands for a kernel regression fit
#'
#' Wild (`"rademacher"`, `"mammen"`: \eqn{y^*_i = \hat m(x_i) + e_i v_i}; the fit is linear in
#' y, so no refit) or pairs (rows resampled and refitted with the same bandwidths) bootstrap.
#' Pointwise: basic bootstrap intervals; simultaneous: \eqn{\hat m \pm c\,se} with \eqn{c} the
#' `level`-quantile of \eqn{\max_x |m^*(x) - \hat m(x)|/se(x)} (sup-t). These are
#' variability bands around \eqn{E \hat m(x)} unless `bias_corrected = TRUE` (wild only), which
#' resamples the robust bias-corrected estimator. The draws come from the core's generator,
#' seeded from R's random number generator unless `seed` is given, so `set.seed()` decides
#' them.
#'
#' @param fit A `kreg` fit (single response).
#' @param newdata Data frame of evaluation points.
#' @param R Bootstrap replications.
#' @param bootstrap `"rademacher"`, `"mammen"` or `"pairs"`.
#' @param level Confidence level.
#' @param seed `NULL` (default): seed the core's generator from R's (`set.seed()` reproduces
#'   the bands); or a whole number, used as is (R's generator is not touched).
#' @param progress Show a text progress bar (on stderr) over the replications.
#' @param bias_corrected Resample the RBC estimator (wild only).
#' @param vcov Variance estimator of the studentising se (see [diagnose()]).
#' @param type,kind Deprecated names of `bootstrap` and `vcov` (a warning; removed in the next
#'   release).
#' @return A data frame `center, se, low, high, uniform_low, uniform_high` with attributes
#'   `critical_value` and `draws`.
#' @examples
#' set.seed(1); d <- data.frame(x = runif(100)); d$y <- sin(6 * d$x) + rnorm(100, sd = 0.3)
#' b <- bootstrap_bands(kreg(y ~ x, data = d, bw = 0.1), data.frame(x = seq(0, 1, 0.1)), R = 199)
#' attr(b, "critical_value")
#' @export
bootstrap_bands <- function(fit, newdata, R = 999L,
                            bootstrap = c("rademacher", "mammen", "pairs"), level = 0.95,
                            seed = NULL, bias_corrected = FALSE, vcov = "HC3", progress = FALSE,
                            type, kind) {
  if (!missing(type)) {
    bootstrap <- .renamed_arg("bootstrap_bands", "type", "bootstrap", type, missing(bootstrap))
  }
  if (!missing(kind)) vcov <- .renamed_arg("bootstrap_bands", "kind", "vcov", kind, missing(vcov))
  kind <- vcov
  if (!inherits(fit, "kreg")) stop("fit: must be a kreg fit", call. = FALSE)
  .diag_output(fit)
  type <- match.arg(bootstrap, c("rademacher", "mammen", "pairs"))
  X <- .kreg_newx(fit, newdata)
  seed <- .attnreg_seed(seed)
  done <- .attnreg_progress_on(progress)
  on.exit(done(), add = TRUE)
  r <- .kreg_core(.diag_bootstrap_cpp(fit$state, X, type, as.integer(R), as.double(level),
                                      seed, isTRUE(bias_corrected), .diag_kind(kind)),
                  rename = c(replications = "R"))
  done(TRUE)
  out <- data.frame(center = r$center, se = r$se, low = r$low, high = r$high,
                    uniform_low = r$uniform_low, uniform_high = r$uniform_high)
  attr(out, "critical_value") <- r$critical_value
  attr(out, "draws") <- r$draws
  out
}
