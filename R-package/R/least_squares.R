# The least-squares family as attention (Goulet Coulombe 2025, arXiv:2504.09663): ridge, PCR, the softmax attention
# regression, the attention-view generics and the masked-versus-recursive comparison. Every
# formula lives in the C++ core; this file parses formulas and shapes results.

#' Factors of a least-squares attention fit
#'
#' Factors \eqn{F} with \eqn{F_{test} F_{train}' = A}, the attention weights (Goulet Coulombe 2025, arXiv:2504.09663, eqs.
#' 5-7). For OLS \eqn{F = D U \Lambda^{-1/2}} with \eqn{D'D = U \Lambda U'}, so
#' \eqn{F_{train}'F_{train} = I} (eq. 6); for PCR the first column is the constant
#' \eqn{1/\sqrt{n}} and the rest are the standardised principal component scores (eq. 24);
#' for ridge the scores are shrunk (eq. 30).
#'
#' @param object A fitted `ols_attention`, `ridge_attention` or `pcr_attention` model.
#' @param newdata A data frame of new rows; `NULL` (default) gives the training factors.
#' @param ... Unused.
#' @return A matrix with one row per observation.
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' F <- attention_factors(fit)
#' Fn <- attention_factors(fit, mtcars[1:2, ])
#' all.equal(Fn %*% t(F), attention_weights(fit, mtcars[1:2, ]))
#' @export
attention_factors <- function(object, newdata = NULL, ...) UseMethod("attention_factors")

#' Embedding (Omega) of a least-squares attention fit
#'
#' The q x q matrix \eqn{\Omega} over the design \eqn{d = [1, x]} with attention weights
#' \eqn{A = d(X) \Omega D'}: \eqn{(D'D)^{-1}} for OLS (Goulet Coulombe 2025, arXiv:2504.09663, eq. 21),
#' \eqn{(D'D + \lambda\, \mathrm{diag}(0, I))^{-1}} for ridge (eqs. 29-30),
#' \eqn{U_L \Lambda_L^{-1} U_L'} (with the unreduced intercept) for PCR (eq. 27); for the
#' attention regression the learned \eqn{W W'} (eq. 28), entering through a softmax.
#'
#' @param object A fitted least-squares attention model.
#' @param ... Unused.
#' @return A square matrix named by the design columns.
#' @examples
#' fit <- ridge_attention(mpg ~ wt + hp, data = mtcars, lambda = 5)
#' attention_embedding(fit)
#' @export
attention_embedding <- function(object, ...) UseMethod("attention_embedding")

#' Exact leave-one-out predictions
#'
#' For OLS and ridge \eqn{\hat y_{-i} = y_i - e_i / (1 - h_{ii})}, exactly what refitting
#' without row i gives (intercept re-estimated); `NA` where \eqn{h_{ii} = 1}. For the attention
#' regression, the leave-self-out predictions its objective is built from.
#'
#' @param object A fitted model.
#' @param ... Unused.
#' @return A vector (or matrix for several responses).
#' @examples
#' fit <- ols_attention(mpg ~ wt, data = mtcars)
#' loo <- loo_predict(fit)
#' # the same as refitting without row 1
#' c(loo[1], predict(lm(mpg ~ wt, data = mtcars[-1, ]), mtcars[1, ]))
#' mean((mtcars$mpg - loo_predict(kreg(mpg ~ wt, data = mtcars, bw = 0.5)))^2)
#' @export
loo_predict <- function(object, ...) UseMethod("loo_predict")

#' Masked (causal) attention, Goulet Coulombe 2025, arXiv:2504.09663, eq. 35
#'
#' For time-ordered rows: the in-sample prediction of row t from the responses of rows
#' \eqn{\tau \le t} (\eqn{\tau < t} when `strict`), the attention weights renormalised to sum to
#' one. Computed from prefix sums without any n x n matrix (unless `weights = TRUE`). Rows whose
#' kept weights sum to (numerically) zero are `NA`. The similarities still use the full-sample
#' embedding, so future data leak in: see [pseudo_out_of_sample()].
#'
#' @param object A fitted `ols_attention`, `ridge_attention` or `pcr_attention` model.
#' @param strict Mask the current row too (a forecast of \eqn{y_t} made before it is seen).
#' @param weights Return the n x n lower-triangular weight matrix instead of predictions.
#' @param ... Unused.
#' @return Predictions (a vector, or a matrix for several responses; `NA` where undefined),
#'   or with `weights = TRUE` the n x n weight matrix.
#' @examples
#' d <- data.frame(y = as.numeric(lh)[-1], ylag = as.numeric(lh)[-48])
#' fit <- ols_attention(y ~ ylag, data = d)
#' head(masked_attention(fit, strict = TRUE))
#' W <- masked_attention(fit, weights = TRUE)
#' all(W[upper.tri(W)] == 0)
#' @export
masked_attention <- function(object, strict = FALSE, weights = FALSE, ...) {
  UseMethod("masked_attention")
}

