# Marginal effects of kreg fits (gradients(), kreg(gradients = TRUE)) against direct oracles:
# central differences of the fit, level differences of predictions, and sqrt(sum g^2 e^2) with
# the derivative weights g from central differences of the attention weights.

grad_data <- function(seed = 1, n = 90) {
  set.seed(seed)
  d <- data.frame(x1 = runif(n), x2 = runif(n), g = factor(sample(c("a", "b", "c"), n, TRUE)))
  d$y <- sin(4 * d$x1) + d$x2^2 + 0.5 * (d$g == "b") + rnorm(n, sd = 0.2)
  d
}

test_that("local-constant gradients are the derivative of the fit, with their errors", {
  d <- grad_data()
  fit <- kreg(y ~ x1 + x2, data = d, method = "lc", bw = c(0.15, 0.2), gradients = TRUE)
  nd <- data.frame(x1 = c(0.3, 0.5, 0.7), x2 = c(0.4, 0.6, 0.5))
  G <- gradients(fit, newdata = nd)
  S <- gradients(fit, se = TRUE, newdata = nd)
  e <- residuals(fit)
  for (j in c("x1", "x2")) {
    p <- m <- nd
    p[[j]] <- p[[j]] + 1e-5
    m[[j]] <- m[[j]] - 1e-5
    fd <- (predict(fit, p) - predict(fit, m)) / 2e-5
    expect_equal(unname(G[, j]), unname(fd), tolerance = 1e-7)
    W <- (attention_weights(fit, p) - attention_weights(fit, m)) / 2e-5
    expect_equal(unname(S[, j]), unname(sqrt(drop(W^2 %*% e^2))), tolerance = 1e-6)
  }
  # kreg(gradients = TRUE) stores them at the observations, as npreg.
  expect_equal(dim(fit$grad), c(90L, 2L))
  expect_equal(colnames(fit$grad), c("x1", "x2"))
  expect_equal(gradients(fit), fit$grad)
  expect_equal(gradients(fit, se = TRUE), fit$gerr)
  expect_equal(unname(fit$grad[1:3, ]), unname(gradients(fit, newdata = d[1:3, ])),
               tolerance = 1e-12)
})

test_that("factor effects are level differences as np's npreg", {
  d <- grad_data(2)
  for (ord in c(FALSE, TRUE)) {
    dd <- d
    if (ord) dd$g <- factor(dd$g, ordered = TRUE)
    fit <- kreg(y ~ x1 + g, data = dd, method = "ll", bw = c(0.2, 0.3))
    nd <- dd[c(1, 1, 1), c("x1", "g")]
    nd$g[] <- c("a", "b", "c")
    G <- gradients(fit, newdata = nd)[, "g"]
    at <- function(lev) {
      r <- nd
      r$g[] <- lev
      predict(fit, r)
    }
    f <- predict(fit, nd)
    ref <- if (!ord) f - at("a") else c(at("b")[1] - f[1], f[2] - at("a")[2], f[3] - at("b")[3])
    expect_equal(unname(G), unname(ref), tolerance = 1e-12)
  }
})

test_that("average marginal effects use the averaged weights; bootstrap is reproducible", {
  d <- grad_data(3)
  fit <- kreg(y ~ x1 + x2, data = d, method = "ll", bw = c(0.2, 0.3))
  a <- gradients(fit, average = TRUE)
  expect_equal(rownames(a), c("x1", "x2"))
  expect_equal(a$estimate, unname(colMeans(gradients(fit))), tolerance = 1e-12)
  e <- residuals(fit)
  for (k in 1:2) {
    j <- c("x1", "x2")[k]
    p <- m <- d[, c("x1", "x2")]
    p[[j]] <- p[[j]] + 1e-5
    m[[j]] <- m[[j]] - 1e-5
    # Local linear slopes: weights from the direct weighted least squares of each row.
    Wbar <- colMeans(t(sapply(seq_len(nrow(d)), function(q) {
      D <- sweep(as.matrix(d[, c("x1", "x2")]), 2, as.numeric(d[q, c("x1", "x2")]))
      w <- exp(-0.5 * rowSums(sweep(D, 2, c(0.2, 0.3), "/")^2))
      Z <- cbind(1, D)
      solve(crossprod(Z, Z * w), t(Z * w))[1 + k, ]
    })))
    expect_equal(a$std_error[k], sqrt(sum(Wbar^2 * e^2)), tolerance = 1e-9)
  }
  b1 <- gradients(fit, average = TRUE, se_method = "bootstrap", R = 300, seed = 5)
  b2 <- gradients(fit, average = TRUE, se_method = "bootstrap", R = 300, seed = 5)
  expect_identical(b1, b2)
  expect_equal(b1$std_error, a$std_error, tolerance = 0.2)
  expect_error(gradients(fit, se = "yes"), "se: must be TRUE or FALSE")
  expect_error(gradients(fit, average = TRUE, level = 95), "level")
  expect_error(gradients(fit, se_method = "bootstrap", R = 1, average = TRUE), "^R: must be")
})

test_that("se_method = 'np' is np's gerr formula for local-constant gradients", {
  set.seed(11)
  d <- data.frame(x = runif(80))
  d$y <- sin(3 * d$x) + rnorm(80, sd = 0.2)
  h <- 0.12
  fit <- kreg(y ~ x, data = d, bw = h, method = "lc")
  nd <- data.frame(x = c(0.2, 0.5, 0.8))
  S <- gradients(fit, se = TRUE, newdata = nd, se_method = "np")
  R <- 1 / (2 * sqrt(pi)); C <- exp(-1 / 4) / (2 * sqrt(pi))
  ref <- sapply(nd$x, function(x0) {
    k <- dnorm((d$x - x0) / h); l <- k / sum(k)
    v <- sum(l * d$y^2) - sum(l * d$y)^2
    sqrt(2 * (R - C) / R) * sqrt(v * R / sum(k)) / h
  })
  expect_equal(unname(S[, 1]), ref, tolerance = 1e-10)
  fl <- kreg(y ~ x, data = d, bw = h, method = "ll")
  expect_error(gradients(fl, se = TRUE, newdata = nd, se_method = "np"), "^se_method: 'np'")
})
