# kdens / kcdens / kcdist / kqreg against direct R oracles (loops over the formulas).

wvr <- function(q, x, l) ifelse(q == x, 1 - l, 0.5 * (1 - l) * l^abs(q - x))
nlr <- function(q, x, l) l^abs(q - x) * (1 - l) / (1 + l)  # kdens's default, np's nliracine
aa <- function(q, x, l, L) ifelse(q == x, 1 - l, l / (L - 1))

make_df <- function(n, seed) {
  set.seed(seed)
  d <- data.frame(x = rnorm(n), g = ordered(sample(c("a", "b", "c"), n, TRUE)),
                  u = factor(sample(c("p", "q"), n, TRUE)))
  d$y <- d$x + as.integer(d$g) + rnorm(n)
  d
}

test_that("kdens equals the product-kernel oracle for mixed data and its criteria", {
  d <- make_df(40, 1)
  bw <- c(0.7, 0.3, 0.2)
  f <- kdens(~ x + g + u, data = d, bw = bw)
  gi <- as.integer(d$g) - 1; ui <- as.integer(d$u) - 1
  for (ok in c("nliracine", "wangvanryzin")) {
    lo <- if (ok == "nliracine") nlr else wvr
    K <- function(i, k) dnorm((d$x[i] - d$x[k]) / bw[1]) / bw[1] * lo(gi[i], gi[k], bw[2]) *
      aa(ui[i], ui[k], bw[3], 2)
    n <- nrow(d)
    oracle <- sapply(seq_len(n), function(i) sum(K(i, seq_len(n))) / n)
    fo <- if (ok == "nliracine") f else kdens(~ x + g + u, data = d, bw = bw, okertype = ok)
    expect_equal(unname(fo$dens), oracle, tolerance = 1e-13)
  }
  nd <- data.frame(x = c(0, 1.5), g = c("b", "c"), u = c("q", "p"))
  nd$g <- ordered(nd$g, levels = c("a", "b", "c")); nd$u <- factor(nd$u)
  p <- predict(f, nd)
  expect_equal(length(p), 2L)
  # cv.ml selects the minimum of minus the leave-one-out log likelihood.
  s <- kdens(~ x, data = d, bw = "cv.ml")
  loo <- function(h) -sum(sapply(seq_len(n), function(i)
    log(sum(dnorm((d$x[i] - d$x[-i]) / h) / h) / (n - 1))))
  expect_equal(s$objective, loo(s$bw[["x"]]), tolerance = 1e-12)
  expect_gt(loo(s$bw[["x"]] * 1.02), s$objective)
  expect_gt(loo(s$bw[["x"]] * 0.98), s$objective)
  expect_named(s$bw, "x")
})

test_that("kcdens, kcdist and kqreg match the oracles and invert", {
  d <- make_df(50, 2)
  bw <- c(0.6, 0.4, 0.8)
  cd <- kcdens(y ~ x + g, data = d, bw = bw)
  cf <- kcdist(y ~ x + g, data = d, bw = bw)
  gi <- as.integer(d$g) - 1
  n <- nrow(d)
  # the ordered x's kernel: Li-Racine, np's default on conditioning variables (okertype)
  Kx <- function(i) dnorm((d$x[i] - d$x) / bw[1]) * bw[2]^abs(gi[i] - gi)
  dens <- sapply(seq_len(n), function(i) sum(Kx(i) * dnorm((d$y[i] - d$y) / bw[3]) / bw[3]) / sum(Kx(i)))
  cdf <- sapply(seq_len(n), function(i) sum(Kx(i) * pnorm((d$y[i] - d$y) / bw[3])) / sum(Kx(i)))
  expect_equal(unname(cd$condens), dens, tolerance = 1e-13)
  expect_equal(unname(cf$condist), cdf, tolerance = 1e-13)
  expect_equal(names(cd$bw), c("x", "g", "y"))
  q <- kqreg(y ~ x + g, data = d, tau = c(0.2, 0.5, 0.8), bw = bw)
  expect_equal(dim(q$quantile), c(n, 3L))
  expect_true(all(q$quantile[, 1] < q$quantile[, 2] & q$quantile[, 2] < q$quantile[, 3]))
  nd <- d[1:5, ]
  for (k in 1:3) {
    nd$y <- q$quantile[1:5, k]
    Fq <- predict(cf, nd)
    expect_true(all(Fq >= q$tau[k] & Fq - q$tau[k] < 1e-9))
  }
  expect_equal(predict(q, d[1:5, ], tau = 0.5), unname(q$quantile[1:5, 2]), tolerance = 1e-14)
  # the Italy example's formula style: ordered() inside the formula, rebuilt for newdata
  it <- data.frame(year = rep(2001:2004, each = 15), gdp = rnorm(60, 10))
  fit <- kcdens(gdp ~ ordered(year), data = it, bw = c(0.3, 0.8))
  expect_length(predict(fit, data.frame(year = c(2002, 2004), gdp = c(9, 11))), 2L)
})

