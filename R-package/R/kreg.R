#' Kernel regression: local linear and local constant (Nadaraya-Watson)
#'
#' Fits \eqn{m(x) = E[y | x]} by local linear (`method = "ll"`, the default) or local constant
#' (`method = "lc"`, Nadaraya-Watson) kernel regression with a fixed, user-given bandwidth per
#' variable, as `np::npreg` does. Both are linear in the responses,
#' \eqn{m(x) = \sum_i l_i(x) y_i}, and [attention_weights()] returns the rows \eqn{l(x)}: with
#' the Gaussian kernel and unit-norm inputs Nadaraya-Watson is softmax attention (temperature
#' \eqn{h^2}); local linear with `ridge > 0` is Local Linear Attention.
#'
#' The weight of observation \eqn{i} at \eqn{x} is the product kernel
#' \eqn{w_i(x) = s_i \prod_j K((x_j - X_{ij})/h_j) \prod_c l_c(x_c, X_{ic}; \lambda_c)}
#' (\eqn{s_i} the `weights`). Numeric variables are continuous; factors are unordered and
#' ordered factors ordered categorical variables, entering *only* through the weights (as in
#' np; their codes never enter a local design). Local linear solves, at each \eqn{x},
#' \deqn{\min_{a,B} \sum_i w_i(x) (y_i - a - B'(x_i - x))^2 + \lambda\,\omega\,\|B\|^2,}
#' \eqn{\omega = \sum_i w_i(x)} (the ridge \eqn{\lambda} = `ridge` scales with the weight
#' sum), over the continuous variables; \eqn{a} is the fit and \eqn{B} the gradient
#' ([predict()] with `type = "gradient"`).
#'
#' Kernels (`kernel`, continuous variables): `"gaussian"`, `"epanechnikov"`, `"uniform"`,
#' `"triangular"`, `"biweight"`, `"triweight"`, `"tricube"`, `"cosine"`, all densities in
#' \eqn{u = (x - x_i)/h}, the compact ones on \eqn{[-1, 1]}. np's `"epanechnikov"` is scaled
#' to unit variance (support \eqn{\pm\sqrt 5}): an np bandwidth \eqn{h_{np}} corresponds to
#' `bw = sqrt(5) * h_np` here; np's Gaussian and uniform kernels use the same bandwidth as
#' here. `"gaussian4"` is the fourth-order Gaussian \eqn{K(u) = (3 - u^2)\phi(u)/2} (Marron
#' and Wand 1992, \doi{10.1214/aos/1176348653}), np's `ckertype = "gaussian", ckerorder = 4`
#' with the same bandwidth: it lowers the bias order, but its weights can be negative (fits
#' whose local design is then not positive definite are reported as failed), and the plug-in
#' bandwidths (`"rot"`, `"dpi"`), binned fits, marginal effects and the specification tests
#' refuse it. Categorical kernels: `ukertype = "aitchisonaitken"` (\eqn{1-\lambda} for the same
#' level, \eqn{\lambda/(c-1)} otherwise, \eqn{\lambda \in [0, (c-1)/c]}) or `"liracine"`
#' (1 or \eqn{\lambda}, \eqn{\lambda \in [0, 1]}); `okertype = "liracine"`
#' (\eqn{\lambda^{|x - x_i|}}) or `"wangvanryzin"`, with np's bandwidth meaning. Ordered
#' factors are coded \eqn{0, 1, \dots} in level order.
#'
#' Fitting computes the fitted values, the leverages \eqn{L_{ii}} and the exact leave-one-out
#' fits in one pass over the pairs; compact kernels and the Gaussian (weights below
#' \eqn{10^{-16}} of the largest dropped) use a spatial index, so the cost follows the number
#' of neighbours rather than \eqn{n^2}. A point whose kernel weights are all zero or underflow,
#' or whose local design is singular, gives an error that names the row and the fix.
#'
#' @param formula `y ~ x1 + x2 + ...`: the variables of the model frame are the regressors
#'   (numeric: continuous; factor, character, logical: unordered; ordered factor: ordered).
#' @param data A data frame.
#' @param subset,weights,na.action As in [stats::lm()]; `weights` multiply the kernel
#'   weights, and with a criterion as `bw` they weight it too (see [kbw()]).
#' @param method `"ll"` (local linear) or `"lc"` (local constant, Nadaraya-Watson).
#' @param degree Degree of the local polynomial (overrides `method`): 0 (local constant), 1
#'   (local linear), 2 (local quadratic, any number of continuous regressors) or 3 (local cubic,
#'   one continuous regressor). Degrees 2 and 3 select bandwidths with `"cv.ls"`, `"cv.aic"` or
#'   `"gcv"`; `predict(type = "gradient")` gives their local slopes.
#' @param bw Bandwidths: one per regressor (in formula order, optionally named), or one number
#'   when every regressor is continuous; \eqn{\lambda} for categorical regressors; or a
#'   selector, `"cv.ls"` (default), `"cv.aic"`, `"gcv"`, `"rot"`, `"dpi"`, run by [kbw()]; or
#'   a `kbw` object. The selection is kept as the element `kbw` of the result.
#' @param kernel Kernel of the continuous regressors (see Details).
#' @param ridge \eqn{\lambda \ge 0} on the local slopes (`method = "ll"`).
#' @param ukertype,okertype Kernels of unordered and ordered categorical regressors.
#' @param n_threads Threads for the core (0 = OpenMP default); results do not depend on it.
#' @param gradients `TRUE`: also compute the marginal effects and their standard errors at the
#'   observations, stored as `grad` and `gerr` (as np's `npreg(gradients = TRUE)`); see
#'   [gradients()].
#' @param progress Show a text progress bar (on stderr) while the kernel sums run, and the
#'   bandwidth search's status line when `bw` is a selector. Long fits can be interrupted with
#'   Ctrl-C (Esc in the R GUI) at any time; the core stops within one block of work.
#' @param approx `"exact"` (default) or `"binned"`: linear binning onto a grid and FFT
#'   convolutions (Wand 1994, "Fast computation of multivariate kernel estimators", J. Comput.
#'   Graph. Statist. 3(4); Fan and Marron 1994, J. Comput. Graph. Statist. 3(1); as
#'   `KernSmooth::locpoly`), for one or two continuous regressors and no factors. Fitting
#'   costs \eqn{O(n + G \log G)}; fits between grid nodes are interpolated, beyond the grid
#'   summed directly. Use it from about \eqn{10^5} rows with the Gaussian kernel. The error
#'   is \eqn{O((\delta/h)^2)} (\eqn{\delta} the grid spacing); the element `approx_error`
#'   reports it (exact and binned fits at 200 random training rows). A criterion `bw` uses
#'   the binned cv.ls ([kbw()] with `approx = "binned"`). Leverages and leave-one-out fits are
#'   not computed (`NULL`); [summary()] computes the exact statistics.
#' @param grid_size Grid points per continuous regressor for `approx = "binned"` (at least 10;
#'   `NULL`: 401 for one regressor, as KernSmooth, 101 x 101 for two).
#' @param ... Unused.
#' @return An object of class `kreg`: `fitted.values`, `residuals`, `leverage`, `loo`
#'   (leave-one-out fits, `NULL` when some row has none), `cv` (their mean squared error,
#'   with `weights` the weighted mean \eqn{\sum_i w_i (y_i - \hat m_{-i})^2 / \sum_i w_i}: the
#'   criterion `"cv.ls"` minimises, so it equals the [kbw()] objective at a selected `bw`;
#'   `Inf` when undefined), `effective_df` (\eqn{tr L}), `bw`, `var_types`, `method`, `kernel`,
#'   and what [predict()] and [attention_weights()] need.
#' @seealso [attention_weights()], [loo_predict()], [predict.kreg()], [plot.kreg()].
#' @examples
#' fit <- kreg(mpg ~ wt + hp, data = mtcars, bw = c(0.5, 40))
#' fit
#' summary(fit)
#' predict(fit, mtcars[1:3, ])
#' predict(fit, mtcars[1:3, ], type = "gradient")  # local slopes d mpg / d wt, d mpg / d hp
#' A <- attention_weights(fit, mtcars[1:3, ])
#' rowSums(A)                                       # 1
#' d <- transform(mtcars, am = factor(am), gear = ordered(gear))
#' kreg(mpg ~ wt + am + gear, data = d, bw = c(wt = 0.6, am = 0.1, gear = 0.3))
#' # formula transformations, factor(), subset and weights work as in lm()
#' kreg(log(mpg) ~ wt + factor(cyl), data = mtcars, bw = c(0.6, 0.2), subset = hp < 250,
#'      weights = rep(1:2, 16))
#' \donttest{
#' # a wage equation, bandwidths by leave-one-out CV
#' if (requireNamespace("AER", quietly = TRUE)) {
#'   data("CPS1988", package = "AER")
#'   cps <- CPS1988[seq(1, nrow(CPS1988), by = 20), ]
#'   f <- kreg(log(wage) ~ experience + education + factor(region), data = cps,
#'             progress = interactive())
#'   summary(f)
#' }
#' }
#' @export
kreg <- function(formula, data, subset, weights, na.action, method = c("ll", "lc"),
                 degree = NULL, bw = "cv.ls", kernel = "gaussian", ridge = 0, ukertype = "aitchisonaitken",
                 okertype = "liracine", n_threads = 0L, progress = FALSE,
                 gradients = FALSE, approx = c("exact", "binned"), grid_size = NULL, ...) {
  cl <- match.call()
  method_given <- !missing(method)
  method <- match.arg(method)
  if (!is.null(degree)) {
    if (!is.numeric(degree) || length(degree) != 1L || !degree %in% 0:3) {
      stop("degree: must be 0 (local constant), 1 (local linear), 2 (local quadratic) or 3 ",
           "(local cubic), got ", format(degree), call. = FALSE)
    }
    degree <- as.integer(degree)
    implied <- c("lc", "ll", "lp", "lp")[degree + 1L]
    if (method_given && implied != method) {
      stop("method, degree: method = \"", method, "\" contradicts degree = ", degree,
           " (give one of them: degree 0 is \"lc\", 1 is \"ll\")", call. = FALSE)
    }
    method <- implied
  } else {
    degree <- if (method == "ll") 1L else 0L
  }
  approx <- .kreg_approx_arg(approx)
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  mt <- attr(mf, "terms")
  y <- model.response(mf)
  if (is.null(y)) stop("formula: needs a response on the left of '~'", call. = FALSE)
  if (!is.numeric(y) && !is.logical(y)) {
    # model.response(, "numeric") would coerce "1.5" or a factor's codes without a word.
    stop("formula: the response must be numeric, got ", class(y)[1],
         " (convert it with as.numeric() if that is what you mean)", call. = FALSE)
  }
  Y <- as.matrix(y)
  storage.mode(Y) <- "double"
  w <- model.weights(mf)
  spec <- .kreg_spec(mf)
  X <- .kreg_encode(spec, mf)
  approx <- .kreg_check_approx_cpp(approx, spec$types, .kreg_grid_arg(grid_size, "grid_size"),
                                   "grid_size")
  if (approx == "binned" && degree >= 2L) {
    stop("approx: \"binned\" fits here are local constant or local linear (degree 0 or 1); ",
         "use approx = \"exact\" for degree ", degree, call. = FALSE)
  }
  if (approx == "binned" && isTRUE(gradients)) {
    stop("gradients: not stored for approx = \"binned\" fits; use ",
         "predict(fit, newdata, type = \"gradient\") or approx = \"exact\"", call. = FALSE)
  }
  bwsel <- NULL
  sel <- function(bwmethod) {
    if (ncol(Y) != 1L) {
      stop("bw = \"", bwmethod, "\": bandwidth selection needs a single response",
           call. = FALSE)
    }
    if (degree >= 2L) {
      if (!is.null(w)) {
        stop("bw = \"", bwmethod, "\": selection for degree ", degree, " does not use weights; ",
             "pass the bandwidths by hand (or use degree 0 or 1, whose selectors take weights)",
             call. = FALSE)
      }
      key <- c(cv.ls = "cv_ls", cv.aic = "aic", gcv = "gcv", rot = "rot", dpi = "dpi")[[bwmethod]]
      r <- .kreg_core(.klp_select_cpp(X, as.double(Y[, 1]), degree, key, kernel, spec$types,
                                      ukertype, okertype, as.double(ridge),
                                      as.integer(n_threads)), spec)
      if (any(r$at_bound != 0L)) {
        j <- which(r$at_bound != 0L)[1]
        warning(sprintf(paste0("kreg(bw = \"%s\"): the bandwidth of '%s' (%s) is at the %s ",
                               "end of its search box; pass a bandwidth by hand or check the ",
                               "variable"), bwmethod, spec$names[j], format(signif(r$bw[j], 4)),
                        if (r$at_bound[j] < 0) "lower" else "upper"), call. = FALSE)
      }
      bwsel <<- r
      return(r$bw)
    }
    bwsel <<- .kbw_fit(X, as.double(Y[, 1]), spec, method, bwmethod, kernel, ridge, ukertype,
                       okertype, n_threads = n_threads, progress = progress, weights = w,
                       approx = approx)
    .kbw_boundary_warning(bwsel, sprintf("kreg(bw = \"%s\")", bwmethod))
    bwsel$bw
  }
  bwv <- .kreg_bandwidth(bw, spec, sel)
  if (inherits(bw, "kbw")) bwsel <- bw
  if (!is.numeric(ridge) || length(ridge) != 1L) {
    stop("ridge: must be a single number >= 0", call. = FALSE)
  }
  if (method == "lc" && ridge != 0) {
    stop("ridge: only used by method = \"ll\" (local linear); drop it for \"lc\"", call. = FALSE)
  }
  if (approx == "binned") {
    return(.kreg_binned(X, Y, bwv, w, method, kernel, ridge, ukertype, okertype, n_threads,
                        grid_size, spec, mf, mt, cl, bwsel))
  }
  if (isTRUE(progress)) {  # after the selection, which has its own status line
    .attnreg_progress(TRUE)
    on.exit(.attnreg_progress(FALSE), add = TRUE)
  }
  res <- .kreg_core(.kreg_fit_cpp(X, Y, bwv, if (is.null(w)) numeric(0) else as.double(w),
                                  degree, kernel, spec$types,
                                  ukertype, okertype, as.double(ridge), "auto",
                                  as.integer(n_threads)), spec)
  if (isTRUE(progress)) .attnreg_progress(FALSE, complete = TRUE)
  rn <- rownames(mf)
  fitted <- drop(res$fitted)
  resid <- drop(Y - res$fitted)
  loo <- if (isTRUE(res$loo_ok)) drop(res$loo) else NULL
  if (!is.matrix(fitted)) {
    names(fitted) <- names(resid) <- rn
    if (!is.null(loo)) names(loo) <- rn
  }
  # The core's cv_ls criterion: with weights, sum(w * (y - loo)^2) / sum(w) (see kbw()).
  cv <- res$cv
  names(bwv) <- spec$names
  fit <- structure(list(
    fitted.values = fitted, residuals = resid, leverage = setNames(res$leverage, rn),
    loo = loo, loo_error = res$loo_error, cv = cv, effective_df = res$effective_df,
    bw = bwv, var_types = spec$types, spec = spec, method = method, degree = degree,
    kernel = kernel,
    ridge = ridge, ukertype = ukertype, okertype = okertype,
    uses_neighbors = res$uses_neighbors, state = res$state, y = Y, terms = mt,
    na.action = attr(mf, "na.action"), call = cl, nobs = nrow(X), kbw = bwsel,
    x_sd = setNames(if (nrow(X) > 1L) apply(X, 2L, stats::sd) else rep(0, ncol(X)), spec$names),
    x_levels = setNames(apply(X, 2L, function(v) length(unique(v))), spec$names)
  ), class = "kreg")
  if (isTRUE(gradients)) {
    # As npreg(gradients = TRUE): the marginal effects and their standard errors at the
    # observations (see gradients()).
    g <- .kreg_gradients(fit, X)
    fit$grad <- matrix(g$gradient, nrow(X), dimnames = list(rn, spec$names))
    fit$gerr <- matrix(g$se, nrow(X), dimnames = list(rn, spec$names))
  }
  fit
}

