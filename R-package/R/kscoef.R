#' Smooth-coefficient kernel regression
#'
#' Fits \eqn{y = W'\beta(Z) + e}, \eqn{W = (1, X)}, as `np::npscoef` does: at each \eqn{z},
#' \eqn{\beta(z) = \arg\min_b \sum_i K_h(Z_i, z) (y_i - W_i'b)^2} (kernel-weighted least
#' squares; Cai, Fan and Yao 2000, JASA 95, 941-956; Li and Racine 2010, Econometric Theory 26,
#' 1607-1637), with the bandwidths over \eqn{Z} chosen by least-squares cross-validation (the
#' exact leave-one-out fits \eqn{W_i'\beta_{-i}(Z_i)}).
#'
#' @param formula `y ~ x1 + x2 | z1 + z2`: the regressors whose coefficients vary left of `|`
#'   (factors as treatment dummies), the smoothing variables right of it (numeric: continuous;
#'   factors: categorical kernels).
#' @param data A data frame.
#' @param subset,na.action As in [stats::lm()].
#' @param bw `"cv.ls"` (default) or the bandwidths, one per variable of \eqn{Z}.
#' @param kernel,ukertype,okertype Kernels over \eqn{Z}, as in [kreg()].
#' @param intercept Include the varying intercept.
#' @param n_threads Threads for the core (0 = OpenMP default).
#' @param ... Unused.
#' @return An object of class `kscoef` with `bw`, `cv`, `fitted.values`, `residuals` and
#'   `beta` (\eqn{\beta(Z_i)} at the training rows); [coef()] with `newdata` gives
#'   \eqn{\beta(z)} at new rows of \eqn{Z}.
#' @examples
#' d <- read.csv(system.file("extdata", "wage1.csv", package = "attnreg"))
#' fit <- kscoef(lwage ~ educ + tenure | exper, data = d)
#' fit
#' coef(fit, newdata = data.frame(exper = c(5, 20)))
#' @export
kscoef <- function(formula, data, subset, na.action, bw = "cv.ls", kernel = "gaussian",
                   ukertype = "aitchisonaitken", okertype = "liracine", intercept = TRUE,
                   n_threads = 0L, ...) {
  cl <- match.call()
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
  zspec <- .kreg_spec(model.frame(parts$z, mf))
  Z <- .kreg_encode(zspec, mf)
  if (is.character(bw)) {
    if (!identical(bw, "cv.ls")) stop("bw: must be \"cv.ls\" or numbers", call. = FALSE)
    bwv <- numeric(0)
  } else {
    bwv <- as.double(bw)
    if (length(bwv) != ncol(Z)) {
      stop("bw: needs one bandwidth per smoothing variable (", ncol(Z), ")", call. = FALSE)
    }
  }
  r <- .kreg_core(.kscoef_fit_cpp(X, as.double(y), Z, bwv, kernel, zspec$types, ukertype,
                                  okertype, isTRUE(intercept), as.integer(n_threads)), zspec,
                  c(Z = "data (Z)"))
  if (length(r$selection)) .sel_boundary_warning(r$selection, zspec$names, "kscoef(bw = \"cv.ls\")")
  rn <- rownames(mf)
  cn <- c(if (isTRUE(intercept)) "(Intercept)", colnames(X))
  beta <- r$coefficients
  dimnames(beta) <- list(rn, cn)
  structure(list(
    bw = setNames(r$bw, zspec$names), cv = r$cv, selection = r$selection,
    fitted.values = setNames(r$fitted, rn), residuals = setNames(as.double(y) - r$fitted, rn),
    beta = beta, nobs = length(y), kernel = kernel, ukertype = ukertype, okertype = okertype,
    intercept = isTRUE(intercept), n_threads = n_threads, X = X, y = as.double(y), Z = Z,
    zspec = zspec, xterms = delete.response(xt), xlevels = .getXlevels(xt, mf), call = cl,
    na.action = attr(mf, "na.action")
  ), class = "kscoef")
}

