# R's random number generator decides every random draw, and the package never leaves it
# changed; long bootstraps show a progress bar when asked.

sim_rng <- function(n = 120) {
  x <- seq(0.01, 0.99, length.out = n)
  d <- data.frame(x = x, x2 = cos(7 * x))
  d$y <- sin(5 * x) + 0.3 * sin(37 * x^2)
  d
}

test_that("monte_carlo draws from R's stream and never calls set.seed on the user's state", {
  f <- function(X) sin(2 * pi * X[, 1])
  set.seed(11); a <- monte_carlo(f, n = 60, R = 10, estimators = "ols")
  after_a <- runif(1)
  set.seed(11); b <- monte_carlo(f, n = 60, R = 10, estimators = "ols")
  after_b <- runif(1)
  expect_identical(a, b)
  expect_identical(after_a, after_b)  # the user's stream advanced the same way
  set.seed(12); c <- monte_carlo(f, n = 60, R = 10, estimators = "ols")
  expect_false(identical(a$integrated$mse, c$integrated$mse))
  # A given seed: reproducible, and the user's stream is left exactly as it was.
  set.seed(5); before <- .Random.seed
  s1 <- monte_carlo(f, n = 60, R = 10, estimators = "ols", seed = 3)
  expect_identical(.Random.seed, before)
  s2 <- monte_carlo(f, n = 60, R = 10, estimators = "ols", seed = 3)
  expect_identical(s1, s2)
  # A given seed does not depend on the user's stream.
  set.seed(99)
  expect_identical(monte_carlo(f, n = 60, R = 10, estimators = "ols", seed = 3), s1)
  expect_error(monte_carlo(f, n = 60, R = 10, seed = -1), "seed: must be NULL")
  expect_error(monte_carlo(f, n = 60, R = 10, seed = 1.5), "seed: must be NULL")
})

test_that("set.seed decides every bootstrap (bands, significance and specification tests)", {
  d <- sim_rng()
  fit <- kreg(y ~ x, data = d, bw = 0.1)
  g <- data.frame(x = seq(0.1, 0.9, 0.2))
  for (type in c("rademacher", "pairs")) {
    set.seed(1); a <- bootstrap_bands(fit, g, R = 99, type = type)
    set.seed(1); b <- bootstrap_bands(fit, g, R = 99, type = type)
    expect_identical(a, b)
    set.seed(2); c <- bootstrap_bands(fit, g, R = 99, type = type)
    expect_false(identical(attr(a, "draws"), attr(c, "draws")))
  }
  # A given seed is used as is and leaves R's stream alone.
  set.seed(4); before <- .Random.seed
  s1 <- bootstrap_bands(fit, g, R = 99, seed = 7)
  expect_identical(.Random.seed, before)
  expect_identical(s1, bootstrap_bands(fit, g, R = 99, seed = 7))
  expect_error(bootstrap_bands(fit, g, R = 99, seed = "a"), "seed: must be NULL")

  fit2 <- kreg(y ~ x + x2, data = d, bw = c(0.1, 0.3))
  set.seed(1); a <- sigtest(fit2, R = 39)
  set.seed(1); b <- sigtest(fit2, R = 39)
  expect_identical(a$draws, b$draws)
  set.seed(2); c <- sigtest(fit2, R = 39)
  expect_false(identical(a$draws, c$draws))

  m <- lm(y ~ x, data = d)
  set.seed(1); a <- cmstest(m, bw = 0.2, R = 39)
  set.seed(1); b <- cmstest(m, bw = 0.2, R = 39)
  expect_identical(a$draws, b$draws)
  set.seed(2); c <- cmstest(m, bw = 0.2, R = 39)
  expect_false(identical(a$draws, c$draws))
})

test_that("long bootstraps show a progress bar on stderr when asked, and nothing otherwise", {
  d <- sim_rng()
  fit <- kreg(y ~ x + x2, data = d, bw = c(0.1, 0.3))
  msgs <- capture.output(sigtest(fit, R = 39, seed = 1, progress = TRUE), type = "message")
  expect_true(any(grepl("significance test .*100%", msgs)))
  quiet <- capture.output(sigtest(fit, R = 39, seed = 1), type = "message")
  expect_length(quiet, 0)
  msgs <- capture.output(bootstrap_bands(kreg(y ~ x, data = d, bw = 0.1),
                                         data.frame(x = c(0.3, 0.6)), R = 39, type = "pairs",
                                         seed = 1, progress = TRUE), type = "message")
  expect_true(any(grepl("pairs bootstrap .*100%", msgs)))
  msgs <- capture.output(cmstest(lm(y ~ x, data = d), bw = 0.2, R = 39, seed = 1,
                                 progress = TRUE), type = "message")
  expect_true(any(grepl("specification test .*100%", msgs)))
})
