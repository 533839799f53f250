# kreg(): local linear / local constant kernel regression against a direct R oracle (weighted
# least squares at each point), the attention identities, leave-one-out against refitting,
# factors and ordered factors as categorical kernels, NA handling and bad input.

# The oracle: at x, weights w_i = prod_j K((x_ij - x_j)/h_j), design [1, X - x] (or [1]),
# (D'WD + ridge * sum(w) * I_slopes)^{-1} D'W y. Returns c(intercept, slopes).
oracle_fit <- function(X, y, h, x, method = "ll", ridge = 0, kern = dnorm) {
  U <- sweep(X, 2, x)
  w <- apply(kern(sweep(U, 2, h, "/")), 1, prod)
  D <- if (method == "ll") cbind(1, U) else matrix(1, nrow(X), 1)
  A <- crossprod(D, D * w)
  if (ncol(D) > 1) A[-1, -1] <- A[-1, -1] + ridge * sum(w) * diag(ncol(U))
  unname(drop(solve(A, crossprod(D, w * y))))
}

test_that("kreg matches the weighted-least-squares oracle (ll, lc, ridge; several shapes)", {
  epa <- function(u) ifelse(abs(u) <= 1, 0.75 * (1 - u^2), 0)
  for (s in 1:3) {
    set.seed(s)
    n <- c(30, 80, 150)[s]; p <- s
    d <- as.data.frame(matrix(rnorm(n * p), n, p))
    d$y <- sin(d$V1) + rnorm(n, sd = 0.2)
    h <- 0.5 + 0.3 * seq_len(p)
    X <- as.matrix(d[, seq_len(p), drop = FALSE])
    nd <- d[1:4, ] ; nd[, 1] <- nd[, 1] + 0.1
    for (method in c("ll", "lc")) {
      f <- kreg(y ~ ., data = d, method = method, bw = h)
      ref <- t(sapply(seq_len(4), function(i) oracle_fit(X, d$y, h, unlist(nd[i, seq_len(p)]), method)))
      if (method == "lc") ref <- t(ref)
      expect_equal(unname(predict(f, nd)), unname(ref[, 1]), tolerance = 1e-10)
      fit_ref <- sapply(seq_len(n), function(i) oracle_fit(X, d$y, h, X[i, ], method)[1])
      expect_equal(unname(fitted(f)), fit_ref, tolerance = 1e-10)
      A <- attention_weights(f, nd)
      expect_equal(dim(A), c(4L, n))
      expect_equal(unname(rowSums(A)), rep(1, 4), tolerance = 1e-12)
      expect_equal(unname(drop(A %*% d$y)), unname(predict(f, nd)), tolerance = 1e-12)
      if (method == "lc") expect_true(all(A >= 0))
      if (method == "ll") {
        G <- predict(f, nd, type = "gradient")
        expect_equal(dim(G), c(4L, p))
        expect_equal(unname(G), unname(ref[, -1, drop = FALSE]), tolerance = 1e-8)
      }
    }
    fr <- kreg(y ~ ., data = d, bw = h, ridge = 0.5)
    ref <- sapply(seq_len(4), function(i) oracle_fit(X, d$y, h, unlist(nd[i, seq_len(p)]), "ll", 0.5)[1])
    expect_equal(unname(predict(fr, nd)), ref, tolerance = 1e-10)
    fe <- kreg(y ~ ., data = d, bw = 3 * h, kernel = "epanechnikov")
    ref <- sapply(seq_len(4), function(i) oracle_fit(X, d$y, 3 * h, unlist(nd[i, seq_len(p)]), "ll", 0, epa)[1])
    expect_equal(unname(predict(fe, nd)), ref, tolerance = 1e-10)
  }
})

test_that("local linear reproduces a linear function and Nadaraya-Watson is softmax attention", {
  set.seed(10)
  d <- data.frame(x1 = runif(60), x2 = runif(60))
  d$y <- 1 + 2 * d$x1 - 3 * d$x2
  f <- kreg(y ~ x1 + x2, data = d, bw = 0.3)
  nd <- data.frame(x1 = c(0.2, 0.7), x2 = c(0.5, 0.1))
  expect_equal(unname(predict(f, nd)), 1 + 2 * nd$x1 - 3 * nd$x2, tolerance = 1e-11)
  expect_equal(unname(predict(f, nd, type = "gradient")), cbind(c(2, 2), c(-3, -3)),
               tolerance = 1e-10)
  # Unit-norm inputs: NW with the Gaussian kernel is softmax(q K' / h^2) (seed 000).
  K <- matrix(rnorm(120), 40, 3); K <- K / sqrt(rowSums(K^2))
  Q <- matrix(rnorm(9), 3, 3); Q <- Q / sqrt(rowSums(Q^2))
  v <- rnorm(40)
  dk <- data.frame(K, v = v); dq <- data.frame(Q); names(dq) <- names(dk)[1:3]
  nw <- kreg(v ~ X1 + X2 + X3, data = dk, method = "lc", bw = 0.5)
  L <- Q %*% t(K) / 0.25
  P <- exp(L - apply(L, 1, max)); P <- P / rowSums(P)
  expect_equal(unname(predict(nw, dq)), drop(P %*% v), tolerance = 1e-12)
})

