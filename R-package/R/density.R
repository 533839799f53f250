#' Kernel density, conditional density, distribution and quantile estimation
#'
#' np-like formula interfaces to the kernel estimators of R's np package (Hayfield and Racine
#' 2008, doi:10.18637/jss.v027.i05) for mixed continuous / categorical data:
#' `kdens()` the density \eqn{f(x)} (`npudens`), `kcdens()` the conditional density
#' \eqn{f(y|x) = f(x, y) / f(x)} (`npcdens`), `kcdist()` the conditional distribution function
#' \eqn{F(y|x)} (`npcdist`) and `kqreg()` conditional quantiles
#' \eqn{q_\tau(x) = \inf\{y : F(y|x) \ge \tau\}} (`npqreg`, by bisection on \eqn{F}).
#'
#' Product kernels: the continuous kernel density (integrating to one) per numeric variable,
#' the Aitchison and Aitken (1976) kernel for factors and, for ordered factors the estimate is
#' a density in, the normalised Li-Racine kernel (np's default there; Wang and van Ryzin's 1981
#' kernel on request), with the Li-Racine kernel on the conditioning ordered factors (np's
#' default; distances between level positions). Bandwidths, one per variable
#' (\eqn{h} for numeric variables, \eqn{\lambda} for factors), by likelihood cross-validation
#' (`"cv.ml"`: minus the leave-one-out log likelihood), least-squares cross-validation
#' (`"cv.ls"`: the integrated squared error for densities, Li and Racine 2007, sec. 1.3.3;
#' Hall, Racine and Li 2004, doi:10.1198/016214504000000548, for conditional densities; Li,
#' Lin and Racine 2013, doi:10.1080/07350015.2012.738955, for conditional distributions), the
#' normal-reference rule (`"normal-reference"`: \eqn{(4/3)^{1/5} \min(sd, IQR/1.349)
#' n^{-1/(4+q)}} per numeric variable, np's constants, scaled by the kernel's canonical constant, \eqn{\lambda = 0} for
#' factors), or given as numbers. The search is a projected L-BFGS in log-bandwidth with
#' exact gradients from several starts, in the C++ core.
#'
#' @param formula `~ x1 + x2` for `kdens()`; `y ~ x1 + x2` for the conditional estimators
#'   (one response; numeric, or an ordered factor for `kcdist()`; numeric for `kqreg()`).
#'   Numeric variables are continuous, factors (character, logical) unordered and ordered
#'   factors ordered.
#' @param data,subset,na.action As in [stats::lm()].
#' @param bw `"cv.ml"`, `"cv.ls"`, `"normal-reference"`, or one bandwidth per variable
#'   (explanatory variables first, then the response).
#' @param ckertype Continuous kernel: `"gaussian"` (np's default), `"epanechnikov"`,
#'   `"uniform"`, `"triangular"`, `"biweight"`, `"triweight"`, `"tricube"`, `"cosine"` (np's
#'   Epanechnikov has unit variance: an np bandwidth \eqn{h} is \eqn{\sqrt 5 h} here), or
#'   `"gaussian4"`, the fourth-order Gaussian \eqn{(3 - u^2)\phi(u)/2} of np's
#'   `ckerorder = 4` (same bandwidth; estimates can be negative; `"normal-reference"` refuses
#'   it).
#' @param ukertype Kernel of unordered factors: `"aitchisonaitken"` (np's default; it sums to
#'   one over the levels, as a density's kernel must), or `"liracine"`, accepted only on the
#'   conditioning (x) variables of a conditional density, distribution or quantile, where the
#'   kernel cancels in the ratio \eqn{\hat f(x, y) / \hat f(x)}.
#' @param okertype Kernel of ordered factors. In `kdens`, where the estimate is a density in
#'   them, a kernel that sums to one over the integers: `"nliracine"` (default), the normalised
#'   Li-Racine kernel \eqn{\lambda^{|d|}(1 - \lambda)/(1 + \lambda)} (Li and Racine 2007,
#'   *Nonparametric Econometrics*, Princeton UP, normalised), which is what np's `npudens` default
#'   `okertype = "liracine"` means on a density's variable (np's own name for it is
#'   `"nliracine"`; `"li_racine_normalized"` is the same), or `"wangvanryzin"`. The plain
#'   `"liracine"` does not sum to one and is refused there. The estimate is then a probability
#'   mass function on the integer codes of the factor (its level positions 0, 1, ...). In
#'   `kcdens`, `kcdist` and `kqreg` the kernel of the conditioning (x) ordered factors:
#'   `"liracine"` (default, np's `oxkertype`; it cancels in the ratio, so it need not sum to
#'   one), `"nliracine"` (the same estimate) or `"wangvanryzin"`.
#' @param oykertype Kernel of the response's ordered factors in `kcdens` and `kcdist`, which
#'   must sum to one over the integers: `"nliracine"` (default; np's `oykertype = "liracine"`
#'   default means this kernel on the response) or `"wangvanryzin"`. `kcdist` sums it over all
#'   integers up to y for `"nliracine"` (as np's `npcdist`), over the observed levels for
#'   `"wangvanryzin"`.
#' @param nstart Starting points of the bandwidth search.
#' @param seed Seed of the random starts.
#' @param n_threads Threads (0 = all).
#' @return An object of class `kdens`, `kcdens`, `kcdist` or `kqreg`: `bw` (named), `bwmethod`,
#'   `objective` (the criterion at `bw`; `NA` for the rule and given bandwidths), `nobs`,
#'   `var_types`, and the estimates at the sample points (`dens`, `condens`, `condist` or
#'   `quantile`), with `print`, `summary`, `predict` and `plot` methods.
#' @examples
#' data(faithful)
#' d <- kdens(~ eruptions, data = faithful, bw = "normal-reference")
#' d
#' predict(d, data.frame(eruptions = c(2, 4)))
#' set.seed(1)
#' df <- data.frame(x = rnorm(80), g = ordered(sample(1:3, 80, TRUE)))
#' df$y <- df$x + as.integer(df$g) + rnorm(80)
#' cd <- kcdens(y ~ x + g, data = df)
#' summary(cd)
#' q <- kqreg(y ~ x, data = df, tau = c(0.25, 0.5, 0.75), bw = c(0.5, 0.6))
#' predict(q, data.frame(x = 0), tau = 0.5)
#' @name kdens
#' @export
kdens <- function(formula, data, subset, na.action, bw = "cv.ml", ckertype = "gaussian",
                  ukertype = "aitchisonaitken", okertype = "nliracine", nstart = 3L,
                  seed = 0, n_threads = 0L) {
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  if (attr(attr(mf, "terms"), "response") > 0)
    stop("formula: kdens() takes '~ x1 + x2' (no response); use kcdens() for f(y | x)",
         call. = FALSE)
  .kdens_fit("density", mf, NULL, bw, ckertype, ukertype, okertype, nstart, seed, n_threads,
             match.call(), "kdens")
}

