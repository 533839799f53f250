# iv_attention() against a direct 2SLS / LIML in matrix algebra (fixed effects as dummy
# columns, the explicit sandwich). Designs are well conditioned (condition numbers below 1e3),
# so agreement is at rounding level times the condition number squared: 1e-8 relative.

iv_data <- function(seed, n = 300, n_fe = 0L, weights = FALSE) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), z1 = rnorm(n), z2 = rnorm(n), z3 = rnorm(n))
  u <- rnorm(n)
  d$g <- if (n_fe > 0) factor(sample(seq_len(n_fe), n, TRUE)) else factor(1)
  d$xe <- d$z1 + 0.5 * d$z2 - 0.7 * d$z3 + 0.3 * d$x1 + 0.8 * u + rnorm(n) +
    cos(as.integer(d$g))
  d$y <- 1 + 0.5 * d$x1 + 2 * d$xe + sin(as.integer(d$g)) + u
  d$cl <- sample(1:25, n, TRUE)
  if (weights) d$w <- runif(n, 0.2, 3)
  d
}

iv_oracle <- function(d, fe = FALSE, liml = FALSE, w = NULL) {
  n <- nrow(d)
  exo <- if (fe) cbind(model.matrix(~ g - 1, d), x1 = d$x1) else cbind(1, x1 = d$x1)
  X <- cbind(exo, xe = d$xe)
  Z <- cbind(exo, d$z1, d$z2, d$z3)
  s <- if (is.null(w)) rep(1, n) else sqrt(w)
  X <- X * s
  Z <- Z * s
  E <- exo * s
  y <- d$y * s
  Pz <- Z %*% solve(crossprod(Z), t(Z))
  Mz <- diag(n) - Pz
  k <- 1
  if (liml) {
    Y <- cbind(y, d$xe * s)
    Me <- diag(n) - E %*% solve(crossprod(E), t(E))
    k <- min(Re(eigen(solve(t(Y) %*% Mz %*% Y, t(Y) %*% Me %*% Y))$values))
  }
  A <- t(X) %*% (diag(n) - k * Mz)
  C <- A %*% X
  b <- drop(solve(C, A %*% y))
  e <- drop(y - X %*% b)
  Ci <- solve(C)
  Xh <- Pz %*% X
  K <- ncol(X)
  S <- Xh * e
  list(b = b, nonrobust = sum(e^2) / (n - K) * Ci,
       HC1 = Ci %*% crossprod(S) %*% Ci * n / (n - K), Ci = Ci, S = S, n = n, K = K)
}

slopes <- c("x1", "xe")

test_that("2SLS and LIML without fixed effects match the matrix oracle", {
  for (seed in 1:3) {
    d <- iv_data(seed)
    for (liml in c(FALSE, TRUE)) {
      o <- iv_oracle(d, liml = liml)
      for (v in c("nonrobust", "HC1")) {
        fit <- iv_attention(y ~ x1 | xe ~ z1 + z2 + z3, data = d, vcov = v,
                            estimator = if (liml) "liml" else "2sls")
        expect_equal(unname(coef(fit)), unname(o$b), tolerance = 1e-8)
        expect_equal(unname(vcov(fit)), unname(o[[v]]), tolerance = 1e-8)
      }
    }
  }
})

test_that("fixed effects absorbed equal the dummy-variable 2SLS", {
  d <- iv_data(4, n_fe = 15L)
  o <- iv_oracle(d, fe = TRUE)
  fit <- iv_attention(y ~ x1 | g | xe ~ z1 + z2 + z3, data = d, vcov = "HC1")
  idx <- match(slopes, names(o$b))
  expect_equal(unname(coef(fit)[slopes]), unname(o$b[idx]), tolerance = 1e-8)
  expect_equal(unname(vcov(fit)[slopes, slopes]), unname(o$HC1[idx, idx]), tolerance = 1e-8)
  expect_equal(names(fixed_effects(fit)), "g")
})

test_that("weights and CR1 clusters match the oracle", {
  d <- iv_data(5, weights = TRUE)
  o <- iv_oracle(d, w = d$w)
  fit <- iv_attention(y ~ x1 | xe ~ z1 + z2 + z3, data = d, weights = w, vcov = "CR1",
                      cluster = ~ cl)
  expect_equal(unname(coef(fit)), unname(o$b), tolerance = 1e-8)
  G <- length(unique(d$cl))
  M <- crossprod(rowsum(o$S, d$cl))
  V <- o$Ci %*% M %*% o$Ci * G / (G - 1) * (o$n - 1) / (o$n - o$K)
  expect_equal(unname(vcov(fit)), unname(V), tolerance = 1e-8)
  ci <- confint(fit, level = 0.9)
  expect_true(all(ci[, 1] < coef(fit) & coef(fit) < ci[, 2]))
  expect_error(confint(fit, level = 90), "level is a fraction")
})

test_that("attention weights reproduce the predictions", {
  d <- iv_data(6, n_fe = 10L)
  fit <- iv_attention(y ~ x1 | g | xe ~ z1 + z2, data = d)
  A <- attention_weights(fit, newdata = d[1:20, ])
  expect_equal(drop(A %*% d$y), unname(predict(fit, newdata = d[1:20, ])), tolerance = 1e-9)
  expect_equal(unname(predict(fit, newdata = d)), unname(fitted(fit)), tolerance = 1e-9)
  s <- summary(fit)
  expect_output(print(s), "Cragg-Donald")
  expect_output(print(s), "Sargan")
})

test_that("bad input gets clear errors and weak instruments a warning", {
  d <- iv_data(7, n_fe = 10L)
  expect_error(iv_attention(y ~ 1 | xe + x1 ~ z1, data = d), "not identified")
  d$zg <- as.integer(d$g) * 2
  expect_error(iv_attention(y ~ x1 | g | xe ~ z1 + zg, data = d),
               "instrument zg: is collinear with the fixed effects")
  set.seed(8)
  d$zweak <- rnorm(nrow(d))
  expect_warning(iv_attention(y ~ x1 | xe ~ zweak, data = d), "weak instruments")
  expect_error(iv_attention(y ~ x1 | xe ~ z1, data = d, vcov = "CR1"), "cluster")
})
