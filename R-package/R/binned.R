# Binned kernel regression (kreg(approx = "binned")): the fit from the core's
# BinnedLocalPolynomial; the object keeps the exact model's state, so attention weights,
# diagnostics and summary() statistics are exact.

# The default c("exact", "binned") -> "exact"; otherwise one string, checked by the core (which
# names the argument and the choices).
.kreg_approx_arg <- function(approx) {
  if (identical(approx, c("exact", "binned"))) return("exact")
  if (!is.character(approx) || length(approx) != 1L || is.na(approx)) {
    stop("approx: must be \"exact\" or \"binned\"", call. = FALSE)
  }
  approx
}

# NULL -> 0 (the core's default); otherwise one whole number >= 10.
.kreg_grid_arg <- function(value, name) {
  if (is.null(value)) return(0L)
  if (!is.numeric(value) || length(value) != 1L || !is.finite(value) || value != round(value) ||
      value < 10) {
    stop(name, ": must be a whole number >= 10 or NULL (the default), got ",
         paste(format(value), collapse = " "), call. = FALSE)
  }
  as.integer(value)
}

.kreg_binned <- function(X, Y, bwv, w, method, kernel, ridge, ukertype, okertype, n_threads,
                         grid_size, spec, mf, mt, cl, bwsel) {
  if (!is.numeric(ridge) || length(ridge) != 1L) {
    stop("ridge: must be a single number >= 0", call. = FALSE)
  }
  if (method == "lc" && ridge != 0) {
    stop("ridge: only used by method = \"ll\" (local linear); drop it for \"lc\"", call. = FALSE)
  }
  degree <- if (method == "ll") 1L else 0L
  wv <- if (is.null(w)) numeric(0) else as.double(w)
  gs <- .kreg_grid_arg(grid_size, "grid_size")
  res <- .kreg_core(.kreg_binned_fit_cpp(X, Y, as.double(bwv), wv, degree, kernel,
                                         as.double(ridge), gs, as.integer(n_threads)), spec)
  rn <- rownames(mf)
  fitted <- drop(res$fitted)
  resid <- drop(Y - res$fitted)
  if (!is.matrix(fitted)) names(fitted) <- names(resid) <- rn
  names(bwv) <- spec$names
  state <- list(degree = degree, kernel = kernel, var_types = spec$types, ukertype = ukertype,
                okertype = okertype, ridge = as.double(ridge), algorithm = "auto",
                truncation = 1e-16, X = X, Y = Y, bandwidth = as.double(bwv), weights = wv,
                n_threads = as.integer(n_threads))
  structure(list(
    fitted.values = fitted, residuals = resid, leverage = NULL, loo = NULL,
    loo_error = "approx = \"binned\": leave-one-out fits are not computed (summary() gives the exact cv)",
    cv = NA_real_, effective_df = NA_real_, bw = bwv, var_types = spec$types, spec = spec,
    method = method, kernel = kernel, ridge = ridge, ukertype = ukertype, okertype = okertype,
    uses_neighbors = NA, state = state, y = Y, terms = mt, na.action = attr(mf, "na.action"),
    call = cl, nobs = nrow(X), kbw = bwsel, approx = "binned", grid_size = gs,
    approx_error = res$approx_error,
    x_sd = setNames(if (nrow(X) > 1L) apply(X, 2L, stats::sd) else rep(0, ncol(X)), spec$names),
    x_levels = setNames(apply(X, 2L, function(v) length(unique(v))), spec$names)
  ), class = "kreg")
}

.kreg_binned_predict <- function(object, X, type, newdata) {
  if (type == "response") {
    p <- drop(.kreg_core(.kreg_binned_predict_cpp(object$state, object$grid_size, X, "fit"),
                         object$spec))
    if (!is.matrix(p)) names(p) <- rownames(newdata)
    return(p)
  }
  G <- .kreg_core(.kreg_binned_predict_cpp(object$state, object$grid_size, X, "gradient"),
                  object$spec)
  if (dim(G)[3] == 1L) {
    return(matrix(G[, , 1], nrow = nrow(X), dimnames = list(rownames(newdata), names(object$bw))))
  }
  dimnames(G) <- list(rownames(newdata), names(object$bw), colnames(object$y))
  G
}

.kreg_binned_note <- function(object) {
  if (!identical(object$approx, "binned")) return(character(0))
  e <- object$approx_error
  sprintf(paste0("binned fit (grid %s): max |binned - exact| = %s (rms %s, %s sd of y) at %d ",
                 "random training rows; tr(L), CV, GCV and AICc above are exact"),
          if (object$grid_size == 0L) "default" else object$grid_size,
          format(signif(e$max_abs, 3)), format(signif(e$rms, 3)),
          format(signif(e$relative, 3)), as.integer(e$n_points))
}
