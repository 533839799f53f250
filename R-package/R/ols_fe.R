# OLS with absorbed fixed effects: ols_attention(y ~ x1 + x2 | fe1 + fe2, data).
# The estimation is the core's (attnreg::AbsorbedOLS); this file parses the formula, codes the
# factors and formats the results. The object keeps its data and every core call refits (the
# fit is deterministic), so saveRDS()/readRDS() round trips work.

# Split `y ~ x | f1 + f2` at the top-level `|`: NULL when there is none.
.fe_split <- function(formula) {
  if (!inherits(formula, "formula") || length(formula) != 3L) return(NULL)
  rhs <- formula[[3L]]
  if (!(is.call(rhs) && identical(rhs[[1L]], as.name("|")))) return(NULL)
  main <- formula
  main[[3L]] <- rhs[[2L]]
  fe_f <- stats::as.formula(call("~", rhs[[3L]]), env = environment(formula))
  labels <- attr(stats::terms(fe_f), "term.labels")
  if (!length(labels)) {
    stop("formula: nothing to absorb after '|'; write e.g. y ~ x | firm + year", call. = FALSE)
  }
  exprs <- lapply(labels, function(t) {
    vars <- strsplit(t, ":", fixed = TRUE)[[1L]]
    if (length(vars) == 1L) return(str2lang(t))
    as.call(c(list(as.name("interaction")), lapply(vars, str2lang), list(drop = TRUE, sep = ":")))
  })
  list(main = main, exprs = exprs, names = labels)
}

# fixest's ssc() list (K.adj, K.fixef, G.adj) -> the core's options.
.fe_ssc <- function(ssc) {
  if (is.null(ssc)) return(list(k_adj = TRUE, k_fixef = "nonnested", g_adj = TRUE))
  if (!is.list(ssc) || is.null(names(ssc)) ||
      !all(names(ssc) %in% c("K.adj", "K.fixef", "G.adj"))) {
    stop("ssc: a list with elements K.adj, K.fixef and G.adj (fixest's names), e.g. ",
         "list(K.adj = TRUE, K.fixef = \"nonnested\", G.adj = TRUE)", call. = FALSE)
  }
  flag <- function(v, nm) {
    if (is.null(v)) return(TRUE)
    if (!is.logical(v) || length(v) != 1L || is.na(v)) {
      stop("ssc: ", nm, " must be TRUE or FALSE", call. = FALSE)
    }
    v
  }
  kf <- if (is.null(ssc$K.fixef)) "nonnested" else ssc$K.fixef
  if (!is.character(kf) || length(kf) != 1L || !kf %in% c("nonnested", "full", "none")) {
    stop("ssc: K.fixef must be \"nonnested\", \"full\" or \"none\"", call. = FALSE)
  }
  list(k_adj = flag(ssc$K.adj, "K.adj"), k_fixef = kf, g_adj = flag(ssc$G.adj, "G.adj"))
}

