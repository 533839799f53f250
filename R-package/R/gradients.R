#' Marginal effects (gradients) of a kernel regression, with standard errors
#'
#' `gradients()` extracts the marginal effects of a [kreg()] fit, as R np's `gradients()` does
#' for `npreg`: for a continuous regressor \eqn{\partial m / \partial x_j} (local constant: the
#' analytic derivative of the fit; local linear: the local slope), for a factor the difference
#' between levels as np's `npreg` reports it: unordered, \eqn{m(x)} minus \eqn{m} at \eqn{x}
#' with the factor set to its first level (0 there); ordered, against the previous level (at
#' the first level the forward difference to the second). `kreg(..., gradients = TRUE)` computes them (and their
#' standard errors) at the observations when fitting, as `npreg(gradients = TRUE)`.
#'
#' Every effect is linear in the responses, \eqn{\sum_i g_i(x) y_i}. Standard errors hold the
#' bandwidth fixed: `se_method = "asymptotic"` is the linear-smoother (sandwich) variance
#' \eqn{\sum_i g_i(x)^2 e_i^2} with the fit's residuals (heteroskedasticity-consistent);
#' `"bootstrap"` the wild bootstrap with Mammen's (1993) two-point weights, `R`
#' replications reproducible from `seed`; `"np"` (local constant only) np 0.70-4's `gerr`
#' (its C source, `src/jksum.c`): with the local variance \eqn{s^2(x)}, \eqn{S(x) = \sum_i K_i},
#' \eqn{R = \int K^2}, \eqn{C = \int K(z - 1/2) K(z + 1/2) dz} and \eqn{d_c} continuous
#' columns, \eqn{merr^2 = s^2(x) R^{d_c} / S(x)}; a continuous column:
#' \eqn{\sqrt{2 (R - C) / R}\, merr / h_j} (the variance of a central difference with step
#' \eqn{h_j}); a factor: \eqn{\sqrt{merr^2 + s^2(x') R^{d_c} / S(x')}} at the comparison point. `average = TRUE` gives the average marginal effects
#' over the rows, whose standard errors use the averaged weights
#' \eqn{\sqrt{\sum_i (\bar g_i)^2 e_i^2}} and so account for the correlation of the rows'
#' estimates.
#'
#' @param x A [kreg()] fit (single response).
#' @param se `FALSE`: the effects; `TRUE`: their standard errors (as np's `gradients(x, se =
#'   TRUE)`).
#' @param newdata Optional data frame of regressors; default the observations.
#' @param se_method `"asymptotic"`, `"bootstrap"` or `"np"` (R np's `gerr` formula,
#'   local constant fits only; see Details).
#' @param R,seed Bootstrap replications and seed.
#' @param n_boot Deprecated name of `R` (a warning; removed in the next release).
#' @param average `TRUE`: a data frame of average marginal effects (`estimate`, `std_error`,
#'   `ci_lower`, `ci_upper`, one row per regressor) instead of the matrix. With `interval =
#'   "rbc"`: the average over the rows of the continuous regressors' effects (the sample
#'   average of the derivative, conditional on the regressors) with conventional and RBC
#'   intervals from the averaged weights; their standard errors use one residual per
#'   observation, the fit's (and the pilot's) at the observation's own point, scaled by `vcov`
#'   (with `"HC0"` the conventional one equals `average = TRUE` without `interval`). Level
#'   differences of factors with RBC intervals: [level_difference()].
#' @param level Confidence level of the intervals, a fraction in (0, 1) (with `average =
#'   TRUE` or `interval = "rbc"`).
#' @param interval `"none"` (the default: the matrix of effects or standard errors) or
#'   `"rbc"`: a data frame of the effects of every continuous regressor at every row with
#'   conventional and robust bias-corrected intervals (Calonico, Cattaneo and Farrell 2018,
#'   JASA 113(522)), for local polynomial fits of degree >= 1 (`method = "ll"` or `degree`
#'   1-3, `ridge = 0`). The derivative of order `order` is a local coefficient, linear in
#'   \eqn{y}; its bias comes from a pilot local polynomial of degree `pilot_degree` (default
#'   \eqn{p + 1} when \eqn{p - order} is odd, \eqn{p + 2} when even: the local linear slope's
#'   interior bias involves the second and the third derivatives at the same order, Fan and
#'   Gijbels 1996, Thm 3.1; all squares and cross products with several regressors), and the
#'   standard error of the bias-corrected estimate includes the pilot's variability. With one
#'   regressor and `pilot_degree = degree + 1` this is nprobust's `lprobust(deriv = order)` at
#'   fixed `h` and `b`. Formulas: `core/include/attnreg/inference/rbc_marginal_effects.hpp`.
#' @param vcov With `interval = "rbc"`: `"HC3"`, `"HC2"`, `"HC1"`, `"HC0"` (residuals of the
#'   local fit, and of the pilot for the bias-corrected estimate, in each point's kernel
#'   window, as nprobust) or `"nn"` (nearest-neighbour residuals; one continuous regressor).
#' @param order,pilot_degree,pilot_bw With `interval = "rbc"`: the derivative order (1 to the
#'   degree), the pilot's degree and bandwidths (default the fit's; with several regressors one
#'   per regressor).
#' @param ... Unused.
#' @return A matrix, one row per observation (or row of `newdata`) and one column per
#'   regressor; or, with `average = TRUE`, a data frame; with `interval = "rbc"` a data frame
#'   with columns `row`, `regressor`, `estimate`, `std_error`, `ci_lower`, `ci_upper`, `bias`,
#'   `estimate_bc`, `std_error_bc`, `rbc_lower`, `rbc_upper`.
#' @seealso [kreg()], [predict.kreg()], [level_difference()].
#' @examples
#' fit <- kreg(mpg ~ wt + factor(am), data = mtcars, bw = c(0.6, 0.2), gradients = TRUE)
#' head(gradients(fit))
#' head(gradients(fit, se = TRUE))
#' gradients(fit, average = TRUE)
#' ll <- kreg(mpg ~ wt, data = mtcars, method = "ll", bw = 1, kernel = "epanechnikov")
#' gradients(ll, newdata = data.frame(wt = c(2.5, 3.5)), interval = "rbc")
#' ll2 <- kreg(mpg ~ wt, data = mtcars, method = "ll", bw = 1.5, kernel = "epanechnikov")
#' gradients(ll2, average = TRUE, interval = "rbc")  # every row: a wider window at the edges
#' @export
gradients <- function(x, ...) UseMethod("gradients")

