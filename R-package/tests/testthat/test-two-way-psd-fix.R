# An indefinite two-way clustered covariance V_1 + V_2 - V_12 is replaced by U max(Lambda, 0) U'
# (Cameron, Gelbach and Miller 2011, sec. 2.3), with a warning and cov_fixed: against a direct
# oracle.

grid_data <- function(seed, G = 5, p = 2, noise = 0.05) {
  set.seed(seed)
  a <- rnorm(G); a <- a - mean(a)
  b <- rnorm(G); b <- b - mean(b)
  firm <- rep(seq_len(G), each = G)
  year <- rep(seq_len(G), times = G)
  X <- matrix(rnorm(G * G * p), ncol = p, dimnames = list(NULL, paste0("x", seq_len(p))))
  d <- data.frame(y = a[firm] * b[year] + noise * rnorm(G * G), X, firm = firm, year = year)
  d
}

raw_two_way <- function(M, e, firm, year) {
  meat <- function(g) {
    S <- rowsum(t(M) * e, g)  # clusters x q
    crossprod(S)
  }
  V <- meat(firm) + meat(year) - meat(paste(firm, year))
  (V + t(V)) / 2
}

clip_psd <- function(V) {
  ev <- eigen(V, symmetric = TRUE)
  ev$vectors %*% diag(pmax(ev$values, 0), nrow(V)) %*% t(ev$vectors)
}

indefinite_ols_case <- function() {
  for (seed in 1:50) {
    d <- grid_data(seed)
    D <- cbind(1, as.matrix(d[, c("x1", "x2")]))
    M <- solve(crossprod(D), t(D))
    e <- d$y - D %*% (M %*% d$y)
    V <- raw_two_way(M, drop(e), d$firm, d$year)
    lam <- eigen(V, symmetric = TRUE, only.values = TRUE)$values
    if (min(lam) < -1e-6 * max(abs(lam))) return(list(d = d, raw = V))
  }
  stop("no indefinite two-way covariance among the seeds")
}

test_that("OLS: an indefinite two-way covariance is eigenvalue-fixed with a warning", {
  cs <- indefinite_ols_case()
  fit <- ols_attention(y ~ x1 + x2, data = cs$d)
  expect_warning(s <- summary(fit, vcov = ~firm + year, cluster_type = "CR0"),
                 "Cameron, Gelbach and Miller 2011.*cov_fixed")
  expect_true(s$cov_fixed)
  want <- clip_psd(cs$raw)
  expect_equal(unname(s$cov), unname(want), tolerance = 1e-10)
  expect_true(all(is.finite(s$coefficients[, "Std. Error"])))
  expect_equal(unname(s$coefficients[, "Std. Error"]), sqrt(diag(want)), tolerance = 1e-9)
  expect_gte(min(eigen(s$cov, symmetric = TRUE, only.values = TRUE)$values),
             -1e-13 * max(abs(want)))
  expect_warning(V <- vcov(fit, vcov = ~firm + year, cluster_type = "CR0"),
                 "not positive semi-definite")
  expect_equal(unname(V), unname(want), tolerance = 1e-10)
})

test_that("PCR, ridge and absorbed fits: the fix and its warning", {
  cs <- indefinite_ols_case()
  want <- clip_psd(cs$raw)
  pcr <- pcr_attention(y ~ x1 + x2, data = cs$d)  # every component: least squares
  expect_warning(s <- summary(pcr, vcov = ~firm + year, cluster_type = "CR0"),
                 "U max\\(Lambda, 0\\) U'")
  expect_true(s$cov_fixed)
  expect_equal(unname(s$cov), unname(want), tolerance = 1e-10)
  expect_true(all(is.finite(s$coefficients[, "Std. Error"])))

  rid <- ridge_attention(y ~ x1 + x2, data = cs$d, lambda = 1e-8)
  s <- suppressWarnings(summary(rid, vcov = ~firm + year, cluster_type = "CR0"))
  expect_true(all(is.finite(s$coefficients[, "Std. Error"])))
  expect_gte(min(eigen(s$cov, symmetric = TRUE, only.values = TRUE)$values),
             -1e-13 * max(abs(s$cov)))

  # Absorbed year: oracle from the dummy-variable OLS (rows of x1, x2).
  found <- FALSE
  for (seed in 1:50) {
    d <- grid_data(seed)
    D <- cbind(as.matrix(d[, c("x1", "x2")]), model.matrix(~ factor(year) - 1, d))
    M <- solve(crossprod(D), t(D))
    e <- drop(d$y - D %*% (M %*% d$y))
    V <- raw_two_way(M[1:2, ], e, d$firm, d$year)
    lam <- eigen(V, symmetric = TRUE, only.values = TRUE)$values
    if (min(lam) < -1e-6 * max(abs(lam))) { found <- TRUE; break }
  }
  expect_true(found)
  fe <- ols_attention(y ~ x1 + x2 | year, data = d)
  expect_warning(s <- summary(fe, vcov = ~firm + year, cluster_type = "CR0"),
                 "Cameron, Gelbach and Miller 2011")
  expect_true(s$cov_fixed)
  expect_equal(unname(s$cov), unname(clip_psd(V)), tolerance = 1e-9)
})

test_that("PSD two-way and one-way covariances are untouched and silent", {
  set.seed(3)
  n <- 600
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), firm = seq_len(n) %% 30,
                  year = (seq_len(n) %/% 30) %% 20)
  d$y <- d$x1 - 0.5 * d$x2 + rnorm(n)
  fit <- ols_attention(y ~ x1 + x2, data = d)
  expect_silent(s2 <- summary(fit, vcov = ~firm + year, cluster_type = "CR0"))
  expect_silent(s1 <- summary(fit, vcov = ~firm))
  expect_false(s2$cov_fixed)
  expect_false(s1$cov_fixed)
  D <- cbind(1, d$x1, d$x2)
  M <- solve(crossprod(D), t(D))
  raw <- raw_two_way(M, drop(d$y - D %*% (M %*% d$y)), d$firm, d$year)
  expect_equal(unname(s2$cov), unname(raw), tolerance = 1e-12)
})
