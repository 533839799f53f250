#' Ordinary least squares as attention
#'
#' Fits a linear model by column-pivoted QR (the design's cross-product is never formed or
#' inverted) and keeps what is needed for its attention form (Goulet Coulombe 2025, arXiv:2504.09663, eqs. 4-8): the
#' prediction at \eqn{x} is \eqn{\sum_i a_i(x) y_i} with
#' \eqn{a(x)' = d(x)' (D'D)^{-1} D'}, \eqn{D} the training design. With an intercept the
#' weights of each prediction sum to one. The factors \eqn{F = D U \Lambda^{-1/2}}
#' ([attention_factors()]) satisfy \eqn{F_{train}'F_{train} = I} and
#' \eqn{A = F_{test} F_{train}'}; the embedding ([attention_embedding()]) is
#' \eqn{\Omega = (D'D)^{-1}}.
#'
#' Rank-deficient designs are handled like [stats::lm()]: aliased columns get an `NA`
#' coefficient and are left out of predictions (which of several collinear columns is
#' aliased follows the pivoted QR and can differ from `lm`'s choice).
#'
#' Precision: with `precision = "auto"` small or ill-conditioned designs are refactored in
#' double-double arithmetic (about 32 digits). On the NIST StRD problems this gives 14-15
#' correct digits where `lm` gives 5.6 (Wampler5), and fits Filip's degree-10 polynomial (which
#' `lm` aliases) to the 7.6 digits its double-rounded design allows.
#'
#' Inference: [summary()] and [vcov()] take `vcov = "nonrobust"` (classical), `"HC0"` to
#' `"HC3"` (as [sandwich::vcovHC()]), `"HAC"` (Newey-West with Bartlett weights, as
#' `sandwich::NeweyWest(fit, lag = maxlags, prewhite = FALSE, adjust = hac_adjust)`) or a
#' one-sided formula of one or two clustering variables, `vcov = ~firm` or
#' `vcov = ~firm + year` (cluster-robust; see [summary.ols_attention()]).
#'
#' Weights: `weights` gives weighted least squares, minimising \eqn{\sum_i w_i (y_i - d_i'b)^2}
#' (as `lm(weights = )`); the fit stays a linear smoother,
#' \eqn{a(x)' = d(x)' (D'WD)^{-1} D'W}, so [attention_weights()] remain exact (rows of weight 0
#' get 0). `weight_type` follows Stata: `"analytic"` (aweight, what `lm` does) counts the rows of
#' positive weight as the N of the residual degrees of freedom \eqn{N - r}; `"frequency"`
#' (fweight) treats row i as \eqn{w_i} identical observations, \eqn{N = \sum w_i}, and every
#' statistic equals the unweighted one on the data with rows repeated (HAC is refused); its
#' weights must be whole numbers (for others use `"analytic"`).
#'
#' Offsets: `offset()` terms in the formula are honoured as by `lm` (without absorbed fixed
#' effects): the coefficients are those of `y - offset`, fitted values and predictions (with
#' `newdata`: its offset) add the offset back, and the attention weights apply to `y - offset`;
#' R-squared is that of the working response `y - offset` (R 4.2's `summary.lm` counts the
#' offset as fitted instead).
#'
#' Fixed effects: a formula `y ~ x1 + x2 | f1 + f2` absorbs the factors after `|` (terms
#' `a:b` absorb the interaction), as fixest's `feols()`: the within transformation by
#' (weighted) alternating projections (Gaure 2013, Computational Statistics & Data Analysis 66,
#' 8-18, doi:10.1016/j.csda.2013.03.024; exact in one pass for one factor), then OLS on the
#' transformed data; the fixed effects replace the intercept. The residual degrees of freedom
#' are n - rank - (levels - redundant levels), the redundant levels counted from the connected
#' components of the factor graph (exact for two factors, and for three or more when the
#' further factors are small), so coefficients, standard errors and degrees of freedom are those
#' of `lm()` with the factors as dummies. A regressor absorbed by the fixed effects gets an `NA`
#' coefficient with a warning naming it. The fit (class `ols_attention_fe`) reports the within
#' R-squared; [fixed_effects()] returns the fixed-effect values, `predict()` needs the factor
#' levels in `newdata` (seen in the fit), and [attention_weights()] stays exact: the absorbed
#' fit is a linear smoother. `weights` give weighted projections and weighted least squares, as
#' `lm()` with the dummies and `weights`, with `weight_type` as above; rows of weight 0 are left
#' out of the fit (of n, the degrees of freedom and the level counts, as `lm` leaves them out of
#' n; they get no fitted value; `n_zero_weight` says how many). A formula `y ~ 1 | f` fits the
#' fixed effects alone (within R-squared 0).
#'
#' @param formula A model formula, as for [stats::lm()] (factors become dummy columns).
#' @param data A data frame.
#' @param subset,weights,na.action As in [stats::lm()]. `weights`: finite, non-negative, not
#'   all zero.
#' @param weight_type `"analytic"` (default, Stata's aweight, as `lm`) or `"frequency"`
#'   (Stata's fweight); see Weights.
#' @param rank_tol Relative pivot tolerance for aliasing (default `1e-7`, as `lm`) of double
#'   factorisations; extended-precision fits alias below `1e-11`.
#' @param precision `"auto"`, `"double"` or `"extended"` (see Precision).
#' @param n_threads Threads for the core (0 = OpenMP default).
#' @param fe_tol,fe_max_iter With absorbed fixed effects of two or more factors: tolerance of
#'   the alternating projections (about the accuracy of the transformed data relative to their
#'   largest value) and the cap on (accelerated) projection steps; reaching it warns.
#' @param drop_singletons With absorbed fixed effects: leave singleton rows (a level of some
#'   factor with one row, found iteratively) out of every statistic (n, degrees of freedom,
#'   clusters, R-squared), as reghdfe and pyfixest (Correia 2015); their fitted values and fixed
#'   effects stay. `summary()` says how many. `FALSE` keeps them.
#' @param ssc With absorbed fixed effects: the small-sample conventions of CR1 as fixest's
#'   `ssc()`: a list with `K.adj` (apply (N-1)/(N-K), default `TRUE`), `K.fixef` (`"nonnested"`,
#'   the default of fixest, pyfixest and reghdfe: K counts the absorbed parameters except the
#'   levels of a factor nested in a cluster variable, one kept per such factor; `"full"`;
#'   `"none"`) and `G.adj` (apply G/(G-1), default `TRUE`).
#' @return An object of class `ols_attention` with components `coefficients`, `std_errors`,
#'   `sigma`, `rank`, `df.residual`, `fitted.values`, `residuals`, `weights` (or `NULL`),
#'   `extended`, `model` (the model frame, as `lm`) and what [predict.ols_attention()] and
#'   [attention_weights()] need.
#' @seealso [predict.ols_attention()], [confint.ols_attention()], [vcov.ols_attention()],
#'   [summary.ols_attention()], [attention_weights()].
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' summary(fit)
#' summary(fit, vcov = "HC3")
#' summary(fit, vcov = ~cyl)                    # clustered by cylinders (CR1)
#' wfit <- ols_attention(mpg ~ wt + hp, data = mtcars, weights = 1 / disp)
#' coef(wfit) - coef(lm(mpg ~ wt + hp, data = mtcars, weights = 1 / disp))
#' A <- attention_weights(fit, newdata = mtcars[1:2, ])
#' rowSums(A)                                   # 1 with an intercept
#' drop(A %*% mtcars$mpg) - predict(fit, mtcars[1:2, ])
#' F <- attention_factors(fit)                  # F'F = I (Goulet Coulombe 2025, eq. 6)
#' round(crossprod(F), 12)
#' fe <- ols_attention(mpg ~ wt + hp | cyl + gear, data = mtcars)   # absorbed fixed effects
#' summary(fe)
#' fixed_effects(fe)
#' @export
ols_attention <- function(formula, data, subset, weights, na.action, rank_tol = 1e-7,
                          precision = c("auto", "double", "extended"), n_threads = 0L,
                          weight_type = c("analytic", "frequency"), fe_tol = 1e-10,
                          fe_max_iter = 10000L, drop_singletons = TRUE, ssc = NULL) {
  cl <- match.call()
  precision <- match.arg(precision)
  weight_type <- match.arg(weight_type)
  fe <- .fe_split(formula)
  if (!is.null(fe)) {
    return(.ols_fe(cl, formula, parent.frame(), fe, rank_tol, precision, n_threads, fe_tol,
                   fe_max_iter, weight_type, drop_singletons = drop_singletons, ssc = ssc))
  }
  mf <- match.call(expand.dots = FALSE)
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  w <- .ls_weights(mf)
  d <- .ls_design(mf, offset_ok = TRUE)
  # offset() terms, as lm: the fit is of y - offset (the working response the core, its
  # inference and its attention weights see); fitted values add the offset back.
  if (!is.null(d$offset)) d$Y <- d$Y - d$offset
  res <- .kreg_core(.ols_fit_cpp(d$X, d$Y, d$intercept, as.double(rank_tol),
                                 as.integer(n_threads), precision, w, weight_type))
  if (!is.null(d$offset)) res$fitted <- res$fitted + d$offset
  nm <- d$names
  coef <- drop(res$coefficients)
  se <- drop(res$std_errors)
  if (is.matrix(coef)) {
    dimnames(coef) <- dimnames(se) <- list(nm, colnames(d$Y))
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
    aliased = setNames(res$aliased, nm), df.residual = res$df_residual,
    fitted.values = fitted, residuals = resid, weights = w,
    weight_type = if (!is.null(w)) weight_type, unscaled_cov = res$unscaled_cov,
    extended = res$extended, intercept = d$intercept, y = d$Y, state = res$state,
    terms = d$terms, xlevels = .getXlevels(d$terms, mf), contrasts = d$contrasts,
    na.action = attr(mf, "na.action"), call = cl, nobs = nrow(d$X), model = mf,
    data = if (!missing(data)) data, offset = d$offset
  ), class = "ols_attention")
}