test_that("kcdist cv.ls equals the Li-Lin-Racine criterion at its minimum", {
  set.seed(3)
  n <- 40
  x <- rnorm(n); y <- x + rnorm(n)
  d <- data.frame(x = x, y = y)
  cf <- kcdist(y ~ x, data = d)
  crit <- function(hx, hy) {
    s <- 0
    for (l in seq_len(n)) {
      w <- dnorm((x[l] - x[-l]) / hx)
      Fl <- sapply(y, function(yj) sum(w * pnorm((yj - y[-l]) / hy)) / sum(w))
      s <- s + sum((as.numeric(y[l] <= y) - Fl)^2)
    }
    s / n^2
  }
  expect_equal(cf$objective, crit(cf$bw[[1]], cf$bw[[2]]), tolerance = 1e-12)
  expect_gte(crit(cf$bw[[1]] * 1.03, cf$bw[[2]]), cf$objective)
  expect_gte(crit(cf$bw[[1]], cf$bw[[2]] * 0.97), cf$objective)
})

test_that("print, summary and plot work", {
  d <- make_df(30, 4)
  f <- kdens(~ x, data = d, bw = "normal-reference")
  expect_output(print(f), "Kernel density estimate")
  expect_output(print(summary(f)), "continuous")
  s <- (4 / 3)^(1 / 5) * min(sd(d$x), IQR(d$x) / 1.348979500392163) * 30^(-1 / 5)
  expect_equal(f$bw[["x"]], s, tolerance = 1e-12)
  pdf(NULL)
  on.exit(dev.off())
  expect_silent(plot(f))
  expect_silent(plot(kcdens(y ~ x, data = d, bw = c(0.5, 0.7))))
  expect_silent(plot(kqreg(y ~ x, data = d, tau = c(0.25, 0.75), bw = c(0.5, 0.7))))
})

test_that("bad input names the argument", {
  d <- make_df(30, 5)
  expect_error(kqreg(y ~ x, data = d, tau = 1), "^tau:")
  expect_error(kqreg(y ~ x, data = d, tau = 0), "^tau:")
  q <- kqreg(y ~ x, data = d, bw = c(0.5, 0.7))
  expect_error(predict(q, d[1:2, ], tau = -0.1), "^tau:")
  expect_error(kdens(~ g, data = d, bw = "normal-reference"),
               "normal_reference needs at least one continuous column")
  dn <- d; dn$x[3] <- NaN
  expect_error(kdens(~ x, data = dn, bw = 0.5, na.action = na.pass), "data \\(regressors\\)")
  expect_error(kcdist(y ~ x, data = d, bw = "cv.ml"), "^bw:")
  expect_error(kdens(~ x + g, data = d, bw = c(0.5, 1.5)), "^bw\\[2\\] \\(g\\)")
  expect_error(kdens(y ~ x, data = d), "^formula:")
})
