# sigtest() and cmstest(): statistics against independent computations in R (gradients from
# predict(type = "gradient"), level contrasts, the Hsiao-Li-Racine J_n from lm residuals and an
# explicit kernel matrix), decisions under a true null and a strong alternative with fixed
# seeds, reproducibility, printing and bad input.

sim2 <- function(n = 150, seed = 11) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n), x2 = runif(n))
  d$y <- sin(2 * pi * d$x1) + rnorm(n, sd = 0.3)
  d
}

test_that("the local-linear statistic is the mean squared slope", {
  d <- sim2(80, 1)
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.15, 0.3))
  s <- sigtest(f, R = 19)
  g <- predict(f, d, type = "gradient")
  expect_equal(s$table$statistic, unname(colMeans(g^2)), tolerance = 1e-10)
  expect_equal(s$table$variable, c("x1", "x2"))
})

test_that("the Nadaraya-Watson statistic matches finite differences of the fit", {
  d <- sim2(90, 3)
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.3, 0.5), method = "lc")
  s <- sigtest(f, R = 19)
  eps <- 1e-6
  for (j in c("x1", "x2")) {
    dp <- d; dm <- d
    dp[[j]] <- dp[[j]] + eps; dm[[j]] <- dm[[j]] - eps
    fd <- (predict(f, dp) - predict(f, dm)) / (2 * eps)
    expect_equal(s$table$statistic[s$table$variable == j], mean(fd^2), tolerance = 1e-5)
  }
})

test_that("a factor is tested through level contrasts and found when it matters", {
  set.seed(4)
  n <- 120
  d <- data.frame(x = runif(n), g = factor(sample(c("a", "b", "c"), n, TRUE)))
  d$y <- d$x + 0.5 * (d$g == "c") + rnorm(n, sd = 0.2)
  f <- kreg(y ~ x + g, data = d, bw = c(0.2, 0.2))
  s <- sigtest(f, R = 49, vars = "g")
  base <- predict(f, transform(d, g = factor("a", levels = levels(d$g))))
  expect <- 0
  for (l in c("b", "c")) {
    expect <- expect + mean((predict(f, transform(d, g = factor(l, levels = levels(d$g)))) -
                               base)^2)
  }
  expect_equal(s$table$statistic, expect, tolerance = 1e-10)
  expect_lte(s$table$p.value, 0.05)
})

test_that("relevant and irrelevant regressors are told apart; p-values follow the definition", {
  d <- sim2()
  for (m in c("ll", "lc")) {
    f <- kreg(y ~ x1 + x2, data = d, bw = c(0.08, 0.3), method = m)
    s <- sigtest(f, R = 99, seed = 5)
    expect_lte(s$table$p.value[1], 0.02)
    # the irrelevant x2: rejection rate at 5% over 40 samples (binomial sd 0.034 at size 0.05)
    p2 <- sapply(1:40, function(k) {
      dk <- sim2(150, 100 + k)
      fk <- kreg(y ~ x1 + x2, data = dk, bw = c(0.08, 0.3), method = m)
      sigtest(fk, R = 99, seed = k, vars = "x2")$table$p.value
    })
    expect_lte(mean(p2 <= 0.05), 0.15)
    expect_gt(mean(p2), 0.3)
    for (j in 1:2) {
      expect_equal(s$table$p.value[j], (1 + sum(s$draws[, j] >= s$table$statistic[j])) / 100)
    }
    out <- capture.output(print(s))
    expect_true(any(grepl("Racine, Hart and Li", out)))
    expect_true(any(grepl("x1", out)))
  }
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.08, 0.3))
  expect_identical(sigtest(f, R = 29, seed = 3)$draws, sigtest(f, R = 29, seed = 3)$draws)
  expect_false(identical(sigtest(f, R = 29, seed = 3)$draws, sigtest(f, R = 29, seed = 4)$draws))
})

