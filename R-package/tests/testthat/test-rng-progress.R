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
    set.seed(1); a <- bootstrap_bands(fit, g, R = 99, bootstrap = type)
    set.seed(1); b <- bootstrap_bands(fit, g, R = 99, bootstrap = type)
    expect_identical(a, b)
    set.seed(2); c <- bootstrap_bands(fit, g, R = 99, bootstrap = type)
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
                                         data.frame(x = c(0.3, 0.6)), R = 39, bootstrap = "pairs",
                                         seed = 1, progress = TRUE), type = "message")
  expect_true(any(grepl("pairs bootstrap .*100%", msgs)))
  msgs <- capture.output(cmstest(lm(y ~ x, data = d), bw = 0.2, R = 39, seed = 1,
                                 progress = TRUE), type = "message")
  expect_true(any(grepl("specification test .*100%", msgs)))
})

test_that("plot.kreg: bands far beyond the data are clipped with a note; bootstrap bands", {
  set.seed(3)
  x <- 50 * rbeta(300, 1.2, 3)
  d <- data.frame(experience = x, lwage = 5.5 + 0.08 * x - 0.0014 * x^2 + rnorm(300, sd = 0.5))
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  f <- kreg(lwage ~ experience, data = d, bw = 0.6)
  p <- plot(f, bands = "rbc", vcov = "hc1")
  span <- diff(range(d$lwage))
  # The RBC band leaves the data's range by far; the plot's range does not follow it.
  expect_true(max(p$rbc_upr) > max(d$lwage) + 0.25 * span ||
                min(p$rbc_lwr) < min(d$lwage) - 0.25 * span)
  expect_true("RBC" %in% attr(p, "clipped"))
  usr <- par("usr")[3:4]
  expect_lte(diff(usr), 1.1 * (max(p$fit, d$lwage + 0.25 * span) -
                                 min(p$fit, d$lwage - 0.25 * span)))
  # A wide bandwidth: nothing clipped, the whole band is inside the plot.
  p2 <- plot(kreg(lwage ~ experience, data = d, bw = 3), bands = "rbc", vcov = "hc1")
  expect_length(attr(p2, "clipped"), 0)
  usr <- par("usr")[3:4]
  expect_true(usr[1] <= min(p2$rbc_lwr) && usr[2] >= max(p2$rbc_upr))
  # Bootstrap bands: the pointwise and sup-t bands of bootstrap_bands(), set.seed decides.
  f3 <- kreg(lwage ~ experience, data = d, bw = 3)
  set.seed(7); p3 <- plot(f3, bands = "bootstrap", R = 199, n_grid = 25)
  set.seed(7); b3 <- bootstrap_bands(f3, data.frame(experience = p3$grid), R = 199)
  expect_equal(p3$fit, b3$center, tolerance = 1e-12)
  expect_equal(p3$lwr, b3$low, tolerance = 1e-12)
  expect_equal(p3$uniform_upr, b3$uniform_high, tolerance = 1e-12)
})
