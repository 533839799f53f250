#' Ordinary least squares as attention
#'
#' Fits a linear model by column-pivoted QR (the design's cross-product is never formed or
#' inverted) and keeps what is needed for its attention form (seed 004, eqs. 4-8): the
#' prediction at \eqn{x} is \eqn{\sum_i a_i(x) y_i} with
#' \eqn{a(x)' = d(x)' (D'D)^{-1} D'}, \eqn{D} the training design. With an intercept the
#' weights of each prediction sum to one.
#'
#' Rank-deficient designs are handled like [stats::lm()]: aliased columns get an `NA`
#' coefficient and are left out of predictions (which of several collinear columns is
#' aliased follows the pivoted QR and can differ from `lm`'s choice).
#'
#' @param formula A model formula, as for [stats::lm()] (factors become dummy columns).
#' @param data A data frame.
#' @param subset,weights,na.action As in [stats::lm()]. `weights` is not supported yet and
#'   gives an error if used.
#' @param rank_tol Relative pivot tolerance for aliasing (default `1e-7`, as `lm`).
#' @param n_threads Threads for the core (0 = OpenMP default).
#' @return An object of class `ols_attention` with components `coefficients`, `std_errors`,
#'   `sigma`, `rank`, `df.residual`, `fitted.values`, `residuals` and what `predict()` and
#'   [attention_weights()] need.
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' summary(fit)
#' A <- attention_weights(fit, newdata = mtcars[1:2, ])
#' rowSums(A)                                   # 1 with an intercept
#' drop(A %*% mtcars$mpg) - predict(fit, mtcars[1:2, ])
#' @export
ols_attention <- function(formula, data, subset, weights, na.action, rank_tol = 1e-7,
                          n_threads = 0L) {
  cl <- match.call()
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  if (!is.null(model.weights(mf))) {
    stop("weights: weighted least squares is not supported by ols_attention() yet; ",
         "drop the 'weights' argument", call. = FALSE)
  }
  mt <- attr(mf, "terms")
  y <- model.response(mf, "numeric")
  if (is.null(y)) stop("formula: needs a response on the left of '~'", call. = FALSE)
  X <- model.matrix(mt, mf)
  intercept <- attr(mt, "intercept") == 1L
  Xc <- if (intercept) X[, colnames(X) != "(Intercept)", drop = FALSE] else X
  Y <- as.matrix(y)
  res <- .ols_fit_cpp(Xc, Y, intercept, as.double(rank_tol), as.integer(n_threads))
  nm <- c(if (intercept) "(Intercept)", colnames(Xc))
  coef <- drop(res$coefficients)
  se <- drop(res$std_errors)
  if (is.matrix(coef)) {
    dimnames(coef) <- dimnames(se) <- list(nm, colnames(Y))
  } else {
    names(coef) <- names(se) <- nm
  }
  if (any(res$aliased)) {
    warning("ols_attention: design has rank ", res$rank, " < ", length(nm),
            " columns; aliased (NA): ", paste(nm[res$aliased], collapse = ", "), call. = FALSE)
  }
  fitted <- drop(res$fitted)
  resid <- drop(res$residuals)
  if (!is.matrix(fitted)) names(fitted) <- names(resid) <- rownames(mf)
  structure(list(
    coefficients = coef, std_errors = se, sigma = sqrt(res$sigma2), rank = res$rank,
    aliased = setNames(res$aliased, nm), df.residual = nrow(X) - res$rank,
    fitted.values = fitted, residuals = resid, unscaled_cov = res$unscaled_cov,
    intercept = intercept, y = Y, state = res$state, terms = mt,
    xlevels = .getXlevels(mt, mf), contrasts = attr(X, "contrasts"),
    na.action = attr(mf, "na.action"), call = cl, nobs = nrow(X)
  ), class = "ols_attention")
}

# Design matrix of new data without the intercept column, in the training column order.
.ols_newdesign <- function(object, newdata) {
  if (missing(newdata) || is.null(newdata)) {
    stop("newdata: needed here (pass a data frame with the model's variables)", call. = FALSE)
  }
  tt <- delete.response(object$terms)
  mf <- model.frame(tt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
  X <- model.matrix(tt, mf, contrasts.arg = object$contrasts)
  if (object$intercept) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  if (anyNA(X)) {
    stop("newdata: contains missing values in the model's variables; remove or impute them",
         call. = FALSE)
  }
  X
}

#' @export
print.ols_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS as attention (pivoted QR)\n\nCall:\n", paste(deparse(x$call), collapse = "\n"),
      "\n\nCoefficients:\n", sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  cat("\nRank ", x$rank, ", residual df ", x$df.residual, "\n", sep = "")
  invisible(x)
}

#' @export
summary.ols_attention <- function(object, ...) {
  if (is.matrix(object$coefficients)) {
    stop("summary: only for a single response; fit one model per column", call. = FALSE)
  }
  est <- object$coefficients
  se <- object$std_errors
  tval <- est / se
  df <- object$df.residual
  p <- 2 * pt(abs(tval), df, lower.tail = FALSE)
  tab <- cbind(Estimate = est, `Std. Error` = se, `t value` = tval, `Pr(>|t|)` = p)
  y <- drop(object$y)
  rss <- sum(object$residuals^2)
  tss <- if (object$intercept) sum((y - mean(y))^2) else sum(y^2)
  structure(list(call = object$call, coefficients = tab, sigma = object$sigma, df = df,
                 r.squared = 1 - rss / tss, rank = object$rank, aliased = object$aliased),
            class = "summary.ols_attention")
}

#' @export
print.summary.ols_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS as attention (pivoted QR)\n\nCall:\n", paste(deparse(x$call), collapse = "\n"),
      "\n\nCoefficients:\n", sep = "")
  printCoefmat(x$coefficients, digits = digits, na.print = "NA", ...)
  cat("\nResidual standard error:", format(signif(x$sigma, digits)), "on", x$df,
      "degrees of freedom\n")
  cat("Multiple R-squared:", formatC(x$r.squared, digits = digits), "\n")
  if (any(x$aliased)) cat("(", sum(x$aliased), " coefficient(s) aliased: NA)\n", sep = "")
  invisible(x)
}

#' @export
predict.ols_attention <- function(object, newdata, ...) {
  if (missing(newdata) || is.null(newdata)) return(fitted(object))
  p <- .ols_predict_cpp(object$state, object$y, .ols_newdesign(object, newdata))
  p <- drop(p)
  if (!is.matrix(p)) names(p) <- rownames(newdata)
  p
}

#' @export
coef.ols_attention <- function(object, ...) object$coefficients

#' @export
vcov.ols_attention <- function(object, ...) {
  if (is.matrix(object$coefficients)) {
    stop("vcov: only for a single response", call. = FALSE)
  }
  V <- object$unscaled_cov * object$sigma^2
  dimnames(V) <- list(names(object$coefficients), names(object$coefficients))
  V
}

#' @export
fitted.ols_attention <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.ols_attention <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.ols_attention <- function(object, ...) object$nobs

#' @rdname attention_weights
#' @export
attention_weights.ols_attention <- function(object, newdata, ...) {
  X <- .ols_newdesign(object, newdata)
  A <- .ols_attention_cpp(object$state, object$y, X)
  dimnames(A) <- list(rownames(newdata), names(object$fitted.values))
  A
}