test_that("cmstest's Jn is the Hsiao-Li-Racine statistic", {
  set.seed(2)
  n <- 80
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- 1 + d$x1 - 0.5 * d$x2 + 0.5 * d$x1^2 + rnorm(n)
  h <- c(0.6, 0.8)
  r <- cmstest(lm(y ~ x1 + x2, data = d), bw = h, R = 19)
  u <- residuals(lm(y ~ x1 + x2, data = d))
  K <- outer(d$x1, d$x1, function(a, b) dnorm((a - b) / h[1]) / h[1]) *
    outer(d$x2, d$x2, function(a, b) dnorm((a - b) / h[2]) / h[2])
  diag(K) <- 0
  In <- drop(u %*% K %*% u) / (n * (n - 1))
  s2 <- 2 * prod(h) * drop(u^2 %*% K^2 %*% u^2) / (n * (n - 1))
  expect_equal(unname(r$statistic), n * sqrt(prod(h)) * In / sqrt(s2), tolerance = 1e-10)
  expect_equal(r$bw_method, "given")
})

test_that("cmstest keeps a linear model and rejects a missed quadratic", {
  set.seed(21)
  n <- 200
  d <- data.frame(x = runif(n, -1, 1))
  e <- rnorm(n, sd = 0.5)
  d$ylin <- 1 + 2 * d$x + e
  d$yq <- 1 + 2 * d$x + 2 * d$x^2 + e
  lin <- cmstest(lm(ylin ~ x, data = d), R = 99)
  q <- cmstest(lm(yq ~ x, data = d), R = 99)
  expect_gt(lin$p.value, 0.05)
  expect_lte(q$p.value, 0.02)
  expect_equal(lin$bw_method, "cv_ls")
  expect_equal(unname(lin$bw), unname(kbw(ylin ~ x, data = d, method = "lc")$bw), tolerance = 1e-8)
  # a correct quadratic model passes; poly() terms reduce to the variable x
  ok <- cmstest(lm(yq ~ poly(x, 2), data = d), R = 99)
  expect_gt(ok$p.value, 0.05)
  expect_true(any(grepl("Hsiao, Li and Racine", capture.output(print(q)))))
  # n = 200: the bandwidth is selected again on each bootstrap sample unless told otherwise
  expect_true(lin$reselected)
  fx <- cmstest(lm(ylin ~ x, data = d), R = 19, reselect = FALSE)
  expect_false(fx$reselected)
  expect_equal(unname(fx$statistic), unname(lin$statistic), tolerance = 1e-12)
  expect_true(any(grepl("held fixed", capture.output(print(fx)))))
  expect_error(cmstest(lm(ylin ~ x, data = d), reselect = "yes"), "reselect")
})

test_that("factors enter cmstest as categorical kernels and dummies", {
  set.seed(7)
  n <- 150
  d <- data.frame(x = runif(n), g = factor(sample(c("u", "v"), n, TRUE)))
  d$y <- 1 + d$x + (d$g == "v") + rnorm(n, sd = 0.3)
  r <- cmstest(lm(y ~ x + g, data = d), bw = c(0.3, 0.3), R = 49)
  expect_equal(r$rank, 3L)
  expect_named(r$bw, c("x", "g"))
})

test_that("bad input gets named errors", {
  d <- sim2(60)
  f <- kreg(y ~ x1 + x2, data = d, bw = c(0.2, 0.3))
  expect_error(sigtest(f, R = 5), "^R:")
  expect_error(sigtest(f, vars = "nope"), "vars")
  expect_error(sigtest(f, vars = 3), "vars")
  expect_error(sigtest(lm(y ~ x1, data = d)), "fit")
  expect_error(cmstest(f), "model")
  expect_error(cmstest(lm(y ~ x1, data = d), bw = c(1, 2)), "bw")
  expect_error(cmstest(lm(y ~ x1, data = d), data = d[1:10, ]), "data")
  expect_error(cmstest(lm(y ~ x1, data = d), bootstrap = "pairs"), "bootstrap|arg")
  expect_error(cmstest(lm(y ~ x1, data = d, weights = rep(1, 60))), "weight")
})