.ols_fe <- function(cl, formula, env, parts, rank_tol, precision, n_threads, fe_tol,
                    fe_max_iter, weight_type = "analytic", drop_singletons = TRUE, ssc = NULL) {
  if (!is.logical(drop_singletons) || length(drop_singletons) != 1L || is.na(drop_singletons)) {
    stop("drop_singletons: must be TRUE or FALSE", call. = FALSE)
  }
  mf <- cl
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$formula <- parts$main
  mf$drop.unused.levels <- TRUE
  for (j in seq_along(parts$exprs)) mf[[paste0(".fe", j)]] <- parts$exprs[[j]]
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  w <- .ls_weights(mf)
  if (!is.null(w) && any(!is.finite(w) | w < 0)) {
    i <- which(!is.finite(w) | w < 0)[1L]
    stop("weights: must be finite and >= 0, got ", w[i], " in row ", i, call. = FALSE)
  }
  n_zero <- 0L
  if (!is.null(w) && any(w == 0)) {
    # Rows of weight 0 carry no information: as lm, they count in neither n nor the degrees of
    # freedom, and here in no level count of a fixed effect either. They are left out of the
    # fit like missing values (no fitted value: a level seen only in them has no estimate).
    if (all(w == 0)) {
      stop("weights: all weights are zero; at least one row needs a positive weight",
           call. = FALSE)
    }
    n_zero <- sum(w == 0)
    mt <- attr(mf, "terms")
    na <- attr(mf, "na.action")
    mf <- mf[w > 0, , drop = FALSE]
    attr(mf, "terms") <- mt
    attr(mf, "na.action") <- na
    w <- w[w > 0]
  }
  d <- .ls_design(mf)
  n <- nrow(d$X)
  codes <- matrix(0L, n, length(parts$exprs))
  levels_ <- vector("list", length(parts$exprs))
  for (j in seq_along(parts$exprs)) {
    v <- mf[[paste0("(.fe", j, ")")]]
    f <- if (is.factor(v)) droplevels(v) else factor(v)
    if (anyNA(f)) {
      stop("formula: fixed effect '", parts$names[j], "' has missing values; remove those ",
           "rows or use na.action = na.omit", call. = FALSE)
    }
    codes[, j] <- as.integer(f) - 1L
    levels_[[j]] <- levels(f)
  }
  # Named as the user passed them (the core's option names are tol and max_iter).
  if (!is.numeric(fe_tol) || length(fe_tol) != 1L || !is.finite(fe_tol) || fe_tol <= 0 ||
      fe_tol >= 1) {
    stop("fe_tol: must be one number in (0, 1) (the relative accuracy of the within ",
         "transformation; default 1e-10), got ", format(fe_tol), call. = FALSE)
  }
  if (!is.numeric(fe_max_iter) || length(fe_max_iter) != 1L || !is.finite(fe_max_iter) ||
      fe_max_iter < 1 || fe_max_iter != round(fe_max_iter)) {
    stop("fe_max_iter: must be one whole number >= 1 (default 10000), got ",
         format(fe_max_iter), call. = FALSE)
  }
  opt <- list(tol = as.double(fe_tol), max_iter = as.integer(fe_max_iter),
              rank_tol = as.double(rank_tol), n_threads = as.integer(n_threads),
              precision = precision, frequency = !is.null(w) && weight_type == "frequency",
              drop_singletons = drop_singletons)
  opt <- c(opt, .fe_ssc(ssc))
  res <- .fe_fit_cpp(d$X, d$Y, codes, if (is.null(w)) numeric(0) else w, opt)
  nm <- colnames(d$X)
  coef <- drop(res$coefficients)
  se <- drop(res$std_errors)
  if (is.matrix(coef)) {
    dimnames(coef) <- dimnames(se) <- list(nm, colnames(d$Y))
  } else {
    names(coef) <- names(se) <- nm
  }
  absorbed <- as.logical(res$absorbed)
  if (any(absorbed)) {
    warning("ols_attention: removed because of collinearity with the fixed effects (",
            paste(parts$names, collapse = ", "), "): ", paste(nm[absorbed], collapse = ", "),
            " (coefficient NA)", call. = FALSE)
  }
  other <- as.logical(res$aliased) & !absorbed
  if (any(other)) {
    warning("ols_attention: aliased (collinear with other regressors after absorbing the ",
            "fixed effects; NA): ", paste(nm[other], collapse = ", "), call. = FALSE)
  }
  if (!isTRUE(res$converged)) {
    warning("ols_attention: the within transformation did not reach fe_tol = ", fe_tol,
            " in fe_max_iter = ", fe_max_iter, " steps; raise fe_max_iter", call. = FALSE)
  }
  fitted <- drop(res$fitted)
  resid <- drop(res$residuals)
  if (!is.matrix(fitted)) names(fitted) <- names(resid) <- rownames(mf)
  fe <- lapply(seq_along(res$fixed_effects), function(j) {
    a <- res$fixed_effects[[j]]
    if (ncol(a) == 1L) setNames(drop(a), levels_[[j]]) else `rownames<-`(a, levels_[[j]])
  })
  names(fe) <- names(levels_) <- parts$names
  structure(list(
    coefficients = coef, std_errors = se, sigma = sqrt(res$sigma2), rank = res$rank,
    aliased = setNames(as.logical(res$aliased), nm), absorbed = setNames(absorbed, nm),
    df.residual = res$df_residual, fitted.values = fitted, residuals = resid,
    r.squared = res$r_squared, adj.r.squared = res$adj_r_squared,
    r.squared.within = res$r_squared_within, fixef = fe, fe_names = parts$names,
    fe_exprs = parts$exprs, fe_levels = levels_, n_fe_levels = lengths(levels_),
    df_absorbed = res$df_absorbed, df_exact = res$df_exact, components = res$components,
    iterations = res$iterations, converged = res$converged, n_singletons = res$n_singletons,
    X = d$X, y = d$Y, codes = codes, opt = opt, extended = FALSE, intercept = d$intercept,
    weights = w, weight_type = if (!is.null(w)) weight_type,
    terms = d$terms, xlevels = .getXlevels(d$terms, mf), contrasts = d$contrasts,
    na.action = attr(mf, "na.action"), call = cl, nobs = n, model = mf,
    data = if (!is.null(cl$data)) eval(cl$data, env), fe_env = environment(formula),
    n_zero_weight = n_zero
  ), class = c("ols_attention_fe", "ols_attention"))
}

