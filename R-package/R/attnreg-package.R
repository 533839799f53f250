#' attnreg: kernel regression and least squares as attention
#'
#' Every estimator in attnreg is linear in the response, \eqn{m(x) = \sum_i l_i(x) y_i}; the
#' rows \eqn{l(x)} are attention weights over the training rows, returned by
#' [attention_weights()]. Nadaraya-Watson with a Gaussian kernel is softmax attention,
#' local-linear regression is Local Linear Attention, and OLS predictions are attention with
#' weights \eqn{X_{test} (X'X)^{-1} X_{train}'}.
#'
#' @keywords internal
"_PACKAGE"

#' Attention weights of a fitted model
#'
#' The m x n matrix \eqn{A} whose rows are the weights each prediction puts on the training
#' responses: `predict(fit, newdata)` equals `A %*% y`.
#'
#' @param object A fitted attnreg model.
#' @param newdata A data frame of query points (default: the training data).
#' @param ... Passed to methods.
#' @return A numeric matrix with one row per row of `newdata` and one column per training row.
#' @examples
#' fit <- kreg(mpg ~ wt, data = mtcars, bw = 0.5)
#' A <- attention_weights(fit, data.frame(wt = c(2, 3)))
#' rowSums(A)                                  # 1: local linear weights are affine
#' drop(A %*% mtcars$mpg) - predict(fit, data.frame(wt = c(2, 3)))
#' o <- ols_attention(mpg ~ wt, data = mtcars)
#' dim(attention_weights(o, mtcars[1:4, ]))   # 4 x 32
#' @export
attention_weights <- function(object, newdata, ...) UseMethod("attention_weights")
