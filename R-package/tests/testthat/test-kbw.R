# kbw(): data-driven bandwidths, and kreg(bw = "cv.ls" | kbw).

make_data <- function(n, seed, cat = FALSE) {
  set.seed(seed)
  d <- data.frame(x = runif(n), z = runif(n))
  d$y <- sin(5 * d$x) + d$z^2 + rnorm(n, 0, 0.3)
  if (cat) {
    d$g <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
    d$y <- d$y + 0.5 * as.integer(d$g)
  }
  d
}

obj <- function(X, y, bw, method = "ll", crit = "cv.ls", types = "c", kernel = "gaussian") {
  attnreg:::.kbw_objective_cpp(as.matrix(X), y, bw, if (method == "ll") 1L else 0L, crit,
                               kernel, types, "aitchisonaitken", "liracine", 0)
}

test_that("1-D optimum beats a brute-force grid for every criterion", {
  d <- make_data(120, 1)
  for (m in c("ll", "lc")) for (crit in c("cv.ls", "cv.aic", "gcv")) {
    b <- kbw(y ~ x, data = d, method = m, bwmethod = crit)
    grid <- exp(seq(log(0.01), 0, length.out = 300))
    grid <- grid[grid >= b$lower[1]]
    v <- vapply(grid, function(h) obj(d["x"], d$y, h, m, crit)$value, 0)
    expect_lte(b$objective, min(v) + 1e-9 * abs(min(v)))
    expect_equal(unname(b$bw), grid[which.min(v)], tolerance = 0.03)
    expect_true(b$converged)
    expect_equal(nrow(b$curve), 30L)
  }
})

test_that("mixed data: categorical lambda in range, optimum beats grid", {
  d <- make_data(100, 2, cat = TRUE)
  b <- kbw(y ~ x + g, data = d, nstart = 4, seed = 3)
  X <- cbind(d$x, as.integer(d$g) - 1)
  best <- Inf
  for (h in exp(seq(log(0.02), 0, length.out = 40))) {
    if (h < b$lower[1]) next
    for (l in seq(b$lower[2], b$upper[2], length.out = 15))
      best <- min(best, obj(X, d$y, c(h, l), types = "cu")$value)
  }
  expect_lte(b$objective, best + 1e-9 * best)
  expect_true(b$bw[["g"]] >= 0 && b$bw[["g"]] <= 2 / 3)
  expect_identical(kbw(y ~ x + g, data = d, nstart = 4, seed = 3)$bw, b$bw)
})

test_that("gradient matches central differences", {
  d <- make_data(50, 3, cat = TRUE)
  X <- cbind(d$x, d$z, as.integer(d$g) - 1)
  for (k in c("gaussian", "epanechnikov")) for (m in c("ll", "lc")) {
    bw <- if (k == "gaussian") c(0.2, 0.3, 0.3) else c(0.6, 0.7, 0.3)
    g <- obj(X, d$y, bw, m, "cv.ls", "ccu", k)$gradient
    for (j in 1:3) {
      e <- 1e-5
      bp <- bw; bm <- bw
      if (j < 3) { bp[j] <- bw[j] * exp(e); bm[j] <- bw[j] * exp(-e) } else {
        bp[j] <- bw[j] + e; bm[j] <- bw[j] - e }
      fd <- (obj(X, d$y, bp, m, "cv.ls", "ccu", k)$value -
               obj(X, d$y, bm, m, "cv.ls", "ccu", k)$value) / (2 * e)
      expect_equal(g[j], fd, tolerance = 1e-5)
    }
  }
})

test_that("cv.ls equals literal refits and kreg's leave-one-out score", {
  d <- make_data(25, 4)
  v <- obj(d["x"], d$y, 0.2)$value
  e <- vapply(seq_len(nrow(d)), function(i) {
    f <- kreg(y ~ x, data = d[-i, ], bw = 0.2)
    d$y[i] - predict(f, d[i, ])
  }, 0)
  expect_equal(v, mean(e^2), tolerance = 1e-10)
  f <- kreg(y ~ x, data = d, bw = "cv.ls")
  expect_s3_class(f$kbw, "kbw")
  expect_equal(f$cv, f$kbw$objective, tolerance = 1e-10)
  b <- kbw(y ~ x, data = d)
  expect_equal(unname(kreg(y ~ x, data = d, bw = b)$bw), unname(b$bw))
})

test_that("AICc equals its formula from tr(L) and RSS", {
  d <- make_data(40, 5)
  f <- kreg(y ~ x, data = d, bw = 0.12)
  n <- 40; tr <- f$effective_df; rss <- sum(residuals(f)^2)
  expect_equal(obj(d["x"], d$y, 0.12, crit = "cv.aic")$value,
               log(rss / n) + (1 + tr / n) / (1 - (tr + 2) / n), tolerance = 1e-10)
})

test_that("print, plot, rot and dpi", {
  d <- make_data(200, 6)
  b <- kbw(y ~ x, data = d)
  expect_output(print(b), "cv.ls")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_silent(plot(b))
  expect_equal(unname(kbw(y ~ x, data = d, bwmethod = "dpi")$bw),
               dpi_bandwidth(d$x, d$y)$bandwidth)
  r <- kbw(y ~ x, data = d, bwmethod = "rot")
  s <- min(sd(d$x), IQR(d$x) / 1.349)
  expect_equal(unname(r$bw), 1.06 * s * 200^(-1 / 5))
})

test_that("degenerate data give errors naming the argument", {
  d <- data.frame(x = rep(1, 20), y = rnorm(20))
  expect_error(kbw(y ~ x, data = d),
               "data \\(regressors\\): continuous column 1 \\(x\\) has 1 distinct")
  d$x <- rep(0:1, 10)
  expect_error(kbw(y ~ x, data = d), "2 distinct")
  expect_error(kbw(y ~ x, data = d[1:4, ]), "at least 5 rows")
  expect_error(kbw(y ~ x, data = data.frame(x = runif(20), y = rnorm(20)), nstart = 0),
               "nstart")
  expect_error(kreg(y ~ x, data = d, bw = "cv.foo"), "bw: must be")
})

test_that("exact_curve: the economical search finds the exact-curve search's minimum", {
  set.seed(11)
  d <- data.frame(x = runif(1500))
  d$y <- sin(2 * pi * d$x) + rnorm(1500, 0, 0.3)
  full <- kbw(y ~ x, data = d, exact_curve = TRUE)
  econ <- kbw(y ~ x, data = d)
  expect_true(full$curve_exact)
  expect_false(econ$curve_exact)
  expect_equal(nrow(econ$curve), 30L)
  expect_equal(econ$curve$bw, full$curve$bw)
  expect_equal(econ$objective, full$objective, tolerance = 1e-9)
  expect_equal(unname(econ$bw), unname(full$bw), tolerance = 2e-3)
  expect_lt(econ$n_evals, full$n_evals)
  # The economical curve is the binned criterion: close to the exact one where resolved.
  ok <- is.finite(econ$curve$objective) & econ$curve$bw > 0.01
  expect_equal(econ$curve$objective[ok], full$curve$objective[ok], tolerance = 0.01)
  # Small data: the exact curve is computed anyway.
  expect_true(kbw(y ~ x, data = d[1:200, ])$curve_exact)
  expect_error(kbw(y ~ x, data = d, exact_curve = NA), "exact_curve")
})