# The core names its own arguments (X, Y, bandwidth[j], sample_weight, column j); say which
# argument of the R call they are and which regressor. A Ctrl-C passes through unchanged.
.kreg_core <- function(expr, spec = NULL, rename = character(0)) {
  tryCatch(expr, error = function(e) {
    m <- conditionMessage(e)
    if (grepl("interrupted by the user", m, fixed = TRUE)) stop(e)
    for (a in names(rename)) m <- sub(paste0("^", a, ":"), paste0(rename[[a]], ":"), m)
    name_of <- function(j) if (is.null(spec)) NA_character_ else spec$names[as.integer(j)]
    hit <- regmatches(m, regexec("^bandwidth\\[([0-9]+)\\]", m))[[1]]
    if (length(hit)) {
      m <- sub("^bandwidth\\[[0-9]+\\]", paste0("bw[", hit[2], "] (", name_of(hit[2]), ")"),
               m)
    }
    m <- sub("^bandwidth:", "bw:", m)
    m <- sub("^sample_weight:", "weights:", m)
    m <- sub("^X_new", "newdata", m)
    m <- sub("^X \\(", "data (", m)
    m <- sub("^(X|x):", "data (regressors):", m)
    m <- sub("^(Y|y):", "data (response):", m)
    hit <- regmatches(m, regexec("column ([0-9]+)", m))[[1]]
    if (length(hit) && !is.na(name_of(hit[2])) && !startsWith(m, "data (response)")) {
      m <- sub("column [0-9]+", paste0("column ", hit[2], " (", name_of(hit[2]), ")"), m)
    }
    stop(m, call. = FALSE)
  })
}

