# HC2/HC3 with a row of leverage one (an event dummy that is 1 on one row): the row is fitted
# exactly, its term e^2 / (1 - h)^k is 0/0 and is left out, and summary() says so. Oracle: a
# base-R sandwich from qr() that leaves out the rows known by construction to be fitted exactly.
# Tolerance 1e3 n eps kappa(X): the rounding of two QR-based computations of the same sandwich.

event_data <- function(n, seed, events = 1L) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = runif(n, -1, 1))
  rows <- sample.int(n, events)
  for (k in seq_along(rows)) d[[paste0("ev", k)]] <- as.numeric(seq_len(n) == rows[k])
  d$y <- 1 + 0.5 * d$x1 - d$x2 + rnorm(n)
  d$y[rows] <- d$y[rows] + 3
  list(data = d, rows = rows)
}

# Weighted: the scores of weighted least squares are w_i d_i e_i.
oracle_hc <- function(D, y, type, rows_one, w = rep(1, nrow(D))) {
  sw <- sqrt(w)
  qrd <- qr(D * sw)
  Q <- qr.Q(qrd)
  R <- qr.R(qrd)
  e <- drop(y - D %*% qr.coef(qrd, y * sw))
  h <- rowSums(Q^2)
  adj <- if (type == "HC2") 1 / (1 - h) else 1 / (1 - h)^2
  adj[rows_one] <- 0
  Z <- D * (w * e * sqrt(adj))
  Rinv <- backsolve(R, diag(ncol(D)))
  piv <- order(qrd$pivot)
  B <- (Rinv %*% t(Rinv))[piv, piv]
  sqrt(diag(B %*% crossprod(Z) %*% B))
}

test_that("HC2/HC3 with event dummies match the oracle that leaves out the 0/0 terms", {
  for (n in c(60, 80, 200)) for (seed in 1:3) for (events in 1:2) {
    ed <- event_data(n, seed, events)
    f <- reformulate(setdiff(names(ed$data), "y"), "y")
    fit <- ols_attention(f, data = ed$data)
    D <- model.matrix(f, ed$data)
    tol <- 1e3 * n * .Machine$double.eps * kappa(D, exact = TRUE)
    for (type in c("HC2", "HC3")) {
      s <- summary(fit, vcov = type)
      se <- s$coefficients[, "Std. Error"]
      expect_true(all(is.finite(se)))
      want <- oracle_hc(D, ed$data$y, type, ed$rows)
      expect_lt(max(abs(se - want) / want), tol,
                label = sprintf("%s n=%d seed=%d events=%d", type, n, seed, events))
      expect_equal(s$n_leverage_one, events)
      expect_output(print(s), paste0("Note: ", events, " row"))
      # the same standard errors through vcov()
      expect_lt(max(abs(sqrt(diag(vcov(fit, vcov = type))) - want) / want), tol)
    }
    expect_equal(summary(fit, vcov = "HC1")$n_leverage_one, 0L)
  }
})

test_that("weighted event dummies match the weighted oracle", {
  for (n in c(60, 200)) {
    ed <- event_data(n, 7)
    set.seed(8)
    w <- runif(n, 0.5, 2)
    d <- ed$data
    d$w <- w
    fit <- ols_attention(y ~ x1 + x2 + ev1, data = d, weights = w)
    D <- model.matrix(~ x1 + x2 + ev1, d)
    want <- oracle_hc(D, d$y, "HC3", ed$rows, w)
    se <- summary(fit, vcov = "HC3")$coefficients[, "Std. Error"]
    expect_lt(max(abs(se - want) / want), 1e3 * n * .Machine$double.eps * kappa(D * sqrt(w)))
  }
})

test_that("an absorbed fit notes its leverage-one rows (a singleton level, an event dummy)", {
  ed <- event_data(60, 4)
  d <- ed$data
  d$g <- factor(seq_len(60) %% 5)
  levels(d$g) <- c(levels(d$g), "single")
  d$g[(ed$rows[1] %% 60) + 1] <- "single"
  s <- summary(ols_attention(y ~ x1 + x2 + ev1 | g, d), vcov = "HC3")
  expect_equal(s$n_leverage_one, 2L)
  expect_output(print(s), "Note: 2 rows")
})