# Response and design (without the intercept column) of a model frame; shared by every
# least-squares fitter.
# offset() terms: honoured by ols_attention (offset_ok = TRUE, as lm), refused by the others.
.ls_design <- function(mf, offset_ok = FALSE) {
  mt <- attr(mf, "terms")
  y <- model.response(mf, "numeric")
  if (is.null(y)) stop("formula: needs a response on the left of '~'", call. = FALSE)
  off <- model.offset(mf)
  if (!is.null(off) && !offset_ok) {
    stop("formula: offset() terms are honoured by ols_attention() without absorbed fixed ",
         "effects only; here subtract the offset from the response instead (e.g. ",
         "I(y - z) ~ x)", call. = FALSE)
  }
  X <- model.matrix(mt, mf)
  intercept <- attr(mt, "intercept") == 1L
  Xc <- if (intercept) X[, colnames(X) != "(Intercept)", drop = FALSE] else X
  Y <- as.matrix(y)
  storage.mode(Y) <- "double"
  list(X = Xc, Y = Y, intercept = intercept, terms = mt, contrasts = attr(X, "contrasts"),
       names = c(if (intercept) "(Intercept)", colnames(Xc)), offset = off)
}

# Model frame for a least-squares fitter called as f(formula, data, subset, na.action, ...).
.ls_frame <- function(call, env) {
  mf <- call
  m <- match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L)
  mf <- mf[c(1L, m)]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  eval(mf, env)
}