#' @rdname gradients
#' @export
gradients.kreg <- function(x, se = FALSE, newdata = NULL,
                           se_method = c("asymptotic", "bootstrap", "np"), R = 399L,
                           seed = 0L, average = FALSE, level = 0.95,
                           interval = c("none", "rbc"), vcov = "HC3", order = 1L,
                           pilot_degree = NULL, pilot_bw = NULL, ..., n_boot) {
  if (!missing(n_boot)) R <- .renamed_arg("gradients", "n_boot", "R", n_boot, missing(R))
  interval <- match.arg(interval)
  if (interval == "rbc") {
    if (!missing(se_method)) {
      stop("interval: \"rbc\" uses the variance of vcov; leave se_method at its default",
           call. = FALSE)
    }
    return(.kreg_rbc_gradients(x, newdata, level, vcov, order, pilot_degree, pilot_bw,
                               isTRUE(average)))
  }
  se_method <- match.arg(se_method)
  if (!is.logical(se) || length(se) != 1L || is.na(se)) {
    stop("se: must be TRUE or FALSE", call. = FALSE)
  }
  if (!is.numeric(level) || length(level) != 1L || !(level > 0 && level < 1)) {
    stop("level: must be a single number in (0, 1)", call. = FALSE)
  }
  if (is.null(newdata) && !isTRUE(average) && se_method == "asymptotic" &&
      !is.null(x$grad)) {
    return(if (se) x$gerr else x$grad)
  }
  X <- if (is.null(newdata)) x$state$X else .kreg_newx(x, newdata)
  rn <- if (is.null(newdata)) names(x$residuals) else rownames(newdata)
  r <- .kreg_gradients(x, X, se_method, R, seed, isTRUE(average))
  if (isTRUE(average)) {
    z <- stats::qnorm(0.5 + level / 2)
    return(data.frame(estimate = r$average, std_error = r$average_se,
                      ci_lower = r$average - z * r$average_se,
                      ci_upper = r$average + z * r$average_se,
                      row.names = names(x$bw)))
  }
  out <- if (se) r$se else r$gradient
  dimnames(out) <- list(rn, names(x$bw))
  out
}

# The core's marginal effects at the rows of X (encoded regressors).
.kreg_gradients <- function(fit, X, se_method = "asymptotic", n_boot = 399L, seed = 0L,
                            average = FALSE) {
  if (NCOL(fit$y) != 1L) {
    stop("gradients: need a single response (fit one model per response)", call. = FALSE)
  }
  if (!is.numeric(n_boot) || length(n_boot) != 1L) {
    stop("R: must be a single integer >= 2", call. = FALSE)
  }
  if (!is.numeric(seed) || length(seed) != 1L || seed < 0) {
    stop("seed: must be a single non-negative number", call. = FALSE)
  }
  .kreg_core(.kreg_gradient_cpp(fit$state, X, se_method, as.integer(n_boot), as.double(seed),
                                average, as.integer(fit$state$n_threads)),
             fit$spec, rename = c(se_method = "se_method", se = "se_method", X = "newdata", n_boot = "R"))
}