# Regressors of a model frame: names, types (c/u/o), factor levels. Matrix columns (poly(),
# cbind()) become one continuous regressor per column.
.kreg_spec <- function(mf) {
  .kreg_refuse_interactions(attr(mf, "terms"))
  resp <- attr(attr(mf, "terms"), "response")
  vars <- setdiff(seq_along(mf), c(if (resp > 0) resp, which(names(mf) == "(weights)")))
  if (!length(vars)) stop("formula: needs at least one regressor on the right of '~'", call. = FALSE)
  names <- character(0); types <- character(0); levels <- list(); source <- character(0)
  for (j in vars) {
    v <- mf[[j]]
    nm <- names(mf)[j]
    if (is.matrix(v) && is.numeric(v)) {
      cn <- colnames(v)
      if (is.null(cn)) cn <- seq_len(ncol(v))
      for (k in seq_len(ncol(v))) {
        names <- c(names, paste0(nm, cn[k])); types <- c(types, "c")
        levels <- c(levels, list(NULL)); source <- c(source, nm)
      }
      next
    }
    if (is.character(v) || is.logical(v)) v <- factor(v)
    if (is.factor(v)) {
      types <- c(types, if (is.ordered(v)) "o" else "u")
      levels <- c(levels, list(levels(v)))
    } else if (is.numeric(v)) {
      types <- c(types, "c")
      levels <- c(levels, list(NULL))
    } else {
      stop("formula: variable '", nm, "' is neither numeric nor a factor", call. = FALSE)
    }
    names <- c(names, nm); source <- c(source, nm)
  }
  list(names = names, types = paste(types, collapse = ""), levels = setNames(levels, names),
       source = source)
}

# Numeric matrix of regressors: factors as 0-based level codes in the training levels.
.kreg_encode <- function(spec, frame, what = "data") {
  X <- matrix(0, nrow(frame), length(spec$names))
  types <- strsplit(spec$types, "")[[1]]
  col <- 0L
  for (src in unique(spec$source)) {
    v <- frame[[src]]
    if (is.null(v)) stop(what, ": has no variable '", src, "'", call. = FALSE)
    if (is.matrix(v) && is.numeric(v)) {
      for (k in seq_len(ncol(v))) { col <- col + 1L; X[, col] <- v[, k] }
      next
    }
    col <- col + 1L
    if (types[col] == "c") {
      if (!is.numeric(v)) stop(what, ": variable '", src, "' must be numeric", call. = FALSE)
      X[, col] <- as.double(v)
    } else {
      lv <- spec$levels[[col]]
      code <- match(as.character(v), lv)
      bad <- is.na(code) & !is.na(v)
      if (any(bad)) {
        stop(what, ": variable '", src, "' has the level '", as.character(v[bad][1]),
             "', never seen in the fit (levels: ", paste(utils::head(lv, 10), collapse = ", "),
             "); map it to a known level or drop the row", call. = FALSE)
      }
      X[, col] <- code - 1
    }
  }
  colnames(X) <- spec$names
  X
}

