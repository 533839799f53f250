#' Regression discontinuity plot: binned means and global polynomial fits
#'
#' The RD plots of Calonico, Cattaneo and Titiunik (2015, "Optimal data-driven regression
#' discontinuity plots", JASA 110(512)): the outcome's means in bins on each side of the cutoff
#' and a global polynomial of order `p` in `(x - c)` on each side. The numbers of bins are
#' IMSE-optimal (`"es"`, `"qs"`) or mimic the variance of the data (`"esmv"`, `"qsmv"`), with
#' evenly spaced (`es*`) or quantile-spaced (`qs*`) bins and the variance estimated from
#' spacings or, with the `pr` suffix, from polynomial regressions. Same core as Python
#' `attnreg.rd.rdplot`; docs/rd.md lists the formulas and where rdrobust's `rdplot` differs.
#'
#' @param y The outcome.
#' @param x The running variable (rows with `NA` in `y`, `x` or `weights` are dropped); for
#'   the plot method, an `rd_plot` object.
#' @param c The cutoff, strictly inside the range of `x`.
#' @param p Order of the global polynomials (0 to 20).
#' @param nbins `NULL` (selected), or one number or `c(left, right)` of bins.
#' @param binselect One of `"es"`, `"espr"`, `"esmv"`, `"esmvpr"`, `"qs"`, `"qspr"`, `"qsmv"`,
#'   `"qsmvpr"`.
#' @param scale Multiplies the selected numbers of bins (one number or `c(left, right)`).
#' @param kernel Kernel of the polynomial fits: `"uniform"`, `"triangular"`, `"epanechnikov"`.
#' @param weights Optional non-negative unit weights of the polynomial fits.
#' @param h Bandwidths of the polynomial fits (one or `c(left, right)`); default the support.
#' @param support `c(low, high)` extending the range of the evenly spaced bins.
#' @param level Level of the bins' t intervals.
#' @param masspoints `"adjust"`, `"check"` or `"off"`.
#' @param ci Draw the intervals.
#' @param hide Compute only, do not draw.
#' @param nplot Points of each fitted curve.
#' @param covs Optional covariates (a numeric vector, matrix or data frame; names kept) entering
#'   linearly. The polynomials of both sides share one coefficient vector (`coef_covs`; Calonico,
#'   Cattaneo, Farrell and Titiunik 2019, REStat 101(3)); the binned means are adjusted with the
#'   coefficients of y on the bin indicators and the covariates (`coef_covs_bins`; Cattaneo,
#'   Crump, Farrell and Feng 2024, AER 114(5)). Rows with `NA` in a covariate are dropped and
#'   counted. docs/rd.md says where this differs from rdrobust's `rdplot`.
#' @param covs_eval Where the covariates are held: `"mean"` (their sample means) or `0`.
#' @param covs_drop `TRUE`: covariates collinear with earlier ones are dropped with a warning
#'   naming them; `FALSE`: an error.
#' @param xlab,ylab,main Axis labels and title of the plot method.
#' @param ... Passed to [plot()] by the plot method.
#' @return Invisibly, an object of class `rd_plot`: `bins` (a data frame: side, bin, edges,
#'   mid, mean_x, mean_y, n, sd_y, se_y, ci_low, ci_high; empty bins have `n = 0`), `J`,
#'   `J_imse`, `J_mv`, `scale`, `rscale` (left, right), `coef` (a matrix of the coefficients of
#'   `(x - c)^j`), `curve` (a data frame side, x, y), `binselect`, `n`, `h`, `n_dropped`; with
#'   `covs`, also `coef_covs`, `coef_covs_bins`, `covs_eval` (named) and `covs_dropped`, and
#'   `bins` has `mean_y` adjusted and `mean_y_unadjusted`.
#' @examples
#' data(senate)
#' r <- rd_plot(senate$vote, senate$margin)
#' r$J
#' head(r$bins)
#' @export
rd_plot <- function(y, x, c = 0, p = 4, nbins = NULL, binselect = "esmv", scale = NULL,
                    kernel = "uniform", weights = NULL, h = NULL, support = NULL, level = 0.95,
                    masspoints = "adjust", ci = FALSE, hide = FALSE, nplot = 500,
                    covs = NULL, covs_eval = "mean", covs_drop = TRUE) {
  num <- function(v, name) {
    if (!is.numeric(v)) stop(name, ": must be a numeric vector", call. = FALSE)
    as.numeric(v)
  }
  x <- num(x, "x")
  y <- num(y, "y")
  if (length(y) != length(x)) stop("y: must have the length of x", call. = FALSE)
  if (!is.null(weights)) {
    weights <- num(weights, "weights")
    if (length(weights) != length(x)) stop("weights: must have the length of x", call. = FALSE)
  }
  z <- NULL
  znames <- character(0)
  if (!is.null(covs)) {
    if (is.data.frame(covs)) {
      if (!all(vapply(covs, is.numeric, logical(1))))
        stop("covs: every column must be numeric", call. = FALSE)
      covs <- as.matrix(covs)
    }
    if (!is.numeric(covs)) stop("covs: must be numeric (a vector, matrix or data frame)",
                                call. = FALSE)
    z <- if (is.matrix(covs)) covs else matrix(covs, ncol = 1)
    if (nrow(z) != length(x))
      stop("covs: must have one row per observation (", length(x), ")", call. = FALSE)
    znames <- colnames(z)
    if (is.null(znames)) znames <- paste0("z", seq_len(ncol(z)))
    storage.mode(z) <- "double"
    z <- unname(z)
  }
  if (!(identical(covs_eval, "mean") || (is.numeric(covs_eval) && length(covs_eval) == 1 &&
                                         isTRUE(covs_eval == 0))))
    stop("covs_eval: must be \"mean\" or 0", call. = FALSE)
  if (!is.logical(covs_drop) || length(covs_drop) != 1 || is.na(covs_drop))
    stop("covs_drop: must be TRUE or FALSE", call. = FALSE)
  pair <- function(v, name, integer = FALSE) {
    if (is.null(v)) return(NULL)
    if (!is.numeric(v) || !length(v) %in% 1:2 || any(!is.finite(v)) || any(v <= 0))
      stop(name, ": must be one or two (left, right) positive numbers", call. = FALSE)
    if (integer && any(v != round(v))) stop(name, ": must be whole numbers", call. = FALSE)
    if (length(v) == 1) c(v, v) else as.numeric(v)
  }
  if (!is.numeric(p) || length(p) != 1 || p != round(p))
    stop("p: must be an integer from 0 to 20", call. = FALSE)
  binselect <- match.arg(tolower(binselect),
                         c("es", "espr", "esmv", "esmvpr", "qs", "qspr", "qsmv", "qsmvpr"))
  kernel <- match.arg(tolower(kernel), c("uniform", "triangular", "epanechnikov"))
  masspoints <- match.arg(masspoints, c("adjust", "check", "off"))
  if (!is.numeric(level) || length(level) != 1 || !is.finite(level) || level <= 0 || level >= 1)
    stop("level: level is a fraction: 0.95 for a 95% interval (rdrobust's ci = 95 is ",
         "level = 0.95 here)", call. = FALSE)
  nb <- pair(nbins, "nbins", integer = TRUE)
  sc <- pair(scale, "scale")
  hh <- pair(h, "h")
  sup <- c(NA_real_, NA_real_)
  if (!is.null(support)) {
    if (!is.numeric(support) || length(support) != 2 || any(!is.finite(support)) ||
        support[1] >= support[2])
      stop("support: must be c(low, high) with low < high", call. = FALSE)
    sup <- as.numeric(support)
  }
  opt <- list(c = as.numeric(c), p = as.integer(p), binselect = binselect,
              nbins_left = if (is.null(nb)) 0L else as.integer(nb[1]),
              nbins_right = if (is.null(nb)) 0L else as.integer(nb[2]),
              scale_left = if (is.null(sc)) 1 else sc[1],
              scale_right = if (is.null(sc)) 1 else sc[2], kernel = kernel,
              h_left = if (is.null(hh)) NA_real_ else hh[1],
              h_right = if (is.null(hh)) NA_real_ else hh[2],
              support_low = sup[1], support_high = sup[2], masspoints = masspoints,
              level = as.numeric(level), nplot = as.integer(nplot),
              covs_eval_mean = identical(covs_eval, "mean"), covs_drop = covs_drop,
              covs_names = znames)
  r <- .rd_plot_cpp(y, x, weights, opt, z)
  if (length(r$covs_dropped))
    warning("covs: dropped collinear covariates: ",
            paste(znames[r$covs_dropped], collapse = ", "), call. = FALSE)
  if (r$mass_points && masspoints != "off")
    warning("rd_plot: mass points detected in the running variable (>= 20% repeated values)",
            if (masspoints == "adjust" && r$binselect != binselect && r$binselect != "manual")
              paste0("; binselect '", binselect, "' became '", r$binselect, "'"), call. = FALSE)
  for (s in c("left", "right"))
    if (r[[s]]$var_y == 0) warning("rd_plot: y is constant on the ", s, " side; one bin there",
                                   call. = FALSE)
  side_df <- function(s, name) {
    J <- s$J
    data.frame(side = name, bin = seq_len(J), left_edge = s$edges[-(J + 1)],
               right_edge = s$edges[-1], mid = s$mid, mean_x = s$mean_x, mean_y = s$mean_y,
               n = s$count, sd_y = s$sd_y, se_y = s$se_y, ci_low = s$ci_low,
               ci_high = s$ci_high, stringsAsFactors = FALSE)
  }
  lr <- function(key) c(left = r$left[[key]], right = r$right[[key]])
  coef <- cbind(left = r$left$coef, right = r$right$coef)
  rownames(coef) <- paste0("(x-c)^", seq_len(nrow(coef)) - 1)
  out <- structure(list(
    bins = rbind(side_df(r$left, "left"), side_df(r$right, "right")),
    J = lr("J"), J_imse = lr("J_imse"), J_mv = lr("J_mv"), scale = lr("scale"),
    rscale = lr("rscale"), coef = coef,
    curve = data.frame(side = rep(c("left", "right"), c(length(r$left$curve_x),
                                                        length(r$right$curve_x))),
                       x = c(r$left$curve_x, r$right$curve_x),
                       y = c(r$left$curve_y, r$right$curve_y), stringsAsFactors = FALSE),
    binselect = r$binselect, n = c(left = r$left$n[1], right = r$right$n[1]),
    n_h = c(left = r$left$n[2], right = r$right$n[2]), h = lr("h"), c = c, p = p,
    kernel = kernel, level = level, mass_points = r$mass_points, n_dropped = r$n_dropped),
    class = "rd_plot")
  if (!is.null(z)) {
    kept <- znames[r$covs_kept]
    out$coef_covs <- stats::setNames(r$coef_covs, kept)
    out$coef_covs_bins <- stats::setNames(r$coef_covs_bins, kept)
    out$covs_eval <- stats::setNames(r$covs_eval, kept)
    out$covs_dropped <- znames[r$covs_dropped]
    out$bins$mean_y_unadjusted <- c(r$left$mean_y_raw, r$right$mean_y_raw)
  }
  if (!hide) plot(out, ci = ci)
  invisible(out)
}

