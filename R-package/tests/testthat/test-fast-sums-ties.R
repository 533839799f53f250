# The exact fast paths of kreg(), against direct all-pairs computations written out in R:
# - one continuous regressor with a compact kernel (64 rows or more) runs on sorted windows of
#   running moment sums: fitted values, leverages, leave-one-out fits, predictions and the cv_ls
#   value equal the all-pairs weighted least squares to 1e-10;
# - tied rows are grouped (each distinct row evaluated once, with its count): equal to the
#   ungrouped computation to 1e-12;
# - one and two threads give identical numbers.

kern_compact <- function(name, u) {
  a <- abs(u)
  k <- switch(name,
    epanechnikov = 0.75 * (1 - u^2),
    biweight = 15 / 16 * (1 - u^2)^2,
    tricube = 70 / 81 * (1 - a^3)^3,
    triangular = 1 - a,
    cosine = pi / 4 * cos(pi * u / 2),
    gaussian = exp(-u^2 / 2))
  if (name == "gaussian") k else ifelse(a < 1, k, 0)
}

# Weighted least squares at the point q (a row of the continuous columns) with product kernel
# weights; `drop` leaves a row out. Returns the fit and the smoother row.
wls_at <- function(X, y, h, q, kernel, degree, drop = NULL, cat = NULL, qcat = NULL, lambda = 0) {
  w <- rep(1, nrow(X))
  for (j in seq_len(ncol(X))) w <- w * kern_compact(kernel, (X[, j] - q[j]) / h[j])
  if (!is.null(cat)) w <- w * ifelse(cat == qcat, 1 - lambda, lambda / (nlevels(cat) - 1))
  if (!is.null(drop)) w[drop] <- 0
  D <- if (degree == 0) matrix(1, nrow(X), 1) else cbind(1, sweep(X, 2, q))
  A <- crossprod(D, D * w)
  row <- solve(A, t(D * w))[1, ]
  list(fit = sum(row * y), row = row)
}

oracle <- function(X, y, h, kernel, degree, ...) {
  n <- nrow(X); fit <- lev <- loo <- numeric(n)
  for (i in seq_len(n)) {
    a <- wls_at(X, y, h, X[i, ], kernel, degree, ...)
    fit[i] <- a$fit; lev[i] <- a$row[i]
    loo[i] <- wls_at(X, y, h, X[i, ], kernel, degree, drop = i, ...)$fit
  }
  list(fit = fit, lev = lev, loo = loo)
}

expect_rel <- function(a, b, tol) {
  expect_true(length(a) == length(b) && length(b) > 0)
  err <- max(abs(unname(a) - unname(b)) / (1 + abs(unname(b))))
  expect_lte(err, tol)
}

test_that("fast sums equal all pairs for compact kernels on awkward data", {
  kernels <- c("epanechnikov", "biweight", "tricube", "triangular", "cosine")
  cases <- c("ties", "narrow", "shifted")
  for (kernel in kernels) {
    for (case in cases) {
      set.seed(10 * match(kernel, kernels) + match(case, cases))
      n <- 150
      x <- runif(n); h <- 0.19
      if (case == "ties") x <- round(x * 20) / 20
      if (case == "narrow") {
        g <- diff(sort(unique(x)))
        h <- 1.01 * max(g[-c(length(g) - 1, length(g))] + g[-c(1, length(g))] + g[-(1:2)])
      }
      if (case == "shifted") x <- x + 1e6
      d <- data.frame(x = x, y = sin(2 * pi * x) + rnorm(n, sd = 0.3))
      for (method in c("ll", "lc")) {
        degree <- if (method == "ll") 1 else 0
        fk <- kreg(y ~ x, data = d, method = method, bw = h, kernel = kernel)
        o <- oracle(matrix(d$x), d$y, h, kernel, degree)
        expect_rel(fitted(fk), o$fit, 1e-10)
        expect_rel(fk$leverage, o$lev, 1e-10)
        expect_rel(fk$loo, o$loo, 1e-10)
        expect_rel(fk$cv, mean((d$y - o$loo)^2), 1e-10)
        q <- quantile(d$x, c(0.1, 0.5, 0.9), names = FALSE)
        p0 <- vapply(q, function(qq) wls_at(matrix(d$x), d$y, h, qq, kernel, degree)$fit, 0)
        expect_rel(predict(fk, newdata = data.frame(x = q)), p0, 1e-10)
      }
    }
  }
})

test_that("tied rows grouped equal the ungrouped all-pairs computation to 1e-12", {
  set.seed(11)
  n <- 400
  d <- data.frame(x1 = sample(0:12, n, replace = TRUE), x2 = sample(1:4, n, replace = TRUE) / 2,
                  g = factor(sample(c("a", "b", "c"), n, replace = TRUE)))
  d$y <- d$x1 / 5 + sin(d$x2) + as.integer(d$g) / 3 + rnorm(n, sd = 0.4)
  bw <- c(3, 1.1, 0.2)
  fk <- kreg(y ~ x1 + x2 + g, data = d, method = "ll", bw = bw, kernel = "gaussian")
  X <- as.matrix(d[, c("x1", "x2")])
  # the all-pairs computation, row by row (each query with its own level of g)
  fit <- lev <- loo <- numeric(n)
  for (i in seq_len(n)) {
    a <- wls_at(X, d$y, bw[1:2], X[i, ], "gaussian", 1, cat = d$g, qcat = d$g[i], lambda = bw[3])
    fit[i] <- a$fit; lev[i] <- a$row[i]
    loo[i] <- wls_at(X, d$y, bw[1:2], X[i, ], "gaussian", 1, drop = i, cat = d$g,
                     qcat = d$g[i], lambda = bw[3])$fit
  }
  expect_rel(fitted(fk), fit, 1e-12)
  expect_rel(fk$leverage, lev, 1e-12)
  expect_rel(fk$loo, loo, 1e-12)
  expect_rel(fk$effective_df, sum(lev), 1e-12)
  expect_rel(fk$cv, mean((d$y - loo)^2), 1e-12)
})

test_that("one and two threads give identical fits on the fast and the grouped paths", {
  set.seed(5)
  n <- 3000
  d <- data.frame(x = round(runif(n), 3), z = sample(1:5, n, replace = TRUE))
  d$y <- sin(6 * d$x) + d$z / 4 + rnorm(n, sd = 0.2)
  for (args in list(list(f = y ~ x, bw = 0.05, kernel = "epanechnikov"),
                    list(f = y ~ x + z, bw = c(0.1, 1.5), kernel = "gaussian"))) {
    f1 <- kreg(args$f, data = d, method = "ll", bw = args$bw, kernel = args$kernel, n_threads = 1L)
    f2 <- kreg(args$f, data = d, method = "ll", bw = args$bw, kernel = args$kernel, n_threads = 2L)
    expect_identical(fitted(f1), fitted(f2))
    expect_identical(f1$leverage, f2$leverage)
    expect_identical(f1$loo, f2$loo)
    expect_identical(f1$cv, f2$cv)
  }
})