# Design matrix of new data without the intercept column, in the training column order.
# With na_ok (predict, as predict.lm), rows with missing values go through `na.action` (na.pass
# keeps them: their predictions are NA); attr "offset" holds the offset() terms of new rows.
.ls_newdesign <- function(object, newdata, na_ok = FALSE, na.action = stats::na.pass) {
  if (missing(newdata) || is.null(newdata)) {
    stop("newdata: needed here (pass a data frame with the model's variables)", call. = FALSE)
  }
  tt <- delete.response(object$terms)
  .check_newdata(tt, newdata)
  mf <- model.frame(tt, newdata, na.action = if (na_ok) na.action else stats::na.pass,
                    xlev = object$xlevels)
  X <- model.matrix(tt, mf, contrasts.arg = object$contrasts)
  if (object$intercept) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  if (!na_ok && anyNA(X)) {
    stop("newdata: contains missing values in the model's variables; remove or impute them",
         call. = FALSE)
  }
  if (nrow(X) != nrow(mf)) {  # model.matrix left out rows (a factor NA): put them back as NA
    Xf <- matrix(NA_real_, nrow(mf), ncol(X), dimnames = list(rownames(mf), colnames(X)))
    Xf[rownames(X), ] <- X
    X <- Xf
  }
  off <- model.offset(mf)
  attr(X, "offset") <- if (!is.null(off)) off
  X
}
.ols_newdesign <- .ls_newdesign

.ols_cov_args <- function(vcov, maxlags, object = NULL, cluster_type = "CR1") {
  clusters <- NULL
  cluster_vars <- NULL
  if (inherits(vcov, "formula")) {
    cluster_type <- match.arg(cluster_type, c("CR1", "CR0", "CR2", "CR3"))
    cl <- .ols_cluster_codes(object, vcov)
    clusters <- cl$codes
    cluster_vars <- cl$vars
    vcov <- cluster_type
  } else {
    if (is.character(vcov) && length(vcov) == 1L &&
        tolower(vcov) %in% c("cluster", "cr0", "cr1", "cr2")) {
      stop("vcov: clustered standard errors need the clustering variables: use vcov = ~firm ",
           "(or ~firm + year), with cluster_type = \"CR0\", \"CR1\" or \"CR2\"", call. = FALSE)
    }
    vcov <- match.arg(vcov, c("nonrobust", "HC0", "HC1", "HC2", "HC3", "HAC"))
  }
  if (is.null(maxlags)) {
    maxlags <- -1L
  } else if (!is.numeric(maxlags) || length(maxlags) != 1L || maxlags < 0 ||
             maxlags != round(maxlags)) {
    stop("maxlags: must be NULL (automatic) or a single integer >= 0", call. = FALSE)
  }
  list(vcov = vcov, maxlags = as.integer(maxlags), clusters = clusters,
       cluster_vars = cluster_vars)
}