# ------------------------------------------------------------------------------ ridge

#' Ridge regression as attention
#'
#' Minimises \eqn{||y - b_0 - X b||^2 + \lambda ||b||^2} (the intercept is never penalised:
#' X and y are centred) from one SVD \eqn{X_c = U S V'}. The attention weights are
#' \eqn{a(x) = 1/n + (x - \bar x)' V \mathrm{diag}(s/(s^2+\lambda)) U'} and sum to one (Goulet Coulombe 2025, arXiv:2504.09663
#' eqs. 29-30). With several `lambda` values the one minimising `select` is chosen in one pass
#' from the same SVD: exact leave-one-out MSE (`"loo"`), generalised cross-validation
#' \eqn{n RSS/(n - tr H)^2} (`"gcv"`) or AICc of Hurvich, Simonoff and Tsai (1998),
#' \eqn{\ln(RSS/n) + (1 + tr H/n)/(1 - (tr H + 2)/n)} (`"aicc"`).
#'
#' With `weights` (finite, non-negative, not all zero) it minimises
#' \eqn{\sum_i w_i (y_i - b_0 - x_i'b)^2 + \lambda ||b||^2}: weighted means, the SVD of
#' \eqn{W^{1/2} X_c}, and attention weights
#' \eqn{a(x) = w'/\sum w + (x - \bar x_w)' V \mathrm{diag}(s/(s^2+\lambda)) U' W^{1/2}} that
#' still sum to one (rows of weight 0 get 0). For a grid the criteria count row i
#' \eqn{w_i} times: LOO is \eqn{\sum_i w_i (y_i - \hat y_{-i})^2 / \sum w} (row i left out
#' entirely); GCV and AICc use \eqn{RSS = \sum w_i e_i^2} and \eqn{n = \sum w}, equal for
#' integer weights to the criteria of the data with rows repeated. `weight_type` says how the
#' weights count in the inference (`summary()`, `vcov()`, `confint()`): `"analytic"` (Stata's
#' aweight, as [stats::lm()]) takes N as the number of rows of positive weight, `"frequency"`
#' (Stata's fweight: row i stands for \eqn{w_i} identical observations) takes
#' \eqn{N = \sum w}; the fit and the selection criteria are the same for both.
#'
#' @inheritParams ols_attention
#' @param lambda Penalty (>= 0) or a grid of penalties.
#' @param subset,na.action As in [stats::lm()]: rows to use and what to do with missing values.
#' @param weights Optional observation weights, as in [stats::lm()] (see above).
#' @param select Criterion for a grid: `"loo"`, `"gcv"` or `"aicc"`.
#' @param weight_type `"analytic"` (default, Stata's aweight, as `lm`) or `"frequency"`
#'   (Stata's fweight); only the degrees of freedom of the inference differ (see above).
#' @return An object of class `ridge_attention`: `coefficients`, `lambda`, `effective_df`
#'   (tr H), `selection` (a data frame of the criteria per lambda for a grid; `NULL` for a
#'   single `lambda`), `fitted.values`, `residuals`, `weight_type` (`NULL` when unweighted).
#' @examples
#' fit <- ridge_attention(mpg ~ ., data = mtcars, lambda = 10^seq(-2, 3, length = 30))
#' fit$lambda
#' A <- attention_weights(fit, mtcars[1:3, ])
#' rowSums(A)
#' @export
ridge_attention <- function(formula, data, subset, weights, na.action, lambda = 1,
                            select = c("loo", "gcv", "aicc"), n_threads = 0L,
                            weight_type = c("analytic", "frequency")) {
  cl <- match.call()
  select <- match.arg(select)
  weight_type <- .ls_weight_type(weight_type)
  if (!is.numeric(lambda) || length(lambda) < 1L || anyNA(lambda)) {
    stop("lambda: must be a number >= 0 or a grid of them", call. = FALSE)
  }
  mf <- .ls_frame(match.call(expand.dots = FALSE), parent.frame())
  d <- .ls_design(mf)
  w <- .ls_weights(mf)
  res <- .kreg_core(.ridge_fit_cpp(d$X, d$Y, as.double(lambda), select, d$intercept,
                                   as.integer(n_threads), w, weight_type),
                    rename = c(alpha = "lambda"))
  .ls_object(res, d, mf, cl, "ridge_attention",
             list(lambda = res$lambda, effective_df = res$effective_df, weights = w,
                  weight_type = if (!is.null(w)) weight_type,
                  data = if (!missing(data)) data,
                  selection = if (length(lambda) > 1L) as.data.frame(res$selection[1:5]),
                  select = if (length(lambda) > 1L) select))
}