#' Coefficients of a smooth-coefficient model
#'
#' With `se = TRUE` also their standard errors: \eqn{\beta(z) = A(z) y} is linear in \eqn{y},
#' \eqn{A(z) = M_{WW}(z)^{-1} [K_h(Z_i, z) W_i]_i}, so its covariance is
#' \eqn{A(z)\,\mathrm{diag}(\sigma_i^2) A(z)'}; with the squared residuals \eqn{e_i^2} of the fit
#' for \eqn{\sigma_i^2} this is the kernel-weighted sandwich
#' \eqn{M_{WW}^{-1} (\sum_i K_h(Z_i, z)^2 e_i^2 W_i W_i') M_{WW}^{-1}} (heteroskedasticity-robust;
#' Cai, Fan and Yao 2000, JASA 95, 941-956, Sec. 2.3; Fan and Zhang 2008, Statistics and Its
#' Interface 1, 179-195), and the standard errors the square roots of its diagonal. Like every
#' plug-in variance of a kernel fit it ignores the smoothing bias.
#'
#' @param object A `kscoef` fit.
#' @param newdata A data frame with the smoothing variables; `NULL` for \eqn{\beta(Z_i)} at the
#'   training rows.
#' @param se `TRUE` to return the standard errors too.
#' @param ... Unused.
#' @return A matrix of \eqn{\beta(z)}, one row per row of `newdata`, intercept first; with
#'   `se = TRUE` a list with `coefficients` and `se` (matrices of the same shape).
#' @export
coef.kscoef <- function(object, newdata = NULL, se = FALSE, ...) {
  if (!is.logical(se) || length(se) != 1L || is.na(se)) {
    stop("se: must be TRUE or FALSE", call. = FALSE)
  }
  Zn <- if (is.null(newdata)) object$Z else .kreg_encode(object$zspec, newdata, "newdata")
  args <- list(object$X, object$y, object$Z, object$bw, object$kernel, object$zspec$types,
               object$ukertype, object$okertype, object$intercept, as.integer(object$n_threads),
               Zn)
  B <- if (is.null(newdata)) object$beta else {
    B <- .kreg_core(do.call(.kscoef_coef_cpp, args), object$zspec)
    colnames(B) <- colnames(object$beta)
    B
  }
  if (!se) return(B)
  S <- .kreg_core(do.call(.kscoef_se_cpp, args), object$zspec)
  dimnames(S) <- dimnames(B)
  list(coefficients = B, se = S)
}

#' @export
predict.kscoef <- function(object, newdata = NULL, ...) {
  if (is.null(newdata)) return(fitted(object))
  .check_newdata(object$xterms, newdata)
  mfx <- model.frame(object$xterms, newdata, xlev = object$xlevels)
  Xn <- model.matrix(object$xterms, mfx)
  Xn <- Xn[, colnames(Xn) != "(Intercept)", drop = FALSE]
  W <- if (object$intercept) cbind(1, Xn) else Xn
  rowSums(W * coef.kscoef(object, newdata))
}

#' @export
fitted.kscoef <- function(object, ...) object$fitted.values

#' @export
residuals.kscoef <- function(object, ...) object$residuals

#' @export
nobs.kscoef <- function(object, ...) object$nobs

#' @export
print.kscoef <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("Smooth-coefficient model,", x$kernel, "kernel; n =", x$nobs, "\n")
  cat("Bandwidths:", paste(names(x$bw), format(signif(x$bw, digits)), sep = " = ",
                           collapse = ", "), "\n")
  cat("Leave-one-out CV:", format(signif(x$cv, digits)), "\n")
  cat("Coefficients beta(Z_i) over the training rows (quartiles):\n")
  print(signif(apply(x$beta, 2, stats::quantile, probs = c(0.25, 0.5, 0.75)), digits))
  invisible(x)
}

#' @export
summary.kscoef <- function(object, ...) {
  print.kscoef(object, ...)
  r2 <- 1 - sum(object$residuals^2) / sum((object$y - mean(object$y))^2)
  cat("R-squared:", format(signif(r2, 4)), "\n")
  invisible(object)
}