#' @rdname kdens
#' @export
kcdens <- function(formula, data, subset, na.action, bw = "cv.ml", ckertype = "gaussian",
                   ukertype = "aitchisonaitken", okertype = "liracine", nstart = 3L,
                   seed = 0, n_threads = 0L, oykertype = "nliracine") {
  mf <- .kdens_frame(match.call(expand.dots = FALSE), parent.frame())
  .kdens_fit("conditional_density", mf$x, mf$y, bw, ckertype, ukertype, okertype, nstart, seed,
             n_threads, match.call(), "kcdens", oykertype)
}

#' @rdname kdens
#' @export
kcdist <- function(formula, data, subset, na.action, bw = "cv.ls", ckertype = "gaussian",
                   ukertype = "aitchisonaitken", okertype = "liracine", nstart = 3L,
                   seed = 0, n_threads = 0L, oykertype = "nliracine") {
  mf <- .kdens_frame(match.call(expand.dots = FALSE), parent.frame())
  .kdens_fit("conditional_distribution", mf$x, mf$y, bw, ckertype, ukertype, okertype, nstart,
             seed, n_threads, match.call(), "kcdist", oykertype)
}

#' @rdname kdens
#' @param tau Quantile levels, each strictly between 0 and 1.
#' @export
kqreg <- function(formula, data, subset, na.action, tau = 0.5, bw = "cv.ls",
                  ckertype = "gaussian", ukertype = "aitchisonaitken", okertype = "liracine",
                  nstart = 3L, seed = 0, n_threads = 0L) {
  .check_tau(tau)
  mf <- .kdens_frame(match.call(expand.dots = FALSE), parent.frame())
  if (.kdens_spec(mf$y)$types != "c")
    stop("formula: kqreg() needs a numeric response (conditional quantiles of a continuous y)",
         call. = FALSE)
  fit <- .kdens_fit("conditional_distribution", mf$x, mf$y, bw, ckertype, ukertype, okertype,
                    nstart, seed, n_threads, match.call(), "kqreg")
  fit$tau <- tau
  fit$quantile <- .kqreg_predict(fit, fit$X, tau)
  fit
}

