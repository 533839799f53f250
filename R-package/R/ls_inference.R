# Likelihood, nested-model F tests, model frames / matrices and confidence intervals for the
# least-squares fits; the interaction-term check of kreg().

#' Log-likelihood, AIC and BIC of an OLS-as-attention fit
#'
#' The Gaussian log-likelihood at the least-squares estimates,
#' \eqn{\log L = -\frac{n}{2}\left(\log(2\pi\,RSS/n) + 1\right) + \frac12\sum_i \log w_i}
#' (the weight term only for weighted fits), computed in the C++ core, as [stats::logLik.lm()].
#' The `df` attribute counts the estimated coefficients and the residual variance
#' (rank + 1; with absorbed fixed effects also their parameters, as `lm` with the factors as
#' dummies counts them), so [stats::AIC()] and [stats::BIC()] give the same values as for `lm`.
#'
#' @param object An `ols_attention` fit (single response).
#' @param REML Only `FALSE` (maximum likelihood) is available.
#' @param ... Unused.
#' @return An object of class `logLik` with attributes `df` and `nobs`.
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' logLik(fit)
#' AIC(fit); BIC(fit)
#' @export
logLik.ols_attention <- function(object, REML = FALSE, ...) {
  if (!isFALSE(REML)) {
    stop("REML: restricted maximum likelihood is not available for ols_attention; use REML = FALSE",
         call. = FALSE)
  }
  if (is.matrix(object$residuals)) {
    stop("logLik: only for a single response; fit one model per column", call. = FALSE)
  }
  e <- as.double(object$residuals)
  w <- object$weights
  n_all <- length(e)
  if (!is.null(w)) {  # as logLik.lm: rows with zero weight do not count
    keep <- w != 0
    e <- e[keep]
    w <- as.double(w[keep])
  }
  ll <- .gaussian_loglik_cpp(e, if (is.null(w)) double(0) else w)
  # Parameters: the estimated coefficients, the absorbed fixed effects of a fit with
  # `| f1 + f2` (levels less redundant ones: as many as the dummies lm would estimate), sigma.
  df_fe <- if (is.null(object$df_absorbed)) 0 else object$df_absorbed
  structure(ll, nall = n_all, nobs = length(e), df = object$rank + df_fe + 1, class = "logLik")
}