.kreg_bandwidth <- function(bw, spec, sel = NULL) {
  p <- length(spec$names)
  if (inherits(bw, "kbw")) {
    if (!identical(names(bw$bw), spec$names)) {
      stop("bw: the kbw object was selected for regressors ",
           paste(names(bw$bw), collapse = ", "), ", not ", paste(spec$names, collapse = ", "),
           call. = FALSE)
    }
    return(as.double(unname(bw$bw)))
  }
  if (is.character(bw)) {
    if (length(bw) != 1L || !bw %in% c("cv.ls", "cv.aic", "gcv", "rot", "dpi")) {
      stop("bw: must be numbers, a kbw object, or one of \"cv.ls\", \"cv.aic\", \"gcv\", ",
           "\"rot\", \"dpi\"", call. = FALSE)
    }
    if (is.null(sel)) stop("bw: internal error, no data for selection", call. = FALSE)
    return(sel(bw))
  }
  if (!is.numeric(bw) || !length(bw)) {
    stop("bw: must be numeric (one bandwidth per regressor)", call. = FALSE)
  }
  if (!is.null(names(bw)) && all(names(bw) != "")) {
    miss <- setdiff(spec$names, names(bw))
    if (length(miss)) stop("bw: no bandwidth for ", paste(miss, collapse = ", "), call. = FALSE)
    bw <- bw[spec$names]
  }
  if (length(bw) == 1L && p > 1L) {
    if (grepl("[uo]", spec$types)) {
      stop("bw: one number for every regressor only works when all are continuous; give one ",
           "per regressor (lambda for factors) in the order ",
           paste(spec$names, collapse = ", "), call. = FALSE)
    }
    bw <- rep(bw, p)
  }
  if (length(bw) != p) {
    stop("bw: got ", length(bw), " values for ", p, " regressors (",
         paste(spec$names, collapse = ", "), ")", call. = FALSE)
  }
  types <- strsplit(spec$types, "")[[1]]
  bad <- which(types == "c" & !(is.finite(bw) & bw > 0))
  if (length(bad)) {
    stop("bw: the bandwidth of '", spec$names[bad[1]], "' must be a positive finite number, ",
         "got ", format(bw[bad[1]]), "; give one > 0 or a selector such as bw = \"cv.ls\"",
         call. = FALSE)
  }
  bad <- which(types != "c" & !is.finite(bw))
  if (length(bad)) {
    stop("bw: the lambda of factor '", spec$names[bad[1]], "' must be a finite number in the ",
         "kernel's range (0 = no smoothing), got ", format(bw[bad[1]]), call. = FALSE)
  }
  as.double(unname(bw))
}

.kreg_newx <- function(object, newdata) {
  tt <- delete.response(object$terms)
  .check_newdata(tt, newdata)
  mf <- model.frame(tt, newdata, na.action = stats::na.pass)
  X <- .kreg_encode(object$spec, mf, "newdata")
  if (anyNA(X)) {
    stop("newdata: contains missing values in the model's variables; remove or impute them",
         call. = FALSE)
  }
  X
}

# newdata: a data frame (or list) with every variable the model's formula uses.
.check_newdata <- function(tt, newdata) {
  if (!is.data.frame(newdata) && !is.list(newdata)) {
    stop("newdata: must be a data frame with the model's variables, got ", class(newdata)[1],
         call. = FALSE)
  }
  need <- all.vars(tt)
  miss <- setdiff(need, names(newdata))
  if (length(miss)) {
    stop("newdata: has no variable ", paste0("'", miss, "'", collapse = ", "),
         " (the model uses ", paste(need, collapse = ", "), "); add the column", call. = FALSE)
  }
  invisible()
}

.kreg_title <- function(x) {
  paste0(if (identical(x$method, "lp")) c("", "", "Local quadratic", "Local cubic")[x$degree + 1L]
         else if (x$method == "ll") "Local linear" else "Local constant (Nadaraya-Watson)",
         " kernel regression, ", x$kernel, " kernel",
         if (x$method == "ll" && x$ridge > 0) paste0(", ridge ", format(x$ridge)))
}

#' @export
print.kreg <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\n", .kreg_title(x), "\n\nCall:\n", paste(deparse(x$call), collapse = "\n"), "\n\n",
      sep = "")
  cat("Bandwidths:\n")
  print.default(format(x$bw, digits = digits), print.gap = 2L, quote = FALSE)
  cat("\nObservations: ", x$nobs, ", effective df tr(L): ", format(x$effective_df, digits = digits),
      "\n", sep = "")
  invisible(x)
}

#' Summarise a kernel regression fit
#'
#' @param object A `kreg` fit.
#' @param ... Unused.
#' @return An object of class `summary.kreg`: `bandwidths` (a table of variable, type, kernel
#'   and bandwidth), `r.squared` (squared correlation of fit and response, as np),
#'   `sigma` (\eqn{\sqrt{RSS/(n - 2 tr L + tr L'L)}}, one per response: the residual df
#'   that makes \eqn{\sigma^2} unbiased when the smoother is unbiased), `residual.df`,
#'   `effective_df`, `cv` (leave-one-out mean squared
#'   error, `Inf` when some row has no leave-one-out fit), `nobs`.
#'   `notes`: one line per regressor whose bandwidth smooths it out (a continuous
#'   bandwidth above 3 standard deviations of its column, a categorical lambda at the
#'   kernel's largest value); np's users read that as an irrelevant regressor (Hall, Li and
#'   Racine 2007, doi:10.1162/rest.89.4.784). Printed after the table.
#' @examples
#' summary(kreg(mpg ~ wt, data = mtcars, bw = 0.5))
#' @export
summary.kreg <- function(object, ...) {
  types <- strsplit(object$var_types, "")[[1]]
  kern <- ifelse(types == "c", object$kernel,
                 ifelse(types == "u", object$ukertype, object$okertype))
  tab <- data.frame(type = c(c = "continuous", u = "unordered", o = "ordered")[types],
                    kernel = kern, bandwidth = unname(object$bw),
                    row.names = names(object$bw), stringsAsFactors = FALSE)
  Y <- object$y
  f <- as.matrix(object$fitted.values)
  r2 <- if (ncol(Y) == 1L) stats::cor(drop(Y), drop(f))^2 else NA_real_
  g <- if (ncol(Y) == 1L) .diag_global(object) else NULL
  # sigma and its df from the core (one per response), as Python's summary
  gs <- if (is.null(g)) lapply(seq_len(ncol(Y)) - 1L, function(j) .diag_global_cpp(object$state, j)) else list(g)
  sigma <- vapply(gs, function(gj) sqrt(gj$sigma2), 0)
  rdf <- vapply(gs, function(gj) gj$residual_df, 0)
  edf <- if (identical(object$approx, "binned") && !is.null(g)) g$trace_L else object$effective_df
  cv <- if (identical(object$approx, "binned") && !is.null(g)) g$cv else object$cv
  structure(list(call = object$call, title = .kreg_title(object), bandwidths = tab,
                 r.squared = r2, sigma = sigma,
                 effective_df = edf, cv = cv, nobs = object$nobs,
                 uses_neighbors = object$uses_neighbors,
                 residual.df = rdf[1],  # the same for every response (L does not depend on y)
                 trace.LtL = g$trace_LtL,
                 r.squared.rss = g$r_squared, gcv = g$gcv, aicc = g$aicc,
                 notes = c(.kreg_smoothed_out_notes(object), .kreg_binned_note(object))),
            class = "summary.kreg")
}

