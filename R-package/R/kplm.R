#' Partially linear kernel regression (Robinson's double residual)
#'
#' Fits \eqn{y = X'\beta + g(Z) + e} as `np::npplreg` does, by Robinson's (1988,
#' Econometrica 56(4), 931-954) double residual: the conditional means \eqn{E[y|Z]} and
#' \eqn{E[X_j|Z]} are kernel regressions on \eqn{Z}, each with its own bandwidths (by default
#' local constant with least-squares cross-validated bandwidths per conditional mean, np's
#' defaults), and \eqn{\beta} is the least-squares slope (no intercept: a constant belongs to
#' \eqn{g}) of \eqn{y - E[y|Z]} on \eqn{X - E[X|Z]}. Fitted values and predictions are
#' \eqn{E[y|z] + (x - E[X|z])'\beta}.
#'
#' @param formula `y ~ x1 + x2 | z1 + z2`: the linear part left of `|` (factors enter as
#'   treatment dummies, as in [stats::lm()]), the nonparametric part right of it (numeric:
#'   continuous; factors: categorical kernels). A variable must not appear on both sides.
#' @param data A data frame.
#' @param subset,na.action As in [stats::lm()].
#' @param bw `"cv.ls"` (default), `"cv.aic"`, `"gcv"` or `"rot"` for every conditional mean, or a
#'   matrix of bandwidths with one row per conditional mean (\eqn{E[y|Z]}, then \eqn{E[X_j|Z]})
#'   and one column per variable of \eqn{Z}.
#' @param regtype `"lc"` (local constant, np's default) or `"ll"` (local linear) conditional
#'   means.
#' @param kernel,ukertype,okertype Kernels over \eqn{Z}, as in [kreg()].
#' @param vcov Standard errors: `"HC3"` (default), `"HC0"`, `"HC1"`, `"HC2"` (White's sandwich
#'   on the residual regression) or `"nonrobust"` (`npplreg`'s \eqn{\sigma^2 (e_X'e_X)^{-1}},
#'   \eqn{\sigma^2 = RSS/(n - k - d_Z)}).
#' @param n_threads Threads for the core (0 = OpenMP default).
#' @param ... Unused.
#' @return An object of class `kplm` with `coefficients`, `vcov` (all five estimators in
#'   `vcov_all`), `bw` (matrix), `objective`, `fitted.values`, `residuals`, `sigma2`,
#'   `r.squared` (`npplreg`'s: the squared correlation of y and the fitted values, both centred
#'   at the mean of y); methods `print`, `summary`, `coef`, `vcov`, `predict`, `fitted`, `residuals`,
#'   `nobs`.
#' @examples
#' d <- read.csv(system.file("extdata", "wage1.csv", package = "attnreg"))
#' fit <- kplm(lwage ~ factor(female) + factor(married) + educ + tenure | exper, data = d)
#' summary(fit)
#' @export
kplm <- function(formula, data, subset, na.action, bw = "cv.ls", regtype = c("lc", "ll"),
                 kernel = "gaussian", ukertype = "aitchisonaitken", okertype = "liracine",
                 vcov = c("HC3", "HC0", "HC1", "HC2", "nonrobust"), n_threads = 0L, ...) {
  cl <- match.call()
  regtype <- match.arg(regtype)
  vcov <- match.arg(vcov)
  parts <- .bar_formula(formula)
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("data", "subset", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$formula <- parts$all
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  y <- model.response(mf)
  if (!is.numeric(y)) stop("formula: the response must be numeric", call. = FALSE)
  xt <- terms(parts$x, data = data)
  X <- model.matrix(xt, mf)
  X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  if (!ncol(X)) stop("formula: needs at least one linear regressor left of '|'", call. = FALSE)
  zspec <- .kreg_spec(model.frame(parts$z, mf))
  Z <- .kreg_encode(zspec, mf)
  shared <- intersect(all.vars(parts$x), all.vars(parts$z))
  if (length(shared)) {
    stop("formula: '", shared[1], "' is on both sides of '|'; a regressor is either linear ",
         "(left) or nonparametric (right), not both", call. = FALSE)
  }
  k <- ncol(X)
  bwm <- matrix(numeric(0), 0, 0)
  method <- "cv_ls"
  if (is.character(bw)) {
    if (length(bw) != 1L || !bw %in% c("cv.ls", "cv.aic", "gcv", "rot")) {
      stop("bw: must be a matrix of bandwidths or one of \"cv.ls\", \"cv.aic\", \"gcv\", \"rot\"",
           call. = FALSE)
    }
    method <- bw
  } else {
    bwm <- as.matrix(bw)
    if (!is.numeric(bwm) || nrow(bwm) != k + 1L || ncol(bwm) != ncol(Z)) {
      stop("bw: needs one row per conditional mean (", k + 1L, ": y, then each linear ",
           "regressor) and one column per nonparametric regressor (", ncol(Z), ")",
           call. = FALSE)
    }
    storage.mode(bwm) <- "double"
  }
  r <- .kreg_core(.kplm_fit_cpp(X, as.double(y), Z, bwm, if (regtype == "ll") 1L else 0L,
                                method, kernel, zspec$types, ukertype, okertype,
                                as.integer(n_threads)), zspec, c(Z = "data (Z)"))
  lab <- c(deparse(parts$y), colnames(X))
  for (i in seq_along(r$selection)) {
    .sel_boundary_warning(r$selection[[i]], zspec$names,
                          sprintf("kplm: E[%s | Z] (bw = \"%s\")", lab[i], method))
  }
  b <- setNames(r$coefficients, colnames(X))
  vc <- lapply(r$vcov, function(V) {
    V <- as.matrix(V)
    dimnames(V) <- list(colnames(X), colnames(X))
    V
  })
  bwout <- as.matrix(r$bw)
  dimnames(bwout) <- list(c(deparse(parts$y), colnames(X)), zspec$names)
  rn <- rownames(mf)
  fitted <- setNames(r$fitted, rn)
  structure(list(
    coefficients = b, vcov = vc[[vcov]], vcov_type = vcov, vcov_all = vc, bw = bwout,
    objective = setNames(r$objective, rownames(bwout)), bwmethod = if (is.character(bw)) bw else "fixed",
    fitted.values = fitted, residuals = setNames(as.double(y) - r$fitted, rn),
    sigma2 = r$sigma2, r.squared = r$r_squared, nobs = length(y), regtype = regtype,
    kernel = kernel, ukertype = ukertype, okertype = okertype, n_threads = n_threads,
    X = X, y = as.double(y), Z = Z, zspec = zspec, xterms = delete.response(xt),
    xlevels = .getXlevels(xt, mf), call = cl, na.action = attr(mf, "na.action"),
    selection = r$selection
  ), class = "kplm")
}

# y ~ x | z  ->  list(y, x = ~ x, z = ~ z, all = y ~ x + z).
.bar_formula <- function(formula) {
  if (!inherits(formula, "formula") || length(formula) != 3L) {
    stop("formula: must be y ~ x | z (linear | nonparametric)", call. = FALSE)
  }
  rhs <- formula[[3]]
  if (!is.call(rhs) || !identical(rhs[[1]], as.name("|"))) {
    stop("formula: must be y ~ x | z: the linear regressors left of '|', the smoothing ",
         "variables right of it", call. = FALSE)
  }
  env <- environment(formula)
  mk <- function(...) {
    f <- eval(as.call(c(as.name("~"), list(...))))
    environment(f) <- env
    f
  }
  list(y = formula[[2]], x = mk(formula[[2]], rhs[[2]]), z = mk(rhs[[3]]),
       all = mk(formula[[2]], call("+", rhs[[2]], rhs[[3]])))
}

#' @export
coef.kplm <- function(object, ...) object$coefficients

#' @export
vcov.kplm <- function(object, vcov = NULL, ..., type) {
  if (!missing(type)) vcov <- .renamed_arg("vcov", "type", "vcov", type, missing(vcov))
  if (is.null(vcov)) return(object$vcov)
  if (!vcov %in% names(object$vcov_all)) {
    stop("vcov: one of ", paste(names(object$vcov_all), collapse = ", "), call. = FALSE)
  }
  object$vcov_all[[vcov]]
}

#' @export
fitted.kplm <- function(object, ...) object$fitted.values

#' @export
residuals.kplm <- function(object, ...) object$residuals

#' @export
nobs.kplm <- function(object, ...) object$nobs

#' @export
print.kplm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Partially linear model (Robinson 1988),", if (x$regtype == "ll") "local linear" else
        "local constant", "conditional means,", x$kernel, "kernel\n")
  cat("n =", x$nobs, "\n\nCoefficients:\n")
  print(format(x$coefficients, digits = digits), quote = FALSE)
  cat("\nBandwidths (rows: conditional mean; columns: Z):\n")
  print(signif(x$bw, digits))
  invisible(x)
}