# Common fields of a fitted least-squares object.
.ls_object <- function(res, d, mf, cl, class, extra) {
  coef <- drop(res$coefficients)
  if (is.matrix(coef)) dimnames(coef) <- list(d$names, colnames(d$Y)) else names(coef) <- d$names
  fitted <- drop(res$fitted)
  resid <- if (!is.null(res$residuals)) drop(res$residuals) else drop(d$Y) - fitted
  if (!is.matrix(fitted)) names(fitted) <- names(resid) <- rownames(mf)
  structure(c(list(coefficients = coef, fitted.values = fitted, residuals = resid,
                   intercept = d$intercept, y = d$Y, state = res$state, terms = d$terms,
                   xlevels = .getXlevels(d$terms, mf), contrasts = d$contrasts,
                   design_names = d$names, na.action = attr(mf, "na.action"), call = cl,
                   nobs = nrow(d$X), model = mf), extra),
            class = class)
}

# weight_type of ridge_attention / pcr_attention: "analytic" (the default) or "frequency".
.ls_weight_type <- function(x) {
  choices <- c("analytic", "frequency")
  if (identical(x, choices)) return("analytic")
  if (!is.character(x) || length(x) != 1L || !(x %in% choices)) {
    stop("weight_type: must be \"analytic\" (Stata's aweight) or \"frequency\" (Stata's ",
         "fweight), got ", deparse(x), call. = FALSE)
  }
  x
}

# Weights of a model frame (NULL when none), checked to be a numeric vector.
.ls_weights <- function(mf) {
  w <- model.weights(mf)
  if (is.null(w)) return(NULL)
  if (!is.numeric(w) || !is.null(dim(w)) && NCOL(w) != 1L) {
    stop("weights: must be a numeric vector with one weight per row", call. = FALSE)
  }
  as.double(w)
}

.ridge_view <- function(object, what, X = matrix(0, 0, 0), strict = FALSE) {
  .ridge_view_cpp(object$state, object$y, object$lambda, what, X, strict)
}

#' @export
print.ridge_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nRidge regression as attention (SVD)\n\nCall:\n", paste(deparse(x$call), collapse = "\n"),
      "\n\nlambda = ", format(x$lambda, digits = digits),
      if (!is.null(x$select)) paste0(" (chosen by ", x$select, " over ", nrow(x$selection),
                                     " values)"),
      ", effective df = ", format(x$effective_df, digits = digits), "\n\nCoefficients:\n",
      sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  invisible(x)
}

#' Summaries and covariances of ridge and PCR fits
#'
#' Both estimators are linear in the response, \eqn{b = M y}, so the sandwich covariances of
#' [summary.ols_attention()] are exact for them with \eqn{M} in place of
#' \eqn{(D'WD)^{-1}D'W}: classical \eqn{\sigma^2 M W^{-1} M'} with
#' \eqn{\sigma^2 = \sum w_i e_i^2 / (N - \mathrm{tr} H)}, HC0-HC3 (leverages of the smoother
#' \eqn{H}), HAC, and cluster-robust CR0/CR1/CR2, one- or two-way (`vcov = ~firm + year`).
#' The residual degrees of freedom are \eqn{N - \mathrm{tr} H} (exact for PCR, a projection; the
#' effective-df convention for ridge). These are the variances of the estimator around its own
#' expectation \eqn{E[b] = M E[y]}: ridge is biased (Hoerl and Kennard 1970, Technometrics
#' 12(1)), and PCR estimates the projection of the coefficients on the kept components, so
#' \eqn{b \pm t\,se} is not a confidence interval for the coefficients (see
#' [confint.ridge_attention()]). With a grid of `lambda` they treat the chosen value as fixed.
#'
#' @param object A `ridge_attention` or `pcr_attention` fit (single response).
#' @param vcov,maxlags,hac_adjust,cluster_type As in [summary.ols_attention()] (`vcov` may be
#'   a clustering formula such as `~firm` or `~firm + year`). An indefinite two-way clustered
#'   covariance is replaced by its positive semi-definite part \eqn{U \max(\Lambda, 0) U'}
#'   (Cameron, Gelbach and Miller 2011, J. Bus. Econ. Stat. 29(2), sec. 2.3), with a warning
#'   and `cov_fixed = TRUE`, as for [summary.ols_attention()].
#' @param type Deprecated name of `vcov` in `vcov()` (a warning; removed in the next release).
#' @param ... Unused.
#' @return `summary()`: an object of class `summary.ridge_attention` or `summary.pcr_attention`
#'   with `coefficients` (a matrix: estimate, standard error, t value, p value on
#'   `df_inference` degrees of freedom), `cov`, `sigma`, `df` (\eqn{N - \mathrm{tr} H}),
#'   `df_inference`, `r.squared`, `adj.r.squared`, `vcov` (the type used), `n_clusters` and
#'   `cov_fixed` (`TRUE` when the two-way clustered covariance was eigenvalue-fixed);
#'   `vcov()`: the q x q covariance matrix.
#' @examples
#' fit <- ridge_attention(mpg ~ wt + hp, data = mtcars, lambda = 1)
#' summary(fit, vcov = "HC3")
#' vcov(fit, vcov = ~cyl)
#' summary(pcr_attention(mpg ~ wt + hp + disp, data = mtcars, rank = 2), vcov = ~cyl + gear)
#' @name summary.ridge_attention
#' @export
summary.ridge_attention <- function(object, vcov = "nonrobust", maxlags = NULL,
                                    hac_adjust = FALSE, cluster_type = "CR1", ...) {
  s <- .spectral_summary(object, "ridge", object$lambda, vcov, maxlags, hac_adjust, cluster_type)
  s$lambda <- object$lambda
  s$selection <- object$selection
  s$select <- object$select
  class(s) <- "summary.ridge_attention"
  s
}