# One note per regressor whose bandwidth smooths it out: a continuous h above 3 standard
# deviations of its column, a categorical lambda at the kernel's largest value (the core's
# bound). np's users read either as an irrelevant regressor (Hall, Li and Racine 2007).
.kreg_smoothed_out_notes <- function(object) {
  sdv <- object$x_sd
  lev <- object$x_levels
  if (is.null(sdv) || is.null(lev)) return(character(0))
  types <- strsplit(object$var_types, "")[[1]]
  bw <- object$bw
  notes <- character(0)
  for (j in seq_along(types)) {
    nm <- names(bw)[j]
    if (types[j] == "c") {
      if (sdv[[j]] > 0 && bw[[j]] > 3 * sdv[[j]]) {
        notes <- c(notes, sprintf(paste0(
          "'%s' has h = %s > 3 sd (%s): the variable is smoothed out (the fit is %s in it); ",
          "np's users read this as an irrelevant regressor (with local linear: one that ",
          "enters linearly); check it with a significance test or drop it"),
          nm, format(signif(bw[[j]], 4)), format(signif(3 * sdv[[j]], 4)),
          if (object$method == "ll") "linear" else "flat"))
      }
    } else {
      kern <- if (types[j] == "o") object$okertype else object$ukertype
      mx <- .kreg_categorical_max_bw_cpp(kern, types[j] == "o",
                                         as.integer(lev[[j]]))
      if (bw[[j]] >= mx * (1 - 1e-5)) {
        notes <- c(notes, sprintf(paste0(
          "'%s' has lambda = %s at its upper bound %s: the categories are pooled and the ",
          "variable is smoothed out; np's users read this as an irrelevant regressor; check ",
          "it with a significance test or drop it"),
          nm, format(signif(bw[[j]], 4)), format(signif(mx, 4))))
      }
    }
  }
  notes
}

#' @export
print.summary.kreg <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\n", x$title, "\n\nCall:\n", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  print(x$bandwidths, digits = digits)
  cat("\nObservations:", x$nobs, "  effective df tr(L):", format(x$effective_df, digits = digits),
      "\nResidual standard error:", format(signif(x$sigma, digits)), "on",
      format(x$residual.df, digits = digits), "degrees of freedom (n - 2 tr(L) + tr(L'L))",
      "\nR-squared (cor(y, fit)^2):", format(signif(x$r.squared, digits)),
      "\nLeave-one-out CV (mean squared error):", format(signif(x$cv, digits)), "\n")
  if (!is.null(x$trace.LtL)) {
    cat("R-squared (1 - RSS/TSS):", format(signif(x$r.squared.rss, digits)),
        "  GCV:", format(signif(x$gcv, digits)), "  AICc:", format(signif(x$aicc, digits)), "\n")
  }
  if (length(x$notes)) cat("\n", paste0("Note: ", x$notes, "\n"), sep = "")
  invisible(x)
}

#' Predictions and gradients of a kernel regression fit
#'
#' @param object A `kreg` fit.
#' @param newdata A data frame with the model's regressors; missing: the fitted values.
#' @param type `"response"` (the fit \eqn{m(x)}) or `"gradient"` (the local slopes
#'   \eqn{\partial m / \partial x_j}, `method = "ll"` only; `NA` for factors).
#' @param se.fit Return standard errors too (see [diagnose()]).
#' @param interval `"none"`, `"confidence"` (fit +- z se) or `"rbc"` (robust bias-corrected,
#'   see [diagnose()]).
#' @param level Confidence level.
#' @param vcov Variance estimator for `se.fit` and intervals (see [diagnose()]).
#' @param kind Deprecated name of `vcov` (a warning; removed in the next release).
#' @param ... Unused.
#' @return `"response"`: a vector (a matrix for several responses). `"gradient"`: a matrix
#'   with one column per regressor (an array rows x regressors x responses for several).
#'   With `interval`: a matrix with columns `fit, lwr, upr` (for `"rbc"`, `fit` is the
#'   bias-corrected fit). With `se.fit = TRUE`: a list with `fit`, `se.fit`, `df` (residual df
#'   \eqn{n - 2 tr L + tr L'L}) and `residual.scale`, as [stats::predict.lm()].
#' @examples
#' fit <- kreg(mpg ~ wt + hp, data = mtcars, bw = c(0.5, 40))
#' nd <- data.frame(wt = c(2.5, 3.5), hp = c(100, 200))
#' predict(fit, nd)
#' predict(fit, nd, interval = "confidence")
#' predict(fit, nd, se.fit = TRUE)$se.fit
#' predict(fit, nd, type = "gradient")
#' @export
predict.kreg <- function(object, newdata, type = c("response", "gradient"), se.fit = FALSE,
                         interval = c("none", "confidence", "rbc"), level = 0.95,
                         vcov = "HC3", ..., kind) {
  if (!missing(kind)) vcov <- .renamed_arg("predict.kreg", "kind", "vcov", kind, missing(vcov))
  kind <- vcov
  type <- match.arg(type)
  interval <- match.arg(interval)
  if (type == "response" && (isTRUE(se.fit) || interval != "none")) {
    d <- .diagnose_frame(object, if (missing(newdata)) NULL else newdata, level = level,
                         kind = kind)
    if (interval == "rbc" && nzchar(attr(d, "bias_note"))) {
      stop("interval: \"rbc\" is not available: ", attr(d, "bias_note"),
           "; use interval = \"confidence\"", call. = FALSE)
    }
    fit <- switch(interval, none = d$fit,
                  confidence = cbind(fit = d$fit, lwr = d$ci_low, upr = d$ci_high),
                  rbc = cbind(fit = d$fit_bc, lwr = d$rbc_low, upr = d$rbc_high))
    if (is.matrix(fit)) rownames(fit) <- rownames(d) else names(fit) <- rownames(d)
    if (!isTRUE(se.fit)) return(fit)
    g <- .diag_global(object)
    return(list(fit = fit, se.fit = if (interval == "rbc") d$se_bc else d$se,
                df = g$residual_df, residual.scale = sqrt(g$sigma2)))
  }
  if (type == "response" && (missing(newdata) || is.null(newdata))) return(fitted(object))
  if (missing(newdata) || is.null(newdata)) {
    stop("newdata: needed for type = \"gradient\"", call. = FALSE)
  }
  if (type == "gradient" && object$method == "lc") {
    stop("type = \"gradient\": needs method = \"ll\" (a local constant fit has no slope)",
         call. = FALSE)
  }
  X <- .kreg_newx(object, newdata)
  if (identical(object$approx, "binned")) return(.kreg_binned_predict(object, X, type, newdata))
  if (type == "response") {
    p <- drop(.kreg_core(.kreg_predict_cpp(object$state, X, "fit"), object$spec))
    if (!is.matrix(p)) names(p) <- rownames(newdata)
    return(p)
  }
  G <- .kreg_core(.kreg_predict_cpp(object$state, X, "gradient"), object$spec)  # n x p x k
  if (dim(G)[3] == 1L) {
    return(matrix(G[, , 1], nrow = nrow(X), dimnames = list(rownames(newdata), names(object$bw))))
  }
  dimnames(G) <- list(rownames(newdata), names(object$bw), colnames(object$y))
  G
}

#' @export
fitted.kreg <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.kreg <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.kreg <- function(object, ...) object$nobs

#' @rdname attention_weights
#' @export
attention_weights.kreg <- function(object, newdata, ...) {
  X <- .kreg_newx(object, newdata)
  A <- .kreg_core(.kreg_predict_cpp(object$state, X, "weights"), object$spec)
  dimnames(A) <- list(rownames(newdata), names(object$leverage))
  A
}