#' Analysis of variance of OLS-as-attention fits
#'
#' With one fit, the table of sequential sums of squares of [stats::anova.lm()]: each term's
#' reduction of the residual sum of squares when it is added after the terms before it (in
#' formula order), its degrees of freedom (the term's non-aliased columns) and the F test
#' against the residual mean square of the full model; terms whose columns are all aliased are
#' left out, as `lm` does.
#'
#' With several fits, as [stats::anova()] for several `lm` fits: for each model after the first, the change in
#' residual sum of squares against the previous one, with
#' \eqn{F = (\Delta RSS / \Delta df) / \hat\sigma^2}, \eqn{\hat\sigma^2} the residual variance
#' of the largest model, and its p-value on (\eqn{|\Delta df|}, residual df of the largest
#' model) degrees of freedom. The models must be fitted to the same response and rows, and each
#' one's terms must contain the previous one's (or be contained in them).
#'
#' @param object,... One `ols_attention` fit, or two or more, smallest first (as for `lm`).
#' @return An `anova` data frame, printed as [stats::anova()] prints: for one fit the columns
#'   `Df`, `Sum Sq`, `Mean Sq`, `F value`, `Pr(>F)` with a row per term and `Residuals`; for
#'   several the columns `Res.Df`, `RSS`, `Df`, `Sum of Sq`, `F`, `Pr(>F)`.
#' @examples
#' small <- ols_attention(mpg ~ wt, data = mtcars)
#' big <- ols_attention(mpg ~ wt + hp + factor(cyl), data = mtcars)
#' anova(small, big)
#' anova(big)
#' @export
anova.ols_attention <- function(object, ...) {
  models <- c(list(object), list(...))
  if (length(models) < 2L) return(.anova_sequential(object))
  bad <- !vapply(models, inherits, logical(1), "ols_attention")
  if (any(bad)) {
    stop("anova: argument ", which(bad)[1L], " is not an ols_attention fit (got ",
         class(models[[which(bad)[1L]]])[1L], ")", call. = FALSE)
  }
  if (any(vapply(models, function(m) is.matrix(m$residuals), logical(1)))) {
    stop("anova: only for single-response fits", call. = FALSE)
  }
  n <- vapply(models, function(m) as.double(m$nobs), numeric(1))
  if (any(n != n[1L])) {
    stop("anova: the models were fitted to different numbers of observations (",
         paste(n, collapse = ", "), "); fit them to the same rows (remove missing values ",
         "in every model's variables first)", call. = FALSE)
  }
  y1 <- drop(models[[1L]]$y)
  for (i in seq_along(models)[-1L]) {
    if (!isTRUE(all.equal(drop(models[[i]]$y), y1, check.attributes = FALSE))) {
      stop("anova: model ", i, " has a different response from model 1; nested models ",
           "share the response", call. = FALSE)
    }
  }
  # Absorbed fixed effects (`| f`) count as terms of their own for nesting.
  labs <- lapply(models, function(m) c(attr(m$terms, "term.labels"),
                                       if (length(m$fe_names)) paste0("| ", m$fe_names)))
  for (i in seq_along(models)[-1L]) {
    a <- labs[[i - 1L]]; b <- labs[[i]]
    if (!all(a %in% b) && !all(b %in% a)) {
      stop("anova: models ", i - 1L, " and ", i, " are not nested (terms ",
           paste(setdiff(a, b), collapse = ", "), " vs ", paste(setdiff(b, a), collapse = ", "),
           "); an F test compares a model with one that contains it", call. = FALSE)
    }
  }
  rss <- vapply(models, function(m) {
    e <- as.double(m$residuals)
    w <- m$weights
    if (is.null(w)) sum(e^2) else sum(w * e^2)
  }, numeric(1))
  resdf <- vapply(models, function(m) as.double(m$df.residual), numeric(1))
  df <- c(NA, -diff(resdf))
  ss <- c(NA, -diff(rss))
  big <- order(resdf)[1L]
  scale <- rss[big] / resdf[big]
  Fv <- (ss / df) / scale
  Fv[df %in% 0] <- NA
  Fv[!is.na(Fv) & Fv < 0] <- NA
  table <- data.frame(resdf, rss, df, ss, Fv,
                      stats::pf(Fv, abs(df), resdf[big], lower.tail = FALSE))
  dimnames(table) <- list(seq_along(models),
                          c("Res.Df", "RSS", "Df", "Sum of Sq", "F", "Pr(>F)"))
  vars <- vapply(models, function(m) paste(deparse(stats::formula(m$terms)), collapse = "\n"),
                 character(1))
  structure(table, heading = c("Analysis of Variance Table\n",
                               paste0("Model ", format(seq_along(models)), ": ", vars,
                                      collapse = "\n")),
            class = c("anova", "data.frame"))
}