.check_tau <- function(tau) {
  if (!is.numeric(tau) || !length(tau) || any(is.na(tau)) || any(tau <= 0 | tau >= 1))
    stop("tau: must be numbers strictly between 0 and 1, got ",
         paste(format(tau), collapse = ", "), " (0 and 1 are the infinite ends of the distribution)",
         call. = FALSE)
}

# Model frame split into explanatory variables (x) and the response (y), as data frames.
.kdens_frame <- function(cl, env) {
  m <- match(c("formula", "data", "subset", "na.action"), names(cl), 0L)
  mf <- cl[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  resp <- attr(attr(mf, "terms"), "response")
  if (resp == 0) stop("formula: needs a response, 'y ~ x1 + x2'", call. = FALSE)
  y <- mf[resp]
  x <- mf[-resp]
  attr(x, "terms") <- attr(mf, "terms")
  if (!ncol(x)) stop("formula: needs at least one explanatory variable on the right of '~'",
                     call. = FALSE)
  list(x = x, y = y)
}

.kdens_spec <- function(frame) {
  attr(frame, "terms") <- stats::terms(stats::as.formula(paste("~", paste(sprintf("`%s`", names(frame)), collapse = "+"))))
  .kreg_spec(frame)
}

.kdens_fit <- function(kind, xf, yf, bw, ckertype, ukertype, okertype, nstart, seed, n_threads,
                       call, cls, oykertype = "nliracine") {
  xs <- .kdens_spec(xf)
  X <- .kreg_encode(xs, xf)
  ys <- if (is.null(yf)) NULL else .kdens_spec(yf)
  Y <- if (is.null(yf)) matrix(0, nrow(X), 0) else .kreg_encode(ys, yf)
  yt <- if (is.null(ys)) "" else ys$types
  names_all <- c(xs$names, if (!is.null(ys)) ys$names)
  spec_all <- list(names = names_all)
  args <- list(kind = kind, X = X, x_types = xs$types, Y = Y, y_types = yt)
  if (is.character(bw)) {
    if (length(bw) != 1L) stop("bw: give one method name or one number per variable", call. = FALSE)
    sel <- .kreg_core(do.call(.kdens_select_cpp, c(args, list(
      method = bw, kernel = ckertype, ukertype = ukertype, okertype = okertype,
      nstart = as.integer(nstart), seed = as.double(seed), n_threads = as.integer(n_threads),
      oykertype = oykertype))),
      spec_all)
    bwv <- sel$bw
    objective <- sel$objective
    bwmethod <- sel$bwmethod
  } else {
    bwv <- as.double(bw)
    if (length(bwv) == 1L && length(names_all) > 1L && !grepl("[uo]", paste0(xs$types, yt)))
      bwv <- rep(bwv, length(names_all))
    objective <- NA_real_
    bwmethod <- "given"
  }
  names(bwv) <- names_all
  fit <- structure(list(bw = bwv, terms = attr(xf, "terms"), bwmethod = bwmethod, objective = objective, nobs = nrow(X),
                        var_types = xs$types, y_types = yt, xspec = xs, yspec = ys, X = X, Y = Y,
                        kind = kind, ckertype = ckertype, ukertype = ukertype,
                        okertype = okertype, oykertype = oykertype,
                        n_threads = as.integer(n_threads), call = call),
                   class = cls)
  if (cls != "kqreg") {
    est <- .kdens_eval(fit, X, Y)
    fit[[c(density = "dens", conditional_density = "condens",
           conditional_distribution = "condist")[[kind]]]] <- est
  } else {
    .kdens_eval(fit, X[1, , drop = FALSE], Y[1, , drop = FALSE])  # checks the bandwidths
  }
  fit
}

# Fits saved before oykertype existed used Wang-van Ryzin on y's ordered factors.
.oykertype <- function(object) if (is.null(object$oykertype)) "wangvanryzin" else object$oykertype

.kdens_eval <- function(object, Xq, Yq) {
  .kreg_core(.kdens_eval_cpp(object$kind, object$X, object$var_types, object$Y, object$y_types,
                             object$ckertype, object$ukertype, object$okertype,
                             as.double(object$bw), Xq, Yq, object$n_threads,
                             .oykertype(object)),
             list(names = names(object$bw)))
}

.kqreg_predict <- function(object, Xq, tau) {
  .check_tau(tau)
  out <- vapply(tau, function(t) {
    .kreg_core(.kdens_quantile_cpp(object$X, object$var_types, object$Y, object$y_types,
                                   object$ckertype, object$ukertype, object$okertype,
                                   as.double(object$bw), Xq, t, object$n_threads,
                                   .oykertype(object)),
               list(names = names(object$bw)))
  }, numeric(nrow(Xq)))
  out <- matrix(out, nrow(Xq), length(tau))
  colnames(out) <- paste0("tau=", format(tau))
  if (length(tau) == 1L) out[, 1] else out
}

# newdata -> encoded explanatory variables / response, through the fit's formula terms (so
# that `ordered(year)` is rebuilt from `year`).
.kdens_newx <- function(object, newdata) {
  if (!is.data.frame(newdata)) stop("newdata: must be a data frame", call. = FALSE)
  mfx <- tryCatch(stats::model.frame(stats::delete.response(object$terms), newdata,
                                     na.action = stats::na.pass),
                  error = function(e) stop("newdata: ", conditionMessage(e), call. = FALSE))
  .kreg_encode(object$xspec, mfx, "newdata")
}

.kdens_newy <- function(object, newdata) {
  tt <- object$terms
  yv <- tryCatch(eval(attr(tt, "variables")[[attr(tt, "response") + 1L]], newdata,
                      environment(tt)),
                 error = function(e) stop("newdata: needs the response (", conditionMessage(e),
                                          ")", call. = FALSE))
  fr <- data.frame(v = seq_along(yv))
  fr[[1]] <- yv
  names(fr) <- object$yspec$names
  .kreg_encode(object$yspec, fr, "newdata")
}

.kdens_title <- function(x) {
  switch(class(x)[1], kdens = "Kernel density estimate",
         kcdens = "Kernel conditional density estimate",
         kcdist = "Kernel conditional distribution estimate",
         kqreg = "Kernel conditional quantile estimate")
}

#' @rdname kdens
#' @param x,object A fitted `kdens`, `kcdens`, `kcdist` or `kqreg` object.
#' @param digits Significant digits.
#' @param ... Unused (methods), or graphical parameters (`plot`).
#' @export
print.kdens <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(.kdens_title(x), "\n\n", sep = "")
  cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat("Observations: ", x$nobs, "\n", sep = "")
  cat("Bandwidth method: ", x$bwmethod, if (!is.na(x$objective))
    paste0(" (objective ", format(x$objective, digits = digits), ")"), "\n", sep = "")
  cat("Bandwidths:\n")
  print(x$bw, digits = digits)
  if (!is.null(x$tau)) cat("tau: ", paste(format(x$tau), collapse = ", "), "\n", sep = "")
  invisible(x)
}

