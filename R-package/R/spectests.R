# Bootstrap significance test of each regressor (np's npsigtest) and the Hsiao-Li-Racine
# consistent specification test of an lm fit (np's npcmstest). The statistics, the null models
# and the bootstrap are in the C++ core (core/include/attnreg/inference/specification_tests.hpp).

.spec_stars <- function(p) {
  as.character(stats::symnum(p, corr = FALSE, na = FALSE, cutpoints = c(0, 0.001, 0.01, 0.05, 0.1, 1),
                      symbols = c("***", "**", "*", ".", " ")))
}

.spec_check_R <- function(R) {
  if (!is.numeric(R) || length(R) != 1L || is.na(R) || R < 19) {
    stop("R: the number of bootstrap replications must be a single number >= 19 (e.g. 399)",
         call. = FALSE)
  }
  as.integer(R)
}

#' Bootstrap significance test of each regressor of a kernel regression
#'
#' Tests \eqn{H_0: m(x)} does not depend on regressor \eqn{j}, as np's `npsigtest` (Racine 1997;
#' Racine, Hart and Li 2006). For a continuous regressor the statistic is the mean squared
#' marginal effect \eqn{\lambda_j = n^{-1}\sum_i (\partial \hat m(x_i)/\partial x_j)^2} (the
#' local-linear slope, or the derivative of the Nadaraya-Watson ratio for `method = "lc"`); for
#' a factor it is \eqn{n^{-1}\sum_i \sum_{l} (\hat m(x_i; x_j = l) - \hat m(x_i; x_j = l_1))^2}
#' over the levels. The null distribution is bootstrapped from the kernel regression without
#' the regressor (same bandwidths; the mean if it is the only one), whose residuals are rescaled
#' by \eqn{\sqrt{n/df_0}} and redrawn wild (`"mammen"`, `"rademacher"`: robust to
#' heteroskedasticity) or iid (np's default). The bandwidths stay fixed (np's Type I). Every
#' statistic is a quadratic form in \eqn{y}, so the replications cost one pass over the pairs
#' per chunk, not a refit each.
#'
#' @param fit A `kreg` fit (single response).
#' @param R Bootstrap replications (>= 19); p-value \eqn{(1 + \#\{\lambda^* \ge \lambda\})/(R+1)}.
#' @param bootstrap `"mammen"`, `"rademacher"` or `"iid"`.
#' @param seed `NULL` (default): seed the core's generator from R's, so `set.seed()` reproduces
#'   the test; or a whole number, used as is (R's generator is not touched).
#' @param vars Regressors to test (names or positions); default all.
#' @param progress Show a text progress bar (on stderr) over the replications of all tested
#'   regressors. Ctrl-C (Esc in the R GUI) stops the test.
#' @return An object of class `kreg_sigtest`: a list with `table` (data frame `variable,
#'   statistic, p.value`), `draws` (R x tested), `null_scale`, `R`, `bootstrap`.
#' @seealso [cmstest()], [kreg()]
#' @examples
#' set.seed(1)
#' d <- data.frame(x1 = runif(200), x2 = runif(200))
#' d$y <- sin(2 * pi * d$x1) + rnorm(200, sd = 0.3)
#' sigtest(kreg(y ~ x1 + x2, data = d, bw = c(0.08, 0.3)), R = 99)
#' @export
sigtest <- function(fit, R = 399L, bootstrap = c("mammen", "rademacher", "iid"), seed = NULL,
                    vars = NULL, progress = FALSE) {
  if (!inherits(fit, "kreg")) stop("fit: must be a kreg fit", call. = FALSE)
  .diag_output(fit)
  bootstrap <- match.arg(bootstrap)
  R <- .spec_check_R(R)
  nm <- fit$spec$names
  cols <- if (is.null(vars)) seq_along(nm) else if (is.character(vars)) {
    bad <- setdiff(vars, nm)
    if (length(bad)) {
      stop("vars: '", bad[1], "' is not a regressor of the fit (", paste(nm, collapse = ", "),
           ")", call. = FALSE)
    }
    match(vars, nm)
  } else {
    if (!is.numeric(vars) || any(vars < 1 | vars > length(nm) | vars != round(vars))) {
      stop("vars: positions must be in 1..", length(nm), call. = FALSE)
    }
    as.integer(vars)
  }
  seed <- .attnreg_seed(seed)
  done <- .attnreg_progress_on(progress)
  on.exit(done(), add = TRUE)
  r <- .kreg_core(.sig_test_cpp(fit$state, R, bootstrap, seed, as.integer(cols)),
                  fit$spec, rename = c(replications = "R"))
  done(TRUE)
  tab <- data.frame(variable = nm[r$columns], statistic = r$statistic, p.value = r$p_value,
                    stringsAsFactors = FALSE)
  draws <- r$draws
  colnames(draws) <- nm[r$columns]
  structure(list(table = tab, draws = draws, null_scale = setNames(r$null_scale, nm[r$columns]),
                 R = r$replications, bootstrap = r$bootstrap, method = fit$method,
                 call = match.call()), class = "kreg_sigtest")
}