# gradients(interval = "rbc"): the core's rbc_gradient as a long data frame.
.kreg_rbc_gradients <- function(fit, newdata, level, vcov, order, pilot_degree, pilot_bw,
                                average = FALSE) {
  .rbc_check_args(fit, level, pilot_degree)
  if (!is.numeric(order) || length(order) != 1L || is.na(order) || order != round(order)) {
    stop("order: must be an integer between 1 and the degree", call. = FALSE)
  }
  X <- if (is.null(newdata)) fit$state$X else .kreg_newx(fit, newdata)
  pb <- .rbc_pilot_bw(pilot_bw, ncol(X))
  pd <- if (is.null(pilot_degree)) -1L else as.integer(pilot_degree)
  r <- .kreg_core(.kreg_rbc_gradient_cpp(fit$state, X, .diag_kind(vcov), as.double(level),
                                         as.integer(order), pd, pb, average),
                  fit$spec, rename = c(cov_type = "vcov", pilot_bandwidth = "pilot_bw"))
  if (average) {
    return(.rbc_frame(r, names(fit$bw)[r$columns], NULL))
  }
  rn <- if (is.null(newdata)) names(fit$residuals) else rownames(newdata)
  if (is.null(rn)) rn <- as.character(seq_len(nrow(X)))
  nm <- names(fit$bw)[r$columns]
  k <- length(nm)
  long <- function(M) as.vector(t(M))
  est <- long(r$estimate); se <- long(r$se); bc <- long(r$estimate_bc); sebc <- long(r$se_bc)
  out <- data.frame(row = rep(rn, each = k), regressor = rep(nm, times = nrow(X)),
                    estimate = est, std_error = se, ci_lower = est - r$z * se,
                    ci_upper = est + r$z * se, bias = long(r$bias), estimate_bc = bc,
                    std_error_bc = sebc, rbc_lower = bc - r$z * sebc,
                    rbc_upper = bc + r$z * sebc, stringsAsFactors = FALSE)
  attr(out, "pilot_degree") <- r$pilot_degree
  out
}

# Shared argument checks of the RBC faces.
.rbc_check_args <- function(fit, level, pilot_degree) {
  if (NCOL(fit$y) != 1L) {
    stop("gradients: need a single response (fit one model per response)", call. = FALSE)
  }
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || !(level > 0 && level < 1)) {
    stop("level: must be in (0, 1) (level is a fraction: 0.95 for a 95% interval)",
         call. = FALSE)
  }
  if (!is.null(pilot_degree) && (!is.numeric(pilot_degree) || length(pilot_degree) != 1L ||
                                 is.na(pilot_degree) || pilot_degree != round(pilot_degree))) {
    stop("pilot_degree: must be a single integer", call. = FALSE)
  }
  invisible()
}

.rbc_pilot_bw <- function(pilot_bw, d) {
  if (is.null(pilot_bw)) return(numeric(0))
  if (!is.numeric(pilot_bw) || anyNA(pilot_bw) || any(!is.finite(pilot_bw)) ||
      any(pilot_bw <= 0)) {
    stop("pilot_bw: must be positive numbers", call. = FALSE)
  }
  if (length(pilot_bw) != d) {
    stop("pilot_bw: needs one value per regressor (", d, "), got ", length(pilot_bw),
         call. = FALSE)
  }
  as.double(pilot_bw)
}

# One row per entry of the core's (1 x k or m x 1) RBC result, labelled.
.rbc_frame <- function(r, labels, rows) {
  est <- as.vector(r$estimate); se <- as.vector(r$se)
  bc <- as.vector(r$estimate_bc); sebc <- as.vector(r$se_bc)
  out <- data.frame(estimate = est, std_error = se, ci_lower = est - r$z * se,
                    ci_upper = est + r$z * se, bias = as.vector(r$bias), estimate_bc = bc,
                    std_error_bc = sebc, rbc_lower = bc - r$z * sebc,
                    rbc_upper = bc + r$z * sebc, row.names = labels)
  if (!is.null(rows)) out <- cbind(data.frame(row = rows, stringsAsFactors = FALSE), out)
  attr(out, "pilot_degree") <- r$pilot_degree
  out
}