# Integer codes (n x 1 or n x 2) of the clustering variables of a one-sided formula, looked up
# in the model frame, then in the data of the fit (rows matched by row name), then in the
# formula's environment.
.ols_cluster_codes <- function(object, f) {
  if (is.null(object) || length(f) != 2L) {
    stop("vcov: give the clustering variables as a one-sided formula, e.g. vcov = ~firm or ",
         "vcov = ~firm + year", call. = FALSE)
  }
  labs <- attr(stats::terms(f), "term.labels")
  if (length(labs) < 1L || length(labs) > 2L) {
    stop("vcov: one or two clustering variables (~firm or ~firm + year), got ", length(labs),
         call. = FALSE)
  }
  mf <- object$model
  n <- object$nobs
  codes <- vapply(labs, function(v) {
    x <- NULL
    if (v %in% names(mf)) {
      x <- mf[[v]]
    } else if (!is.null(object$data)) {
      d <- object$data
      x <- tryCatch(eval(str2lang(v), d, environment(f)), error = function(e) NULL)
      if (!is.null(x) && length(x) == NROW(d) && NROW(d) != n) {
        x <- x[match(rownames(mf), rownames(d))]
      }
    } else {
      x <- tryCatch(eval(str2lang(v), environment(f)), error = function(e) NULL)
    }
    if (is.null(x)) {
      stop("vcov: cannot find the clustering variable '", v, "' in the data of the fit",
           call. = FALSE)
    }
    if (length(x) != n) {
      stop("vcov: the clustering variable '", v, "' has ", length(x), " values but the fit ",
           "used ", n, " rows", call. = FALSE)
    }
    if (anyNA(x)) {
      stop("vcov: the clustering variable '", v, "' is missing (NA) in ", sum(is.na(x)),
           " rows used by the fit; drop those rows (subset) or give them a cluster",
           call. = FALSE)
    }
    g <- as.integer(factor(x))
    if (length(unique(g)) < 2L) {
      stop("vcov: the clustering variable '", v, "' has a single level; clustered standard ",
           "errors need at least 2 clusters (use another variable or vcov = \"HC1\")",
           call. = FALSE)
    }
    g
  }, integer(n))
  codes <- matrix(codes, nrow = n)
  storage.mode(codes) <- "integer"
  list(codes = codes, vars = labs)
}

#' @export
print.ols_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS as attention (pivoted QR", if (isTRUE(x$extended)) ", extended precision", ")\n\n",
      "Call:\n", paste(deparse(x$call), collapse = "\n"), "\n\nCoefficients:\n", sep = "")
  print.default(format(x$coefficients, digits = digits), print.gap = 2L, quote = FALSE)
  cat("\nRank ", x$rank, ", residual df ", x$df.residual, "\n", sep = "")
  invisible(x)
}