#' @export
print.rd_plot <- function(x, ...) {
  cat("RD plot (Calonico, Cattaneo and Titiunik 2015), cutoff", x$c, "\n")
  cat("  binselect:", x$binselect, " bins J:", x$J[["left"]], "left,", x$J[["right"]],
      "right (IMSE-optimal", x$J_imse[["left"]], "/", x$J_imse[["right"]], ")\n")
  cat("  n:", x$n[["left"]], "left,", x$n[["right"]], "right; polynomial order p =", x$p, "\n")
  if (!is.null(x$coef_covs))
    cat("  covariate-adjusted (", paste(names(x$coef_covs), collapse = ", "), ")\n", sep = "")
  invisible(x)
}

#' @rdname rd_plot
#' @export
plot.rd_plot <- function(x, ci = FALSE, xlab = "running variable x", ylab = "outcome y",
                         main = NULL, ...) {
  b <- x$bins[x$bins$n > 0, ]
  yl <- range(c(b$mean_y, x$curve$y, if (ci) c(b$ci_low, b$ci_high)), finite = TRUE)
  if (is.null(main))
    main <- sprintf("RD plot (%s: J = %d, %d)%s", x$binselect, x$J[["left"]], x$J[["right"]],
                    if (is.null(x$coef_covs)) "" else ", covariate-adjusted")
  graphics::plot(b$mid, b$mean_y, pch = 19, col = "navy", cex = 0.7, ylim = yl,
                 xlim = range(c(b$mid, x$curve$x), finite = TRUE), xlab = xlab, ylab = ylab,
                 main = main, ...)
  if (ci) graphics::segments(b$mid, b$ci_low, b$mid, b$ci_high, col = "steelblue")
  for (s in c("left", "right")) {
    cv <- x$curve[x$curve$side == s, ]
    graphics::lines(cv$x, cv$y, col = "red", lwd = 2)
  }
  graphics::abline(v = x$c, lty = 3, col = "grey40")
  invisible(x)
}
