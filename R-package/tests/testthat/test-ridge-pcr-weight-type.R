# weight_type for ridge_attention and pcr_attention: frequency weights count sum(w) observations
# (a row with weight k is k identical rows), analytic weights the rows of positive weight.

freq_data <- function(seed) {
  set.seed(seed)
  n <- 40
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = runif(n))
  d$y <- 1 + d$x1 - 0.5 * d$x2 + 0.3 * d$x3 + rnorm(n) * (1 + d$x3)
  d$w <- sample(1:4, n, replace = TRUE)
  d$w[c(3, 17)] <- 0  # rows of weight 0: no copies
  list(d = d, rep = d[rep(seq_len(n), d$w), ])
}

test_that("frequency-weighted ridge and PCR inference equals the fit on repeated rows", {
  for (seed in c(1, 7)) {
    s <- freq_data(seed)
    fits <- list(
      list(ridge_attention(y ~ x1 + x2 + x3, s$d, weights = w, lambda = 2.5, weight_type = "frequency"),
           ridge_attention(y ~ x1 + x2 + x3, s$rep, lambda = 2.5)),
      list(pcr_attention(y ~ x1 + x2 + x3, s$d, weights = w, rank = 2, weight_type = "frequency"),
           pcr_attention(y ~ x1 + x2 + x3, s$rep, rank = 2)))
    for (f in fits) {
      expect_equal(f[[1]]$weight_type, "frequency")
      expect_equal(coef(f[[1]]), coef(f[[2]]), tolerance = 1e-10)
      for (v in c("nonrobust", "HC0", "HC1", "HC3")) {
        a <- summary(f[[1]], vcov = v)
        b <- summary(f[[2]], vcov = v)
        expect_equal(a$coefficients, b$coefficients, tolerance = 1e-9, info = v)
        expect_equal(a$df, b$df, tolerance = 1e-9, info = v)
        expect_equal(unname(vcov(f[[1]], vcov = v)), unname(vcov(f[[2]], vcov = v)),
                     tolerance = 1e-9, info = v)
      }
    }
  }
})

test_that("analytic and frequency weights give the same fit and differ only in N", {
  s <- freq_data(3)
  n_pos <- sum(s$d$w > 0)
  for (mk in list(function(wt) ridge_attention(y ~ x1 + x2 + x3, s$d, weights = w, lambda = 1, weight_type = wt),
                  function(wt) pcr_attention(y ~ x1 + x2 + x3, s$d, weights = w, rank = 2, weight_type = wt))) {
    fa <- mk("analytic")
    ff <- mk("frequency")
    expect_equal(coef(fa), coef(ff), tolerance = 1e-14)
    edf <- summary(fa)$effective_df
    expect_equal(summary(fa)$df, n_pos - edf, tolerance = 1e-10)
    expect_equal(summary(ff)$df, sum(s$d$w) - edf, tolerance = 1e-10)
  }
  expect_error(ridge_attention(y ~ x1 + x2, s$d, weights = w, weight_type = "fweight"), "weight_type")
  expect_null(ridge_attention(y ~ x1 + x2, s$d)$weight_type)
})

test_that("ridge_attention's selection is NULL for one lambda and a data frame for a grid", {
  expect_null(ridge_attention(mpg ~ wt + hp, mtcars, lambda = 1)$selection)
  grid <- 10^seq(-2, 2, length.out = 7)
  fit <- ridge_attention(mpg ~ wt + hp, mtcars, lambda = grid)
  expect_s3_class(fit$selection, "data.frame")
  expect_equal(nrow(fit$selection), 7L)
  expect_equal(fit$selection$lambda, grid)
  expect_output(print(fit), "chosen by loo over 7")
  expect_output(print(summary(ridge_attention(mpg ~ wt + hp, mtcars, lambda = 1))), "wt")
})
