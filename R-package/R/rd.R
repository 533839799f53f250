# Regression discontinuity designs: rd_robust() and rd_bwselect(), the R face of attnreg.rd.
# The formulas live in the C++ core (core/include/attnreg/rd/rdrobust.hpp); docs/rd.md has the
# conventions and the differences from rdrobust.

.rd_options <- function(c, p, q, deriv, h, b, rho, kernel, bwselect, vce, nnmatch, level,
                        masspoints, bwcheck, bwrestrict, scaleregul, stdvars, sharpbw) {
  pair <- function(v, name) {
    if (is.null(v)) return(c(NA_real_, NA_real_))
    if (!is.numeric(v) || !length(v) %in% 1:2 || any(!is.finite(v)) || any(v <= 0))
      stop(name, ": must be one or two (left, right) positive finite numbers", call. = FALSE)
    if (length(v) == 1) c(v, v) else as.numeric(v)
  }
  if (!is.numeric(level) || length(level) != 1 || !is.finite(level) || level <= 0 || level >= 1)
    stop("level: level is a fraction: 0.95 for a 95% interval (rdrobust's level = 95 is ",
         "level = 0.95 here)", call. = FALSE)
  if (is.null(q)) q <- p + 1
  if (q <= p) stop("q: must be greater than p", call. = FALSE)
  kernel <- match.arg(tolower(kernel), c("triangular", "epanechnikov", "uniform"))
  bwselect <- match.arg(tolower(bwselect), c("mserd", "msetwo", "msesum", "msecomb1",
                                             "msecomb2", "cerrd", "certwo", "cersum",
                                             "cercomb1", "cercomb2"))
  vce <- match.arg(tolower(vce), c("nn", "hc0", "hc1", "hc2", "hc3", "cr1", "cr2", "cr3"))
  masspoints <- match.arg(tolower(masspoints), c("adjust", "check", "off"))
  hh <- pair(h, "h"); bb <- pair(b, "b")
  list(c = as.numeric(c), p = as.integer(p), q = as.integer(q), deriv = as.integer(deriv),
       kernel = kernel, vce = vce, nnmatch = as.integer(nnmatch), masspoints = masspoints,
       bwcheck = if (is.null(bwcheck)) 0L else as.integer(bwcheck),
       bwrestrict = isTRUE(bwrestrict), scaleregul = as.numeric(scaleregul),
       stdvars = isTRUE(stdvars), bwselect = bwselect, h_left = hh[1], h_right = hh[2],
       b_left = bb[1], b_right = bb[2], rho = if (is.null(rho)) NA_real_ else as.numeric(rho),
       level = as.numeric(level), sharpbw = isTRUE(sharpbw))
}

.rd_data <- function(y, x, fuzzy, covs, weights, cluster) {
  n <- length(x)
  chk <- function(v, name) {
    if (is.null(v)) return(NULL)
    if (!is.numeric(v) && !is.logical(v)) stop(name, ": must be numeric", call. = FALSE)
    if (length(v) != n) stop(name, ": must have one value per row of x (", n, ")", call. = FALSE)
    as.numeric(v)
  }
  z <- NULL
  if (!is.null(covs)) {
    z <- as.matrix(covs)
    if (is.null(colnames(z))) colnames(z) <- paste0("z", seq_len(ncol(z)))
    if (nrow(z) != n) stop("covs: must have one row per observation (", n, ")", call. = FALSE)
    storage.mode(z) <- "double"
  }
  cl <- if (is.null(cluster)) NULL else {
    if (length(cluster) != n) stop("cluster: must have one id per row of x", call. = FALSE)
    as.integer(factor(cluster, exclude = NA))
  }
  list(y = chk(y, "y"), x = chk(x, "x"), t = chk(fuzzy, "fuzzy"), z = z,
       w = chk(weights, "weights"), cluster = cl)
}

