# Covariances of ridge and PCR fits against a direct sandwich of their linear map b = M y.

ridge_map <- function(X, w, lambda) {
  D <- cbind(1, X)
  P <- diag(lambda, ncol(D))
  P[1, 1] <- 0
  list(D = D, M = solve(crossprod(D, w * D) + P, t(w * D)))
}

oracle_cov <- function(D, M, y, w, type, g = NULL) {
  H <- D %*% M
  e <- drop(y - H %*% y)
  N <- sum(w > 0)
  df <- N - sum(diag(H))
  if (type == "nonrobust") return(sum(w * e^2) / df * (M %*% (t(M) / w)))
  h <- diag(H)
  if (type %in% c("HC0", "HC1", "HC3")) {
    om <- e^2 * switch(type, HC0 = 1, HC1 = N / df, HC3 = 1 / (1 - h)^2)
    return(M %*% (om * t(M)))
  }
  one <- function(g) {
    S <- sapply(split(seq_along(e), g), function(i) M[, i, drop = FALSE] %*% e[i])
    list(C = S %*% t(S), G = length(unique(g)))
  }
  if (NCOL(g) == 1L) {
    o <- one(g)
    C <- o$C
    G <- o$G
  } else {
    a <- one(g[, 1])
    b <- one(g[, 2])
    C <- a$C + b$C - one(paste(g[, 1], g[, 2]))$C
    G <- min(a$G, b$G)
  }
  if (type == "CR1") C <- C * G / (G - 1) * (N - 1) / df
  if (NCOL(g) == 2L) {
    # Indefinite two-way V: the eigenvalue fix of Cameron, Gelbach and Miller (2011, sec. 2.3).
    ev <- eigen((C + t(C)) / 2, symmetric = TRUE)
    if (min(ev$values) < -1e-12 * max(abs(ev$values))) {
      C <- ev$vectors %*% diag(pmax(ev$values, 0), nrow(C)) %*% t(ev$vectors)
    }
  }
  C
}

make_df <- function(n, seed) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n),
                  firm = sample(letters[1:6], n, TRUE), year = sample(2001:2004, n, TRUE))
  d$y <- 1 + d$x1 - d$x2 + (0.5 + abs(d$x1)) * rnorm(n) + rnorm(6)[match(d$firm, letters)]
  d$w <- runif(n, 0.2, 2)
  d
}

test_that("ridge covariances equal the direct sandwich, weighted or not", {
  for (seed in 1:2) {
    d <- make_df(45, seed)
    X <- unname(as.matrix(d[, c("x1", "x2", "x3")]))
    for (weighted in c(FALSE, TRUE)) {
      w <- if (weighted) d$w else rep(1, nrow(d))
      fit <- if (weighted) ridge_attention(y ~ x1 + x2 + x3, d, weights = w, lambda = 2) else
        ridge_attention(y ~ x1 + x2 + x3, d, lambda = 2)
      o <- ridge_map(X, w, 2)
      for (type in c("nonrobust", "HC0", "HC1", "HC3")) {
        expect_equal(unname(vcov(fit, type)), oracle_cov(o$D, o$M, d$y, w, type),
                     tolerance = 1e-8, info = type)
      }
      expect_equal(unname(vcov(fit, vcov = ~firm)),
                   oracle_cov(o$D, o$M, d$y, w, "CR1", d$firm), tolerance = 1e-8)
      expect_equal(unname(vcov(fit, vcov = ~firm, cluster_type = "CR0")),
                   oracle_cov(o$D, o$M, d$y, w, "CR0", d$firm), tolerance = 1e-8)
      expect_equal(unname(suppressWarnings(vcov(fit, vcov = ~firm + year))),
                   oracle_cov(o$D, o$M, d$y, w, "CR1", cbind(d$firm, d$year)), tolerance = 1e-8)
    }
  }
})

test_that("PCR with every component and ridge with lambda = 0 reproduce OLS's covariances", {
  d <- make_df(50, 3)
  ols <- ols_attention(y ~ x1 + x2 + x3, d, weights = w)
  pcr <- pcr_attention(y ~ x1 + x2 + x3, d, weights = w)
  r0 <- ridge_attention(y ~ x1 + x2 + x3, d, weights = w, lambda = 0)
  for (v in list("nonrobust", "HC2", ~firm)) {
    expect_equal(vcov(pcr, vcov = v), vcov(ols, vcov = v), tolerance = 1e-9)
    expect_equal(vcov(r0, vcov = v), vcov(ols, vcov = v), tolerance = 1e-9)
  }
  expect_equal(vcov(pcr, vcov = ~firm, cluster_type = "CR2"),
               vcov(ols, vcov = ~firm, cluster_type = "CR2"), tolerance = 1e-9)
})

test_that("summaries report N - tr H and refuse what is not defined", {
  d <- make_df(40, 4)
  d$one <- 1
  fit <- ridge_attention(y ~ x1 + x2 + x3, d, lambda = 5)
  s <- summary(fit, vcov = ~firm)
  expect_equal(s$df, 40 - fit$effective_df)
  expect_equal(unname(s$n_clusters), 6)
  expect_equal(s$df_inference, 5)
  expect_equal(colnames(s$coefficients), c("Estimate", "Std. Error", "t value", "Pr(>|t|)"))
  expect_output(print(s), "around E\\[b\\]")
  p <- pcr_attention(y ~ x1 + x2 + x3, d, rank = 2)
  expect_equal(summary(p)$df, 40 - 3)
  expect_error(confint(fit), "confint")
  expect_error(summary(fit, vcov = "cluster"), "vcov = ~firm")
  expect_error(summary(fit, vcov = ~one), "single level")
  expect_error(summary(p, vcov = ~firm + year, cluster_type = "CR2"), "one-way")
})
