# mse_dpi() / imse_dpi() with several regressors: the face of the core's pilot local quadratic
# plug-in (its numpy oracle is python-package/tests/test_mv_bandwidth.py).

mv_data <- function(n = 400, d = 2, seed = 1) {
  set.seed(seed)
  X <- matrix(runif(n * d, -1, 1), n, d)
  y <- sin(2 * X[, 1]) + X[, 2]^2 + 0.3 * rnorm(n)
  list(X = X, y = y)
}

test_that("bandwidth vectors have the documented shapes and the pilot", {
  D <- mv_data(d = 3)
  P <- rbind(c(0, 0, 0), c(0.3, -0.3, 0.2))
  h <- mse_dpi(D$X, D$y, P)
  expect_equal(dim(h), c(2L, 3L))
  expect_true(all(h > 0 & h <= 2))
  expect_identical(mse_dpi(D$X, D$y, P[1, ]), h[1, ])
  hb <- mse_dpi(D$X, D$y, pilot = TRUE)
  expect_length(hb$h, 3L)
  expect_equal(hb$b, 1.0 * apply(D$X, 2, sd) * 400^(-1 / 11), tolerance = 1e-13)
  hi <- imse_dpi(D$X, D$y, P)
  expect_length(hi, 3L)
  hc <- mse_dpi(D$X, D$y, P, common_scale = TRUE)
  expect_equal(hc[1, ] / apply(D$X, 2, sd), rep(hc[1, 1] / sd(D$X[, 1]), 3), tolerance = 1e-14)
  expect_length(imse_dpi(as.data.frame(D$X), D$y, method = "lc", kernel = "epanechnikov"), 3L)
})

test_that("rescaling a column rescales its bandwidth; y's scale does not matter", {
  D <- mv_data(n = 500)
  P <- rbind(c(-0.2, 0.1), c(0.4, 0.3))
  h <- mse_dpi(D$X, D$y, P)
  s <- c(4, 0.25)
  h2 <- mse_dpi(sweep(D$X, 2, s, "*"), 8 * D$y, sweep(P, 2, s, "*"))
  expect_equal(h2, sweep(h, 2, s, "*"), tolerance = 1e-10)
})

test_that("bad input is named", {
  D <- mv_data()
  expect_error(mse_dpi(cbind(D$X[, 1], rep(0:1, 200)), D$y), "x: column 2 has 2 distinct")
  expect_error(mse_dpi(D$X, D$y, pilot_bw = c(1, 1, 1)), "pilot_bw: needs one value per column")
  expect_error(mse_dpi(D$X, D$y, matrix(0, 2, 3)), "eval_points")
  expect_error(mse_dpi(D$X, D$y, degree = 2), "degree")
  expect_error(mse_dpi(D$X, D$y, vcov = "hc3"), "vcov")
  expect_error(imse_dpi(D$X, D$y, algorithm = "one_step"), "algorithm")
  expect_error(mse_dpi(D$X, D$y[-1]), "y: has 399")
  expect_error(mse_dpi(D$X, D$y, c(0, 0), kernel = "epanechnikov", pilot_bw = c(0.05, 0.05),
                       bwcheck = 0), "evaluation row 1.*pilot_bw")
  expect_error(mse_dpi(D$X, D$y, bwcheck = -1), "bwcheck")
  expect_error(mse_dpi(D$X, D$y, bwcheck = 2.5), "bwcheck")
  expect_error(mse_dpi(D$X, D$y, bias_terms = "abs"), "bias_terms")
  expect_error(mse_dpi(D$X[, 1], D$y, bias_terms = "signed"), "bias_terms: with one column")
  expect_error(mse_dpi(D$X[, 1], D$y, common_scale = TRUE), "common_scale")
})

test_that("the bias bound without cancellation and the minimum-points rule", {
  set.seed(4)
  n <- 500
  X <- matrix(runif(n * 3, -1, 1), n, 3)
  y <- sin(3 * X[, 1]) + exp(-4 * X[, 2]^2) + X[, 3]^2 + 0.3 * rnorm(n)
  # at 0 the curvatures have opposite signs (m_22 = -8, m_33 = 2): the signed MSE vector runs
  # out along the cancelling curve, the bound does not
  ha <- mse_dpi(X, y, c(0, 0, 0))
  hs <- mse_dpi(X, y, c(0, 0, 0), bias_terms = "signed")
  expect_false(isTRUE(all.equal(ha, hs)))
  expect_identical(imse_dpi(X, y, rbind(c(0, 0, 0))),
                   imse_dpi(X, y, rbind(c(0, 0, 0)), bias_terms = "signed"))
  # a pilot too small for a quadratic is enlarged until its window holds
  # max(21, 2 * 10) = 21 distinct rows; the fit's window at h too
  h <- mse_dpi(X, y, c(0, 0, 0), kernel = "epanechnikov", pilot_bw = rep(0.05, 3))
  inside <- function(h) sum(apply(abs(X) < rep(h, each = n), 1, all))
  expect_gte(inside(h), 21)
  expect_error(mse_dpi(X, y, c(0, 0, 0), kernel = "epanechnikov", pilot_bw = rep(0.05, 3),
                       bwcheck = 0), "evaluation row 1")
})