# The weights of a fit for the core (numeric(0) when unweighted).
.fe_w <- function(object) if (is.null(object$weights)) numeric(0) else object$weights

# Codes of the training levels for the fixed effects of new rows; unseen levels are an error.
.fe_new_codes <- function(object, newdata) {
  codes <- matrix(0L, nrow(newdata), length(object$fe_exprs))
  for (j in seq_along(object$fe_exprs)) {
    v <- tryCatch(eval(object$fe_exprs[[j]], newdata, object$fe_env), error = function(e) {
      stop("newdata: needs the fixed effect '", object$fe_names[j], "' (", conditionMessage(e),
           ")", call. = FALSE)
    })
    v <- as.character(v)
    idx <- match(v, object$fe_levels[[j]])
    if (anyNA(idx)) {
      bad <- unique(v[is.na(idx)])
      stop("newdata: fixed effect '", object$fe_names[j], "' has level(s) not seen in the fit: ",
           paste0("'", utils::head(bad, 5L), "'", collapse = ", "),
           if (length(bad) > 5L) ", ...", "; a fixed effect is estimated only for levels in ",
           "the training data", call. = FALSE)
    }
    codes[, j] <- idx - 1L
  }
  codes
}

#' @export
print.ols_attention_fe <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS with absorbed fixed effects (alternating projections, pivoted QR)\n\n",
      "Call:\n", paste(deparse(x$call), collapse = "\n"), "\n\nCoefficients:\n", sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  cat("\nFixed effects: ", paste0(x$fe_names, " (", x$n_fe_levels, ")", collapse = ", "),
      "\nRank ", x$rank, ", absorbed ", x$df_absorbed, ", residual df ", x$df.residual,
      "; within R-squared ", formatC(x$r.squared.within, digits = digits), "\n", sep = "")
  invisible(x)
}

#' @rdname summary.ols_attention
#' @export
summary.ols_attention_fe <- function(object, vcov = "nonrobust", maxlags = NULL,
                                     hac_adjust = FALSE, cluster_type = "CR1", ...) {
  if (is.matrix(object$coefficients)) {
    stop("summary: only for a single response; fit one model per column", call. = FALSE)
  }
  a <- .ols_cov_args(vcov, maxlags, object, cluster_type)
  inf <- .fe_inference_cpp(object$X, object$y, object$codes, .fe_w(object), object$opt, a$vcov,
                           a$maxlags, isTRUE(hac_adjust), 1L, a$clusters)
  cov_fixed <- .note_cov_fix(inf, "summary")
  nm <- names(object$coefficients)
  tab <- cbind(Estimate = drop(inf$estimate), `Std. Error` = drop(inf$std_error),
               `t value` = drop(inf$t_value), `Pr(>|t|)` = drop(inf$p_value))
  rownames(tab) <- nm
  V <- inf$vcov
  dimnames(V) <- list(nm, nm)
  structure(list(call = object$call, coefficients = tab, sigma = object$sigma,
                 df = inf$df_residual, df_inference = inf$df_inference,
                 n_clusters = if (length(inf$n_clusters)) setNames(inf$n_clusters, a$cluster_vars),
                 cov_fixed = cov_fixed, r.squared = object$r.squared,
                 adj.r.squared = object$adj.r.squared, r.squared.within = object$r.squared.within,
                 rank = object$rank, aliased = object$aliased, vcov = inf$cov_type,
                 maxlags = inf$maxlags, cov = V, extended = FALSE, fe_names = object$fe_names,
                 n_fe_levels = object$n_fe_levels, df_absorbed = object$df_absorbed,
                 df_exact = object$df_exact, nobs = object$nobs,
                 n_singletons = if (is.null(object$n_singletons)) 0 else object$n_singletons,
                 n_leverage_one = as.integer(inf$n_leverage_one %||% 0)),
            class = c("summary.ols_attention_fe", "summary.ols_attention"))
}

