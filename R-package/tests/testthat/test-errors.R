# Every bad input of DESIGN.md section 6 gives an R error that names the R argument (not the
# core's internal one) and says what to do.

d <- transform(mtcars, am = factor(am), gear = ordered(gear))

test_that("NaN/Inf in inputs name the argument, row and variable", {
  di <- mtcars
  di$wt[3] <- Inf
  expect_error(kreg(mpg ~ wt, data = di, bw = 0.5),
               "data \\(regressors\\): contains Inf at row 3, column 1 \\(wt\\).*remove or impute")
  expect_error(kbw(mpg ~ wt, data = di), "data \\(regressors\\): contains Inf at row 3")
  expect_error(ols_attention(mpg ~ wt, data = di), "data \\(regressors\\): contains Inf at row 3")
  dn <- mtcars
  dn$mpg[2] <- Inf
  expect_error(kreg(mpg ~ wt, data = dn, bw = 0.5),
               "data \\(response\\): contains Inf at row 2, column 1 \\(remove")
  f <- kreg(mpg ~ wt, data = mtcars, bw = 0.5)
  expect_error(predict(f, data.frame(wt = NA_real_)),
               "newdata: contains missing values.*remove or impute")
  expect_error(softmax_attention(matrix(c(NaN, 1:11), 3, 4), matrix(1, 5, 4), matrix(1, 5, 2)),
               "Q: contains NaN at \\(batch 1, head 1, position 1, column 1\\)")
})

test_that("mismatched shapes and lengths name the argument", {
  expect_error(kreg(mpg ~ wt + hp, data = mtcars, bw = c(1, 2, 3)),
               "bw: got 3 values for 2 regressors \\(wt, hp\\)")
  expect_error(kreg(mpg ~ wt + am, data = d, bw = 1),
               "bw: one number for every regressor only works when all are continuous")
  expect_error(softmax_attention(matrix(1, 3, 4), matrix(1, 5, 3), matrix(1, 5, 2)),
               "K: shape .* does not match Q .*must be 4")
  expect_error(softmax_attention(matrix(1, 3, 4), matrix(1, 5, 4), matrix(1, 6, 2)),
               "V: has seq = 6 but K has seq = 5 \\(pass one value row per key\\)")
  expect_error(softmax_attention("a", matrix(1, 5, 4), matrix(1, 5, 2)),
               "Q: expected a matrix \\(seq, dim\\) or an array")
  f <- kreg(mpg ~ wt + am, data = d, bw = c(0.5, 0.2))
  expect_error(predict(f, data.frame(wt = 3)),
               "newdata: has no variable 'am' \\(the model uses wt, am\\); add the column")
  o <- ols_attention(mpg ~ wt + hp, data = mtcars)
  expect_error(predict(o, data.frame(wt = 3)), "newdata: has no variable 'hp'")
})

test_that("too few rows for the estimator", {
  expect_error(kreg(mpg ~ wt, data = mtcars[1, ], bw = 0.5),
               "needs at least 2 rows, got 1 sample \\(use more data or a lower degree\\)")
  expect_error(kbw(mpg ~ wt, data = mtcars[1:4, ]),
               "bandwidth selection needs at least 5 rows \\(got 4\\); pass a bandwidth by hand")
  expect_error(kbw(mpg ~ wt, data = transform(mtcars, wt = 1)),
               "continuous column 1 \\(wt\\) has 1 distinct value\\(s\\).*pass a bandwidth")
  expect_error(monte_carlo(function(X) X, n = 50, R = 1), "R: needs at least 2 replications")
  expect_error(dpi_bandwidth(1:3, 1:3), "x: needs at least 10 observations")
})