#' Summarise an OLS-as-attention fit
#'
#' A coefficient table like [summary.lm()], with the covariance chosen here (as fixest's
#' `summary(est, vcov = ...)`).
#'
#' @param object An `ols_attention` fit.
#' @param vcov `"nonrobust"` (classical), `"HC0"`, `"HC1"`, `"HC2"`, `"HC3"`, `"HAC"`
#'   (Newey-West, Bartlett weights), or a one-sided formula of one or two clustering variables
#'   (`~firm`, `~firm + year`; looked up in the model frame, then in the data of the fit) for
#'   cluster-robust standard errors of type `cluster_type`. Two variables give the two-way
#'   covariance of Cameron, Gelbach and Miller (2011, J. Bus. Econ. Stat. 29(2)),
#'   \eqn{V_1 + V_2 - V_{12}} (\eqn{V_{12}} clustered on the intersection). That sum can be
#'   indefinite (a negative variance); then, as Cameron, Gelbach and Miller (2011, sec. 2.3,
#'   doi:10.1198/jbes.2010.07136) propose and `reghdfe` and fixest do, \eqn{V = U \Lambda U'}
#'   is replaced by \eqn{U \max(\Lambda, 0) U'} (in the coefficients' units), with a warning
#'   and `cov_fixed = TRUE` in the summary. One-way and HC covariances are positive
#'   semi-definite by construction and never changed.
#' @param maxlags HAC lags, 0 to n - 1; `NULL` uses `floor(4 (n/100)^(2/9))`.
#' @param hac_adjust HAC small-sample factor n/(n - rank) (sandwich's `adjust = TRUE`).
#' @param cluster_type With a clustering formula: `"CR1"` (default; Stata's `vce(cluster)`
#'   factor \eqn{G/(G-1) (N-1)/(N-r)}, with \eqn{G = \min(G_1, G_2)} for two-way, as Stata's
#'   `ivreg2` and `reghdfe`), `"CR0"` (no factor) or `"CR2"` (Bell and McCaffrey 2002:
#'   residuals of cluster g premultiplied by \eqn{(I - H_{gg})^{-1/2}}; one-way only; with
#'   fixed effects after `|`, only when every absorbed factor is nested in the clusters, where
#'   it equals the dummy-variable fit's CR2 (Pustejovsky and Tipton 2018, JBES 36(4),
#'   Theorem 2); otherwise an error suggests CR1 or CR0), or `"CR3"` (the cluster jackknife
#'   \eqn{(G-1)/G \sum_g (b_{(g)} - b)(b_{(g)} - b)'} of MacKinnon, Nielsen and Webb 2023, in
#'   closed form; one-way; with fixed effects nested in the clusters or one factor that is not).
#'   Clustered p-values use t with \eqn{G - 1} degrees of freedom, as Stata.
#' @param ... Unused.
#' @return An object of class `summary.ols_attention`: `coefficients` (estimate, standard
#'   error, t value, p value with `df_inference` degrees of freedom), `r.squared`,
#'   `adj.r.squared`, `sigma`, `df` (residual degrees of freedom), `df_inference`, `vcov` (the
#'   type used), `n_clusters`, `cov` (the covariance matrix) and `cov_fixed` (`TRUE` when an
#'   indefinite two-way clustered covariance was eigenvalue-fixed, see `vcov`) and
#'   `n_leverage_one` (HC2/HC3: rows of leverage 1, e.g. of a dummy that is 1 on one row, whose
#'   0/0 terms \eqn{e_i^2 / (1 - h_i)^k} are left out of the covariance; printed as a note).
#'   With no residual degrees of freedom (as many observations as estimated coefficients) the
#'   standard errors, t and p values are `NaN`, with a warning, as in [stats::summary.lm()].
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' summary(fit, vcov = "HC1")
#' summary(fit, vcov = ~cyl + gear)              # two-way clustered
#' @export
summary.ols_attention <- function(object, vcov = "nonrobust", maxlags = NULL,
                                  hac_adjust = FALSE, cluster_type = "CR1", ...) {
  if (is.matrix(object$coefficients)) {
    stop("summary: only for a single response; fit one model per column", call. = FALSE)
  }
  a <- .ols_cov_args(vcov, maxlags, object, cluster_type)
  inf <- .ols_inference_cpp(object$state, object$y, a$vcov, a$maxlags, isTRUE(hac_adjust), 1L,
                            a$clusters)
  if (inf$df_residual == 0) {
    # As summary.lm: an exact fit leaves no residual variance to estimate.
    warning("summary: all ", object$nobs, " residuals are 0: no residual degrees of freedom ",
            "(n = rank = ", object$rank, "), so the standard errors, t values and p values are ",
            "NaN; add observations or remove terms", call. = FALSE)
  }
  cov_fixed <- .note_cov_fix(inf, "summary")
  nm <- names(object$coefficients)
  tab <- cbind(Estimate = drop(inf$estimate), `Std. Error` = drop(inf$std_error),
               `t value` = drop(inf$t_value), `Pr(>|t|)` = drop(inf$p_value))
  rownames(tab) <- nm
  V <- inf$vcov
  dimnames(V) <- list(nm, nm)
  structure(list(call = object$call, coefficients = tab, sigma = inf$sigma, df = inf$df_residual,
                 df_inference = inf$df_inference,
                 r.squared = inf$r_squared, adj.r.squared = inf$adj_r_squared,
                 rank = object$rank, aliased = object$aliased, vcov = inf$cov_type,
                 maxlags = inf$maxlags, cov = V, extended = object$extended,
                 n_clusters = if (length(inf$n_clusters)) setNames(inf$n_clusters, a$cluster_vars),
                 cov_fixed = cov_fixed, weighted = !is.null(object$weights),
                 n_leverage_one = as.integer(inf$n_leverage_one %||% 0)),
            class = "summary.ols_attention")
}

