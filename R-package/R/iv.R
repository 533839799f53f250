# Instrumental variables: iv_attention(y ~ x2 | fe | x1 ~ z, data).
# The estimation is the core's (attnreg::IVRegression, core/include/attnreg/least_squares/iv.hpp
# states every formula and its source); this file parses the formula, codes the factors and
# formats the results. The object keeps its data and every core call refits (deterministic), so
# saveRDS()/readRDS() round trips work.

# y ~ exog | fe | endog ~ inst parses as (y ~ exog | fe | endog) ~ inst.
.iv_split <- function(formula) {
  bad <- function() {
    stop("formula: an IV formula is y ~ exog | endog ~ instruments or ",
         "y ~ exog | fe1 + fe2 | endog ~ instruments (as fixest)", call. = FALSE)
  }
  if (!inherits(formula, "formula") || length(formula) != 3L) bad()
  inner <- formula[[2L]]
  if (!(is.call(inner) && identical(inner[[1L]], as.name("~")) && length(inner) == 3L)) bad()
  rhs <- inner[[3L]]
  if (!(is.call(rhs) && identical(rhs[[1L]], as.name("|")))) bad()
  endog <- rhs[[3L]]
  rest <- rhs[[2L]]
  fe <- NULL
  if (is.call(rest) && identical(rest[[1L]], as.name("|"))) {
    fe <- rest[[3L]]
    rest <- rest[[2L]]
  }
  list(y = inner[[2L]], exog = rest, fe = fe, endog = endog, inst = formula[[3L]])
}

.iv_matrix <- function(expr, mf, env, intercept) {
  f <- stats::as.formula(call("~", expr), env = env)
  tt <- stats::terms(f, data = mf)
  if (!intercept) attr(tt, "intercept") <- 0L
  X <- stats::model.matrix(tt, mf)
  list(X = X, terms = tt)
}