test_that("non-positive or non-finite bandwidths and penalties", {
  for (b in list(-1, 0, Inf)) {
    expect_error(kreg(mpg ~ wt, data = mtcars, bw = b),
                 "bw: the bandwidth of 'wt' must be a positive finite number.*bw = \"cv.ls\"")
  }
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = NA), "bw: must be numeric")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = "cv"), "bw: must be numbers, a kbw object")
  expect_error(lla(matrix(1, 3, 4), matrix(1, 5, 4), matrix(1, 5, 2), bandwidth = -1),
               "bandwidth: must be > 0 and finite, got -1.*pass a positive number")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 1, ridge = -1), "ridge")
  expect_error(ridge_attention(mpg ~ wt, data = mtcars, lambda = -1),
               "lambda: the ridge penalty must be finite and >= 0, got -1")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 0.5, weights = rep(-1, 32)),
               "weights: must be >= 0 \\(drop rows instead")
})

test_that("all kernel weights underflow, or the local design is singular", {
  f <- kreg(mpg ~ wt, data = mtcars, bw = 0.3)
  expect_error(predict(f, data.frame(wt = 100)),
               "newdata row 1: every kernel weight is 0 or underflows.*increase the bandwidth")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 1e-4, kernel = "uniform"),
               "design is singular.*increase the bandwidth, set ridge > 0 or lower the degree")
})

test_that("unseen categories and categorical bandwidths out of range", {
  f <- kreg(mpg ~ wt + am, data = d, bw = c(0.5, 0.2))
  expect_error(predict(f, data.frame(wt = 3, am = "2")),
               "newdata: variable 'am' has the level '2', never seen in the fit.*known level")
  o <- ols_attention(mpg ~ wt + am, data = d)
  expect_error(predict(o, data.frame(wt = 3, am = "2")), "factor am has new level")
  expect_error(kreg(mpg ~ wt + am, data = d, bw = c(0.5, 0.9)),
               "bw\\[2\\] \\(am\\).*aitchison_aitken kernel needs a bandwidth in \\[0, 0.5\\]")
  expect_error(kreg(mpg ~ wt + gear, data = d, bw = c(0.5, 1.5)),
               "bw\\[2\\] \\(gear\\).*li_racine kernel needs a bandwidth in \\[0, 1\\], got 1.5")
  expect_error(kreg(mpg ~ wt + am, data = d, bw = c(0.5, NA)),
               "bw: the lambda of factor 'am' must be a finite number")
})

test_that("device = 'cuda' without CUDA, unknown names, bad levels", {
  skip_if(isTRUE(attnreg_build_info()$cuda_compiled))
  expect_error(softmax_attention(matrix(1, 3, 4), matrix(1, 5, 4), matrix(1, 5, 2),
                                 device = "cuda"),
               "device: 'cuda' requested but attnreg was built without CUDA support.*'cpu'")
})

test_that("unknown option names and out-of-range levels name the argument", {
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 0.5, kernel = "laplace"),
               "kernel: unknown kernel 'laplace' \\(choose one of gaussian")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 0.5, ukertype = "foo"),
               "ukertype: unknown unordered categorical kernel 'foo'")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 0.5, n_threads = -1),
               "n_threads: must be >= 0")
  expect_error(kreg(~ wt, data = mtcars, bw = 0.5), "formula: needs a response")
  o <- ols_attention(mpg ~ wt, data = mtcars)
  expect_error(predict(o, mtcars, interval = "confidence", level = 2),
               "level: must be a single number between 0 and 1")
  expect_error(confint(o, "zz"), "parm: no coefficient named 'zz'")
  f <- kreg(mpg ~ wt, data = mtcars, bw = 0.5)
  expect_error(diagnose(f, level = 1.5), "level: must be in \\(0, 1\\)")
  expect_error(bootstrap_bands(f, data.frame(wt = 3), R = 0), "R: must be at least 19")
  expect_error(plot(f, n_grid = 1), "n_grid: must be a single integer >= 2")
})

test_that("NA/NaN/Inf attention options are errors, not the default (NULL is the default)", {
  set.seed(2)
  Q <- matrix(rnorm(18), 6); K <- matrix(rnorm(24), 8); V <- matrix(rnorm(16), 8)
  for (bad in list(NaN, NA, NA_real_, Inf)) {
    expect_error(softmax_attention(Q, K, V, scale = bad), "^scale: must be one finite number")
    expect_error(nw_rbf_attention(Q, K, V, bandwidth = bad), "^bandwidth: must be one finite")
    expect_error(lla(Q, K, V, bandwidth = bad, ridge = 0.1), "^bandwidth: must be one finite")
    expect_error(lla(Q, K, V, ridge = 0.1, cg_tol = bad), "^cg_tol: must be one finite")
    expect_error(attn_weights(Q, K, scale = bad), "^scale: must be one finite")
  }
  expect_identical(nw_rbf_attention(Q, K, V, bandwidth = NULL), nw_rbf_attention(Q, K, V))
  expect_error(softmax_attention(Q * 1e155, K * 1e155, V),
               "softmax: a logit overflows float64 at \\(batch 1, head 1, query")
})