#' @export
print.summary.ols_attention_fe <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS with absorbed fixed effects (alternating projections, pivoted QR)\n\n",
      "Call:\n", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  cat("Fixed effects: ", paste0(x$fe_names, " (", x$n_fe_levels, " levels)", collapse = ", "),
      "; absorbed parameters ", x$df_absorbed, if (!isTRUE(x$df_exact)) " (lower bound)",
      "\n", sep = "")
  se <- switch(x$vcov, nonrobust = "classical",
               HAC = paste0("HAC (Newey-West, Bartlett, ", x$maxlags, " lags)"), x$vcov)
  cat("Coefficients (standard errors: ", se, "):\n", sep = "")
  printCoefmat(x$coefficients, digits = digits, na.print = "NA", ...)
  ns <- if (is.null(x$n_singletons)) 0 else x$n_singletons
  cat("\nResidual standard error: ", format(signif(x$sigma, digits)), " on ", x$df,
      " degrees of freedom (n = ", x$nobs - ns, ")\n", sep = "")
  if (ns > 0) {
    cat(ns, " singleton row(s) (a fixed-effect level with one row) left out of the statistics\n",
        sep = "")
  }
  cat("Multiple R-squared: ", formatC(x$r.squared, digits = digits),
      ",\tAdjusted R-squared: ", formatC(x$adj.r.squared, digits = digits),
      "\nWithin R-squared: ", formatC(x$r.squared.within, digits = digits), "\n", sep = "")
  if (any(x$aliased)) cat("(", sum(x$aliased), " coefficient(s) aliased: NA)\n", sep = "")
  if (isTRUE(x$n_leverage_one > 0)) {
    writeLines(strwrap(.leverage_one_note(x$n_leverage_one, x$vcov), exdent = 6))
  }
  invisible(x)
}

#' @rdname predict.ols_attention
#' @export
predict.ols_attention_fe <- function(object, newdata, se.fit = FALSE,
                                     interval = c("none", "confidence", "prediction"),
                                     level = 0.95, vcov = "nonrobust",
                                     na.action = stats::na.pass, ...) {
  interval <- match.arg(interval)
  if (isTRUE(se.fit) || interval != "none") {
    stop("se.fit, interval: not available with absorbed fixed effects (the fixed effects' ",
         "sampling variance is not estimated); use predict(fit, newdata)", call. = FALSE)
  }
  if (missing(newdata) || is.null(newdata)) return(fitted(object))
  # Rows with a missing value in the model's variables or a fixed effect: NA (na.pass, as
  # predict.lm) or left out (na.omit).
  X <- .ls_newdesign(object, newdata, na_ok = TRUE, na.action = na.action)
  nd <- newdata[match(rownames(X), rownames(newdata)), , drop = FALSE]
  ok <- stats::complete.cases(X) & !.fe_label_missing(object, nd)
  if (!identical(match.fun(na.action), stats::na.pass)) {
    X <- X[ok, , drop = FALSE]
    nd <- nd[ok, , drop = FALSE]
    ok <- ok[ok]
  }
  p <- matrix(NA_real_, nrow(X), NCOL(object$y), dimnames = list(rownames(X), colnames(object$y)))
  if (any(ok)) {
    p[ok, ] <- .fe_new_cpp(object$X, object$y, object$codes, .fe_w(object), object$opt,
                           X[ok, , drop = FALSE], .fe_new_codes(object, nd[ok, , drop = FALSE]),
                           "predict")
  }
  p <- drop(p)
  if (!is.matrix(p)) names(p) <- rownames(X)
  p
}