# The coefficient table and covariance of a ridge / PCR fit from the core.
.spectral_summary <- function(object, kind, param, vcov, maxlags, hac_adjust, cluster_type) {
  if (is.matrix(object$coefficients)) {
    stop("summary: only for a single response; fit one model per column", call. = FALSE)
  }
  a <- .ols_cov_args(vcov, maxlags, object, cluster_type)
  inf <- .spectral_inference_cpp(kind, object$state, object$y, as.double(param), a$vcov,
                                 a$maxlags, isTRUE(hac_adjust), a$clusters,
                                 if (is.null(object$weight_type)) "analytic" else object$weight_type)
  cov_fixed <- .note_cov_fix(inf, "summary")
  nm <- names(object$coefficients)
  tab <- cbind(Estimate = drop(inf$estimate), `Std. Error` = drop(inf$std_error),
               `t value` = drop(inf$t_value), `Pr(>|t|)` = drop(inf$p_value))
  rownames(tab) <- nm
  V <- inf$vcov
  dimnames(V) <- list(nm, nm)
  list(call = object$call, coefficients = tab, cov = V, sigma = inf$sigma,
       df = inf$df_residual, df_inference = inf$df_inference, effective_df = inf$effective_df,
       r.squared = inf$r_squared, adj.r.squared = inf$adj_r_squared, vcov = inf$cov_type,
       maxlags = inf$maxlags,
       n_clusters = if (length(inf$n_clusters)) stats::setNames(inf$n_clusters, a$cluster_vars),
       cov_fixed = cov_fixed)
}

.print_spectral_table <- function(x, digits, ...) {
  se <- switch(x$vcov, nonrobust = "classical",
               HAC = paste0("HAC (Newey-West, Bartlett, ", x$maxlags, " lags)"), x$vcov)
  if (length(x$n_clusters)) {
    se <- paste0(x$vcov, ", clustered by ",
                 paste0(names(x$n_clusters), " (", x$n_clusters, ")", collapse = " and "),
                 "; t with ", x$df_inference, " df")
  }
  cat("Coefficients (standard errors around E[b]: ", se, "):\n", sep = "")
  printCoefmat(x$coefficients, digits = digits, na.print = "NA", ...)
  cat("\nResidual standard error:", format(signif(x$sigma, digits)), "on",
      format(x$df, digits = digits), "degrees of freedom (N - tr H)\n")
  cat("Multiple R-squared: ", formatC(x$r.squared, digits = digits),
      ",\tAdjusted R-squared: ", formatC(x$adj.r.squared, digits = digits), "\n", sep = "")
}

#' @export
print.summary.ridge_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nRidge regression as attention\n\nCall:\n", paste(deparse(x$call), collapse = "\n"),
      "\n\n", sep = "")
  if (!is.null(x[["select"]]) && NROW(x[["selection"]]) > 0L) {
    cat("Selection over the lambda grid (", x$select, "):\n", sep = "")
    print(utils::head(x$selection[order(x$selection[[switch(x$select, loo = "loo_mse", x$select)]]), ], 5),
          digits = digits)
    cat("\n")
  }
  cat("lambda = ", format(x$lambda, digits = digits), ", effective df = ",
      format(x$effective_df, digits = digits), "\n\n", sep = "")
  .print_spectral_table(x, digits, ...)
  cat("(Ridge is biased: the standard errors are around E[b], not the true coefficients.)\n")
  invisible(x)
}