#' Instrumental-variables regression (2SLS, LIML) with absorbed fixed effects
#'
#' Two-stage least squares or LIML (optionally Fuller's modification) of
#' `y ~ exog | fe1 + fe2 | endog ~ instruments`, the formula of fixest's `feols` (the fixed
#' effects part is optional: `y ~ exog | endog ~ instruments`). The fixed effects are absorbed
#' by the within transformation of [ols_attention()]; the fit is linear in y, so
#' [attention_weights()] gives the weights whose product with y is the prediction.
#'
#' Covariances follow linearmodels and Stata's ivreg2 (Baum, Schaffer and Stillman 2003, 2007):
#' bread \eqn{(X'(I - kM_Z)X)^{-1}}, scores \eqn{\hat x_i e_i} with \eqn{\hat x = P_Z x};
#' `"nonrobust"` uses \eqn{s^2 = e'e/(N - p - df_{absorbed})}; `"HC1"` scales HC0 by
#' \eqn{N/(N - p - df_{absorbed})}; `"CR1"` by \eqn{G/(G-1) (N-1)/(N-K)} (fixest's nested
#' counting of absorbed levels). The summary reports the first-stage partial F statistics, the
#' Cragg-Donald (1993) and Kleibergen-Paap (2006) rk Wald F statistics, the Sargan or Hansen J
#' overidentification test and the Wu-Hausman test. See `docs/iv.md` of the source repository
#' for the conventions of other packages.
#'
#' @param formula `y ~ exog | fe | endog ~ instruments`.
#' @param data A data frame.
#' @param subset,weights,na.action As in [stats::lm()]; weights are analytic (rows of weight
#'   0 are left out of the estimation).
#' @param estimator `"2sls"` or `"liml"`.
#' @param fuller Fuller's alpha for LIML (0: LIML; 1: the usual choice).
#' @param vcov `"nonrobust"`, `"HC0"`..`"HC3"`, `"CR0"` or `"CR1"`.
#' @param cluster Cluster variables for `"CR0"`/`"CR1"`: a one-sided formula (`~ firm` or
#'   `~ firm + year`) or a character vector of column names of `data`.
#' @param level Confidence level of [confint()] (a fraction: 0.95 for a 95% interval).
#' @param rank_tol Relative tolerance for collinear regressors and instruments.
#' @param fe_tol,fe_max_iter Tolerance and step cap of the within transformation.
#' @return An object of class `iv_attention` with methods `print`, `summary`, `coef`, `vcov`,
#'   `confint`, `predict`, `fitted`, `residuals`, `nobs`, [attention_weights()] and
#'   [fixed_effects()].
#' @examples
#' set.seed(1)
#' n <- 200
#' d <- data.frame(z1 = rnorm(n), z2 = rnorm(n), x2 = rnorm(n), g = sample(letters[1:5], n, TRUE))
#' u <- rnorm(n)
#' d$x1 <- d$z1 + 0.5 * d$z2 + u + rnorm(n)
#' d$y <- 1 + 2 * d$x1 - d$x2 + u
#' fit <- iv_attention(y ~ x2 | g | x1 ~ z1 + z2, data = d, vcov = "HC1")
#' summary(fit)
#' @export
iv_attention <- function(formula, data, subset, weights, na.action, estimator = c("2sls", "liml"),
                         fuller = 0, vcov = "nonrobust", cluster = NULL, level = 0.95,
                         rank_tol = 1e-7, fe_tol = 1e-10, fe_max_iter = 10000L) {
  cl <- match.call()
  estimator <- match.arg(estimator)
  .iv_level(level)
  parts <- .iv_split(formula)
  env <- environment(formula)
  cluster_vars <- if (inherits(cluster, "formula")) all.vars(cluster) else as.character(cluster)
  fe_names <- if (!is.null(parts$fe)) attr(stats::terms(stats::as.formula(call("~", parts$fe))),
                                           "term.labels") else character(0)
  vars <- unique(c(all.vars(formula), cluster_vars))
  mf <- cl
  m <- match(c("data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$formula <- stats::as.formula(paste("~", paste(sprintf("`%s`", vars), collapse = " + ")),
                                  env = env)
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  w <- stats::model.weights(mf)
  y <- as.double(eval(parts$y, mf, env))
  ex <- .iv_matrix(parts$exog, mf, env, intercept = TRUE)
  intercept <- "(Intercept)" %in% colnames(ex$X) && !length(fe_names)
  X1 <- ex$X[, colnames(ex$X) != "(Intercept)", drop = FALSE]
  X2 <- .iv_matrix(parts$endog, mf, env, intercept = FALSE)$X
  Z2 <- .iv_matrix(parts$inst, mf, env, intercept = FALSE)$X
  n <- length(y)
  codes <- matrix(0L, n, length(fe_names))
  fe_levels <- vector("list", length(fe_names))
  for (j in seq_along(fe_names)) {
    f <- factor(eval(str2lang(fe_names[j]), mf, env))
    codes[, j] <- as.integer(f) - 1L
    fe_levels[[j]] <- levels(f)
  }
  names(fe_levels) <- fe_names
  clusters <- NULL
  if (length(cluster_vars)) {
    clusters <- vapply(cluster_vars, function(v) as.integer(factor(mf[[v]])), integer(n))
    clusters <- matrix(clusters, n)
  }
  opt <- list(estimator = estimator, fuller = as.double(fuller), intercept = intercept,
              rank_tol = as.double(rank_tol), tol = as.double(fe_tol),
              max_iter = as.integer(fe_max_iter))
  nm <- c(colnames(X1), colnames(X2), colnames(Z2))
  obj <- list(X1 = X1, X2 = X2, Z2 = Z2, y = y, codes = codes,
              weights = if (is.null(w)) numeric(0) else as.double(w), opt = opt, names = nm,
              clusters = clusters, cluster_vars = cluster_vars, fe_names = fe_names,
              fe_levels = fe_levels, parts = parts, env = env, call = cl, level = level,
              estimator = estimator, fuller = fuller, na.action = attr(mf, "na.action"))
  res <- .iv_core(obj, vcov)
  pn <- c(if (intercept) "(Intercept)", colnames(X1), colnames(X2))
  coef <- setNames(drop(res$coefficients), pn)
  obj$coefficients <- coef
  obj$vcov_type <- res$cov_type
  obj$res <- res
  obj$fitted.values <- setNames(drop(res$fitted), rownames(mf))
  obj$residuals <- setNames(y - drop(res$fitted), rownames(mf))
  obj$nobs <- res$n_obs
  obj$df.residual <- res$df_residual
  obj$fixef <- lapply(seq_along(fe_names), function(j) {
    setNames(drop(res$fixed_effects[[j]]), fe_levels[[j]])
  })
  names(obj$fixef) <- fe_names
  robust <- res$cov_type != "nonrobust"
  Fw <- if (robust) res$first_stage$kleibergen_paap_f else res$first_stage$cragg_donald_f
  if (is.finite(Fw) && Fw < 10) {
    warning("iv_attention: weak instruments: first-stage ",
            if (robust) "Kleibergen-Paap rk Wald F" else "Cragg-Donald Wald F", " = ",
            format(signif(Fw, 4)), " < 10 (Staiger and Stock 1997; Stock and Yogo 2005)",
            call. = FALSE)
  }
  structure(obj, class = "iv_attention")
}

.iv_level <- function(level) {
  if (!is.numeric(level) || length(level) != 1L || !(level > 0 && level < 1)) {
    stop("level is a fraction: 0.95 for a 95% interval", call. = FALSE)
  }
  invisible(level)
}

.iv_core <- function(object, vcov) {
  vcov <- as.character(vcov)
  is_cl <- toupper(vcov) %in% c("CR0", "CR1", "CLUSTER")
  if (is_cl && is.null(object$clusters)) {
    stop("vcov: \"", vcov, "\" needs cluster = ~ var (the cluster variables)", call. = FALSE)
  }
  .iv_fit_cpp(object$X1, object$X2, object$Z2, object$y, object$codes, object$weights,
              object$opt, object$names, vcov, if (is_cl) object$clusters else NULL)
}

.iv_pnames <- function(object) names(object$coefficients)

#' @export
print.iv_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nInstrumental variables (", .iv_method(x), ")\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\nCoefficients:\n", sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  cat("\n")
  invisible(x)
}

