# Valid inputs of ols_attention against lm: offset() terms, NA in newdata, fixed effects only,
# absorbed fixed effects with rows of weight 0. Tolerance 1e3 n eps (sums of n terms, one QR of
# a well-conditioned design).

tol_n <- function(n) 1e3 * n * .Machine$double.eps

test_that("offset() terms are honoured as lm honours them", {
  for (seed in 1:3) {
    set.seed(seed)
    n <- 40
    d <- data.frame(x = rnorm(n), z = runif(n, 0, 5), g = factor(sample(letters[1:3], n, TRUE)))
    d$y <- 1 + 0.5 * d$x + d$z + rnorm(n)
    for (f in list(y ~ x + offset(z), y ~ x + g + offset(2 * z), y ~ offset(z) + x - 1)) {
      fit <- ols_attention(f, d)
      ref <- lm(f, d)
      tol <- tol_n(n) * max(1, abs(coef(ref)))
      expect_lt(max(abs(coef(fit) - coef(ref))), tol, label = deparse(f))
      expect_lt(max(abs(fitted(fit) - fitted(ref))), tol * 10)
      expect_lt(max(abs(residuals(fit) - residuals(ref))), tol * 10)
      nd <- data.frame(x = c(-1, 0, 2), z = c(0, 1, 4), g = factor(c("a", "b", "c"),
                                                                    levels = levels(d$g)))
      expect_lt(max(abs(predict(fit, nd) - predict(ref, nd))), tol * 10)
      pi <- predict(fit, nd, interval = "confidence")
      pr <- predict(ref, nd, interval = "confidence")
      expect_lt(max(abs(pi - pr)), tol * 10)
      # R^2 of the working response y - offset (summary.lm of R 4.2 counts the offset as
      # fitted; the fit is of y - offset, so its R^2 is the one of lm(I(y - offset) ~ ...))
      yo <- model.response(model.frame(ref)) - model.offset(model.frame(ref))
      r2 <- 1 - sum(residuals(ref)^2) / sum((yo - if (attr(terms(f), "intercept")) mean(yo)
                                              else 0)^2)
      expect_lt(abs(summary(fit)$r.squared - r2), tol)
      expect_lt(max(abs(summary(fit)$coefficients[, 2] - summary(ref)$coefficients[, 2])), tol)
      # attention weights act on y - offset: predictions = A (y - offset) + offset(new)
      A <- attention_weights(fit, nd)
      off_new <- eval(attr(terms(f), "variables")[[attr(terms(f), "offset") + 1]], nd)
      expect_lt(max(abs(drop(A %*% (d$y - eval(attr(terms(f), "variables")[[
        attr(terms(f), "offset") + 1]], d))) + off_new - predict(ref, nd))), tol * 10)
    }
  }
})

test_that("offset() is refused by the least-squares fitters that do not honour it", {
  d <- data.frame(x = rnorm(20), z = rnorm(20), y = rnorm(20))
  expect_error(ridge_attention(y ~ x + offset(z), d), "formula: offset\\(\\) terms are honoured")
})

test_that("predict with NA in newdata gives NA for that row, as predict.lm", {
  set.seed(4)
  d <- data.frame(x = rnorm(30), g = factor(sample(c("a", "b"), 30, TRUE)))
  d$y <- d$x + rnorm(30)
  fit <- ols_attention(y ~ x + g, d)
  ref <- lm(y ~ x + g, d)
  nd <- data.frame(x = c(1, NA, 0.5, 2), g = factor(c("a", "b", NA, "b"), levels = c("a", "b")))
  p <- predict(fit, nd)
  pr <- predict(ref, nd)
  expect_equal(is.na(p), is.na(pr))
  expect_lt(max(abs(p - pr), na.rm = TRUE), tol_n(30))
  expect_equal(names(p), names(pr))
  ci <- predict(fit, nd, interval = "prediction")
  cr <- predict(ref, nd, interval = "prediction")
  expect_equal(is.na(ci), is.na(cr))
  expect_lt(max(abs(ci - cr), na.rm = TRUE), tol_n(30) * 10)
  se <- predict(fit, nd, se.fit = TRUE)$se.fit
  expect_equal(is.na(se), is.na(predict(ref, nd, se.fit = TRUE)$se.fit))
  # na.omit leaves the rows out, as predict.lm
  expect_equal(names(predict(fit, nd, na.action = na.omit)),
               names(predict(ref, nd, na.action = na.omit)))
})