#' Differences of a kernel regression between two levels of a factor, with RBC intervals
#'
#' `level_difference()` estimates \eqn{m(x, b) - m(x, a)}: the fit with the factor
#' `regressor` set to level `b` minus the fit with it set to level `a`, at the other
#' regressors of each row, and (with `average = TRUE`, the default) its average over the rows:
#' the sample average of the difference, conditional on the regressors. Each fit of the level is
#' the intercept of the local polynomial, linear in \eqn{y}; its bias is estimated from a
#' pilot local polynomial of degree `pilot_degree` in the continuous regressors (default
#' \eqn{p + 1} for an odd degree \eqn{p}, \eqn{p + 2} for an even one; Fan and Gijbels 1996,
#' Thm 3.1), so the bias-corrected difference is linear in \eqn{y} too and its standard error
#' includes the pilot's variability (robust bias correction, Calonico, Cattaneo and Farrell
#' 2018, JASA 113(522)). Standard errors use one residual per observation: that of the fit
#' (for the bias-corrected estimate: of the pilot) at the observation's own point, scaled by
#' `vcov`. Formulas: `core/include/attnreg/inference/rbc_marginal_effects.hpp`.
#'
#' @param x A [kreg()] fit (single response, `ridge = 0`) with at least one continuous
#'   regressor.
#' @param regressor The factor's name, as in `names(x$bw)`.
#' @param levels Two levels of the factor, `c(a, b)`: the result is \eqn{m(b) - m(a)}.
#' @param newdata Optional data frame; default the observations.
#' @param average `TRUE`: the average over the rows (one row); `FALSE`: one row per row.
#' @param level Confidence level, a fraction in (0, 1).
#' @param vcov `"HC3"`, `"HC2"`, `"HC1"` or `"HC0"`.
#' @param pilot_degree,pilot_bw The pilot's degree and bandwidths (default the fit's).
#' @return A data frame with columns `estimate`, `std_error`, `ci_lower`, `ci_upper`, `bias`,
#'   `estimate_bc`, `std_error_bc`, `rbc_lower`, `rbc_upper` (and `row` when `average =
#'   FALSE`).
#' @seealso [gradients()], [kreg()].
#' @examples
#' fit <- kreg(mpg ~ wt + factor(am), data = mtcars, bw = c(0.8, 0.2), method = "ll",
#'             kernel = "epanechnikov")
#' level_difference(fit, "factor(am)", c("0", "1"))
#' @export
level_difference <- function(x, regressor, levels, newdata = NULL, average = TRUE,
                             level = 0.95, vcov = "HC3", pilot_degree = NULL,
                             pilot_bw = NULL) {
  .rbc_check_args(x, level, pilot_degree)
  nm <- names(x$bw)
  if (!is.character(regressor) || length(regressor) != 1L || !(regressor %in% nm)) {
    stop("regressor: must be one of the regressors' names (", paste(nm, collapse = ", "), ")",
         call. = FALSE)
  }
  j <- match(regressor, nm)
  lv <- x$spec$levels[[regressor]]
  if (is.null(lv)) {
    stop("regressor: '", regressor, "' is continuous; level differences are for factors ",
         "(use gradients() for a continuous regressor)", call. = FALSE)
  }
  if (length(levels) != 2L) {
    stop("levels: two levels of '", regressor, "', c(a, b), got ", length(levels), call. = FALSE)
  }
  code <- match(as.character(levels), lv)
  if (anyNA(code)) {
    stop("levels: '", as.character(levels)[is.na(code)][1], "' is not a level of '", regressor,
         "' (levels: ", paste(utils::head(lv, 10), collapse = ", "), ")", call. = FALSE)
  }
  X <- if (is.null(newdata)) x$state$X else .kreg_newx(x, newdata)
  pb <- .rbc_pilot_bw(pilot_bw, ncol(X))
  pd <- if (is.null(pilot_degree)) -1L else as.integer(pilot_degree)
  r <- .kreg_core(.kreg_rbc_level_difference_cpp(x$state, X, j - 1L, code[1] - 1, code[2] - 1,
                                                 isTRUE(average), .diag_kind(vcov),
                                                 as.double(level), pd, pb),
                  x$spec, rename = c(cov_type = "vcov", pilot_bandwidth = "pilot_bw",
                                     X = "newdata"))
  label <- paste0(regressor, ": ", levels[2], " - ", levels[1])
  if (isTRUE(average)) return(.rbc_frame(r, label, NULL))
  rn <- if (is.null(newdata)) names(x$residuals) else rownames(newdata)
  if (is.null(rn)) rn <- as.character(seq_len(nrow(X)))
  .rbc_frame(r, NULL, rn)
}
