# mse_dpi() / imse_dpi() with several columns of x: the pilot local quadratic plug-in of
# core/include/attnreg/inference/rbc_bandwidth_multivariate.hpp (formulas in docs/bandwidth.md).

.mv_dpi_x <- function(x) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.matrix(x) && ncol(x) >= 2L) {
    if (!is.numeric(x)) stop("x: must be numeric (continuous regressors)", call. = FALSE)
    storage.mode(x) <- "double"
    return(x)
  }
  NULL
}

.mv_note <- "with several columns of x the plug-in is the multivariate pilot local quadratic one"

.mv_dpi <- function(x, y, eval_points, imse, method, kernel, vcov, h0, pilot_bw, algorithm,
                    degree, deriv, bwcheck, interior, pilot, bwregul, common_scale, bias_terms) {
  dd <- ncol(x)
  if (!identical(algorithm, "nprobust"))
    stop("algorithm: \"", algorithm, "\" is univariate; ", .mv_note, call. = FALSE)
  if (!is.null(vcov)) stop("vcov: not an option here; ", .mv_note,
                           " (its variance is the pilot's local residual variance)", call. = FALSE)
  if (!is.null(h0)) stop("h0: not an option here; ", .mv_note, call. = FALSE)
  if (!identical(as.numeric(deriv), 0)) stop("deriv: ", .mv_note, " (deriv = 0)", call. = FALSE)
  if (isTRUE(interior))
    stop("interior: a univariate lpbwselect option; ", .mv_note, call. = FALSE)
  bwc <- if (is.null(bwcheck)) 0L else bwcheck
  if (length(bwc) != 1L || !is.numeric(bwc) || !is.finite(bwc) || bwc < 0 || bwc != round(bwc))
    stop("bwcheck: the minimum number of distinct rows in every window must be an integer ",
         ">= 1 (e.g. 21), or 0 for no minimum", call. = FALSE)
  if (!(length(bias_terms) == 1L && bias_terms %in% c("absolute", "signed")))
    stop("bias_terms: \"absolute\" (the bound sum_j |a_j| h_j^2, no cancelling terms) or ",
         "\"signed\" (the pure MSE)", call. = FALSE)
  p <- if (is.null(degree)) (if (method == "ll") 1L else 0L) else .diag_int(degree, "degree")
  if (!p %in% c(0L, 1L)) stop("degree: ", .mv_note, ", for local constant (0) and local ",
                              "linear (1) fits, got ", p, call. = FALSE)
  b <- if (is.null(pilot_bw)) numeric(0) else as.double(pilot_bw)
  if (length(b) && length(b) != dd)
    stop("pilot_bw: needs one value per column of x (", dd, "), got ", length(b), call. = FALSE)
  if (length(b) && (any(!is.finite(b)) || any(b <= 0)))
    stop("pilot_bw: must be finite and positive", call. = FALSE)
  single <- FALSE
  if (is.null(eval_points)) {
    if (imse) {
      k <- max(2L, as.integer(round(30^(1 / dd))))
      axes <- lapply(seq_len(dd), function(j) stats::quantile(x[, j], seq(0.1, 0.9, length.out = k),
                                                             names = FALSE))
      ev <- as.matrix(expand.grid(axes))
    } else {
      ev <- matrix(apply(x, 2, stats::median), nrow = 1L)
      single <- TRUE
    }
  } else {
    if (is.data.frame(eval_points)) eval_points <- as.matrix(eval_points)
    single <- is.null(dim(eval_points))
    ev <- if (single) matrix(as.double(eval_points), nrow = 1L) else eval_points
    if (ncol(ev) != dd) stop("eval_points: with x of ", dd, " columns give a matrix with ", dd,
                             " columns (or one point of length ", dd, ")", call. = FALSE)
  }
  storage.mode(ev) <- "double"
  r <- tryCatch(.mse_dpi_mv_cpp(x, as.double(y), ev, p, kernel, b, as.double(bwregul),
                                  as.integer(bwc), identical(bias_terms, "absolute")),
                error = function(e) stop(gsub("pilot_bandwidth", "pilot_bw", conditionMessage(e),
                                              fixed = TRUE), call. = FALSE))
  s <- as.double(r$scale)
  h <- if (imse) {
    if (isTRUE(common_scale)) r$c_imse_common * s else as.double(r$h_imse)
  } else {
    hm <- if (isTRUE(common_scale)) outer(as.double(r$c_common), s) else r$h
    if (single) as.double(hm[1, ]) else hm
  }
  if (isTRUE(pilot)) list(h = h, b = as.double(r$pilot)) else h
}

.mv_no_bias_terms <- function(bias_terms) {
  if (!is.null(bias_terms))
    stop("bias_terms: with one column of x the leading bias is one term (nothing cancels); ",
         "leave bias_terms = NULL", call. = FALSE)
}