#' @rdname loo_predict
#' @export
loo_predict.kreg <- function(object, ...) {
  if (is.null(object$loo)) stop(object$loo_error, call. = FALSE)
  object$loo
}

#' Plot a kernel regression fit
#'
#' Four views of a `kreg` fit, in base graphics:
#' * `type = "fit"`: the fitted curve along one continuous regressor (`var`), the others held
#'   at their median (numeric) or most frequent level (factors), over a scatter of the data,
#'   with optional pointwise bands.
#' * `type = "partial"`: one panel per regressor (or per name in `var`), each the fit along
#'   that regressor with the others held as above: a curve for continuous regressors, a point
#'   per level (with interval bars when `bands` is not `"none"`) for factors.
#' * `type = "cv"`: the bandwidth-selection criterion curve of the [kbw()] search the fit came
#'   from (`bw = "cv.ls"` and the like with one continuous regressor), see [plot.kbw()].
#' * `type = "attention"`: the attention weights \eqn{l_i(x)} of one query \eqn{x} (`query`)
#'   over the training rows: needles over the regressor for one continuous regressor, else
#'   the training points in the plane of two continuous regressors (`var`), coloured by
#'   weight (blue negative, red positive), with the query marked.
#'
#' @param x A `kreg` fit (single response).
#' @param type `"fit"`, `"partial"`, `"cv"` or `"attention"` (see above).
#' @param var `"fit"`: the continuous regressor to plot along (name or position among the
#'   continuous ones), default the first. `"partial"`: the regressors to plot, default all.
#'   `"attention"`: one or two continuous regressors for the axes.
#' @param query `"attention"`: the query, a one-row data frame with the regressors or a
#'   training row number (default the training row nearest the medians).
#' @param n_grid Number of grid points.
#' @param bands `"none"`, `"confidence"` (conventional pointwise band, shaded), `"rbc"`
#'   (also the robust bias-corrected band, dashed; `type = "fit"` and `"partial"`, any number
#'   of regressors, the others held at their medians or modes), see [diagnose()], `"uniform"`
#'   (`type = "fit"`: also the uniform RBC band over the grid, dotted, from
#'   `diagnose(uniform = TRUE)` with `R` draws and `seed`; its critical value in the legend
#'   and in the result's attribute `crit_uniform_rbc`), or
#'   `"bootstrap"` (`type = "fit"`: the pointwise wild-bootstrap band, shaded, and the
#'   simultaneous sup-t band, dashed, see [bootstrap_bands()]). The y axis spans the data,
#'   the fit and the bands, but a band running more than a quarter of the data's range beyond
#'   them (an RBC band at a boundary, where the data thin out) is clipped, and its legend
#'   entry says so.
#' @param level,vcov Confidence level and variance estimator of the bands.
#' @param kind Deprecated name of `vcov` (a warning; removed in the next release).
#' @param R,seed `bands = "bootstrap"` or `"uniform"`: replications, and the seed of the
#'   core's generator (`NULL`: drawn from R's, so `set.seed()` decides), as in
#'   [bootstrap_bands()].
#' @param ... Passed to [graphics::plot()].
#' @return Invisibly: `"fit"` a data frame `grid, fit` (and `lwr, upr` with bands; its
#'   attribute `clipped` names the bands clipped to the plot range);
#'   `"partial"` a list of such data frames, one per regressor; `"cv"` the criterion curve;
#'   `"attention"` the weights, a named vector.
#' @examples
#' fit <- kreg(mpg ~ wt + hp, data = mtcars, bw = c(0.5, 40))
#' plot(fit, var = "wt")
#' plot(kreg(mpg ~ wt, data = mtcars, bw = 0.5), bands = "rbc")
#' plot(fit, var = "wt", bands = "uniform", R = 499, seed = 1)
#' plot(kreg(mpg ~ wt, data = mtcars, bw = 0.5), bands = "bootstrap", R = 199)
#' d <- transform(mtcars, am = factor(am))
#' plot(kreg(mpg ~ wt + hp + am, data = d, bw = c(0.6, 40, 0.2)), type = "partial",
#'      bands = "confidence")
#' plot(fit, type = "attention", query = data.frame(wt = 3, hp = 150))
#' plot(kreg(mpg ~ wt, data = mtcars), type = "cv")      # bw = "cv.ls" by default
#' @export
plot.kreg <- function(x, type = c("fit", "partial", "cv", "attention"), var = NULL,
                      query = NULL, n_grid = 200L,
                      bands = c("none", "confidence", "rbc", "uniform", "bootstrap"),
                      level = 0.95, vcov = "HC3", R = 999L, seed = NULL, ..., kind) {
  if (!missing(kind)) vcov <- .renamed_arg("plot.kreg", "kind", "vcov", kind, missing(vcov))
  kind <- vcov
  type <- match.arg(type)
  bands <- match.arg(bands)
  if (is.matrix(x$fitted.values)) stop("plot: only for a single response", call. = FALSE)
  if (!is.numeric(n_grid) || length(n_grid) != 1L || n_grid < 2) {
    stop("n_grid: must be a single integer >= 2", call. = FALSE)
  }
  switch(type,
         fit = .kreg_plot_fit(x, var, n_grid, bands, level, kind, R = R, seed = seed, ...),
         partial = .kreg_plot_partial(x, var, n_grid, bands, level, kind, ...),
         cv = .kreg_plot_cv(x, ...),
         attention = .kreg_plot_attention(x, var, query, ...))
}

# Rows of regressor codes with every regressor at its median (continuous) or most frequent
# level (factors); `j` then varies over `values`.
.kreg_hold <- function(x, j, values) {
  Xtr <- x$state$X
  types <- strsplit(x$var_types, "")[[1]]
  G <- matrix(apply(Xtr, 2, stats::median), length(values), ncol(Xtr), byrow = TRUE)
  for (k in which(types != "c")) {
    tb <- table(Xtr[, k])
    G[, k] <- as.numeric(names(tb)[which.max(tb)])
  }
  G[, j] <- values
  colnames(G) <- names(x$bw)
  G
}

# Fit and (optionally) pointwise bands at rows G of regressor codes; bands = "uniform" adds
# the uniform RBC band of diagnose(uniform = TRUE) over the rows of G (R draws, seed) and its
# critical value as attribute "crit" (the method as "method").
.kreg_band <- function(x, G, bands, level, kind, R = 999L, seed = NULL) {
  fit <- drop(.kreg_predict_cpp(x$state, G, "fit"))
  out <- data.frame(fit = fit)
  if (bands != "none") {
    uni <- bands == "uniform"
    d <- .diag_pointwise_cpp(x$state, G, .diag_kind(kind), as.double(level), -1L, 0,
                             numeric(0), .diag_output(x), numeric(0),
                             if (uni) .uniform_draws(R, 999L) else 0L,
                             if (uni) .attnreg_seed(seed) else 0, "auto")
    out$lwr <- d$ci_low
    out$upr <- d$ci_high
    if (bands %in% c("rbc", "uniform") && nzchar(d$bias_note)) {
      stop("bands: \"", bands, "\" is not available: ", d$bias_note,
           "; use bands = \"confidence\"", call. = FALSE)
    }
    if (bands %in% c("rbc", "uniform")) {
      out$rbc_lwr <- d$rbc_low
      out$rbc_upr <- d$rbc_high
    }
    if (uni) {
      if (nzchar(d$uniform$uniform_note)) {
        warning("plot: ", d$uniform$uniform_note, call. = FALSE)
      }
      out$uniform_lwr <- d$uniform$uniform_rbc_low
      out$uniform_upr <- d$uniform$uniform_rbc_high
      attr(out, "crit") <- d$uniform$crit_uniform_rbc
      attr(out, "method") <- d$uniform$uniform_method
    }
  }
  out
}