#' Regression discontinuity estimates with robust bias-corrected inference
#'
#' Local polynomial estimates of sharp, fuzzy and kink regression discontinuity designs with the
#' robust bias-corrected confidence intervals of Calonico, Cattaneo and Titiunik (2014,
#' Econometrica 82(6)) and the MSE/CER-optimal bandwidths of the rdpackages software (Calonico,
#' Cattaneo and Farrell 2020, Econometrics Journal 23(2)); covariates enter with one common
#' coefficient (Calonico, Cattaneo, Farrell and Titiunik 2019, REStat 101(3)). The results
#' agree with rdrobust 2.1.1; see docs/rd.md for the conventions.
#'
#' The estimate is linear in the outcome: `attention_weights(fit)` returns the attention weights `a`
#' over the input rows with estimate `sum(a * y)` (0 outside the windows and for dropped rows).
#'
#' @param y Outcome.
#' @param x Running variable.
#' @param c Cutoff, strictly inside the range of `x`.
#' @param fuzzy Treatment take-up for a fuzzy design (the ratio of the two jumps).
#' @param deriv 0 (jump in the level) or 1 (kink design).
#' @param p,q Orders of the point-estimate and bias-correction polynomials (`q > p`, default
#'   `p + 1`).
#' @param h,b Fixed bandwidths: one, or left and right; with `h` alone `b = h` (or `h / rho`).
#' @param rho `b = h / rho`.
#' @param covs Covariates (matrix or data frame); collinear ones are dropped with a warning.
#' @param kernel `"triangular"`, `"epanechnikov"` or `"uniform"`.
#' @param weights Nonnegative unit weights multiplying the kernel.
#' @param bwselect One of mserd, msetwo, msesum, msecomb1, msecomb2, cerrd, certwo, cersum,
#'   cercomb1, cercomb2.
#' @param vce rdrobust's variance names: `"nn"` (nearest neighbours, `nnmatch` of them),
#'   `"hc0"`-`"hc3"`, or with `cluster` `"cr1"`, `"cr2"` (Bell and McCaffrey 2002) and
#'   `"cr3"`. With `cluster`, as rdrobust 2.1.1: nn, hc0 and hc1 give CR1, hc2 CR2 and hc3
#'   CR3; cr1-cr3 without `cluster` are an error. Formulas in the package's docs/rd.md.
#' @param cluster Cluster ids.
#' @param nnmatch Neighbours for `vce = "nn"`.
#' @param level Confidence level as a fraction (0.95); rdrobust's `level = 95` is
#'   `level = 0.95` here.
#' @param masspoints `"adjust"`, `"check"` or `"off"`.
#' @param bwcheck,bwrestrict,scaleregul,stdvars,sharpbw As in rdrobust.
#' @param subset Logical or integer index of the rows to use.
#' @return An object of class `rd_robust`: `table` (rows conventional, bias_corrected, robust;
#'   columns coef, se, z, p_value, ci_low, ci_high), `first_stage` (fuzzy), `bandwidths`,
#'   `n`, `n_effective`, `n_dropped`, `coef_covs`, `attention_weights`, `effective_n`.
#' @examples
#' set.seed(1)
#' x <- runif(500, -1, 1); y <- x + 0.5 * (x >= 0) + rnorm(500, sd = 0.3)
#' fit <- rd_robust(y, x)
#' fit
#' sum(attention_weights(fit) * y)  # the conventional estimate
#' @export
rd_robust <- function(y, x, c = 0, fuzzy = NULL, deriv = 0, p = 1, q = NULL, h = NULL, b = NULL,
                      rho = NULL, covs = NULL, kernel = "triangular", weights = NULL,
                      bwselect = "mserd", vce = "nn", cluster = NULL, nnmatch = 3,
                      level = 0.95, masspoints = "adjust", bwcheck = NULL, bwrestrict = TRUE,
                      scaleregul = 1, stdvars = TRUE, subset = NULL, sharpbw = FALSE) {
  n_all <- length(x)
  rows <- seq_len(n_all)
  if (!is.null(subset)) rows <- rows[subset]
  take <- function(v) if (is.null(v)) NULL else if (is.matrix(v) || is.data.frame(v))
    v[rows, , drop = FALSE] else v[rows]
  opt <- .rd_options(c, p, q, deriv, h, b, rho, kernel, bwselect, vce, nnmatch, level,
                     masspoints, bwcheck, bwrestrict, scaleregul, stdvars, sharpbw)
  d <- .rd_data(take(y), take(x), take(fuzzy), take(covs), take(weights), take(cluster))
  r <- .rd_robust_cpp(d$y, d$x, d$t, d$z, d$w, d$cluster, opt)
  tab <- function(e) {
    data.frame(coef = e$coef, se = e$se, z = e$z, p_value = e$p_value,
               ci_low = e$ci_low, ci_high = e$ci_high,
               row.names = c("conventional", "bias_corrected", "robust"))
  }
  a <- numeric(n_all)
  a[rows] <- r$weights
  names_z <- colnames(d$z)
  if (length(r$covs_dropped))
    warning("covs: dropped collinear covariates: ",
            paste(names_z[r$covs_dropped], collapse = ", "), call. = FALSE)
  xa <- as.numeric(x)
  left <- !is.na(xa) & xa < opt$c
  right <- !is.na(xa) & xa >= opt$c
  out <- list(table = tab(r$estimate), first_stage = if (r$fuzzy) tab(r$first_stage),
              bandwidths = stats::setNames(r$bandwidths, c("h_left", "h_right", "b_left",
                                                           "b_right")),
              bwselect = r$bwselect, n = stats::setNames(r$n, c("left", "right")),
              n_effective = stats::setNames(r$n_h, c("left", "right")),
              n_dropped = r$n_dropped,
              coef_covs = if (length(r$covs_kept))
                stats::setNames(r$gamma, names_z[r$covs_kept]),
              attention_weights = a,
              effective_n = c(left = 1 / sum(a[left]^2), right = 1 / sum(a[right]^2)),
              fuzzy = r$fuzzy, level = opt$level, p = opt$p, q = opt$q, deriv = opt$deriv,
              kernel = opt$kernel, vce = r$vce,
              c = opt$c)
  class(out) <- "rd_robust"
  out
}