.iv_method <- function(x) {
  if (x$estimator == "2sls") return("2SLS")
  if (x$fuller > 0) paste0("Fuller(", x$fuller, ")") else "LIML"
}

#' @export
summary.iv_attention <- function(object, vcov = object$vcov_type, ...) {
  res <- .iv_core(object, vcov)
  pn <- .iv_pnames(object)
  tab <- cbind(Estimate = drop(res$coefficients), `Std. Error` = drop(res$std_error),
               `t value` = drop(res$t_value), `Pr(>|t|)` = drop(res$p_value))
  rownames(tab) <- pn
  fs <- res$first_stage
  first <- cbind(`partial R2` = drop(fs$partial_r2), F = drop(fs$partial_f),
                 `Pr(>F)` = drop(fs$p_value))
  rownames(first) <- colnames(object$X2)
  structure(list(call = object$call, coefficients = tab, method = .iv_method(object),
                 vcov = res$cov_type, sigma = res$sigma, df = res$df_residual,
                 df_inference = res$df_inference, n_clusters = res$n_clusters,
                 r.squared = res$r_squared, adj.r.squared = res$adj_r_squared,
                 r.squared.within = res$r_squared_within, first_stage = first,
                 first_df = c(fs$df1, fs$df2), cragg_donald_f = fs$cragg_donald_f,
                 kleibergen_paap_f = fs$kleibergen_paap_f, overid = res$overid,
                 wu_hausman = res$wu_hausman, kappa = res$kappa, fe_names = object$fe_names,
                 n_fe_levels = lengths(object$fe_levels), df_absorbed = res$df_absorbed,
                 nobs = res$n_obs),
            class = "summary.iv_attention")
}

#' @export
print.summary.iv_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nInstrumental variables (", x$method, ")\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  if (length(x$fe_names)) {
    cat("Fixed effects: ", paste0(x$fe_names, " (", x$n_fe_levels, " levels)", collapse = ", "),
        "; absorbed parameters ", x$df_absorbed, "\n", sep = "")
  }
  cat("Coefficients (standard errors: ", x$vcov, "):\n", sep = "")
  printCoefmat(x$coefficients, digits = digits, na.print = "NA", ...)
  cat("\nResidual standard error: ", format(signif(x$sigma, digits)), " on ", x$df,
      " degrees of freedom (n = ", x$nobs, ")\n", sep = "")
  cat("R-squared: ", formatC(x$r.squared, digits = digits),
      if (length(x$fe_names)) paste0(",\tWithin R-squared: ",
                                      formatC(x$r.squared.within, digits = digits)), "\n", sep = "")
  cat("\nFirst stage (excluded instruments; F on ", x$first_df[1], " and ", x$first_df[2],
      " df):\n", sep = "")
  printCoefmat(x$first_stage, digits = digits, has.Pvalue = TRUE, P.values = TRUE,
               cs.ind = integer(0), tst.ind = 2L)
  cat("Cragg-Donald Wald F: ", format(signif(x$cragg_donald_f, digits)), sep = "")
  if (is.finite(x$kleibergen_paap_f)) {
    cat(";  Kleibergen-Paap rk Wald F: ", format(signif(x$kleibergen_paap_f, digits)), sep = "")
  }
  cat("\n")
  if (is.finite(x$overid$statistic)) {
    cat(x$overid$name, ": ", format(signif(x$overid$statistic, digits)), " on ", x$overid$df1,
        " df, p = ", format.pval(x$overid$p_value, digits = digits), "\n", sep = "")
  }
  cat("Wu-Hausman: F(", x$wu_hausman$df1, ", ", x$wu_hausman$df2, ") = ",
      format(signif(x$wu_hausman$statistic, digits)), ", p = ",
      format.pval(x$wu_hausman$p_value, digits = digits), "\n", sep = "")
  invisible(x)
}