#' @export
print.summary.ols_attention <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nOLS as attention (pivoted QR", if (isTRUE(x$extended)) ", extended precision", ")\n\n",
      "Call:\n", paste(deparse(x$call), collapse = "\n"), "\n\n", sep = "")
  se <- switch(x$vcov, nonrobust = "classical",
               HAC = paste0("HAC (Newey-West, Bartlett, ", x$maxlags, " lags)"), x$vcov)
  if (length(x$n_clusters)) {
    se <- paste0(x$vcov, ", clustered by ",
                 paste0(names(x$n_clusters), " (", x$n_clusters, ")", collapse = " and "),
                 "; t with ", x$df_inference, " df")
  }
  cat("Coefficients (standard errors: ", se, "):\n", sep = "")
  printCoefmat(x$coefficients, digits = digits, na.print = "NA", ...)
  cat("\nResidual standard error:", format(signif(x$sigma, digits)), "on", x$df,
      "degrees of freedom\n")
  cat("Multiple R-squared: ", formatC(x$r.squared, digits = digits),
      ",\tAdjusted R-squared: ", formatC(x$adj.r.squared, digits = digits), "\n", sep = "")
  if (any(x$aliased)) cat("(", sum(x$aliased), " coefficient(s) aliased: NA)\n", sep = "")
  if (isTRUE(x$n_leverage_one > 0)) {
    writeLines(strwrap(.leverage_one_note(x$n_leverage_one, x$vcov), exdent = 6))
  }
  invisible(x)
}

#' Predictions, standard errors and intervals of an OLS-as-attention fit
#'
#' As [stats::predict.lm()]: the fit \eqn{d(x)'b} at new rows, with `se.fit = TRUE` its
#' standard error \eqn{\sqrt{d(x)' V d(x)}} (\eqn{V} the coefficient covariance of the chosen
#' `vcov` type, see [vcov.ols_attention()]), and confidence or prediction intervals with
#' \eqn{t} quantiles on the residual degrees of freedom. Aliased columns are left out.
#'
#' @param object An `ols_attention` fit (single response for `se.fit` and intervals).
#' @param newdata A data frame with the model's variables; missing: the training rows.
#' @param se.fit Also return standard errors.
#' @param interval `"none"`, `"confidence"` (for the mean) or `"prediction"` (for a new
#'   observation: adds the residual variance \eqn{\sigma^2}).
#' @param level Confidence level.
#' @param vcov Covariance type: `"nonrobust"`, `"HC0"` to `"HC3"`, `"HAC"` or a clustering
#'   formula such as `~firm` (see [summary.ols_attention()]; intervals then use t with
#'   \eqn{G - 1} degrees of freedom).
#' @param na.action What to do with rows of `newdata` that have a missing value in the
#'   model's variables: [stats::na.pass()] (default, as [stats::predict.lm()]) predicts `NA` for
#'   them; [stats::na.omit()] leaves them out.
#' @param ... Passed to [summary.ols_attention()] (`maxlags`, `hac_adjust`, `cluster_type`).
#' @return A named vector (a matrix for several responses); with `interval`, a matrix with
#'   columns `fit, lwr, upr`; with `se.fit = TRUE` a list `fit`, `se.fit`, `df`,
#'   `residual.scale`, as `predict.lm`.
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' nd <- data.frame(wt = c(2.5, 3.5), hp = c(100, 200))
#' predict(fit, nd)
#' predict(fit, nd, interval = "confidence")
#' predict(fit, nd, interval = "prediction", level = 0.9)
#' predict(fit, nd, se.fit = TRUE, vcov = "HC3")$se.fit
#' @export
predict.ols_attention <- function(object, newdata, se.fit = FALSE,
                                  interval = c("none", "confidence", "prediction"),
                                  level = 0.95, vcov = "nonrobust", na.action = stats::na.pass,
                                  ...) {
  interval <- match.arg(interval)
  no_new <- missing(newdata) || is.null(newdata)
  if (!isTRUE(se.fit) && interval == "none") {
    if (no_new) return(fitted(object))
    X <- .ls_newdesign(object, newdata, na_ok = TRUE, na.action = na.action)
    p <- drop(.ols_predict_rows(object, X))
    if (!is.matrix(p)) names(p) <- rownames(X)
    return(p)
  }
  if (is.matrix(object$coefficients)) {
    stop("se.fit, interval: only for a single response; fit one model per column",
         call. = FALSE)
  }
  .check_level(level)
  if (no_new) {  # the training design, from the stored model frame (as model.matrix(lm))
    X <- model.matrix(object$terms, object$model, contrasts.arg = object$contrasts)
    if (object$intercept) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    attr(X, "offset") <- object$offset
  } else {
    X <- .ls_newdesign(object, newdata, na_ok = TRUE, na.action = na.action)
  }
  fit <- drop(.ols_predict_rows(object, X))
  names(fit) <- if (no_new) rownames(object$model) else rownames(X)
  D <- if (object$intercept) cbind(1, X) else X
  keep <- !object$aliased
  s <- summary(object, vcov = vcov, ...)
  V <- s$cov[keep, keep, drop = FALSE]
  Dk <- D[, keep, drop = FALSE]
  ok <- stats::complete.cases(Dk)
  se <- rep(NA_real_, nrow(Dk))
  if (any(ok)) se[ok] <- sqrt(.row_quadratic_forms_cpp(Dk[ok, , drop = FALSE], V))
  names(se) <- names(fit)
  df <- s$df_inference
  if (interval != "none") {
    half <- stats::qt((1 + level) / 2, df) *
      if (interval == "prediction") sqrt(se^2 + object$sigma^2) else se
    fit <- cbind(fit = fit, lwr = fit - half, upr = fit + half)
  }
  if (!isTRUE(se.fit)) return(fit)
  list(fit = fit, se.fit = se, df = df, residual.scale = object$sigma)
}