# Which rows of newdata have a missing label in some absorbed fixed effect.
.fe_label_missing <- function(object, newdata) {
  miss <- rep(FALSE, nrow(newdata))
  for (j in seq_along(object$fe_exprs)) {
    v <- tryCatch(eval(object$fe_exprs[[j]], newdata, object$fe_env), error = function(e) NULL)
    if (!is.null(v) && length(v) == nrow(newdata)) miss <- miss | is.na(v)
  }
  miss
}

#' @rdname attention_weights
#' @export
attention_weights.ols_attention_fe <- function(object, newdata, ...) {
  if (missing(newdata) || is.null(newdata)) {
    X <- object$X
    codes <- object$codes
    rn <- .ls_rownames(object)
  } else {
    X <- .ls_newdesign(object, newdata)
    codes <- .fe_new_codes(object, newdata)
    rn <- rownames(newdata)
  }
  A <- .fe_new_cpp(object$X, object$y, object$codes, .fe_w(object), object$opt, X, codes,
                   "attention")
  dimnames(A) <- list(rn, .ls_rownames(object))
  A
}

#' Fixed-effect values of a fit with absorbed fixed effects
#'
#' The values \eqn{\alpha_j} of each absorbed factor, as fixest's `fixef()`: with two or more
#' factors the first level of the second factor in each connected component of the factor
#' graph is 0, and the first level of each further factor is 0; the constants are in the first
#' factor. Levels in different components are comparable only through these references. With
#' one factor the values are the (weighted) group means of \eqn{y - X b}.
#'
#' @param object A fit of [ols_attention()] with a `| factors` part in its formula.
#' @param ... Unused.
#' @return A named list with one named numeric vector per factor (a matrix, one column per
#'   response, for several responses).
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp | cyl + gear, data = mtcars)
#' fixed_effects(fit)
#' @export
fixed_effects <- function(object, ...) UseMethod("fixed_effects")

#' @rdname fixed_effects
#' @export
fixed_effects.ols_attention_fe <- function(object, ...) object$fixef

.fe_unsupported <- function(what) {
  stop(what, ": not available for a fit with absorbed fixed effects; use ",
       "attention_weights(fit, newdata) for its attention form", call. = FALSE)
}

#' @export
attention_factors.ols_attention_fe <- function(object, newdata = NULL, ...) {
  .fe_unsupported("attention_factors")
}

#' @export
attention_embedding.ols_attention_fe <- function(object, ...) .fe_unsupported("attention_embedding")

#' @export
loo_predict.ols_attention_fe <- function(object, ...) .fe_unsupported("loo_predict")

#' @export
masked_attention.ols_attention_fe <- function(object, strict = FALSE, weights = FALSE, ...) {
  .fe_unsupported("masked_attention")
}