test_that("fixed effects only: the group means, within R^2 0, R^2 of lm with dummies", {
  for (seed in 1:2) {
    set.seed(seed)
    n <- 60
    d <- data.frame(f = factor(sample(letters[1:5], n, TRUE)))
    d$y <- as.integer(d$f) + rnorm(n)
    fit <- ols_attention(y ~ 1 | f, d)
    ref <- lm(y ~ f, d)
    expect_lt(max(abs(fitted(fit) - fitted(ref))), tol_n(n) * 10)
    expect_lt(abs(fit$r.squared - summary(ref)$r.squared), tol_n(n))
    expect_lt(abs(fit$r.squared.within), tol_n(n))
    expect_equal(fit$df.residual, ref$df.residual)
    expect_length(coef(fit), 0L)
  }
})

test_that("absorbed fixed effects with rows of weight 0 equal the fit without those rows", {
  set.seed(12)
  n <- 80
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), f = factor(sample(letters[1:6], n, TRUE)),
                  w = runif(n, 0.5, 2))
  d$y <- d$x1 - d$x2 + as.integer(d$f) + rnorm(n)
  d$w[seq(1, n, by = 7)] <- 0
  fit <- ols_attention(y ~ x1 + x2 | f, d, weights = w)
  ref <- ols_attention(y ~ x1 + x2 | f, d[d$w > 0, ], weights = w)
  lmr <- lm(y ~ x1 + x2 + f, d, weights = w)
  expect_lt(max(abs(coef(fit) - coef(ref))), tol_n(n))
  expect_lt(max(abs(coef(fit) - coef(lmr)[c("x1", "x2")])), tol_n(n) * 10)
  expect_equal(fit$df.residual, lmr$df.residual)
  expect_equal(fit$n_fe_levels, ref$n_fe_levels)
  expect_equal(fit$n_zero_weight, length(seq(1, n, by = 7)))
  s <- summary(fit, vcov = "HC1")$coefficients[, 2]
  expect_lt(max(abs(s - summary(ref, vcov = "HC1")$coefficients[, 2])), tol_n(n))
  expect_error(ols_attention(y ~ x1 | f, d, weights = -w), "weights: must be finite and >= 0")
})

test_that("frequency weights that are not whole numbers are refused, pointing to analytic", {
  d <- data.frame(x = rnorm(20), y = rnorm(20), w = c(0.5, rep(1, 19)),
                  f = factor(rep(letters[1:4], 5)))
  msg <- "weights: weight 1 is 0.5; frequency weights count copies of a row and must be whole"
  expect_error(ols_attention(y ~ x, d, weights = w, weight_type = "frequency"), msg)
  expect_error(ols_attention(y ~ x | f, d, weights = w, weight_type = "frequency"), msg)
  expect_error(ols_attention(y ~ x, d, weights = w, weight_type = "frequency"), "analytic")
  expect_silent(ols_attention(y ~ x, d, weights = w))  # analytic: any weight >= 0
})

test_that("predict with absorbed fixed effects gives NA for incomplete rows, as predict.lm", {
  set.seed(21)
  n <- 50
  d <- data.frame(x = rnorm(n), f = factor(sample(letters[1:4], n, TRUE)))
  d$y <- d$x + as.integer(d$f) + rnorm(n)
  fit <- ols_attention(y ~ x | f, d)
  ref <- lm(y ~ x + f, d)
  nd <- data.frame(x = c(1, NA, 0.5), f = factor(c("a", "b", NA), levels = levels(d$f)))
  p <- predict(fit, nd)
  expect_equal(is.na(p), is.na(predict(ref, nd)))
  expect_lt(abs(p[[1]] - predict(ref, nd)[[1]]), tol_n(n) * 10)
  expect_equal(names(predict(fit, nd, na.action = na.omit)), "1")
})

test_that("the absorbed fit's options are named as passed", {
  d <- data.frame(x = rnorm(20), y = rnorm(20), f = rep(letters[1:4], 5))
  expect_error(ols_attention(y ~ x | f, d, fe_tol = 0), "^fe_tol: must be one number in \\(0, 1\\)")
  expect_error(ols_attention(y ~ x | f, d, fe_tol = NA), "^fe_tol: must be one number")
  expect_error(ols_attention(y ~ x | f, d, fe_max_iter = 0), "^fe_max_iter: must be one whole")
  expect_error(ols_attention(y ~ x | f, d, fe_max_iter = 2.5), "^fe_max_iter: must be one whole")
})