#' @export
print.rd_robust <- function(x, digits = 4, ...) {
  cat(if (x$fuzzy) "Fuzzy" else "Sharp", if (x$deriv == 1) "Kink", "RD estimate, p =", x$p,
      ", q =", x$q, ",", x$kernel, "kernel,", x$bwselect, "bandwidth, vce", x$vce, "\n")
  cat(sprintf("h = (%.4g, %.4g), b = (%.4g, %.4g); effective n = (%d, %d)\n",
              x$bandwidths[1], x$bandwidths[2], x$bandwidths[3], x$bandwidths[4],
              as.integer(x$n_effective[1]), as.integer(x$n_effective[2])))
  print(x$table[c("conventional", "robust"), ], digits = digits)
  invisible(x)
}

#' @export
coef.rd_robust <- function(object, ...) object$table["conventional", "coef"]

#' @export
attention_weights.rd_robust <- function(object, newdata, ...) {
  if (!missing(newdata)) stop("newdata: RD attention weights are over the estimation rows only", call. = FALSE)
  object$attention_weights
}

#' Bandwidths for regression discontinuity designs
#'
#' The bandwidths of [rd_robust()]: one selector, or all ten with `all = TRUE`.
#'
#' @inheritParams rd_robust
#' @param all Compute every selector.
#' @return A matrix with one row per selector and columns h_left, h_right, b_left, b_right.
#' @examples
#' set.seed(1)
#' x <- runif(500, -1, 1); y <- x + 0.5 * (x >= 0) + rnorm(500, sd = 0.3)
#' rd_bwselect(y, x, all = TRUE)
#' @export
rd_bwselect <- function(y, x, c = 0, fuzzy = NULL, deriv = 0, p = 1, q = NULL, covs = NULL,
                        kernel = "triangular", weights = NULL, bwselect = "mserd", vce = "nn",
                        cluster = NULL, nnmatch = 3, masspoints = "adjust", bwcheck = NULL,
                        bwrestrict = TRUE, scaleregul = 1, stdvars = TRUE, subset = NULL,
                        sharpbw = FALSE, all = FALSE) {
  rows <- seq_along(x)
  if (!is.null(subset)) rows <- rows[subset]
  take <- function(v) if (is.null(v)) NULL else if (is.matrix(v) || is.data.frame(v))
    v[rows, , drop = FALSE] else v[rows]
  opt <- .rd_options(c, p, q, deriv, NULL, NULL, NULL, kernel, bwselect, vce, nnmatch, 0.95,
                     masspoints, bwcheck, bwrestrict, scaleregul, stdvars, sharpbw)
  d <- .rd_data(take(y), take(x), take(fuzzy), take(covs), take(weights), take(cluster))
  r <- .rd_bwselect_cpp(d$y, d$x, d$t, d$z, d$w, d$cluster, opt, isTRUE(all))
  bws <- r$bws
  dimnames(bws) <- list(r$selectors, c("h_left", "h_right", "b_left", "b_right"))
  bws
}