# d(x)'b + offset at the rows of X (attr "offset": their offset() terms); NA for rows with a
# missing value (as predict.lm with na.pass). A matrix, one column per response.
.ols_predict_rows <- function(object, X) {
  ok <- stats::complete.cases(X)
  k <- NCOL(object$y)
  p <- matrix(NA_real_, nrow(X), k, dimnames = list(rownames(X), colnames(object$y)))
  if (any(ok)) {
    p[ok, ] <- .ols_predict_cpp(object$state, object$y, X[ok, , drop = FALSE])
  }
  off <- attr(X, "offset")
  if (!is.null(off)) p <- p + off
  p
}

# level: one number strictly between 0 and 1.
.check_level <- function(level) {
  if (!is.numeric(level) || length(level) != 1L || !is.finite(level) || level <= 0 ||
      level >= 1) {
    stop("level: must be a single number between 0 and 1 (e.g. 0.95)", call. = FALSE)
  }
}

#' Confidence intervals for OLS-as-attention coefficients
#'
#' \eqn{b_j \pm t_{(1+level)/2,\,n-r}\, se_j} with the standard errors of the chosen
#' covariance type (as [stats::confint.lm()] for `vcov = "nonrobust"`).
#'
#' @param object An `ols_attention` fit (single response).
#' @param parm Coefficients (names or positions); default all.
#' @param level Confidence level.
#' @param vcov Covariance type or clustering formula, see [summary.ols_attention()]
#'   (clustered intervals use t with \eqn{G - 1} degrees of freedom).
#' @param ... Passed to [summary.ols_attention()] (`maxlags`, `hac_adjust`, `cluster_type`).
#' @return A matrix with one row per coefficient and columns for the lower and upper limits.
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' confint(fit)
#' confint(fit, "wt", level = 0.9, vcov = "HC3")
#' confint(fit, vcov = ~cyl)
#' @export
confint.ols_attention <- function(object, parm, level = 0.95, vcov = "nonrobust", ...) {
  .check_level(level)
  if (is.matrix(object$coefficients)) {
    stop("confint: only for a single response; fit one model per column", call. = FALSE)
  }
  cf <- object$coefficients
  s <- summary(object, vcov = vcov, ...)
  se <- sqrt(diag(s$cov))
  pnames <- names(cf)
  if (missing(parm)) parm <- pnames else if (is.numeric(parm)) parm <- pnames[parm]
  bad <- setdiff(parm, pnames)
  if (length(bad)) {
    stop("parm: no coefficient named ", paste0("'", bad, "'", collapse = ", "), "; use one of ",
         paste(pnames, collapse = ", "), call. = FALSE)
  }
  a <- (1 - level) / 2
  q <- stats::qt(1 - a, s$df_inference)
  ci <- cbind(cf[parm] - q * se[parm], cf[parm] + q * se[parm])
  dimnames(ci) <- list(parm, paste(format(100 * c(a, 1 - a), trim = TRUE, digits = 3), "%"))
  ci
}

#' @export
coef.ols_attention <- function(object, ...) object$coefficients