#' @rdname kdens
#' @export
print.kcdens <- print.kdens
#' @rdname kdens
#' @export
print.kcdist <- print.kdens
#' @rdname kdens
#' @export
print.kqreg <- print.kdens

#' @rdname kdens
#' @export
summary.kdens <- function(object, ...) {
  types <- strsplit(paste0(object$var_types, object$y_types), "")[[1]]
  role <- c(rep("explanatory", nchar(object$var_types)), rep("response", nchar(object$y_types)))
  if (class(object)[1] == "kdens") role[] <- "variable"
  tab <- data.frame(role = role, type = c(c = "continuous", u = "unordered", o = "ordered")[types],
                    bandwidth = unname(object$bw), row.names = names(object$bw))
  est <- object[[intersect(c("dens", "condens", "condist", "quantile"), names(object))[1]]]
  structure(list(title = .kdens_title(object), call = object$call, nobs = object$nobs,
                 bwmethod = object$bwmethod, objective = object$objective, table = tab,
                 kernel = c(continuous = object$ckertype, unordered = object$ukertype,
                            ordered = object$okertype),
                 estimates = if (is.matrix(est)) apply(est, 2, summary) else summary(est)),
            class = "summary.kdens")
}

#' @rdname kdens
#' @export
summary.kcdens <- summary.kdens
#' @rdname kdens
#' @export
summary.kcdist <- summary.kdens
#' @rdname kdens
#' @export
summary.kqreg <- summary.kdens

#' @rdname kdens
#' @export
print.summary.kdens <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(x$title, "\n\nCall: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat("Observations: ", x$nobs, "\nBandwidth method: ", x$bwmethod, sep = "")
  if (!is.na(x$objective)) cat(" (objective ", format(x$objective, digits = digits), ")", sep = "")
  cat("\nKernels: ", paste(names(x$kernel), x$kernel, sep = " = ", collapse = ", "), "\n\n", sep = "")
  print(x$table, digits = digits)
  cat("\nEstimates at the sample points:\n")
  print(x$estimates, digits = digits)
  invisible(x)
}

