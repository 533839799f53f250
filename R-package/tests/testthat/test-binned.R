# kreg(approx = "binned") and kbw(approx = "binned"): error falls with the grid, exact on
# lattice data, the binned cv.ls choice against the exact one, threads, bad input.

binned_data <- function(n, seed) {
  set.seed(seed)
  x <- runif(n)
  data.frame(x = x, y = sin(2 * pi * x) + 0.3 * rnorm(n))
}

test_that("the binned error falls as the grid grows", {
  d <- binned_data(3000, 1)
  nd <- d[1:200, ]
  exact <- predict(kreg(y ~ x, data = d, bw = 0.08), nd)
  errs <- sapply(c(51, 101, 201, 401, 801), function(g) {
    f <- kreg(y ~ x, data = d, bw = 0.08, approx = "binned", grid_size = g)
    expect_true(f$approx_error$max_abs > 0)
    max(abs(predict(f, nd) - exact))
  })
  expect_true(all(errs[-1] < 0.7 * errs[-length(errs)]))
  expect_lt(errs[5], 1e-3)
})

test_that("binned equals exact when every point sits on a grid node", {
  set.seed(2)
  x <- rep(seq(-1, 2, length.out = 50), 3)
  d <- data.frame(x = x, y = cos(2 * x) + 0.1 * rnorm(150))
  for (m in c("ll", "lc")) {
    e <- kreg(y ~ x, data = d, bw = 0.2, method = m)
    b <- kreg(y ~ x, data = d, bw = 0.2, method = m, approx = "binned", grid_size = 50)
    expect_equal(unname(fitted(b)), unname(fitted(e)), tolerance = 1e-10)
    expect_lt(b$approx_error$max_abs, 1e-10)
    if (m == "ll") {
      expect_equal(predict(b, d[1:5, ], type = "gradient"),
                   predict(e, d[1:5, ], type = "gradient"), tolerance = 1e-9)
    }
    s <- summary(b)
    expect_equal(s$effective_df, e$effective_df, tolerance = 1e-10)
    expect_true(any(grepl("binned fit", s$notes)))
  }
})

test_that("binned cv.ls chooses the exact bandwidth to 1e-3", {
  d <- binned_data(5000, 3)
  he <- kbw(y ~ x, data = d)$bw
  hb <- kbw(y ~ x, data = d, approx = "binned")$bw
  expect_equal(unname(hb / he), 1, tolerance = 1e-3)
  f <- kreg(y ~ x, data = d, approx = "binned")
  expect_equal(unname(f$bw / he), 1, tolerance = 1e-3)
})

test_that("one and two threads give the same binned numbers", {
  d <- binned_data(20000, 4)
  f1 <- kreg(y ~ x, data = d, bw = 0.03, approx = "binned", n_threads = 1L)
  f2 <- kreg(y ~ x, data = d, bw = 0.03, approx = "binned", n_threads = 2L)
  expect_identical(fitted(f1), fitted(f2))
  b1 <- kbw(y ~ x, data = d, approx = "binned", n_threads = 1L)
  b2 <- kbw(y ~ x, data = d, approx = "binned", n_threads = 2L)
  expect_identical(b1$bw, b2$bw)
})

test_that("bad approx input is an error naming the argument", {
  d <- binned_data(200, 5)
  expect_error(kreg(y ~ x, data = d, bw = 0.1, approx = "fast"), "approx")
  expect_error(kreg(y ~ x, data = d, bw = 0.1, approx = "binned", grid_size = 5),
               "grid_size: must be")
  d3 <- transform(d, x2 = runif(200), x3 = runif(200))
  expect_error(kreg(y ~ x + x2 + x3, data = d3, bw = c(0.3, 0.3, 0.3), approx = "binned"),
               "one or two continuous")
  dg <- transform(d, g = factor(seq_len(200) %% 3))
  expect_error(kreg(y ~ g, data = dg, bw = 0.3, approx = "binned"), "categorical columns only")
  expect_error(kreg(y ~ x + g, data = dg, bw = c(0.1, 0.3), approx = "binned"),
               "approx=\"exact\"")
  expect_error(kbw(y ~ x, data = d, bwmethod = "cv.aic", approx = "binned"), "approx")
  expect_error(kbw(y ~ x, data = d, approx = "binned", approx_grid_size = 3),
               "approx_grid_size")
})