#' Covariance of OLS-as-attention coefficients
#'
#' @param object An `ols_attention` fit (single response).
#' @param vcov,maxlags,hac_adjust,cluster_type As `vcov`, `maxlags`, `hac_adjust` and
#'   `cluster_type` of [summary.ols_attention()] (`vcov` may be a clustering formula, as
#'   fixest's `vcov(est, vcov = ~firm)`).
#' @param type Deprecated name of `vcov` (a warning; removed in the next release).
#' @param ... Unused.
#' @return The q x q covariance matrix (NA rows and columns where aliased).
#' @examples
#' fit <- ols_attention(mpg ~ wt + hp, data = mtcars)
#' vcov(fit)
#' vcov(fit, vcov = "HC3")
#' vcov(fit, vcov = ~cyl, cluster_type = "CR2")
#' @export
vcov.ols_attention <- function(object, vcov = "nonrobust", maxlags = NULL, hac_adjust = FALSE,
                               cluster_type = "CR1", ..., type) {
  if (!missing(type)) vcov <- .renamed_arg("vcov", "type", "vcov", type, missing(vcov))
  summary(object, vcov = vcov, maxlags = maxlags, hac_adjust = hac_adjust,
          cluster_type = cluster_type)$cov
}

#' @export
fitted.ols_attention <- function(object, ...) napredict(object$na.action, object$fitted.values)

#' @export
residuals.ols_attention <- function(object, ...) naresid(object$na.action, object$residuals)

#' @export
nobs.ols_attention <- function(object, ...) {
  # As lm: rows of weight 0 do not count; frequency weights count sum(w) observations.
  w <- object$weights
  if (is.null(w)) return(object$nobs)
  if (identical(object$weight_type, "frequency")) sum(w) else sum(w != 0)
}

#' @rdname attention_weights
#' @export
attention_weights.ols_attention <- function(object, newdata, ...) {
  X <- .ls_newdesign(object, newdata)
  A <- .ols_attention_cpp(object$state, object$y, X)
  dimnames(A) <- list(rownames(newdata), .ls_rownames(object))
  A
}

.ls_rownames <- function(object) {
  f <- object$fitted.values
  if (is.matrix(f)) rownames(f) else names(f)
}

#' @rdname attention_factors
#' @export
attention_factors.ols_attention <- function(object, newdata = NULL, ...) {
  if (is.null(newdata)) {
    F <- .ols_view_cpp(object$state, object$y, "training_factors", matrix(0, 0, 0))
    rownames(F) <- .ls_rownames(object)
  } else {
    F <- .ols_view_cpp(object$state, object$y, "factors", .ls_newdesign(object, newdata))
    rownames(F) <- rownames(newdata)
  }
  colnames(F) <- paste0("F", seq_len(ncol(F)))
  F
}

#' @rdname attention_embedding
#' @export
attention_embedding.ols_attention <- function(object, ...) {
  O <- .ols_view_cpp(object$state, object$y, "embedding", matrix(0, 0, 0))
  nm <- names(object$aliased)
  dimnames(O) <- list(nm, nm)
  O
}

#' @rdname loo_predict
#' @export
loo_predict.ols_attention <- function(object, ...) {
  p <- drop(.ols_view_cpp(object$state, object$y, "loo", matrix(0, 0, 0)))
  if (!is.null(object$offset)) p <- p + object$offset  # LOO of y - offset, plus the offset
  if (!is.matrix(p)) names(p) <- .ls_rownames(object)
  p
}

#' @rdname masked_attention
#' @export
masked_attention.ols_attention <- function(object, strict = FALSE, weights = FALSE, ...) {
  .ls_masked(object, strict, weights, function(what) {
    .ols_view_cpp(object$state, object$y, what, matrix(0, 0, 0), isTRUE(strict))
  })
}

.ls_masked <- function(object, strict, weights, call) {
  nm <- .ls_rownames(object)
  if (isTRUE(weights)) {
    W <- call("masked_weights")
    dimnames(W) <- list(nm, nm)
    return(W)
  }
  p <- drop(call("masked"))
  if (!is.matrix(p)) names(p) <- nm
  p
}

# HC2/HC3 rows of leverage one: the core leaves their 0/0 terms e^2 / (1 - h)^k out.
.leverage_one_note <- function(m, vcov) {
  paste0("Note: ", m, " row", if (m != 1) "s", " with leverage 1 (fitted exactly, e.g. by a ",
         "dummy that is 1 on one row) left out of the ", vcov, " covariance (residual 0, term ",
         "e^2 / (1 - h)^k = 0/0); the standard error of such a dummy's coefficient leaves out ",
         "that row's own error variance, which no other row estimates.")
}