#' @rdname summary.ridge_attention
#' @export
vcov.ridge_attention <- function(object, vcov = "nonrobust", maxlags = NULL, hac_adjust = FALSE,
                                 cluster_type = "CR1", ..., type) {
  if (!missing(type)) vcov <- .renamed_arg("vcov", "type", "vcov", type, missing(vcov))
  summary(object, vcov = vcov, maxlags = maxlags, hac_adjust = hac_adjust,
          cluster_type = cluster_type)$cov
}

.ls_r2 <- function(object) {
  y <- drop(object$y)
  if (is.matrix(y)) return(NA_real_)
  w <- if (is.null(object$weights)) rep(1, length(y)) else object$weights
  tss <- if (object$intercept) sum(w * (y - sum(w * y) / sum(w))^2) else sum(w * y^2)
  1 - sum(w * object$residuals^2) / tss
}

.ls_predict <- function(object, newdata, view) {
  if (missing(newdata) || is.null(newdata)) return(fitted(object))
  p <- drop(view(object, "predict", .ls_newdesign(object, newdata)))
  if (!is.matrix(p)) names(p) <- rownames(newdata)
  p
}

#' @export
predict.ridge_attention <- function(object, newdata, ...) .ls_predict(object, newdata, .ridge_view)

#' @export
coef.ridge_attention <- function(object, ...) object$coefficients

#' @export
fitted.ridge_attention <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.ridge_attention <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.ridge_attention <- function(object, ...) object$nobs

.ls_attention <- function(object, newdata, view) {
  A <- view(object, "attention", .ls_newdesign(object, newdata))
  dimnames(A) <- list(rownames(newdata), .ls_rownames(object))
  A
}

.ls_factors <- function(object, newdata, view) {
  if (is.null(newdata)) {
    F <- view(object, "training_factors")
    rownames(F) <- .ls_rownames(object)
  } else {
    F <- view(object, "factors", .ls_newdesign(object, newdata))
    rownames(F) <- rownames(newdata)
  }
  colnames(F) <- c(if (object$intercept) "const", paste0("F", seq_len(ncol(F) - object$intercept)))
  F
}

.ls_embedding <- function(object, view) {
  O <- view(object, "embedding")
  dimnames(O) <- list(object$design_names, object$design_names)
  O
}

#' @rdname attention_weights
#' @export
attention_weights.ridge_attention <- function(object, newdata, ...) {
  .ls_attention(object, newdata, .ridge_view)
}

#' @rdname attention_factors
#' @export
attention_factors.ridge_attention <- function(object, newdata = NULL, ...) {
  .ls_factors(object, newdata, .ridge_view)
}

#' @rdname attention_embedding
#' @export
attention_embedding.ridge_attention <- function(object, ...) .ls_embedding(object, .ridge_view)

#' @rdname loo_predict
#' @export
loo_predict.ridge_attention <- function(object, ...) {
  p <- drop(.ridge_view(object, "loo"))
  if (!is.matrix(p)) names(p) <- .ls_rownames(object)
  p
}

#' @rdname masked_attention
#' @export
masked_attention.ridge_attention <- function(object, strict = FALSE, weights = FALSE, ...) {
  .ls_masked(object, strict, weights, function(what) .ridge_view(object, what, strict = isTRUE(strict)))
}

#' Coefficient path of a ridge fit
#'
#' @param object A `ridge_attention` fit.
#' @param lambda Penalties.
#' @return For a single response, a matrix with one row per lambda and one column per
#'   coefficient; otherwise an array (coefficient x response x lambda).
#' @examples
#' fit <- ridge_attention(mpg ~ wt + hp + disp, data = mtcars, lambda = 1)
#' P <- ridge_path(fit, 10^seq(-2, 4, length.out = 7))
#' matplot(log10(as.numeric(rownames(P))), P[, -1], type = "l", xlab = "log10 lambda",
#'         ylab = "coefficient")
#' @export
ridge_path <- function(object, lambda) {
  if (!inherits(object, "ridge_attention")) stop("object: needs a ridge_attention fit", call. = FALSE)
  P <- .ridge_path_cpp(object$state, object$y, as.double(lambda))
  if (dim(P)[2] == 1L) {
    M <- t(matrix(P, dim(P)[1], dim(P)[3]))
    dimnames(M) <- list(format(lambda), object$design_names)
    return(M)
  }
  dimnames(P) <- list(object$design_names, colnames(object$y), format(lambda))
  P
}

