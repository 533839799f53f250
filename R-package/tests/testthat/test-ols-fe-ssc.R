# fixest's small-sample conventions, singletons, CR3 and the wild cluster bootstrap with absorbed
# fixed effects, against the dummy-variable lm() with the explicit sandwich and explicit
# leave-one-cluster-out refits.

.fe_panel <- function(seed, n = 240, L = 24, G = 12, nested = TRUE, singletons = 0) {
  set.seed(seed)
  f <- sample(L, n, TRUE)
  g <- if (nested) f %% G else sample(G, n, TRUE)
  d <- data.frame(f = f, g = g, x1 = rnorm(n), x2 = rnorm(n))
  if (singletons > 0) {
    d <- rbind(d, data.frame(f = 1000 + seq_len(singletons), g = seq_len(singletons) %% G,
                             x1 = rnorm(singletons), x2 = rnorm(singletons)))
  }
  d$y <- d$x1 - 0.5 * d$x2 + sin(d$f) + rnorm(nrow(d)) * (1 + abs(d$x1))
  d$f <- factor(d$f)
  d
}

.cr1_oracle <- function(d, K) {
  ref <- lm(y ~ x1 + x2 + f, data = d)
  X <- model.matrix(ref)
  X <- X[, !is.na(coef(ref)), drop = FALSE]
  e <- residuals(ref)
  B <- solve(crossprod(X))
  S <- rowsum(X * e, d$g)
  G <- nrow(S)
  n <- nrow(d)
  V <- B %*% crossprod(S) %*% B * G / (G - 1) * (n - 1) / (n - K)
  sqrt(diag(V))[c("x1", "x2")]
}

test_that("CR1 counts a factor nested in the clusters as one parameter; ssc options", {
  d <- .fe_panel(1, singletons = 4)
  fit <- ols_attention(y ~ x1 + x2 | f, data = d)
  expect_equal(fit$n_singletons, 4)
  dk <- d[!(as.character(d$f) %in% as.character(1000 + 1:4)), ]
  dk$f <- droplevels(dk$f)
  s <- summary(fit, vcov = ~g)
  expect_equal(unname(s$coefficients[, 2]), unname(.cr1_oracle(dk, K = 3)), tolerance = 1e-9)
  full <- ols_attention(y ~ x1 + x2 | f, data = d,
                        ssc = list(K.adj = TRUE, K.fixef = "full", G.adj = TRUE))
  sf <- summary(full, vcov = ~g)
  expect_equal(unname(sf$coefficients[, 2]), unname(.cr1_oracle(dk, K = 2 + nlevels(dk$f))),
               tolerance = 1e-9)
  kept <- ols_attention(y ~ x1 + x2 | f, data = d, drop_singletons = FALSE)
  expect_equal(kept$n_singletons, 0)
  sk <- summary(kept, vcov = ~g)
  expect_equal(unname(sk$coefficients[, 2]), unname(.cr1_oracle(d, K = 3)), tolerance = 1e-9)
  expect_output(print(s), "singleton")
  expect_error(ols_attention(y ~ x1 + x2 | f, data = d, ssc = list(K.fixef = "all")), "K.fixef")
  expect_error(ols_attention(y ~ x1 + x2 | f, data = d, drop_singletons = NA), "drop_singletons")
})

test_that("CR3 equals the explicit leave-one-cluster-out refits (nested and not)", {
  for (nested in c(TRUE, FALSE)) {
    d <- .fe_panel(2, nested = nested)
    fit <- ols_attention(y ~ x1 + x2 | f, data = d, drop_singletons = FALSE)
    V <- summary(fit, vcov = ~g, cluster_type = "CR3")$cov
    b <- coef(lm(y ~ x1 + x2 + f, data = d))[c("x1", "x2")]
    G <- length(unique(d$g))
    S <- matrix(0, 2, 2)
    for (v in unique(d$g)) {
      bb <- coef(lm(y ~ x1 + x2 + f, data = d[d$g != v, ]))[c("x1", "x2")]
      S <- S + tcrossprod(bb - b)
    }
    expect_equal(unname(V), unname(S * (G - 1) / G), tolerance = 1e-8)
  }
})

test_that("the wild cluster bootstrap enumerates small G and refuses bad input", {
  d <- .fe_panel(3, G = 8)
  fit <- ols_attention(y ~ x1 + x2 | f, data = d)
  wb <- wild_bootstrap(fit, "x1", cluster = ~g, R = 999)
  expect_true(wb$enumerated)
  expect_equal(wb$replications, 2^8)
  expect_length(wb$t_boot, 256)
  expect_equal(wb$p_value, mean(abs(wb$t_boot) >= abs(wb$t_stat) * (1 - 1e-12)))
  expect_true(wb$conf_int[1] < wb$estimate && wb$estimate < wb$conf_int[2])
  w2 <- wild_bootstrap(fit, c(x1 = 1, x2 = -1), cluster = ~g, R = 199, bootstrap = "webb",
                       seed = 1)
  w3 <- wild_bootstrap(fit, c(x1 = 1, x2 = -1), cluster = ~g, R = 199, bootstrap = "webb",
                       seed = 1)
  expect_identical(w2$t_boot, w3$t_boot)
  expect_error(wild_bootstrap(fit, "x1", cluster = ~g, R = 50), "R: must be")
  expect_error(wild_bootstrap(fit, "x1", cluster = ~g, level = 95), "fraction")
  d$c <- as.numeric(as.character(d$f))
  fit2 <- suppressWarnings(ols_attention(y ~ x1 + c | f, data = d))
  expect_error(wild_bootstrap(fit2, "c", cluster = ~g), "dropped")
})
