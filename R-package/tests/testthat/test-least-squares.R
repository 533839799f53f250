# Ridge, PCR, the attention regression, masked attention and the pseudo-out-of-sample
# comparison (seed 004): against direct formulas, refitting and the identities.

test_that("ridge_attention matches the regularised normal equations (intercept unpenalised)", {
  D <- model.matrix(~ ., mtcars[, -1])
  P <- diag(ncol(D)); P[1, 1] <- 0
  for (lam in c(0.1, 3, 100)) {
    f <- ridge_attention(mpg ~ ., data = mtcars, lambda = lam)
    b <- solve(crossprod(D) + lam * P, crossprod(D, mtcars$mpg))  # oracle
    expect_equal(unname(coef(f)), unname(drop(b)), tolerance = 1e-9)
    nd <- mtcars[1:4, ]
    A <- attention_weights(f, nd)
    expect_equal(unname(rowSums(A)), rep(1, 4), tolerance = 1e-12)
    expect_equal(unname(drop(A %*% mtcars$mpg)), unname(predict(f, nd)), tolerance = 1e-10)
    expect_equal(unname(attention_factors(f, nd) %*% t(attention_factors(f))), unname(A),
                 tolerance = 1e-12)
    expect_equal(unname(attention_embedding(f)), unname(solve(crossprod(D) + lam * P)),
                 tolerance = 1e-8)
  }
  ols <- ols_attention(mpg ~ ., data = mtcars)
  expect_equal(unname(coef(ridge_attention(mpg ~ ., data = mtcars, lambda = 0))),
               unname(coef(ols)), tolerance = 1e-9)
  p <- ridge_path(ridge_attention(mpg ~ wt + hp, data = mtcars), c(1e-8, 1, 10))
  expect_equal(unname(p[1, ]), unname(coef(ols_attention(mpg ~ wt + hp, data = mtcars))),
               tolerance = 1e-7)
  expect_error(ridge_attention(mpg ~ wt, data = mtcars, lambda = -1),
               "lambda: the ridge penalty must be finite and >= 0")
})

test_that("ridge leave-one-out equals refitting and the grid choice uses it", {
  f <- ridge_attention(mpg ~ wt + hp + qsec, data = mtcars, lambda = 5)
  loo <- loo_predict(f)
  for (i in c(2, 11, 30)) {
    one <- ridge_attention(mpg ~ wt + hp + qsec, data = mtcars[-i, ], lambda = 5)
    expect_equal(unname(loo[i]), unname(predict(one, mtcars[i, ])), tolerance = 1e-10)
  }
  grid <- 10^seq(-2, 3, length.out = 20)
  g <- ridge_attention(mpg ~ ., data = mtcars, lambda = grid, select = "loo")
  manual <- sapply(grid, function(l) {
    fl <- ridge_attention(mpg ~ ., data = mtcars, lambda = l)
    mean((mtcars$mpg - loo_predict(fl))^2)
  })
  expect_equal(g$selection$loo_mse, manual, tolerance = 1e-10)
  expect_equal(g$lambda, grid[which.min(manual)])
  for (crit in c("gcv", "aicc")) {
    gc <- ridge_attention(mpg ~ ., data = mtcars, lambda = grid, select = crit)
    expect_equal(gc$lambda, grid[which.min(gc$selection[[crit]])])
  }
  expect_output(print(summary(g)), "Selection")
})

test_that("pcr_attention: orthonormal factors, full rank is OLS, agrees with pls", {
  f <- pcr_attention(mpg ~ wt + hp + qsec + drat, data = mtcars, rank = 2)
  F <- attention_factors(f)
  expect_equal(unname(crossprod(F)), diag(3), tolerance = 1e-12)
  nd <- mtcars[1:3, ]
  expect_equal(unname(attention_factors(f, nd) %*% t(F)), unname(attention_weights(f, nd)),
               tolerance = 1e-12)
  full <- pcr_attention(mpg ~ wt + hp + qsec + drat, data = mtcars)
  expect_equal(full$rank, 4L)
  expect_equal(unname(coef(full)),
               unname(coef(lm(mpg ~ wt + hp + qsec + drat, data = mtcars))), tolerance = 1e-10)
  skip_if_not_installed("pls")
  p <- pls::pcr(mpg ~ wt + hp + qsec + drat, data = mtcars, ncomp = 2)
  expect_equal(unname(predict(f, nd)), unname(drop(predict(p, nd, ncomp = 2))), tolerance = 1e-10)
  expect_error(pcr_attention(mpg ~ wt + hp, data = mtcars, rank = 3), "numerical rank")
})