.kreg_continuous <- function(x) {
  types <- strsplit(x$var_types, "")[[1]]
  names(x$bw)[types == "c"]
}

# The y range of a band plot: the data and the fit, widened by the bands, but by no more than
# a quarter of the data's range on either side (a band that explodes at a boundary, where the
# data thin out, must not set the scale). Returns list(ylim, clipped = names of clipped bands).
.kreg_band_limits <- function(base, fit, bands, margin = 0.25) {
  r0 <- range(base, finite = TRUE)
  span <- diff(r0)
  if (span == 0) span <- max(abs(r0[2]), 1) * 0.1
  allow <- c(r0[1] - margin * span, r0[2] + margin * span)
  lim <- range(c(r0, fit), finite = TRUE)
  clipped <- character(0)
  for (nm in names(bands)) {
    lo <- bands[[nm]][[1]]; hi <- bands[[nm]][[2]]
    if (!any(is.finite(lo)) || !any(is.finite(hi))) next
    lim <- c(min(lim[1], max(min(lo, na.rm = TRUE), allow[1])),
             max(lim[2], min(max(hi, na.rm = TRUE), allow[2])))
    if (min(lo, na.rm = TRUE) < allow[1] || max(hi, na.rm = TRUE) > allow[2]) {
      clipped <- c(clipped, nm)
    }
  }
  list(ylim = lim, clipped = clipped)
}

.kreg_plot_fit <- function(x, var, n_grid, bands, level, kind, R = 999L, seed = NULL, ...) {
  cont <- .kreg_continuous(x)
  if (!length(cont)) {
    stop("plot: needs a continuous regressor; use type = \"partial\" for factors",
         call. = FALSE)
  }
  if (is.null(var)) var <- cont[1]
  if (is.numeric(var)) var <- cont[var]
  if (length(var) != 1L || !var %in% cont) {
    stop("var: '", paste(var, collapse = ", "), "' is not a continuous regressor; use one of ",
         paste(cont, collapse = ", "), call. = FALSE)
  }
  Xtr <- x$state$X
  j <- match(var, names(x$bw))
  grid <- seq(min(Xtr[, j]), max(Xtr[, j]), length.out = n_grid)
  G <- .kreg_hold(x, j, grid)
  pct <- paste0(format(100 * level), "%")
  if (bands == "bootstrap") {
    bb <- .kreg_core(.diag_bootstrap_cpp(x$state, G, "rademacher", as.integer(R),
                                         as.double(level), .attnreg_seed(seed), FALSE,
                                         .diag_kind(kind)), rename = c(replications = "R"))
    b <- data.frame(fit = bb$center, lwr = bb$low, upr = bb$high,
                    uniform_lwr = bb$uniform_low, uniform_upr = bb$uniform_high)
    band_list <- list(pointwise = list(b$lwr, b$upr),
                      simultaneous = list(b$uniform_lwr, b$uniform_upr))
    labels <- c(pointwise = paste0(pct, " pointwise (wild bootstrap, R = ", R, ")"),
                simultaneous = sprintf("%s simultaneous (sup-t, c = %.2f)", pct,
                                       bb$critical_value))
  } else {
    b <- .kreg_band(x, G, bands, level, kind, R = R, seed = seed)
    band_list <- if (bands == "none") list() else list(conventional = list(b$lwr, b$upr))
    if (bands %in% c("rbc", "uniform")) band_list$RBC <- list(b$rbc_lwr, b$rbc_upr)
    if (bands == "uniform") band_list$uniform <- list(b$uniform_lwr, b$uniform_upr)
    labels <- c(conventional = paste(pct, "conventional"),
                RBC = paste(pct, "robust bias-corrected"),
                uniform = if (bands == "uniform")
                  sprintf("%s uniform RBC (%s, c = %.2f)", pct,
                          c(wild_t = "wild bootstrap-t", gaussian = "Gaussian sup-t")[[
                            attr(b, "method")]], attr(b, "crit")) else "")
  }
  y <- drop(x$state$Y)
  lim <- .kreg_band_limits(y, b$fit, band_list)
  plot(Xtr[, j], y, xlab = var, ylab = deparse(x$terms[[2L]]), ylim = lim$ylim,
       col = grDevices::rgb(0, 0, 0, 0.3), pch = 16, cex = 0.5, ...)
  leg <- list(text = "fit", col = "firebrick", lty = 1, lwd = 2, fill = NA, border = NA)
  add_leg <- function(nm, col, lty, lwd, fill) {
    txt <- labels[[nm]]
    if (nm %in% lim$clipped) txt <- paste0(txt, ", clipped to the plot range")
    leg$text <<- c(leg$text, txt); leg$col <<- c(leg$col, col); leg$lty <<- c(leg$lty, lty)
    leg$lwd <<- c(leg$lwd, lwd); leg$fill <<- c(leg$fill, fill)
    leg$border <<- c(leg$border, NA)
  }
  shade <- grDevices::rgb(0.7, 0.1, 0.1, 0.2)
  if (bands != "none") {
    polygon(c(grid, rev(grid)), c(b$lwr, rev(b$upr)), border = NA, col = shade)
    add_leg(if (bands == "bootstrap") "pointwise" else "conventional", NA, 0, 0, shade)
    if (bands %in% c("rbc", "uniform")) {
      lines(grid, b$rbc_lwr, lty = 2, col = "steelblue")
      lines(grid, b$rbc_upr, lty = 2, col = "steelblue")
      add_leg("RBC", "steelblue", 2, 1, NA)
    }
    if (bands == "uniform") {
      lines(grid, b$uniform_lwr, lty = 3, lwd = 1.5, col = "darkgreen")
      lines(grid, b$uniform_upr, lty = 3, lwd = 1.5, col = "darkgreen")
      add_leg("uniform", "darkgreen", 3, 1.5, NA)
    }
    if (bands == "bootstrap") {
      lines(grid, b$uniform_lwr, lty = 2, col = "steelblue")
      lines(grid, b$uniform_upr, lty = 2, col = "steelblue")
      add_leg("simultaneous", "steelblue", 2, 1, NA)
    }
    graphics::legend("topleft", legend = leg$text, col = leg$col, lty = leg$lty, lwd = leg$lwd,
                     fill = leg$fill, border = leg$border, bty = "n", cex = 0.75)
  }
  lines(grid, b$fit, lwd = 2, col = "firebrick")
  out <- cbind(grid = grid, b)
  attr(out, "clipped") <- lim$clipped
  if (bands == "uniform") attr(out, "crit_uniform_rbc") <- attr(b, "crit")
  invisible(out)
}