# ------------------------------------------------------------------------------ PCR

#' Principal component regression as rank-L attention
#'
#' OLS on the first `rank` principal components of the centred design (the intercept is not
#' reduced): \eqn{\Omega_L = U_L \Lambda_L^{-1} U_L'} (Goulet Coulombe 2025, arXiv:2504.09663, eq. 27), orthonormal factors
#' \eqn{F_{train} = [1/\sqrt n, U_L]} (eq. 24) and predictions \eqn{F_{test} F_{train}' y}
#' (eq. 25). With `rank` equal to the number of columns it is OLS.
#'
#' @inheritParams ols_attention
#' @param rank Number of components; `NULL` keeps all (the numerical rank).
#' @param subset,na.action As in [stats::lm()]: rows to use and what to do with missing values.
#' @param weights Optional observation weights (finite, >= 0, not all 0), as in [stats::lm()]:
#'   the components are those of the weighted, weighted-mean-centred design.
#' @param weight_type `"analytic"` (default, Stata's aweight, as `lm`: N is the number of rows
#'   of positive weight) or `"frequency"` (Stata's fweight: \eqn{N = \sum w}); the fit is the
#'   same, only the degrees of freedom of `summary()`, `vcov()` and `confint()` differ.
#' @return An object of class `pcr_attention`: `coefficients`, `rank`,
#'   `explained_variance_ratio`, `fitted.values`, `residuals`, `weight_type` (`NULL` when
#'   unweighted).
#' @examples
#' fit <- pcr_attention(mpg ~ ., data = mtcars, rank = 3)
#' fit
#' F <- attention_factors(fit)
#' round(crossprod(F), 12)                      # identity (Goulet Coulombe 2025, eq. 24)
#' @export
pcr_attention <- function(formula, data, subset, weights, na.action, rank = NULL,
                          n_threads = 0L, weight_type = c("analytic", "frequency")) {
  cl <- match.call()
  weight_type <- .ls_weight_type(weight_type)
  if (!is.null(rank) && (!is.numeric(rank) || length(rank) != 1L || rank < 0 ||
                         rank != round(rank))) {
    stop("rank: must be NULL (all components) or a single integer >= 0", call. = FALSE)
  }
  mf <- .ls_frame(match.call(expand.dots = FALSE), parent.frame())
  d <- .ls_design(mf)
  w <- .ls_weights(mf)
  res <- .kreg_core(.pcr_fit_cpp(d$X, d$Y, if (is.null(rank)) -1L else as.integer(rank),
                                 d$intercept, as.integer(n_threads), w, weight_type))
  .ls_object(res, d, mf, cl, "pcr_attention",
             list(rank = res$rank, explained_variance_ratio = res$explained_variance_ratio,
                  weights = w, weight_type = if (!is.null(w)) weight_type,
                  data = if (!missing(data)) data))
}

.pcr_view <- function(object, what, X = matrix(0, 0, 0), strict = FALSE) {
  .pcr_view_cpp(object$state, object$y, as.integer(object$rank), what, X, strict)
}

#' @export
print.pcr_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nPrincipal component regression as attention\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\n", x$rank, " component(s), explaining ",
      format(100 * sum(x$explained_variance_ratio), digits = digits),
      "% of the centred design's sum of squares\n\nCoefficients:\n", sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  invisible(x)
}

#' @rdname summary.ridge_attention
#' @export
summary.pcr_attention <- function(object, vcov = "nonrobust", maxlags = NULL,
                                  hac_adjust = FALSE, cluster_type = "CR1", ...) {
  s <- .spectral_summary(object, "pcr", object$rank, vcov, maxlags, hac_adjust, cluster_type)
  s$rank <- object$rank
  s$explained_variance_ratio <- object$explained_variance_ratio
  class(s) <- "summary.pcr_attention"
  s
}

#' @export
print.summary.pcr_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nPrincipal component regression as attention\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\nComponents: ", x$rank,
      "\nShare of the sum of squares per component: ",
      paste(format(x$explained_variance_ratio, digits = digits), collapse = " "), "\n\n",
      sep = "")
  .print_spectral_table(x, digits, ...)
  invisible(x)
}

#' @rdname summary.ridge_attention
#' @export
vcov.pcr_attention <- function(object, vcov = "nonrobust", maxlags = NULL, hac_adjust = FALSE,
                               cluster_type = "CR1", ..., type) {
  if (!missing(type)) vcov <- .renamed_arg("vcov", "type", "vcov", type, missing(vcov))
  summary(object, vcov = vcov, maxlags = maxlags, hac_adjust = hac_adjust,
          cluster_type = cluster_type)$cov
}