#' @export
vcov.iv_attention <- function(object, vcov = object$vcov_type, ...) {
  V <- .iv_core(object, vcov)$vcov
  pn <- .iv_pnames(object)
  dimnames(V) <- list(pn, pn)
  V
}

#' @export
confint.iv_attention <- function(object, parm, level = object$level, vcov = object$vcov_type,
                                 ...) {
  .iv_level(level)
  res <- .iv_core(object, vcov)
  pn <- .iv_pnames(object)
  b <- setNames(drop(res$coefficients), pn)
  se <- setNames(drop(res$std_error), pn)
  if (missing(parm)) parm <- pn else if (is.numeric(parm)) parm <- pn[parm]
  a <- (1 - level) / 2
  q <- stats::qt(1 - a, res$df_inference)
  ci <- cbind(b[parm] - q * se[parm], b[parm] + q * se[parm])
  dimnames(ci) <- list(parm, paste(format(100 * c(a, 1 - a), trim = TRUE, digits = 3), "%"))
  ci
}

#' @export
nobs.iv_attention <- function(object, ...) object$nobs

.iv_newdata <- function(object, newdata) {
  p <- object$parts
  X1 <- .iv_matrix(p$exog, newdata, object$env, intercept = TRUE)$X
  X1 <- X1[, colnames(X1) != "(Intercept)", drop = FALSE]
  X2 <- .iv_matrix(p$endog, newdata, object$env, intercept = FALSE)$X
  codes <- matrix(0L, nrow(X2), length(object$fe_names))
  for (j in seq_along(object$fe_names)) {
    v <- as.character(eval(str2lang(object$fe_names[j]), newdata, object$env))
    k <- match(v, object$fe_levels[[j]])
    if (anyNA(k)) {
      stop("newdata: fixed effect '", object$fe_names[j], "' has level(s) not seen in the fit: ",
           paste(unique(v[is.na(k)]), collapse = ", "), call. = FALSE)
    }
    codes[, j] <- k - 1L
  }
  list(X1 = X1, X2 = X2, codes = codes)
}

#' @export
predict.iv_attention <- function(object, newdata, ...) {
  if (missing(newdata) || is.null(newdata)) return(fitted(object))
  nd <- .iv_newdata(object, newdata)
  p <- drop(.iv_new_cpp(object$X1, object$X2, object$Z2, object$y, object$codes, object$weights,
                        object$opt, object$names, nd$X1, nd$X2, nd$codes, "predict"))
  setNames(p, rownames(newdata))
}

#' @rdname iv_attention
#' @param object A fit of `iv_attention()`.
#' @param newdata A data frame with the formula's variables (and the fixed-effect columns).
#' @param ... Unused.
#' @export
attention_weights.iv_attention <- function(object, newdata, ...) {
  if (missing(newdata) || is.null(newdata)) {
    nd <- list(X1 = object$X1, X2 = object$X2, codes = object$codes)
  } else {
    nd <- .iv_newdata(object, newdata)
  }
  .iv_new_cpp(object$X1, object$X2, object$Z2, object$y, object$codes, object$weights,
              object$opt, object$names, nd$X1, nd$X2, nd$codes, "attention")
}

#' @rdname iv_attention
#' @export
fixed_effects.iv_attention <- function(object, ...) object$fixef
