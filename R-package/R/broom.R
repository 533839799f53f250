# tidy(), glance() and augment() methods (the broom / generics generics) for the fitted models.
# generics and broom stay in Suggests: .onLoad registers these methods with generics when it is
# installed (at once if it is loaded, else when it loads), as vctrs::s3_register() does.

#' Tidy, glance and augment attnreg fits (broom)
#'
#' With the broom package (or generics) installed, `tidy()`, `glance()` and `augment()` work
#' on [kreg()], [kbw()], [ols_attention()], [ridge_attention()] and [pcr_attention()] results
#' and return tibbles (data frames when tibble is not installed). attnreg does not depend on
#' broom: the methods are registered when it is loaded.
#'
#' * `tidy()`: one row per regressor with its bandwidth (`kreg`, `kbw`: `term`, `type`,
#'   `kernel`, `bandwidth`); one row per coefficient for the least-squares fits (`term`,
#'   `estimate` and, for OLS, `std.error`, `statistic`, `p.value`, with
#'   `conf.int = TRUE` also `conf.low`, `conf.high`; `vcov` chooses the covariance type as in
#'   [summary.ols_attention()]).
#' * `glance()`: one row of fit statistics (`kreg`: `nobs`, `r.squared`, `sigma`,
#'   `effective.df`, `df.residual`, `cv`, `gcv`, `aicc`, `method`, `kernel`, `bw.method`;
#'   `ols_attention`: as `broom::glance.lm` without the likelihood columns; ridge and PCR:
#'   `lambda` or `rank`, `effective.df`, `r.squared`, `nobs`).
#' * `augment(x, data, newdata, se_fit = FALSE, interval = "none")`: the data with `.fitted`,
#'   `.resid`, `.hat` (the leverage \eqn{L_{ii}}, the attention weight of each row on itself)
#'   and, for `kreg`, `.loo` (the exact leave-one-out fit); with `newdata`, `.fitted` (and
#'   `.se.fit`, `.lower`, `.upper` when asked) for the new rows. `data` defaults to the model
#'   frame of an `ols_attention` fit; for the others pass the data the model was fitted on.
#'
#' @name attnreg_tidiers
#' @examples
#' if (requireNamespace("broom", quietly = TRUE)) {
#'   fit <- kreg(mpg ~ wt + hp, data = mtcars, bw = c(0.5, 40))
#'   broom::tidy(fit)
#'   broom::glance(fit)
#'   head(broom::augment(fit, data = mtcars))
#'   broom::augment(fit, newdata = data.frame(wt = 3, hp = 120), se_fit = TRUE)
#'   o <- ols_attention(mpg ~ wt + hp, data = mtcars)
#'   broom::tidy(o, conf.int = TRUE, vcov = "HC3")
#'   broom::glance(o)
#' }
NULL

