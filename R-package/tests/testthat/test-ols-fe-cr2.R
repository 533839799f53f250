# CR2 with absorbed fixed effects nested in the clusters equals the dummy-variable lm's CR2
# (pseudo-inverse square roots of I - H_gg), written out here.

dummy_cr2_se <- function(ref, cl, w = NULL) {
  X <- model.matrix(ref)
  keep <- !is.na(coef(ref))
  X <- X[, keep, drop = FALSE]
  rw <- if (is.null(w)) rep(1, nrow(X)) else sqrt(w)
  Xw <- X * rw
  B <- solve(crossprod(Xw))
  H <- Xw %*% B %*% t(Xw)
  e <- residuals(ref) * rw
  meat <- 0
  for (g in unique(cl)) {
    i <- which(cl == g)
    ev <- eigen(diag(length(i)) - H[i, i, drop = FALSE], symmetric = TRUE)
    c <- ifelse(ev$values > 1e-10, 1 / sqrt(pmax(ev$values, 1e-300)), 0)
    u <- crossprod(Xw[i, , drop = FALSE], ev$vectors %*% (c * crossprod(ev$vectors, e[i])))
    meat <- meat + u %*% t(u)
  }
  sqrt(diag(B %*% meat %*% B))
}

test_that("CR2 with fixed effects nested in the clusters equals the dummy lm's CR2", {
  set.seed(5)
  n <- 240
  firm <- c(sample(24, n - 2, TRUE), 25, 26)  # two singleton firms
  d <- data.frame(firm = factor(firm), industry = factor((firm - 1) %/% 3), cl = (firm - 1) %/% 6)
  d$x1 <- rnorm(n) + firm / 24
  d$x2 <- rnorm(n)
  d$y <- d$x1 - 0.5 * d$x2 + 0.1 * firm + rnorm(n)
  d$w <- runif(n, 0.5, 2)
  for (weighted in c(FALSE, TRUE)) {
    # lm keeps the singleton firms: so does this fit (drop_singletons = FALSE).
    fe <- if (weighted) ols_attention(y ~ x1 + x2 | firm + industry, data = d, weights = w,
                                      drop_singletons = FALSE)
          else ols_attention(y ~ x1 + x2 | firm + industry, data = d, drop_singletons = FALSE)
    ref <- if (weighted) lm(y ~ x1 + x2 + firm + industry, data = d, weights = w)
           else lm(y ~ x1 + x2 + firm + industry, data = d)
    s <- summary(fe, vcov = ~cl, cluster_type = "CR2")
    se <- dummy_cr2_se(ref, d$cl, if (weighted) d$w)
    expect_equal(unname(s$coefficients[, 2]), unname(se[c("x1", "x2")]), tolerance = 1e-8)
    expect_equal(s$df_inference, length(unique(d$cl)) - 1)
  }
  # A factor spread over the clusters: refused, naming the alternatives.
  d$year <- factor(sample(5, n, TRUE))
  fe2 <- ols_attention(y ~ x1 + x2 | firm + year, data = d)
  expect_error(summary(fe2, vcov = ~cl, cluster_type = "CR2"), "factor 2 is not.*CR1")
})