#' @export
summary.kplm <- function(object, vcov = NULL, ...) {
  V <- vcov.kplm(object, vcov)
  se <- sqrt(diag(V))
  est <- object$coefficients
  df <- object$nobs - length(est) - ncol(object$bw)
  tv <- est / se
  tab <- cbind(Estimate = est, `Std. Error` = se, `t value` = tv,
               `Pr(>|t|)` = 2 * pt(abs(tv), df, lower.tail = FALSE))
  structure(list(coefficients = tab, df = df, sigma = sqrt(object$sigma2),
                 r.squared = object$r.squared, bw = object$bw,
                 vcov_type = if (is.null(vcov)) object$vcov_type else vcov, call = object$call,
                 regtype = object$regtype, kernel = object$kernel, nobs = object$nobs),
            class = "summary.kplm")
}

#' @export
print.summary.kplm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  cat("Partially linear model (Robinson 1988 double residual):",
      if (x$regtype == "ll") "local linear" else "local constant", "conditional means,",
      x$kernel, "kernel\n\n")
  cat("Coefficients (standard errors: ", x$vcov_type, "):\n", sep = "")
  printCoefmat(x$coefficients, digits = digits)
  cat("\nBandwidths (rows: conditional mean; columns: Z):\n")
  print(signif(x$bw, digits))
  cat("\nResidual standard error:", format(signif(x$sigma, digits)), "on", x$df,
      "degrees of freedom\nR-squared:", format(signif(x$r.squared, digits)), "\n")
  invisible(x)
}