#' @export
print.kreg_sigtest <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nKernel regression significance test (Racine, Hart and Li 2006)\n")
  cat("Bootstrap under each null: ", x$bootstrap, ", ", x$R,
      " replications, bandwidths held fixed\n\n", sep = "")
  t <- x$table
  m <- data.frame(statistic = format(signif(t$statistic, digits)),
                  `p-value` = format.pval(t$p.value, digits = digits),
                  ` ` = .spec_stars(t$p.value), check.names = FALSE,
                  row.names = t$variable)
  print(m, quote = FALSE)
  cat("---\nSignif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1\n\n")
  invisible(x)
}

#' Consistent model specification test of a linear model against a kernel regression
#'
#' Is the OLS model misspecified (biased)? The test of Hsiao, Li and Racine (2007), as np's
#' `npcmstest`: with the OLS residuals \eqn{u} and the product kernel \eqn{K_{ij}} over the
#' regressors (numeric and factors),
#' \eqn{J_n = \sqrt{n/(n-1)}\, S_1/\sqrt{2 S_2}}, \eqn{S_1 = \sum_{i\ne j} u_i u_j K_{ij}},
#' \eqn{S_2 = \sum_{i \ne j} u_i^2 u_j^2 K_{ij}^2}; \eqn{J_n} is N(0,1) under a correct model
#' and large otherwise (one-sided). The p-value is from the wild bootstrap
#' \eqn{y^* = Z\hat\beta + u v}, whose OLS residuals are \eqn{M(uv)} (no refit). Bandwidths are
#' given or chosen by least-squares cross-validation of the kernel regression of \eqn{y} on the
#' regressors (as np, through `npregbw`). A selected bandwidth is selected again on every
#' bootstrap sample when `reselect = TRUE` (by default when n <= 500), so that the bootstrap
#' replicates the whole procedure; holding it fixed, as np does, makes the test oversized in
#' small samples (about 0.09-0.10 instead of 0.05 at n = 100). \eqn{J_n} follows the published
#' normalisation \eqn{1/(n(n-1))}; np's `npcmstest` uses \eqn{1/n^2}, so its `Jn` is this one
#' times \eqn{\sqrt{(n-1)/n}} (the bootstrap p-values agree).
#'
#' @param model An `lm` fit (without weights); its model matrix is the parametric design.
#' @param data Optional data frame with the kernel regressors (one row per observation used by
#'   `model`); default the regressors of `model`'s formula (matrix terms such as `poly(x, 2)`
#'   are reduced to their variables).
#' @param bw Bandwidths (one per kernel regressor); default `"cv.ls"`.
#' @param method Degree of the cv.ls search: `"lc"` (np's default) or `"ll"`.
#' @param kernel Continuous kernel.
#' @param R Bootstrap replications (>= 19).
#' @param bootstrap `"mammen"`, `"rademacher"` or `"iid"`.
#' @param seed `NULL` (default): seed the core's generator from R's, so `set.seed()` reproduces
#'   the test; or a whole number, used as is (R's generator is not touched).
#' @param progress Show a text progress bar (on stderr) over the bootstrap replications.
#' @param ukertype,okertype Kernels of unordered and ordered factors.
#' @param n_threads Threads (0 = all).
#' @param reselect Select the bandwidths again on each bootstrap sample (`TRUE`), hold them
#'   fixed (`FALSE`, as np), or `NA`: re-select when n <= 500. Ignored when `bw` is given.
#' @return An object of class `kreg_cmstest`: `statistic` (\eqn{J_n}), `p.value`,
#'   `asymptotic.p.value`, `In`, `bw`, `bw_method`, `draws`, `R`, `bootstrap`.
#' @seealso [sigtest()], [ols_attention()]
#' @examples
#' set.seed(1)
#' d <- data.frame(x = runif(200, -1, 1))
#' d$y <- 1 + d$x + d$x^2 + rnorm(200, sd = 0.3)
#' cmstest(lm(y ~ x, data = d), R = 99)
#' @export
cmstest <- function(model, data = NULL, bw = "cv.ls", method = c("lc", "ll"),
                    kernel = "gaussian", R = 399L, bootstrap = c("mammen", "rademacher", "iid"),
                    seed = NULL, ukertype = "aitchisonaitken", okertype = "liracine",
                    n_threads = 0L, reselect = NA, progress = FALSE) {
  if (!is.logical(reselect) || length(reselect) != 1L) {
    stop("reselect: must be TRUE, FALSE or NA (automatic)", call. = FALSE)
  }
  if (!inherits(model, "lm") || inherits(model, "glm")) {
    stop("model: must be an lm fit (e.g. lm(y ~ x, data = d))", call. = FALSE)
  }
  if (!is.null(model$weights)) {
    stop("model: weighted lm fits are not supported; refit without weights", call. = FALSE)
  }
  method <- match.arg(method)
  bootstrap <- match.arg(bootstrap)
  R <- .spec_check_R(R)
  mf <- stats::model.frame(model)
  y <- stats::model.response(mf, "numeric")
  if (is.null(y) || is.matrix(y)) stop("model: needs a single numeric response", call. = FALSE)
  Z <- stats::model.matrix(model)
  if (is.null(data)) {
    vars <- all.vars(stats::delete.response(stats::terms(model)))
    env <- environment(stats::formula(model))
    src <- if (!is.null(model$call$data)) eval(model$call$data, env) else NULL
    frame <- lapply(vars, function(v) {
      if (!is.null(src) && v %in% names(src)) src[[v]] else get(v, envir = env)
    })
    names(frame) <- vars
    frame <- as.data.frame(frame, stringsAsFactors = TRUE)
    if (!is.null(model$na.action)) frame <- frame[-as.integer(model$na.action), , drop = FALSE]
  } else {
    frame <- as.data.frame(data, stringsAsFactors = TRUE)
  }
  if (nrow(frame) != length(y)) {
    stop("data: has ", nrow(frame), " rows but the model was fitted on ", length(y),
         " observations; give one row per observation used by the model", call. = FALSE)
  }
  fr <- stats::model.frame(stats::as.formula(paste("~", paste(sprintf("`%s`", names(frame)),
                                                              collapse = " + "))), frame,
                           na.action = stats::na.fail)
  spec <- .kreg_spec(fr)
  X <- .kreg_encode(spec, fr)
  bwv <- if (is.character(bw) && length(bw) == 1L && tolower(gsub("_", ".", bw)) == "cv.ls") {
    numeric(0)
  } else {
    if (!is.numeric(bw) || length(bw) != ncol(X)) {
      stop("bw: give \"cv.ls\" or one bandwidth per kernel regressor (", ncol(X), ": ",
           paste(spec$names, collapse = ", "), ")", call. = FALSE)
    }
    as.double(bw)
  }
  seed <- .attnreg_seed(seed)
  done <- .attnreg_progress_on(progress)
  on.exit(done(), add = TRUE)
  r <- .kreg_core(.cms_test_cpp(unname(Z), as.double(y), X, spec$types, kernel, ukertype,
                                okertype, bwv, if (method == "ll") 1L else 0L, R, bootstrap,
                                seed, as.integer(n_threads),
                                if (is.na(reselect)) -1L else as.integer(reselect)),
                  spec, rename = c(replications = "R", Z = "model (design)"))
  done(TRUE)
  structure(list(statistic = c(Jn = r$statistic), p.value = r$p_value,
                 asymptotic.p.value = r$asymptotic_p_value, In = r$I_n,
                 bw = setNames(r$bandwidth, spec$names), bw_method = r$bandwidth_method,
                 draws = r$draws, R = r$replications, bootstrap = r$bootstrap,
                 reselected = r$reselected,
                 rank = r$rank, call = match.call()), class = "kreg_cmstest")
}

#' @export
print.kreg_cmstest <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nConsistent model specification test (Hsiao, Li and Racine 2007)\n")
  cat("H0: the linear model is correctly specified\n")
  cat("Kernel bandwidth(s) (", x$bw_method, "): ",
      paste(names(x$bw), format(signif(x$bw, digits)), sep = " = ", collapse = ", "), "\n",
      sep = "")
  cat("Bootstrap: ", x$bootstrap, ", ", x$R, " replications, bandwidths ",
      if (isTRUE(x$reselected)) "re-selected by cv.ls on each bootstrap sample" else "held fixed",
      "\n\n", sep = "")
  cat("Jn = ", format(signif(x$statistic, digits)), ", bootstrap p-value = ",
      format.pval(x$p.value, digits = digits), " ", .spec_stars(x$p.value),
      "  (asymptotic N(0,1) p-value = ", format.pval(x$asymptotic.p.value, digits = digits),
      ")\n", sep = "")
  cat("---\nSignif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1\n\n")
  invisible(x)
}
