# Least squares on degenerate and extreme-scale data: the answer R's lm gives, or a clear message.

test_that("summary warns when there are no residual degrees of freedom (as summary.lm)", {
  set.seed(1)
  d <- data.frame(x1 = rnorm(3), x2 = rnorm(3), y = rnorm(3))
  f <- ols_attention(y ~ x1 + x2, data = d)
  expect_warning(s <- summary(f), "no residual degrees of freedom")
  expect_true(all(is.nan(s$coefficients[, "Std. Error"])))
  expect_true(all(is.nan(s$coefficients[, "Pr(>|t|)"])))
  d4 <- data.frame(x1 = rnorm(4), x2 = rnorm(4), y = rnorm(4))
  expect_silent(summary(ols_attention(y ~ x1 + x2, data = d4)))
})

test_that("rank-deficient designs alias the columns lm aliases", {
  one <- data.frame(x1 = 0.3, x2 = -1.2, y = 2.5)
  expect_warning(f <- ols_attention(y ~ x1 + x2, data = one), "aliased")
  l <- lm(y ~ x1 + x2, data = one)
  expect_equal(unname(coef(f)), unname(coef(l)))
  nd <- data.frame(x1 = c(0, 1, 5), x2 = c(1, 2, 3))
  expect_equal(unname(predict(f, nd)), rep(2.5, 3))
  x <- c(1, 2, 3, 4, 5)
  d <- data.frame(z = 2 * x, x = x, w = c(0.3, -0.1, 0.7, 0.2, 0.9), y = c(1, 3, 2, 5, 4))
  expect_warning(f <- ols_attention(y ~ z + x + w, data = d), "aliased")
  expect_equal(unname(coef(f)), unname(coef(lm(y ~ z + x + w, data = d))), tolerance = 1e-12)
})

test_that("standard errors scale with the data where sigma^2 or (X'X)^-1 overflow", {
  set.seed(2)
  d <- data.frame(x = rnorm(30), y = rnorm(30))
  se0 <- summary(ols_attention(y ~ x, data = d))$coefficients[, "Std. Error"]
  big <- transform(d, y = y * 1e160)
  se1 <- summary(ols_attention(y ~ x, data = big))$coefficients[, "Std. Error"]
  expect_equal(unname(se1 / 1e160), unname(se0), tolerance = 1e-10)
  tiny <- transform(d, x = x * 1e-160)
  se2 <- summary(ols_attention(y ~ x, data = tiny))$coefficients[, "Std. Error"]
  expect_equal(unname(se2[2] * 1e-160), unname(se0[2]), tolerance = 1e-10)
})

test_that("HAC lags must be below the number of rows", {
  set.seed(3)
  d <- data.frame(x = rnorm(20), y = rnorm(20))
  f <- ols_attention(y ~ x, data = d)
  expect_error(summary(f, vcov = "HAC", maxlags = 1e6), "maxlags: must be in \\[0, n - 1\\]")
  expect_silent(summary(f, vcov = "HAC", maxlags = 19))
})

test_that("ridge on a huge design is least squares, not NaN", {
  set.seed(4)
  d <- data.frame(x1 = rnorm(30), x2 = rnorm(30))
  d$y <- d$x1 + 2 * d$x2 + rnorm(30)
  l <- coef(lm(y ~ x1 + x2, data = d))
  big <- transform(d, x1 = x1 * 1e155, x2 = x2 * 1e155)
  r <- coef(ridge_attention(y ~ x1 + x2, data = big, lambda = 1))
  expect_equal(unname(r[-1] * 1e155), unname(l[-1]), tolerance = 1e-9)
  expect_equal(unname(r[1]), unname(l[1]), tolerance = 1e-9)
})