.kreg_plot_partial <- function(x, var, n_grid, bands, level, kind, ...) {
  all_vars <- names(x$bw)
  if (is.null(var)) var <- all_vars
  if (is.numeric(var)) var <- all_vars[var]
  bad <- setdiff(var, all_vars)
  if (length(var) == 0L || length(bad)) {
    stop("var: not a regressor: ", paste(bad, collapse = ", "), "; use some of ",
         paste(all_vars, collapse = ", "), call. = FALSE)
  }
  if (bands %in% c("uniform", "bootstrap")) {
    stop("bands: \"", bands, "\" is for type = \"fit\"; partial plots take \"none\", ",
         "\"confidence\" or \"rbc\"", call. = FALSE)
  }
  types <- strsplit(x$var_types, "")[[1]]
  Xtr <- x$state$X
  yl <- deparse(x$terms[[2L]])
  nc <- ceiling(sqrt(length(var)))
  op <- par(mfrow = c(ceiling(length(var) / nc), nc))
  on.exit(par(op))
  out <- list()
  for (v in var) {
    j <- match(v, all_vars)
    if (types[j] == "c") {
      grid <- seq(min(Xtr[, j]), max(Xtr[, j]), length.out = n_grid)
      b <- .kreg_band(x, .kreg_hold(x, j, grid), bands, level, kind)
      rng <- range(c(b$fit, b$lwr, b$upr, b$rbc_lwr, b$rbc_upr), finite = TRUE)
      plot(grid, b$fit, type = "n", ylim = rng, xlab = v, ylab = paste("partial fit of", yl),
           ...)
      if (bands != "none") {
        polygon(c(grid, rev(grid)), c(b$lwr, rev(b$upr)), border = NA,
                col = grDevices::rgb(0.7, 0.1, 0.1, 0.2))
      }
      if (bands == "rbc") {
        lines(grid, b$rbc_lwr, lty = 2, col = "steelblue")
        lines(grid, b$rbc_upr, lty = 2, col = "steelblue")
      }
      lines(grid, b$fit, lwd = 2, col = "firebrick")
      rug(Xtr[, j], col = grDevices::rgb(0, 0, 0, 0.4))
      out[[v]] <- cbind(grid = grid, b)
    } else {
      lv <- x$spec$levels[[j]]
      codes <- seq_along(lv) - 1
      b <- .kreg_band(x, .kreg_hold(x, j, codes), bands, level, kind)
      rng <- range(c(b$fit, b$lwr, b$upr, b$rbc_lwr, b$rbc_upr), finite = TRUE)
      plot(seq_along(lv), b$fit, ylim = rng, xaxt = "n", pch = 19, col = "firebrick",
           xlab = v, ylab = paste("partial fit of", yl), xlim = c(0.5, length(lv) + 0.5), ...)
      graphics::axis(1, at = seq_along(lv), labels = lv)
      if (bands != "none") {
        graphics::segments(seq_along(lv), b$lwr, seq_along(lv), b$upr, col = "firebrick")
      }
      if (bands == "rbc") {
        graphics::segments(seq_along(lv) + 0.12, b$rbc_lwr, seq_along(lv) + 0.12, b$rbc_upr,
                           col = "steelblue", lty = 2)
      }
      out[[v]] <- cbind(level = factor(lv, levels = lv), b)
    }
  }
  invisible(out)
}

.kreg_plot_cv <- function(x, ...) {
  if (is.null(x$kbw) || is.null(x$kbw$curve)) {
    stop("type = \"cv\": this fit has no criterion curve; it is kept when the bandwidth was ",
         "selected (bw = \"cv.ls\", \"cv.aic\" or \"gcv\") with one continuous regressor. ",
         "Select with kbw() and plot that", call. = FALSE)
  }
  plot(x$kbw, ...)
}

.kreg_plot_attention <- function(x, var, query, ...) {
  cont <- .kreg_continuous(x)
  if (!length(cont)) stop("type = \"attention\": needs a continuous regressor", call. = FALSE)
  Xtr <- x$state$X
  colnames(Xtr) <- names(x$bw)
  if (is.null(query)) {  # the training row nearest the medians (scaled by the bandwidths)
    jc <- match(cont, colnames(Xtr))
    ctr <- .kreg_hold(x, integer(0), 0)[1, jc]
    query <- which.min(colSums(((t(Xtr[, jc, drop = FALSE]) - ctr) / x$bw[jc])^2))
  }
  if (is.numeric(query) && length(query) == 1L && is.null(dim(query))) {
    if (query < 1 || query > nrow(Xtr) || query != round(query)) {
      stop("query: a training row number must be between 1 and ", nrow(Xtr), call. = FALSE)
    }
    q <- Xtr[query, , drop = FALSE]
    qname <- names(x$leverage)[query]
  } else if (is.data.frame(query) && nrow(query) == 1L) {
    q <- .kreg_newx(x, query)
    qname <- "query"
  } else {
    stop("query: must be a one-row data frame with the regressors or a training row number",
         call. = FALSE)
  }
  w <- drop(.kreg_predict_cpp(x$state, q, "weights"))
  names(w) <- names(x$leverage)
  if (is.null(var)) var <- utils::head(cont, 2L)
  if (is.numeric(var)) var <- cont[var]
  if (!length(var) || length(var) > 2L || !all(var %in% cont)) {
    stop("var: one or two continuous regressors for the axes (of ", paste(cont, collapse = ", "),
         ")", call. = FALSE)
  }
  ttl <- paste("Attention weights of", qname)
  if (length(var) == 1L) {
    j <- match(var, colnames(Xtr))
    plot(Xtr[, j], w, type = "h", xlab = var, ylab = "weight l_i(x)", main = ttl,
         col = ifelse(w < 0, "steelblue", "firebrick"), ...)
    abline(h = 0, col = "grey60")
    abline(v = q[1, j], lty = 2)
  } else {
    j <- match(var, colnames(Xtr))
    m <- max(abs(w))
    pal <- grDevices::hcl.colors(101, "Blue-Red")
    col <- pal[1 + round(50 * (1 + w / if (m > 0) m else 1))]
    o <- order(abs(w))  # heaviest drawn last
    plot(Xtr[o, j[1]], Xtr[o, j[2]], col = col[o], pch = 19,
         cex = 0.6 + 1.4 * sqrt(abs(w[o]) / if (m > 0) m else 1),
         xlab = var[1], ylab = var[2], main = ttl, ...)
    points(q[1, j[1]], q[1, j[2]], pch = 4, cex = 2, lwd = 2)
  }
  invisible(w)
}

#' Kernel constants
#'
#' \eqn{\mu_2(K) = \int u^2 K(u) du}, \eqn{R(K) = \int K(u)^2 du}, the support radius and the
#' normalising constant of a continuous kernel (as used by plug-in bandwidth rules).
#'
#' @param kernel A kernel name (see [kreg()]).
#' @return A list with `name`, `mu2`, `roughness`, `support`, `constant`.
#' @examples
#' kernel_constants("epanechnikov")
#' @export
kernel_constants <- function(kernel = "gaussian") .kreg_kernel_constants_cpp(kernel)