#' @export
predict.pcr_attention <- function(object, newdata, ...) .ls_predict(object, newdata, .pcr_view)

#' @export
coef.pcr_attention <- function(object, ...) object$coefficients

#' @export
fitted.pcr_attention <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.pcr_attention <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.pcr_attention <- function(object, ...) object$nobs

#' @rdname attention_weights
#' @export
attention_weights.pcr_attention <- function(object, newdata, ...) {
  .ls_attention(object, newdata, .pcr_view)
}

#' @rdname attention_factors
#' @export
attention_factors.pcr_attention <- function(object, newdata = NULL, ...) {
  .ls_factors(object, newdata, .pcr_view)
}

#' @rdname attention_embedding
#' @export
attention_embedding.pcr_attention <- function(object, ...) .ls_embedding(object, .pcr_view)

#' @rdname masked_attention
#' @export
masked_attention.pcr_attention <- function(object, strict = FALSE, weights = FALSE, ...) {
  .ls_masked(object, strict, weights, function(what) .pcr_view(object, what, strict = isTRUE(strict)))
}

# ------------------------------------------------------------------------------ attention regression

#' Softmax attention regression (Goulet Coulombe 2025, arXiv:2504.09663, eq. 28)
#'
#' Predicts \eqn{\hat y(x) = \sum_j \mathrm{softmax}_j(d(x)'\Omega d(x_j))\, y_j} with
#' \eqn{\Omega = W W'} of rank `rank` over the standardised design \eqn{d = [1, z]}. W minimises
#' the leave-self-out mean squared error (the diagonal of the training attention is masked,
#' otherwise every row would attend to itself), by L-BFGS with analytic gradients from
#' `n_starts` seeded random starts. The weights are non-negative and sum to one.
#'
#' @inheritParams ols_attention
#' @param rank Rank of \eqn{\Omega} (columns of W).
#' @param subset,na.action As in [stats::lm()]: rows to use and what to do with missing values.
#' @param n_starts Random starts; the best objective wins.
#' @param seed Seed of the starts (the fit is reproducible on every platform).
#' @param max_iter,tol L-BFGS iterations and relative gradient tolerance per start.
#' @param standardize Standardise the regressors first.
#' @param init_scale Spread of the random starting scores.
#' @return An object of class `attention_regression`: `objective` (leave-self-out MSE),
#'   `start_objectives`, `n_evals`, `converged`, `fitted.values`, `residuals`.
#' @examples
#' set.seed(1)
#' d <- data.frame(x = rnorm(200))
#' d$y <- tanh(2 * d$x) + rnorm(200, sd = 0.2)
#' fit <- attention_regression(y ~ x, data = d, rank = 2, n_starts = 2)
#' fit
#' rowSums(attention_weights(fit, d[1:3, , drop = FALSE]))
#' @export
attention_regression <- function(formula, data, subset, na.action, rank = 2L, n_starts = 4L,
                                 seed = 0, max_iter = 300L, tol = 1e-6, standardize = TRUE,
                                 init_scale = 1, n_threads = 0L) {
  cl <- match.call()
  mf <- .ls_frame(match.call(expand.dots = FALSE), parent.frame())
  d <- .ls_design(mf)
  opts <- list(rank = as.integer(rank), fit_intercept = d$intercept,
               standardize = isTRUE(standardize), n_starts = as.integer(n_starts),
               seed = as.double(seed), max_iter = as.integer(max_iter), tol = as.double(tol),
               init_scale = as.double(init_scale), n_threads = as.integer(n_threads))
  res <- .attnreg_fit_cpp(d$X, d$Y, opts)
  if (!isTRUE(res$converged)) {
    warning("attention_regression: L-BFGS stopped before convergence (", res$message,
            "); increase max_iter or loosen tol", call. = FALSE)
  }
  fitted <- drop(res$fitted)
  resid <- drop(d$Y) - fitted
  if (!is.matrix(fitted)) names(fitted) <- names(resid) <- rownames(mf)
  structure(list(objective = res$objective, start_objectives = res$start_objectives,
                 n_evals = res$n_evals, iterations = res$iterations, converged = res$converged,
                 fitted.values = fitted, residuals = resid, loo = drop(res$loo), options = opts,
                 intercept = d$intercept, y = d$Y, state = res$state, terms = d$terms,
                 xlevels = .getXlevels(d$terms, mf), contrasts = d$contrasts,
                 design_names = d$names, na.action = attr(mf, "na.action"), call = cl,
                 nobs = nrow(d$X)),
            class = "attention_regression")
}

