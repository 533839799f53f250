# rd_robust / rd_bwselect: the R face of attnreg.rd. The agreement with rdrobust 2.1.1 is tested
# live in python-package/tests/test_rd.py (same core); here: a direct weighted least-squares
# oracle of the two one-sided fits (lm with weights), the weights identity, the selectors and
# the bad-input messages.

rd_sim <- function(n = 800, seed = 1) {
  set.seed(seed)
  x <- runif(n, -1, 1)
  y <- 1 + 0.8 * x - 0.5 * x^2 + 0.6 * (x >= 0) + rnorm(n, sd = 0.3)
  list(x = x, y = y)
}

test_that("rd_robust's conventional estimate is the difference of two weighted lm fits", {
  d <- rd_sim()
  h <- 0.5
  fit <- rd_robust(d$y, d$x, h = h, b = 0.8)
  side <- function(s) {
    k <- pmax(1 - abs(d$x / h), 0) / h
    keep <- s & k > 0
    unname(coef(lm(d$y[keep] ~ d$x[keep], weights = k[keep]))[1])
  }
  ref <- side(d$x >= 0) - side(d$x < 0)
  # lm's QR and the core's Cholesky of a 2 x 2 Gram (condition < 1e3): agreement to 1e-10.
  expect_equal(fit$table["conventional", "coef"], ref, tolerance = 1e-10)
  expect_equal(sum(attention_weights(fit) * d$y), ref, tolerance = 1e-10)
  expect_true(all(attention_weights(fit)[abs(d$x) > 0.8] == 0))
  expect_equal(unname(fit$bandwidths), c(h, h, 0.8, 0.8))
})

test_that("rd_robust drops incomplete rows, selects bandwidths and clusters", {
  d <- rd_sim(seed = 2)
  y <- d$y
  y[c(3, 10)] <- NA
  fit <- rd_robust(y, d$x)
  expect_equal(fit$n_dropped, 2)
  expect_equal(attention_weights(fit)[c(3, 10)], c(0, 0))
  expect_equal(sum(attention_weights(fit) * ifelse(is.na(y), 0, y)),
               fit$table["conventional", "coef"], tolerance = 1e-10)
  bw <- rd_bwselect(y, d$x, all = TRUE)
  expect_equal(rownames(bw), c("mserd", "msetwo", "msesum", "msecomb1", "msecomb2", "cerrd",
                               "certwo", "cersum", "cercomb1", "cercomb2"))
  expect_equal(unname(bw["mserd", ]), unname(fit$bandwidths), tolerance = 1e-12)
  cl <- rd_robust(y, d$x, cluster = rep(1:40, length.out = length(y)))
  expect_equal(cl$vce, "cr1")
  expect_true(is.finite(cl$table["robust", "se"]))
})

test_that("rd_robust refuses bad input with messages naming the argument", {
  d <- rd_sim(seed = 3)
  expect_error(rd_robust(d$y, d$x, level = 95), "level is a fraction")
  expect_error(rd_robust(d$y, d$x, c = 5), "c: the cutoff")
  expect_error(rd_robust(d$y, d$x, p = 2, q = 2), "q: must be greater than p")
  expect_error(rd_robust(d$y, d$x, weights = c(-1, rep(1, length(d$x) - 1))), "weights: negative")
  expect_error(rd_robust(d$y, replace(d$x, 4, Inf)), "x: infinite value at row 4")
  expect_error(rd_robust(d$y, d$x, covs = cbind(a = 2 * d$x)), "collinear with the running")
  expect_error(rd_robust(d$y, d$x, fuzzy = rep(1, length(d$x))), "no variation")
})