# Sequential (type I) sums of squares of one fit, as anova.lm: the terms are added in formula
# order and each reduction of the residual sum of squares comes from refitting on the design
# columns of the terms so far (refits go through ols_attention, so they are the same QR fits).
.anova_sequential <- function(object) {
  if (is.matrix(object$residuals)) stop("anova: only for single-response fits", call. = FALSE)
  if (length(object$fe_names)) {
    stop("anova: sequential sums of squares are not available for a fit with absorbed fixed ",
         "effects; compare nested fits instead: anova(small, big)", call. = FALSE)
  }
  X <- model.matrix(object)
  asgn <- attr(X, "assign")
  labs <- attr(object$terms, "term.labels")
  y <- drop(object$y)
  w <- object$weights
  intercept <- isTRUE(object$intercept)
  Xc <- X[, asgn > 0, drop = FALSE]
  ac <- asgn[asgn > 0]
  rss_rank <- function(j) {
    Xj <- Xc[, ac <= j, drop = FALSE]
    if (ncol(Xj) == 0L && !intercept) {
      return(c(if (is.null(w)) sum(y^2) else sum(w * y^2), 0))
    }
    d <- list(y = y, Xj = Xj)
    if (!is.null(w)) d$w <- w
    f <- if (ncol(Xj) == 0L) y ~ 1 else if (intercept) y ~ Xj else y ~ Xj - 1
    fit <- suppressWarnings(if (is.null(w)) ols_attention(f, data = d)
                            else ols_attention(f, data = d, weights = w))
    e <- as.double(fit$residuals)
    c(if (is.null(w)) sum(e^2) else sum(w * e^2), fit$rank)
  }
  steps <- vapply(0:length(labs), rss_rank, numeric(2))
  ss <- -diff(steps[1L, ])
  df <- diff(steps[2L, ])
  keep <- df > 0
  resdf <- object$df.residual
  rss <- steps[1L, ncol(steps)]
  ms <- c(ss[keep] / df[keep], rss / resdf)
  Fv <- c(ms[seq_len(sum(keep))] / (rss / resdf), NA)
  table <- data.frame(c(df[keep], resdf), c(ss[keep], rss), ms, Fv,
                      stats::pf(Fv, c(df[keep], resdf), resdf, lower.tail = FALSE))
  dimnames(table) <- list(c(labs[keep], "Residuals"),
                          c("Df", "Sum Sq", "Mean Sq", "F value", "Pr(>F)"))
  structure(table, heading = c("Analysis of Variance Table\n",
                               paste0("Response: ", deparse(object$terms[[2L]]))),
            class = c("anova", "data.frame"))
}

# The stored model frame of a least-squares fit (never re-evaluated from the call, so it works
# when the data frame lived only inside a function).
.ls_model_frame <- function(object, what) {
  if (is.null(object$model)) {
    stop(what, ": this fit stores no model frame (refit it with this version of attnreg)",
         call. = FALSE)
  }
  object$model
}

#' Model frame and design matrix of a least-squares fit
#'
#' The model frame stored at fit time and the design matrix built from it with the fit's
#' contrasts, as for `lm`. Nothing is re-evaluated from the call, so both work when the data
#' frame existed only where the model was fitted (inside a function, say).
#'
#' @param formula,object An `ols_attention`, `ridge_attention` or `pcr_attention` fit.
#' @param ... Unused.
#' @return The model frame (a data frame), or the design matrix (intercept column included
#'   when the model has one).
#' @examples
#' f <- function() {
#'   d <- data.frame(y = rnorm(20), x = runif(20), g = gl(2, 10))
#'   ols_attention(y ~ x + g, data = d)
#' }
#' head(model.matrix(f()))
#' @name model.matrix.ols_attention
#' @export
model.frame.ols_attention <- function(formula, ...) .ls_model_frame(formula, "model.frame")

#' @rdname model.matrix.ols_attention
#' @export
model.matrix.ols_attention <- function(object, ...) {
  stats::model.matrix(object$terms, .ls_model_frame(object, "model.matrix"),
                      contrasts.arg = object$contrasts)
}

#' @rdname model.matrix.ols_attention
#' @export
model.frame.ridge_attention <- model.frame.ols_attention

#' @rdname model.matrix.ols_attention
#' @export
model.matrix.ridge_attention <- model.matrix.ols_attention

#' @rdname model.matrix.ols_attention
#' @export
model.frame.pcr_attention <- model.frame.ols_attention

#' @rdname model.matrix.ols_attention
#' @export
model.matrix.pcr_attention <- model.matrix.ols_attention