.ar_view <- function(object, what, X = matrix(0, 0, 0)) {
  .attnreg_view_cpp(object$state, object$y, object$options, what, X)
}

#' @export
print.attention_regression <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nSoftmax attention regression (Goulet Coulombe 2025, eq. 28)\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\nrank ", x$options$rank, ", ",
      x$options$n_starts, " start(s), leave-self-out MSE ", format(x$objective, digits = digits),
      " (", x$n_evals, " evaluations", if (!isTRUE(x$converged)) ", not converged", ")\n",
      sep = "")
  invisible(x)
}

#' @export
summary.attention_regression <- function(object, ...) {
  structure(list(call = object$call, objective = object$objective,
                 start_objectives = object$start_objectives, rank = object$options$rank,
                 converged = object$converged, r.squared = .ls_r2(object),
                 embedding = attention_embedding(object)),
            class = "summary.attention_regression")
}

#' @export
print.summary.attention_regression <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nSoftmax attention regression (Goulet Coulombe 2025, eq. 28)\n\nCall:\n",
      paste(deparse(x$call), collapse = "\n"), "\n\nLeave-self-out MSE: ",
      format(x$objective, digits = digits), " (per start: ",
      paste(format(x$start_objectives, digits = digits), collapse = ", "), ")\nIn-sample R-squared: ",
      formatC(x$r.squared, digits = digits), "\n\nEmbedding Omega = W W' (rank ", x$rank, "):\n",
      sep = "")
  print(x$embedding, digits = digits)
  invisible(x)
}

#' @export
predict.attention_regression <- function(object, newdata, ...) .ls_predict(object, newdata, .ar_view)

#' @export
fitted.attention_regression <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.attention_regression <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.attention_regression <- function(object, ...) object$nobs

#' @export
coef.attention_regression <- function(object, ...) attention_embedding(object)

#' @rdname attention_weights
#' @export
attention_weights.attention_regression <- function(object, newdata, ...) {
  .ls_attention(object, newdata, .ar_view)
}

#' @rdname attention_embedding
#' @export
attention_embedding.attention_regression <- function(object, ...) .ls_embedding(object, .ar_view)

#' @rdname loo_predict
#' @export
loo_predict.attention_regression <- function(object, ...) {
  p <- object$loo
  if (!is.matrix(p)) names(p) <- .ls_rownames(object)
  p
}

# ------------------------------------------------------------------------------ pseudo-OOS

#' Recursive re-estimation versus masking (Goulet Coulombe 2025, arXiv:2504.09663, section 4.3)
#'
#' For time-ordered data: for each row t from `start` on, the honest pseudo-out-of-sample
#' forecast refits OLS (`lambda = 0`) or ridge on rows before t; the masked forecast applies
#' eq. 35 (strict mask, renormalised weights) to the full-sample fit. Masking hides future
#' responses but its similarities use the full-sample embedding, so the future still leaks in:
#' masked forecasts move when later data change, recursive ones do not.
#'
#' @inheritParams ols_attention
#' @param lambda Ridge penalty (0 = OLS).
#' @param subset,na.action As in [stats::lm()]: rows to use and what to do with missing values.
#' @param start First forecast row (1-based); `NULL` uses the number of design columns + 2.
#' @param keep_weights Also return both m x n weight matrices.
#' @return A list: `rows`, `y`, `recursive`, `masked`, `in_sample`, `mse_recursive`,
#'   `mse_masked`, `mse_in_sample`, `weight_gap` (L1 distance between the masked and the
#'   recursive weights of each row) and, with `keep_weights`, `weights_recursive`,
#'   `weights_masked`.
#' @examples
#' d <- data.frame(y = as.numeric(lh)[-1], ylag = as.numeric(lh)[-48])
#' r <- pseudo_out_of_sample(y ~ ylag, data = d, start = 10)
#' c(recursive = r$mse_recursive, masked = r$mse_masked)
#' @export
pseudo_out_of_sample <- function(formula, data, subset, na.action, lambda = 0, start = NULL,
                                 keep_weights = FALSE) {
  mf <- .ls_frame(match.call(expand.dots = FALSE), parent.frame())
  d <- .ls_design(mf)
  s <- if (is.null(start)) 0L else as.integer(start) - 1L
  if (!is.null(start) && (length(start) != 1L || start < 2)) {
    stop("start: must be NULL or a single row number >= 2", call. = FALSE)
  }
  r <- .pseudo_oos_cpp(d$X, d$Y, d$intercept, as.double(lambda), s, isTRUE(keep_weights))
  for (k in c("y", "recursive", "masked", "in_sample")) r[[k]] <- drop(r[[k]])
  r
}