#' Wild cluster bootstrap of a linear hypothesis
#'
#' The restricted wild cluster bootstrap (WCR; Cameron, Gelbach and Miller 2008, REStat 90(3))
#' of `sum_j w_j b_j = value` for a fit of [ols_attention()] with absorbed fixed effects,
#' computed by the algorithm of Roodman, MacKinnon, Nielsen and Webb (2019, Stata Journal
#' 19(1)): bootstrap samples y* = X b_r + u_r v_g with the null imposed, one weight per
#' cluster, and the CR1 t statistic. The confidence interval inverts the test.
#'
#' @param fit A fit of [ols_attention()] with a `| factors` part.
#' @param param A coefficient name, or a named numeric vector of weights for a combination.
#' @param cluster The clustering variable as a one-sided formula, e.g. `~firm` (one-way).
#' @param value Hypothesised value (default 0).
#' @param R Replications (at least 99). With Rademacher weights and 2^G <= R, the 2^G sign
#'   vectors are enumerated instead.
#' @param bootstrap `"rademacher"`, `"webb"` (six-point; Webb 2023) or `"mammen"`.
#' @param seed Seed for R's generator (the draws are `sample()`/`runif()` in replication-major
#'   order); `NULL` uses the current state.
#' @param level Confidence level, a fraction.
#' @return A list of class `wild_bootstrap_attention`: `estimate`, `std_error`, `t_stat`,
#'   `p_value`, `conf_int`, `replications`, `n_clusters`, `bootstrap`, `enumerated`, `t_boot`.
#' @examples
#' d <- data.frame(y = rnorm(200), x = rnorm(200), f = rep(1:20, each = 10))
#' fit <- ols_attention(y ~ x | f, data = d)
#' wild_bootstrap(fit, "x", cluster = ~f, R = 999, seed = 1)
#' @export
wild_bootstrap <- function(fit, param, cluster, value = 0, R = 9999L,
                           bootstrap = c("rademacher", "webb", "mammen"), seed = NULL,
                           level = 0.95) {
  bootstrap <- match.arg(bootstrap)
  if (!inherits(fit, "ols_attention_fe")) {
    stop("fit: the wild bootstrap here is for fits with absorbed fixed effects ",
         "(ols_attention(y ~ x | f, data))", call. = FALSE)
  }
  if (!is.numeric(level) || length(level) != 1L || !(level > 0 && level < 1)) {
    stop("level: is a fraction: 0.95 for a 95% interval", call. = FALSE)
  }
  if (!is.numeric(R) || length(R) != 1L || R < 99 || R != round(R)) {
    stop("R: must be an integer >= 99 (9999 is usual)", call. = FALSE)
  }
  if (is.matrix(fit$coefficients)) stop("fit: one response only", call. = FALSE)
  nm <- names(fit$coefficients)
  w <- if (is.character(param)) setNames(rep(1, length(param)), param) else param
  if (is.null(names(w)) || !all(names(w) %in% nm)) {
    stop("param: a coefficient name or a named vector of weights over ",
         paste(nm, collapse = ", "), call. = FALSE)
  }
  Rv <- setNames(numeric(length(nm)), nm)
  Rv[names(w)] <- Rv[names(w)] + as.numeric(w)
  bad <- nm[fit$aliased & Rv != 0]
  if (length(bad)) {
    stop("param: ", paste(bad, collapse = ", "), " was dropped from the fit (aliased or ",
         "absorbed by the fixed effects; NA); test an estimated coefficient", call. = FALSE)
  }
  cl <- .ols_cluster_codes(fit, cluster)$codes
  if (ncol(cl) != 1L) stop("cluster: one clustering variable (one-way)", call. = FALSE)
  ids <- cl[, 1L]
  G <- length(unique(ids))
  enumerated <- bootstrap == "rademacher" && G <= 20 && 2^G <= R
  if (enumerated) {
    V <- t(as.matrix(expand.grid(rep(list(c(1, -1)), G))))
  } else {
    if (!is.null(seed)) set.seed(seed)
    B <- as.integer(R)
    V <- switch(bootstrap,
      rademacher = matrix(sample(c(1, -1), B * G, replace = TRUE), G, B),
      webb = matrix(sample(c(-sqrt(1.5), -1, -sqrt(0.5), sqrt(0.5), 1, sqrt(1.5)), B * G,
                           replace = TRUE), G, B),
      mammen = {
        s5 <- sqrt(5)
        matrix(ifelse(stats::runif(B * G) < (s5 + 1) / (2 * s5), -(s5 - 1) / 2, (s5 + 1) / 2),
               G, B)
      })
  }
  # Rows of V follow the clusters in increasing order of their codes (the core's order).
  res <- .fe_wild_cpp(fit$X, fit$y, fit$codes, .fe_w(fit), fit$opt, as.numeric(Rv),
                      as.numeric(value), as.integer(ids), V, as.numeric(level))
  structure(list(estimate = res$estimate, std_error = res$std_error, t_stat = res$t_stat,
                 p_value = res$p_value, conf_int = c(res$ci_lower, res$ci_upper),
                 level = level, replications = res$replications, n_clusters = res$n_clusters,
                 bootstrap = bootstrap, enumerated = enumerated, t_boot = res$t_boot),
            class = "wild_bootstrap_attention")
}

#' @export
print.wild_bootstrap_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nWild cluster bootstrap (WCR, ", x$bootstrap, ", ", x$replications, " replications",
      if (x$enumerated) ", enumerated", ", ", x$n_clusters, " clusters)\n", sep = "")
  cat("estimate ", format(signif(x$estimate, digits)), ", t = ", format(signif(x$t_stat, digits)),
      ", p = ", format(signif(x$p_value, digits)), "\n", format(100 * x$level), "% interval [",
      format(signif(x$conf_int[1], digits)), ", ", format(signif(x$conf_int[2], digits)), "]\n",
      sep = "")
  invisible(x)
}