test_that("masked weights (eq. 35) on an AR(1) and recursive vs masked forecasts", {
  set.seed(4)
  s <- numeric(61)
  for (t in 2:61) s[t] <- 0.3 + 0.6 * s[t - 1] + rnorm(1)
  d <- data.frame(y = s[-1], ylag = s[-61])
  f <- ols_attention(y ~ ylag, data = d)
  D <- cbind(1, d$ylag)
  H <- D %*% solve(crossprod(D)) %*% t(D)  # oracle hat matrix
  W <- masked_attention(f, strict = TRUE, weights = TRUE)
  for (t in c(2, 10, 40, 60)) {
    expect_equal(unname(W[t, 1:(t - 1)]), H[t, 1:(t - 1)] / sum(H[t, 1:(t - 1)]), tolerance = 1e-9)
  }
  m <- masked_attention(f, strict = TRUE)
  expect_equal(unname(m[-1]), unname(drop(W %*% d$y))[-1], tolerance = 1e-9)
  r <- pseudo_out_of_sample(y ~ ylag, data = d, start = 11)
  for (j in c(1, 20, 50)) {
    t <- r$rows[j]
    b <- qr.coef(qr(D[1:(t - 1), ]), d$y[1:(t - 1)])
    expect_equal(r$recursive[j], sum(D[t, ] * b), tolerance = 1e-10)
    expect_equal(r$masked[j], unname(m[t]), tolerance = 1e-9)
  }
  # leakage: change only the last ten observations
  d2 <- d
  d2$y[51:60] <- d2$y[51:60] + 8
  d2$ylag[52:60] <- d2$y[51:59]
  r2 <- pseudo_out_of_sample(y ~ ylag, data = d2, start = 11)
  expect_equal(r2$recursive[1:40], r$recursive[1:40], tolerance = 1e-12)
  expect_gt(max(abs(r2$masked[1:40] - r$masked[1:40])), 1e-3)
})

test_that("attention_regression: softmax weights, reproducible, beats OLS on a nonlinear curve", {
  set.seed(42)
  tr <- data.frame(x1 = rnorm(300), x2 = rnorm(300))
  te <- data.frame(x1 = rnorm(1000), x2 = rnorm(1000))
  g <- function(d) tanh(2 * d$x1) + 0.5 * d$x2^2
  tr$y <- g(tr) + rnorm(300, sd = 0.3)
  f <- attention_regression(y ~ x1 + x2, data = tr, rank = 3, n_starts = 3)
  A <- attention_weights(f, te[1:5, ])
  expect_true(all(A >= 0))
  expect_equal(unname(rowSums(A)), rep(1, 5), tolerance = 1e-12)
  expect_equal(unname(drop(A %*% tr$y)), unname(predict(f, te[1:5, ])), tolerance = 1e-12)
  expect_equal(f$objective, mean((tr$y - loo_predict(f))^2), tolerance = 1e-12)
  f2 <- attention_regression(y ~ x1 + x2, data = tr, rank = 3, n_starts = 3)
  expect_identical(predict(f2, te[1:5, ]), predict(f, te[1:5, ]))
  mse_ar <- mean((predict(f, te) - g(te))^2)
  mse_ols <- mean((predict(ols_attention(y ~ x1 + x2, data = tr), te) - g(te))^2)
  expect_lt(mse_ar, 0.6 * mse_ols)
  expect_output(print(summary(f)), "Embedding")
  expect_error(attention_regression(y ~ x1, data = tr[1, ]), "1 sample")
})