#' @rdname kdens
#' @param newdata Data frame with the explanatory variables (and, for `kcdens`/`kcdist`, the
#'   response) at which to estimate; default the sample.
#' @export
predict.kdens <- function(object, newdata, ...) {
  if (missing(newdata)) return(object$dens)
  .kdens_eval(object, .kdens_newx(object, newdata), matrix(0, nrow(newdata), 0))
}

#' @rdname kdens
#' @export
predict.kcdens <- function(object, newdata, ...) {
  if (missing(newdata)) return(object$condens)
  .kdens_eval(object, .kdens_newx(object, newdata), .kdens_newy(object, newdata))
}

#' @rdname kdens
#' @export
predict.kcdist <- function(object, newdata, ...) {
  if (missing(newdata)) return(object$condist)
  .kdens_eval(object, .kdens_newx(object, newdata), .kdens_newy(object, newdata))
}

#' @rdname kdens
#' @export
predict.kqreg <- function(object, newdata, tau = object$tau, ...) {
  if (missing(newdata)) {
    if (identical(tau, object$tau)) return(object$quantile)
    return(.kqreg_predict(object, object$X, tau))
  }
  .kqreg_predict(object, .kdens_newx(object, newdata), tau)
}

#' @rdname kdens
#' @param n_grid Points of the plotted curves.
#' @export
plot.kdens <- function(x, n_grid = 200L, ...) {
  cls <- class(x)[1]
  types <- strsplit(x$var_types, "")[[1]]
  if (cls == "kdens") {
    if (length(types) != 1L || types != "c")
      stop("plot: draws one continuous variable; use predict() for several", call. = FALSE)
    h <- x$bw[[1]]
    g <- seq(min(x$X) - 3 * h, max(x$X) + 3 * h, length.out = n_grid)
    f <- .kdens_eval(x, matrix(g, ncol = 1), matrix(0, n_grid, 0))
    plot(g, f, type = "l", xlab = names(x$bw)[1], ylab = "density", ...)
    rug(x$X[, 1])
    return(invisible(data.frame(x = g, density = f)))
  }
  if (length(types) != 1L)
    stop("plot: draws one explanatory variable; use predict() for several", call. = FALSE)
  xv <- x$X[, 1]
  at <- if (types == "c") stats::quantile(xv, c(0.25, 0.5, 0.75), names = FALSE)
        else sort(unique(xv))[unique(round(seq(1, length(unique(xv)), length.out = 3)))]
  lab <- if (types == "c") format(at, digits = 3) else x$xspec$levels[[1]][at + 1]
  if (cls == "kqreg") {
    g <- if (types == "c") seq(min(xv), max(xv), length.out = n_grid) else sort(unique(xv))
    Q <- as.matrix(.kqreg_predict(x, matrix(g, ncol = 1), x$tau))
    matplot(g, Q, type = if (types == "c") "l" else "b", lty = 1, col = seq_along(x$tau),
            xlab = names(x$bw)[1], ylab = names(x$bw)[2], ...)
    points(xv, x$Y[, 1], col = "grey60", cex = 0.5)
    legend("topleft", legend = paste0("tau = ", format(x$tau)), col = seq_along(x$tau), lty = 1,
           bty = "n")
    return(invisible(list(x = g, quantile = Q)))
  }
  if (x$y_types != "c")
    stop("plot: draws a continuous response; use predict() for a categorical one", call. = FALSE)
  yv <- x$Y[, 1]
  h <- x$bw[[2]]
  g <- seq(min(yv) - 3 * h, max(yv) + 3 * h, length.out = n_grid)
  M <- vapply(at, function(a) .kdens_eval(x, matrix(a, n_grid, 1), matrix(g, ncol = 1)),
              numeric(n_grid))
  matplot(g, M, type = "l", lty = 1, col = seq_along(at), xlab = names(x$bw)[2],
          ylab = if (cls == "kcdens") "conditional density" else "conditional distribution", ...)
  legend("topleft", legend = paste(names(x$bw)[1], "=", lab), col = seq_along(at), lty = 1,
         bty = "n")
  invisible(list(y = g, values = M, at = at))
}

#' @rdname kdens
#' @export
plot.kcdens <- plot.kdens
#' @rdname kdens
#' @export
plot.kcdist <- plot.kdens
#' @rdname kdens
#' @export
plot.kqreg <- plot.kdens