#' Confidence intervals for shrinkage and kernel fits: why there are none
#'
#' Ridge and principal component regression shrink or truncate the coefficients: their
#' sampling distribution is centred on a biased target (for ridge
#' \eqn{(X'X + \lambda I)^{-1}X'X\beta}, for PCR the projection of \eqn{\beta} on the kept
#' components), so an interval \eqn{b \pm t\,se} built from the variance alone covers that
#' target, not \eqn{\beta}, and would be a plausible but wrong answer. These methods stop
#' with an explanation instead. For intervals use [ols_attention()] and [confint.ols_attention()].
#' The standard errors of ridge and PCR around their own expectation (classical, HC, HAC and
#' clustered) are in [summary.ridge_attention()] and `vcov()`.
#' A kernel regression has no coefficients: intervals for the regression function are in
#' `predict(fit, newdata, interval = "confidence")` and [diagnose()] (conventional and robust
#' bias-corrected).
#'
#' @param object A `ridge_attention`, `pcr_attention`, `attention_regression` or `kreg` fit.
#' @param parm,level Unused (see above).
#' @param ... Unused.
#' @return Never returns: an error naming what to use instead.
#' @examples
#' fit <- ridge_attention(mpg ~ wt + hp, data = mtcars, lambda = 1)
#' try(confint(fit))
#' @name confint.ridge_attention
#' @export
confint.ridge_attention <- function(object, parm, level = 0.95, ...) {
  stop("confint: ridge coefficients are shrunk towards 0, so b +- t se would cover the ",
       "shrunk target, not the coefficients; for confidence intervals fit ols_attention() ",
       "(the same formula) and use confint() on it", call. = FALSE)
}

#' @rdname confint.ridge_attention
#' @export
confint.pcr_attention <- function(object, parm, level = 0.95, ...) {
  stop("confint: principal component regression keeps ", object$rank, " component(s), so its ",
       "coefficients estimate the projection of the coefficients on them and b +- t se would ",
       "not cover the coefficients; for confidence intervals fit ols_attention() (the same ",
       "formula) and use confint() on it", call. = FALSE)
}

#' @rdname confint.ridge_attention
#' @export
confint.kreg <- function(object, parm, level = 0.95, ...) {
  stop("confint: a kernel regression has no coefficients; for intervals of the regression ",
       "function use predict(fit, newdata, interval = \"confidence\") or diagnose(fit, newdata) ",
       "(robust bias-corrected intervals)", call. = FALSE)
}

#' @rdname confint.ridge_attention
#' @export
confint.attention_regression <- function(object, parm, level = 0.95, ...) {
  stop("confint: softmax attention regression estimates an embedding by a non-convex ",
       "leave-self-out criterion and has no sampling theory for its coefficients; for ",
       "confidence intervals fit ols_attention() (the same formula) and use confint() on it",
       call. = FALSE)
}

# kreg() and kbw() smooth all regressors jointly with a product kernel, so an interaction
# term adds nothing to the fit; silently dropping one would mislead. Refuse with the term.
.kreg_refuse_interactions <- function(mt) {
  ord <- attr(mt, "order")
  if (length(ord) && any(ord > 1L)) {
    labs <- attr(mt, "term.labels")
    inter <- labs[ord > 1L]
    mains <- unique(unlist(lapply(labs, function(l) strsplit(l, ":", fixed = TRUE)[[1L]])))
    lhs <- if (attr(mt, "response") > 0L) deparse(mt[[2L]]) else "y"
    stop("formula: interaction term", if (length(inter) > 1L) "s", " ",
         paste0("'", inter, "'", collapse = ", "), " cannot be used in a kernel regression: ",
         "the product kernel smooths all regressors jointly, so every interaction is already ",
         "inside the fit (np's npreg has no interaction terms either); write each regressor ",
         "once: ", lhs, " ~ ", paste(mains, collapse = " + "), call. = FALSE)
  }
  invisible(NULL)
}