#' Predictions of a partially linear model
#'
#' @param object A `kplm` fit.
#' @param newdata A data frame with the variables of both parts; `NULL` for the fitted values.
#' @param ... Unused.
#' @return \eqn{E[y|z] + (x - E[X|z])'\beta} at the rows of `newdata`.
#' @export
predict.kplm <- function(object, newdata = NULL, ...) {
  if (is.null(newdata)) return(fitted(object))
  .check_newdata(object$xterms, newdata)
  mfx <- model.frame(object$xterms, newdata, xlev = object$xlevels)
  Xn <- model.matrix(object$xterms, mfx)
  Xn <- Xn[, colnames(Xn) != "(Intercept)", drop = FALSE]
  Zn <- .kreg_encode(object$zspec, newdata, "newdata")
  .kreg_core(.kplm_predict_cpp(object$X, object$y, object$Z, object$bw,
                               if (object$regtype == "ll") 1L else 0L, object$kernel,
                               object$zspec$types, object$ukertype, object$okertype,
                               as.integer(object$n_threads), Xn, Zn), object$zspec)
}

# A selected bandwidth on the edge of its search box: say which variable, value and end.
.sel_boundary_warning <- function(sel, names, who) {
  j <- which(sel$at_bound != 0L)
  if (!length(j)) return(invisible())
  msg <- vapply(j, function(k) sprintf("'%s' (%s) at the %s end", names[k],
                                       format(signif(sel$bw[k], 4)),
                                       if (sel$at_bound[k] < 0) "lower" else "upper"),
                character(1))
  warning(who, ": the selected bandwidth sits on the edge of its search box for ",
          paste(msg, collapse = ", "), "; the criterion still falls beyond it (pass a ",
          "bandwidth by hand, or check the variable)", call. = FALSE)
}