#' Manipulation test of a regression discontinuity design
#'
#' Tests whether the density of the running variable is continuous at the cutoff, with the
#' local polynomial density estimator of Cattaneo, Jansson and Ma (2020, JASA 115(531)): on each
#' side of `c` the empirical distribution function is regressed on a polynomial of order
#' `q = p + 1` in `(x - c)/h`, and the slopes (the densities at `c`) are compared with jackknife
#' or plug-in standard errors (`vce`), in the unrestricted or the restricted model
#' (`fitselect`). Bandwidths follow rdbwdensity (Cattaneo, Jansson and Ma 2018, Stata Journal
#' 18(1)); binomial tests in windows around the cutoff follow R rddensity's window rule (the
#' first window holds `bino_n` rows on each side). Same core as Python `attnreg.rd.rddensity`;
#' docs/rd.md lists the conventions.
#'
#' @param x The running variable; `NA` values are dropped (`n_dropped`).
#' @param c The cutoff, within the range of `x`.
#' @param p Order of the bandwidth-selection fit (1 to 7); the test uses order `q`.
#' @param q Order of the test fit, default `p + 1`.
#' @param kernel `"triangular"`, `"epanechnikov"` or `"uniform"`.
#' @param h One bandwidth or `c(left, right)`; `NULL` selects them.
#' @param bwselect `"comb"` (median of the three rules per side; the smaller of `"diff"` and
#'   `"sum"` under `fitselect = "restricted"`), `"each"` (unrestricted only), `"diff"` or `"sum"`.
#' @param vce `"jackknife"` (Cattaneo, Jansson and Ma 2020, section 3.2) or `"plugin"`, the
#'   asymptotic variance of their Theorem 1 at the estimated densities; it also enters the
#'   bandwidth rules, as in rddensity.
#' @param masspoints Adjust the empirical distribution at repeated values.
#' @param regularize,nlocalmin,nuniquemin Minimum rows and distinct values within the
#'   bandwidths (default `20 + p + 1`), as rddensity.
#' @param bino_n,bino_w,bino_nw,bino_p Binomial tests: rows on each side in the first window (or
#'   `bino_w`, its half-length), the number of windows (0: none) and the null probability.
#' @param fitselect `"unrestricted"` (a distribution function per side) or `"restricted"` (one
#'   distribution function, continuous at `c` with common derivatives of order 2 and higher and
#'   a density of its own on each side; Cattaneo, Jansson and Ma 2018, Stata Journal 18(1),
#'   section 2). The restricted model takes one bandwidth.
#' @return An object of class `rd_density`: `statistic`, `p_value`, `h` (left, right),
#'   `n_effective`, `density` and `se` (left, right, diff), `bandwidths` (rdbwdensity's table or
#'   `NULL` for a given `h`), `binomial` (a data frame of windows, counts and p-values), `n`,
#'   `n_dropped`, `fitselect`, `vce`.
#' @examples
#' set.seed(1)
#' m <- rd_density(rnorm(2000))
#' m$p_value
#' @export
rd_density <- function(x, c = 0, p = 2, q = NULL, kernel = "triangular", h = NULL,
                       bwselect = "comb", vce = "jackknife", masspoints = TRUE,
                       regularize = TRUE, nlocalmin = NULL, nuniquemin = NULL, bino_n = 20,
                       bino_w = NULL, bino_nw = 10, bino_p = 0.5,
                       fitselect = "unrestricted") {
  if (!is.numeric(x)) stop("x: must be a numeric vector", call. = FALSE)
  if (any(is.infinite(x))) stop("x: has infinite values; drop or fix those rows", call. = FALSE)
  miss <- is.na(x)
  x <- as.numeric(x[!miss])
  int_ok <- function(v, lo) is.numeric(v) && length(v) == 1 && is.finite(v) && v == round(v) &&
    v >= lo
  if (!int_ok(p, 1) || p > 7) stop("p: must be an integer from 1 to 7", call. = FALSE)
  if (is.null(q)) q <- p + 1
  if (!int_ok(q, p) || q > 8) stop("q: must be an integer from p to 8", call. = FALSE)
  if (!is.numeric(c) || length(c) != 1 || !is.finite(c))
    stop("c: must be a finite number", call. = FALSE)
  if (length(x) < 2 || c < min(x) || c > max(x))
    stop("c: the cutoff must lie within the range of x", call. = FALSE)
  kernel <- match.arg(tolower(kernel), c("triangular", "epanechnikov", "uniform"))
  bwselect <- match.arg(tolower(bwselect), c("comb", "each", "diff", "sum"))
  if (!(is.character(vce) && length(vce) == 1 && vce %in% c("jackknife", "plugin")))
    stop("vce: must be \"jackknife\" or \"plugin\"", call. = FALSE)
  if (!(is.character(fitselect) && length(fitselect) == 1 &&
        fitselect %in% c("unrestricted", "restricted")))
    stop("fitselect: must be \"unrestricted\" or \"restricted\"", call. = FALSE)
  if (is.null(h)) {
    hh <- c(NA_real_, NA_real_)
  } else {
    if (!is.numeric(h) || !length(h) %in% 1:2 || any(!is.finite(h)) || any(h <= 0))
      stop("h: must be one or two (left, right) positive finite numbers", call. = FALSE)
    hh <- if (length(h) == 1) c(h, h) else as.numeric(h)
  }
  mins <- vapply(list(nlocalmin = nlocalmin, nuniquemin = nuniquemin), function(v) {
    if (is.null(v)) return(-1L)
    if (!int_ok(v, 0)) stop("nlocalmin/nuniquemin: must be non-negative integers", call. = FALSE)
    as.integer(v)
  }, integer(1))
  if (!int_ok(bino_n, 1)) stop("bino_n: must be a positive integer", call. = FALSE)
  if (!int_ok(bino_nw, 0)) stop("bino_nw: must be a non-negative integer", call. = FALSE)
  if (!is.null(bino_w) && !(is.numeric(bino_w) && length(bino_w) == 1 && is.finite(bino_w) &&
                            bino_w > 0))
    stop("bino_w: must be a positive number", call. = FALSE)
  if (!is.numeric(bino_p) || length(bino_p) != 1 || !(bino_p >= 0 && bino_p <= 1))
    stop("bino_p: must be a probability in [0, 1]", call. = FALSE)
  opt <- list(c = as.numeric(c), p = as.integer(p), q = as.integer(q), kernel = kernel,
              bwselect = bwselect, h_left = hh[1], h_right = hh[2],
              masspoints = isTRUE(masspoints), regularize = isTRUE(regularize),
              nlocalmin = mins[[1]], nuniquemin = mins[[2]], bino_n = as.integer(bino_n),
              bino_w = if (is.null(bino_w)) NA_real_ else as.numeric(bino_w),
              bino_nw = as.integer(bino_nw), bino_p = as.numeric(bino_p),
              fitselect = fitselect, vce = vce)
  r <- .rd_density_cpp(x, opt)
  tab <- NULL
  if (length(r$bw_table))
    tab <- matrix(r$bw_table, 4, 3, byrow = TRUE,
                  dimnames = list(c("left", "right", "diff", "sum"),
                                  c("bandwidth", "variance", "bias2")))
  structure(list(statistic = r$statistic, p_value = r$p_value,
                 h = c(left = r$h[1], right = r$h[2]),
                 n_effective = c(left = r$n[4], right = r$n[5]),
                 density = c(left = r$f[1], right = r$f[2], diff = r$f[3]),
                 se = c(left = r$se[1], right = r$se[2], diff = r$se[3]),
                 bandwidths = tab, binomial = r$bino,
                 n = c(full = r$n[1], left = r$n[2], right = r$n[3]), n_dropped = sum(miss),
                 c = c, p = p, q = q, kernel = kernel, bwselect = r$bwselect,
                 mass_points = r$mass_points, fitselect = r$fitselect, vce = r$vce),
            class = "rd_density")
}

#' @export
print.rd_density <- function(x, digits = 4, ...) {
  cat("Manipulation test (Cattaneo, Jansson and Ma 2020), cutoff", x$c, "\n")
  cat("  h:", format(x$h, digits = digits), " effective n:", x$n_effective,
      " bwselect:", x$bwselect, "\n")
  if (!is.null(x$fitselect)) cat("  model:", x$fitselect, " vce:", x$vce, "\n")
  cat("  T =", format(x$statistic, digits = digits), " p-value =",
      format(x$p_value, digits = digits), "\n")
  invisible(x)
}
