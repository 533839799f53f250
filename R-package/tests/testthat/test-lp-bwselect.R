# mse_dpi / imse_dpi (algorithm = "nprobust"): nprobust 1.0.0's published cps71 values and a
# direct float64 oracle of the whole chain (odd degree, closed forms) on random data.
cps71 <- function() {
  read.csv(system.file("extdata", "cps71.csv", package = "attnreg", mustWork = TRUE))
}

test_that("cps71 reproduces nprobust's lpbwselect", {
  d <- cps71()
  # lpbwselect(logwage, age, eval = seq(25, 60, length.out = 10)[1:3], kernel = "epa", p = 1)
  h <- mse_dpi(d$age, d$logwage, seq(25, 60, length.out = 10)[1:3], kernel = "epanechnikov")
  expect_lt(max(abs(h - c(5.76, 4.10, 5.38))), 0.005)
  expect_lt(abs(imse_dpi(d$age, d$logwage, kernel = "epanechnikov") - 8.91), 0.005)
  hb <- imse_dpi(d$age, d$logwage, kernel = "epanechnikov", pilot = TRUE)
  expect_named(hb, c("h", "b"))
  expect_gt(hb$b, hb$h)
})

# Oracle: explicit normal equations in raw units, nearest-neighbour residuals by a loop.
.nn_r2 <- function(x, y, J = 3) {
  v <- sort(unique(x)); n <- length(x)
  sapply(seq_len(n), function(i) {
    lo <- hi <- match(x[i], v)
    cnt <- function() sum(x >= v[lo] & x <= v[hi]) - 1
    while (cnt() < min(J, n - 1)) {
      dl <- if (lo > 1) x[i] - v[lo - 1] else Inf
      dr <- if (hi < length(v)) v[hi + 1] - x[i] else Inf
      l2 <- dl <= dr && lo > 1; r2 <- dr <= dl && hi < length(v)
      if (l2) lo <- lo - 1
      if (r2) hi <- hi + 1
    }
    ins <- x >= v[lo] & x <= v[hi]; Ji <- sum(ins) - 1
    Ji / (Ji + 1) * (y[i] - (sum(y[ins]) - y[i]) / Ji)^2
  })
}
.K <- function(u) ifelse(abs(u) <= 1, 0.75 * (1 - u^2), 0)
.fit <- function(x, y, c, deg, h, div) {
  w <- .K((x - c) / h) / (if (div) h else 1); s <- w > 0
  X <- outer(x[s] - c, 0:deg, `^`); XW <- X * w[s]
  Gi <- solve(crossprod(X, XW))
  list(s = s, XW = XW, Gi = Gi, beta = Gi %*% crossprod(XW, y[s]))
}
.piece <- function(x, y, c, o, nu, oB, hV, hB1, hB2, scale) {
  N <- length(x)
  f <- .fit(x, y, c, o, hV, TRUE)
  r2 <- .nn_r2(x[f$s], y[f$s])
  VV <- (f$Gi %*% crossprod(f$XW, f$XW * r2) %*% f$Gi)[nu + 1, nu + 1]
  u <- (x[f$s] - c) / hV; Hp <- hV^(0:o)
  bc1 <- (Hp * (f$Gi %*% crossprod(f$XW, u^(o + 1))))[nu + 1]
  f1 <- .fit(x, y, c, oB, hB1, FALSE)
  R <- 0
  if (scale > 0) {
    r21 <- .nn_r2(x[f1$s], y[f1$s])
    R <- 3 * bc1^2 * (f1$Gi %*% crossprod(f1$XW, f1$XW * r21) %*% f1$Gi)[o + 2, o + 2]
  }
  V <- N * hV^(2 * nu + 1) * VV; B1 <- bc1 * f1$beta[o + 2]
  list(V = V, B1 = B1, bw = ((2 * nu + 1) * V / (N * 2 * (o + 1 - nu) * (B1^2 + scale * R)))^(1 / (2 * o + 3)))
}
.mse_point <- function(x, y, c) {
  p <- 1; q <- 2; N <- length(x)
  rng <- diff(range(x)); bmax <- max(abs(c - min(x)), abs(c - max(x)))
  bmin <- sort(abs(x - c))[21]
  clip <- function(h) max(min(h, bmax), bmin)
  iq <- unname(diff(quantile(x, c(0.25, 0.75))))
  cbw <- clip(2.34 * min(sd(x), iq / 1.349) * N^(-1 / 5))
  d2 <- clip(.piece(x, y, c, q + 1, q + 1, q + 2, cbw, rng, rng, 0)$bw)
  d3 <- clip(.piece(x, y, c, q + 2, q + 2, q + 3, cbw, rng, rng, 0)$bw)
  b <- clip(.piece(x, y, c, q, p + 1, q + 1, cbw, d2, d3, 1)$bw)
  clip(.piece(x, y, c, p, 0, q, cbw, b, d2, 1)$bw)
}

test_that("mse_dpi equals a direct oracle of the chain", {
  for (seed in 1:2) {
    set.seed(seed)
    n <- c(150, 300)[seed]
    x <- rnorm(n); if (seed == 2) x <- round(x * 20) / 20
    y <- x^3 - x + rnorm(n, sd = 0.5)
    ev <- seq(quantile(x, 0.05), quantile(x, 0.95), length.out = 5)
    expect_equal(mse_dpi(x, y, ev, kernel = "epanechnikov"),
                 sapply(ev, function(c) .mse_point(x, y, c)), tolerance = 1e-8)
  }
})

test_that("the one-step selector is kept and errors name the argument", {
  set.seed(3); x <- runif(200); y <- x^2 + rnorm(200, sd = 0.2)
  expect_gt(mse_dpi(x, y, 0.5, algorithm = "one_step"), 0)
  expect_error(mse_dpi(x, y, vcov = "const"), "^vcov: 'const' is not available")
  expect_error(mse_dpi(x, y, kernel = "biweight"), "^kernel: 'biweight' has no rule-of-thumb")
  expect_error(imse_dpi(x, y, h0 = 0.2), "^h0: is an option of algorithm")
  expect_error(mse_dpi(x, y, deriv = 2), "^deriv: must be between 0 and the degree")
  expect_error(mse_dpi(x, y, bwcheck = 500), "^bwcheck: must be between 0")
})