.as_tibble <- function(df) {
  rownames(df) <- NULL
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

tidy.kreg <- function(x, ...) {
  tab <- summary(x)$bandwidths
  .as_tibble(data.frame(term = rownames(tab), type = tab$type, kernel = tab$kernel,
                        bandwidth = tab$bandwidth, stringsAsFactors = FALSE))
}

glance.kreg <- function(x, ...) {
  s <- summary(x)
  .as_tibble(data.frame(
    nobs = x$nobs, r.squared = s$r.squared, sigma = s$sigma, effective.df = x$effective_df,
    df.residual = if (is.null(s$residual.df)) NA_real_ else s$residual.df, cv = x$cv,
    gcv = if (is.null(s$gcv)) NA_real_ else s$gcv, aicc = if (is.null(s$aicc)) NA_real_ else s$aicc,
    method = x$method, kernel = x$kernel,
    bw.method = if (is.null(x$kbw)) "fixed" else x$kbw$bwmethod, stringsAsFactors = FALSE))
}

# The rows of `data` the fit used (subset and na.action applied), in the fit's row order.
.augment_rows <- function(x, data) {
  rn <- names(x$leverage %||% x$fitted.values)
  if (is.null(rn) || !all(rn %in% rownames(data))) {
    if (nrow(data) != x$nobs) {
      stop("data: must be the data the model was fitted on (", x$nobs, " rows used; got ",
           nrow(data), " rows whose names do not match)", call. = FALSE)
    }
    return(data)
  }
  data[rn, , drop = FALSE]
}

`%||%` <- function(a, b) if (is.null(a)) b else a

.augment_new <- function(x, newdata, se_fit, interval, pred) {
  interval <- match.arg(interval, c("none", "confidence", "prediction", "rbc"))
  out <- newdata
  if (!isTRUE(se_fit) && interval == "none") {
    out$.fitted <- unname(pred(newdata, se.fit = FALSE, interval = "none"))
    return(.as_tibble(out))
  }
  p <- pred(newdata, se.fit = TRUE, interval = interval)
  if (interval == "none") {
    out$.fitted <- unname(p$fit)
  } else {
    out$.fitted <- unname(p$fit[, "fit"])
    out$.lower <- unname(p$fit[, "lwr"])
    out$.upper <- unname(p$fit[, "upr"])
  }
  if (isTRUE(se_fit)) out$.se.fit <- unname(p$se.fit)
  .as_tibble(out)
}

augment.kreg <- function(x, data = NULL, newdata = NULL, se_fit = FALSE,
                         interval = c("none", "confidence", "rbc"), ...) {
  interval <- match.arg(interval)
  if (is.matrix(x$fitted.values)) stop("augment: only for a single response", call. = FALSE)
  if (!is.null(newdata)) {
    return(.augment_new(x, newdata, se_fit, interval, function(nd, se.fit, interval) {
      predict(x, nd, se.fit = se.fit, interval = interval)
    }))
  }
  if (is.null(data)) {
    stop("data: pass the data frame the model was fitted on (augment(fit, data = d))",
         call. = FALSE)
  }
  out <- .augment_rows(x, data)
  out$.fitted <- unname(x$fitted.values)
  out$.resid <- unname(x$residuals)
  out$.hat <- unname(x$leverage)
  out$.loo <- if (is.null(x$loo)) NA_real_ else unname(x$loo)
  if (isTRUE(se_fit) || interval != "none") {
    d <- diagnose(x)
    if (isTRUE(se_fit)) out$.se.fit <- d$se
    if (interval == "confidence") {
      out$.lower <- d$ci_low
      out$.upper <- d$ci_high
    } else if (interval == "rbc") {
      out$.lower <- d$rbc_low
      out$.upper <- d$rbc_high
    }
  }
  .as_tibble(out)
}

tidy.kbw <- function(x, ...) {
  types <- strsplit(x$var_types, "")[[1]]
  .as_tibble(data.frame(term = names(x$bw),
                        type = c(c = "continuous", u = "unordered", o = "ordered")[types],
                        bandwidth = unname(x$bw), lower = unname(x$lower),
                        upper = unname(x$upper), stringsAsFactors = FALSE))
}

glance.kbw <- function(x, ...) {
  .as_tibble(data.frame(nobs = x$nobs, bw.method = x$bwmethod, method = x$method,
                        kernel = x$kernel, objective = x$objective, n.evals = x$n_evals,
                        converged = x$converged, stringsAsFactors = FALSE))
}

tidy.ols_attention <- function(x, conf.int = FALSE, conf.level = 0.95, vcov = "nonrobust",
                               ...) {
  s <- summary(x, vcov = vcov, ...)
  tab <- s$coefficients
  out <- data.frame(term = rownames(tab), estimate = tab[, 1], std.error = tab[, 2],
                    statistic = tab[, 3], p.value = tab[, 4], stringsAsFactors = FALSE)
  if (isTRUE(conf.int)) {
    ci <- confint(x, level = conf.level, vcov = vcov, ...)
    out$conf.low <- ci[, 1]
    out$conf.high <- ci[, 2]
  }
  .as_tibble(out)
}

glance.ols_attention <- function(x, ...) {
  s <- summary(x)
  q <- sum(!x$aliased) - x$intercept
  .as_tibble(data.frame(r.squared = s$r.squared, adj.r.squared = s$adj.r.squared,
                        sigma = s$sigma, df = q, df.residual = x$df.residual, nobs = x$nobs))
}

augment.ols_attention <- function(x, data = x$model, newdata = NULL, se_fit = FALSE,
                                  interval = c("none", "confidence", "prediction"), ...) {
  interval <- match.arg(interval)
  if (is.matrix(x$coefficients)) stop("augment: only for a single response", call. = FALSE)
  if (!is.null(newdata)) {
    return(.augment_new(x, newdata, se_fit, interval, function(nd, se.fit, interval) {
      predict(x, nd, se.fit = se.fit, interval = interval)
    }))
  }
  out <- .augment_rows(x, data)
  out$.fitted <- unname(x$fitted.values)
  out$.resid <- unname(x$residuals)
  out$.hat <- unname(rowSums(attention_factors(x)^2))  # diag(A) = ||F_i||^2 (F F' = A)
  if (isTRUE(se_fit) || interval != "none") {
    p <- predict(x, se.fit = TRUE, interval = interval)
    if (isTRUE(se_fit)) out$.se.fit <- unname(p$se.fit)
    if (interval != "none") {
      out$.lower <- unname(p$fit[, "lwr"])
      out$.upper <- unname(p$fit[, "upr"])
    }
  }
  .as_tibble(out)
}

.tidy_ls <- function(x) {
  cf <- x$coefficients
  if (is.matrix(cf)) stop("tidy: only for a single response", call. = FALSE)
  .as_tibble(data.frame(term = names(cf), estimate = unname(cf), stringsAsFactors = FALSE))
}

.augment_ls <- function(x, data, newdata) {
  if (!is.null(newdata)) {
    out <- newdata
    out$.fitted <- unname(predict(x, newdata))
    return(.as_tibble(out))
  }
  if (is.null(data)) {
    stop("data: pass the data frame the model was fitted on (augment(fit, data = d))",
         call. = FALSE)
  }
  out <- .augment_rows(x, data)
  out$.fitted <- unname(x$fitted.values)
  out$.resid <- unname(x$residuals)
  out$.hat <- unname(diag(attention_weights(x, out)))
  .as_tibble(out)
}

tidy.ridge_attention <- function(x, ...) .tidy_ls(x)

glance.ridge_attention <- function(x, ...) {
  .as_tibble(data.frame(lambda = x$lambda, effective.df = x$effective_df,
                        r.squared = .ls_r2(x), nobs = x$nobs))
}

augment.ridge_attention <- function(x, data = NULL, newdata = NULL, ...) {
  .augment_ls(x, data, newdata)
}

tidy.pcr_attention <- function(x, ...) .tidy_ls(x)

glance.pcr_attention <- function(x, ...) {
  .as_tibble(data.frame(rank = x$rank,
                        explained.variance = sum(x$explained_variance_ratio),
                        r.squared = .ls_r2(x), nobs = x$nobs))
}

augment.pcr_attention <- function(x, data = NULL, newdata = NULL, ...) {
  .augment_ls(x, data, newdata)
}

# Register method `generic.class` of this namespace with package `pkg`'s generic, now if pkg
# is loaded and again whenever it loads (vctrs::s3_register's approach).
.s3_register <- function(pkg, generic, class) {
  fun <- get(paste0(generic, ".", class), envir = asNamespace("attnreg"))
  register <- function(...) {
    ns <- asNamespace(pkg)
    if (exists(generic, envir = ns, mode = "function", inherits = FALSE)) {
      registerS3method(generic, class, fun, envir = ns)
    }
  }
  setHook(packageEvent(pkg, "onLoad"), register)
  if (isNamespaceLoaded(pkg)) register()
  invisible()
}

.register_tidiers <- function() {
  for (cls in c("kreg", "kbw", "ols_attention", "ridge_attention", "pcr_attention")) {
    for (g in c("tidy", "glance", "augment")) {
      if (exists(paste0(g, ".", cls), envir = asNamespace("attnreg"), inherits = FALSE)) {
        .s3_register("generics", g, cls)
      }
    }
  }
}
