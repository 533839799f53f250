test_that("absorbed fixed effects take clustered covariances (CR0 as sandwich on the dummy lm, CR1 with nested effects counted as one)", {
  skip_if_not_installed("sandwich")
  set.seed(3)
  n <- 300; G <- 20
  d <- data.frame(firm = factor(sample(G, n, TRUE)), year = factor(sample(5, n, TRUE)))
  d$x1 <- rnorm(n) + as.integer(d$firm) / G
  d$x2 <- rnorm(n)
  d$y <- d$x1 - 0.5 * d$x2 + 0.2 * as.integer(d$firm) + rnorm(n)
  fe <- ols_attention(y ~ x1 + x2 | firm + year, data = d)
  ref <- lm(y ~ x1 + x2 + firm + year, data = d)
  V0 <- sandwich::vcovCL(ref, cluster = ~firm, type = "HC0", cadjust = FALSE)
  s0 <- summary(fe, vcov = ~firm, cluster_type = "CR0")
  expect_equal(unname(s0$coefficients[, 2]), unname(sqrt(diag(V0))[c("x1", "x2")]),
               tolerance = 1e-8)
  s1 <- summary(fe, vcov = ~firm)
  # firm effects are nested in the firm clusters: one parameter (fixest's K.fixef =
  # "nonnested"); year's 4 free levels count
  K <- 2 + 1 + 4
  f <- G / (G - 1) * (n - 1) / (n - K)
  expect_equal(unname(s1$coefficients[, 2]), unname(s0$coefficients[, 2]) * sqrt(f),
               tolerance = 1e-10)
  expect_equal(s1$df_inference, G - 1)
  expect_equal(unname(s1$n_clusters), G)
  ci <- confint(fe, vcov = ~firm)
  expect_equal(unname(ci[, 2] - ci[, 1]),
               unname(2 * qt(0.975, G - 1) * s1$coefficients[, 2]), tolerance = 1e-10)
  expect_error(summary(fe, vcov = ~firm, cluster_type = "CR2"), "CR2")
})
