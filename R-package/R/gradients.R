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
#'   `ci_lower`, `ci_upper`, one row per regressor) instead of the matrix.
#' @param level Confidence level of the normal intervals (with `average = TRUE`).
#' @param ... Unused.
#' @return A matrix, one row per observation (or row of `newdata`) and one column per
#'   regressor; or, with `average = TRUE`, a data frame.
#' @seealso [kreg()], [predict.kreg()].
#' @examples
#' fit <- kreg(mpg ~ wt + factor(am), data = mtcars, bw = c(0.6, 0.2), gradients = TRUE)
#' head(gradients(fit))
#' head(gradients(fit, se = TRUE))
#' gradients(fit, average = TRUE)
#' @export
gradients <- function(x, ...) UseMethod("gradients")

#' @rdname gradients
#' @export
gradients.kreg <- function(x, se = FALSE, newdata = NULL,
                           se_method = c("asymptotic", "bootstrap", "np"), R = 399L,
                           seed = 0L, average = FALSE, level = 0.95, ..., n_boot) {
  if (!missing(n_boot)) R <- .renamed_arg("gradients", "n_boot", "R", n_boot, missing(R))
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