test_that("bad preliminary / pilot bandwidths of the plug-in rules are errors", {
  set.seed(3); x <- runif(200); y <- sin(3 * x) + rnorm(200, sd = 0.2)
  for (bad in list(-1, 0, NaN, NA, Inf)) {
    expect_error(mse_dpi(x, y, h0 = bad), "^h0: must be one positive finite number")
    expect_error(imse_dpi(x, y, pilot_bw = bad), "^pilot_bw: must be one positive finite")
  }
  xn <- x; xn[3] <- NaN
  expect_error(tradeoff(xn, y, c(0.1, 0.2)), "x: contains NaN or Inf at row 3")
})

test_that("RBC with several regressors: predict(interval = \"rbc\") and diagnose fill it", {
  set.seed(4)
  d <- data.frame(x1 = runif(80), x2 = runif(80), g = factor(sample(letters[1:3], 80, TRUE)))
  d$y <- d$x1 + d$x2 + as.integer(d$g) / 3 + rnorm(80, sd = 0.2)
  fk <- kreg(y ~ x1 + x2 + g, data = d, bw = c(0.2, 0.3, 0.2))
  nd <- d[1:4, ]
  pr <- predict(fk, nd, se.fit = TRUE, interval = "rbc")
  expect_true(all(is.finite(pr$fit)) && all(is.finite(pr$se.fit)))
  p <- predict(fk, nd, se.fit = TRUE, interval = "confidence")
  expect_true(all(is.finite(p$fit)) && all(is.finite(p$se.fit)))
  expect_silent(dg <- diagnose(fk, nd))
  expect_true(all(is.finite(as.matrix(dg))))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  part <- expect_silent(plot(fk, type = "partial", bands = "rbc"))
  expect_true(all(vapply(part, function(p) all(is.finite(p$rbc_lwr)), logical(1))))
  expect_error(plot(fk, type = "partial", bands = "uniform"), "is for type = \"fit\"")
  f1 <- kreg(y ~ x1, data = d, bw = 0.2)
  expect_silent(dg1 <- diagnose(f1, nd))
  expect_true(all(is.finite(as.matrix(dg1))))
  expect_true(all(is.finite(predict(f1, nd, interval = "rbc"))))
})

test_that("cr1 cluster ids: NA and non-integer numbers are errors, labels are factorised", {
  set.seed(5)
  d <- data.frame(x = runif(30)); d$y <- d$x + rnorm(30, sd = 0.1)
  f <- kreg(y ~ x, data = d, bw = 0.3)
  cl <- rep(1:10, each = 3)
  ref <- diagnose(f, d[1:3, , drop = FALSE], vcov = "cr1", cluster = cl)$se
  expect_equal(diagnose(f, d[1:3, , drop = FALSE], vcov = "cr1",
                        cluster = letters[cl])$se, ref)
  clna <- cl; clna[4] <- NaN
  expect_error(diagnose(f, vcov = "cr1", cluster = clna), "^cluster: is NA/NaN at row 4")
  expect_error(diagnose(f, vcov = "cr1", cluster = cl + 0.5),
               "^cluster: must be integer ids or labels")
})

test_that("a character or factor response is an error, not silently coerced", {
  d <- data.frame(x1 = runif(20), y = rnorm(20))
  expect_error(kreg(as.character(y) ~ x1, data = d, bw = 0.3),
               "formula: the response must be numeric, got character")
  expect_error(kreg(factor(y > 0) ~ x1, data = d, bw = 0.3),
               "formula: the response must be numeric, got factor")
})