test_that("factors and ordered factors enter through the kernel weights (hand computation)", {
  d <- data.frame(x = c(0, 1, 0, 2), g = factor(c("a", "a", "b", "b")),
                  o = ordered(c("lo", "mid", "hi", "lo"), levels = c("lo", "mid", "hi")),
                  y = c(1, 2, 4, 8))
  f <- kreg(y ~ x + g + o, data = d, method = "lc", bw = c(1, 0.2, 0.5))
  expect_equal(f$var_types, "cuo")
  nd <- data.frame(x = 0.5, g = "a", o = ordered("mid", levels = c("lo", "mid", "hi")))
  # Gaussian x; Aitchison-Aitken g (0.8 same level, 0.2 other); Li-Racine o (0.5^|distance|).
  w <- exp(-0.5 * (d$x - 0.5)^2) * ifelse(d$g == "a", 0.8, 0.2) *
    0.5^abs(as.integer(d$o) - 2)
  expect_equal(unname(predict(f, nd)), sum(w * d$y) / sum(w), tolerance = 1e-14)
  # Named bandwidths in any order.
  f2 <- kreg(y ~ x + g + o, data = d, method = "lc", bw = c(o = 0.5, x = 1, g = 0.2))
  expect_equal(predict(f2, nd), predict(f, nd))
  expect_error(predict(f, transform(nd, g = "zz")), "never seen")
  expect_error(kreg(y ~ x + g + o, data = d, bw = c(1, 0.7, 0.5)), "bw\\[2\\] \\(g\\)")
  expect_error(kreg(y ~ x + g, data = d, bw = 1), "one number for every regressor")
})

test_that("leave-one-out fits equal refitting without the row; leverages are the weights' diagonal", {
  set.seed(11)
  d <- data.frame(x = rnorm(25), z = rnorm(25))
  d$y <- d$x^2 + rnorm(25)
  for (args in list(list(method = "lc"), list(method = "ll"), list(method = "ll", ridge = 0.4))) {
    f <- do.call(kreg, c(list(y ~ x + z, data = d, bw = c(0.8, 1)), args))
    loo <- loo_predict(f)
    for (i in c(1, 7, 25)) {
      g <- do.call(kreg, c(list(y ~ x + z, data = d[-i, ], bw = c(0.8, 1)), args))
      expect_equal(unname(loo[i]), unname(predict(g, d[i, ])), tolerance = 1e-10)
    }
    expect_equal(f$cv, mean((d$y - loo)^2))
    A <- attention_weights(f, d)
    expect_equal(unname(f$leverage), unname(diag(A)), tolerance = 1e-12)
    expect_equal(f$effective_df, sum(diag(A)), tolerance = 1e-10)
  }
})

test_that("NA handling follows na.action; methods print and plot", {
  d <- mtcars
  d$hp[3] <- NA
  f <- kreg(mpg ~ wt + hp, data = d, bw = c(0.6, 40))
  expect_equal(nobs(f), 31L)
  expect_equal(length(fitted(f)), 31L)
  fe <- kreg(mpg ~ wt + hp, data = d, bw = c(0.6, 40), na.action = na.exclude)
  expect_equal(length(residuals(fe)), 32L)
  expect_true(is.na(residuals(fe)[3]))
  expect_output(print(f), "Local linear")
  expect_output(print(summary(f)), "Leave-one-out")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_silent(plot(f, var = "wt"))
  expect_equal(kernel_constants("epanechnikov")$mu2, 0.2)
})

test_that("bad input gives errors that name the argument", {
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = "cv.foo"), "bw: must be numbers")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = -1), "bandwidth")
  expect_error(kreg(mpg ~ wt + hp, data = mtcars, bw = c(1, 2, 3)), "bw: got 3 values")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 1, kernel = "laplace"), "kernel")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 1, ridge = -1), "ridge")
  f <- kreg(mpg ~ wt, data = mtcars, method = "lc", bw = 0.05)
  expect_error(predict(f, data.frame(wt = 100)), "underflow")
  expect_error(kreg(mpg ~ wt, data = mtcars, bw = 1e-4, kernel = "uniform"), "singular")
  expect_error(predict(f, data.frame(wt = NA_real_)), "missing values")
  expect_error(predict(f, mtcars[1:2, ], type = "gradient"), "method = \"ll\"")
})
