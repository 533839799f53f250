wage1 <- function() {
  d <- read.csv(system.file("extdata", "wage1.csv", package = "attnreg", mustWork = TRUE))
  d$female <- as.numeric(d$female == "Female")
  d$married <- as.numeric(d$married == "Married")
  d
}

gauss_w <- function(Z, z, h) exp(-0.5 * rowSums(sweep(sweep(Z, 2, z), 2, h, "/")^2))

test_that("kreg(degree = 2, 3) matches weighted least squares per query point", {
  set.seed(1)
  n <- 80
  d <- data.frame(x = runif(n) * 2)
  d$y <- sin(3 * d$x) + rnorm(n, sd = 0.1)
  for (p in 2:3) {
    fit <- kreg(y ~ x, data = d, degree = p, bw = 0.3)
    nd <- data.frame(x = c(0.4, 1, 1.6))
    got <- predict(fit, nd)
    slope <- predict(fit, nd, type = "gradient")
    for (r in seq_len(nrow(nd))) {
      D <- outer(d$x - nd$x[r], 0:p, `^`)
      w <- sqrt(exp(-0.5 * ((d$x - nd$x[r]) / 0.3)^2))
      b <- qr.coef(qr(D * w), d$y * w)
      expect_equal(unname(got[r]), b[1], tolerance = 1e-9)
      expect_equal(unname(drop(slope)[r]), b[2], tolerance = 1e-7)
    }
    expect_equal(unname(rowSums(attention_weights(fit, nd))), rep(1, 3), tolerance = 1e-10)
  }
  # Degrees 0 and 1 are method = "lc" and "ll" exactly, bandwidth selection included.
  d2 <- data.frame(x1 = runif(60), x2 = runif(60))
  d2$y <- d2$x1 + d2$x2^2 + rnorm(60, sd = 0.1)
  expect_identical(kreg(y ~ x1 + x2, data = d2, degree = 0)$bw,
                   kreg(y ~ x1 + x2, data = d2, method = "lc")$bw)
  expect_identical(fitted(kreg(y ~ x1 + x2, data = d2, degree = 1)),
                   fitted(kreg(y ~ x1 + x2, data = d2, method = "ll")))
  q <- kreg(y ~ x1 + x2, data = d2, degree = 2)  # cv.ls for a local quadratic in two columns
  expect_true(all(q$bw > 0) && is.finite(q$cv))
  expect_error(kreg(y ~ x1 + x2, data = d2, degree = 3, bw = 0.3), "degree")
  expect_error(kreg(y ~ x1, data = d2, degree = 5), "degree")
  expect_error(kreg(y ~ x1, data = d2, method = "lc", degree = 1), "contradicts")
  expect_error(kreg(y ~ x1, data = d2, method = "ll", degree = 2, bw = 0.3), "contradicts")
  expect_error(kreg(y ~ x1, data = d2, degree = 2, bw = "rot"), "cv_ls, aic or gcv")
})

test_that("kplm reproduces Robinson's double residual with np's standard errors", {
  set.seed(2)
  n <- 100
  d <- data.frame(z = runif(n), x1 = rnorm(n), x2 = rnorm(n))
  d$x1 <- d$x1 + sin(4 * d$z)
  d$y <- d$x1 - 0.5 * d$x2 + cos(3 * d$z) + rnorm(n, sd = 0.2)
  bw <- matrix(c(0.1, 0.15, 0.2), ncol = 1)
  fit <- kplm(y ~ x1 + x2 | z, data = d, bw = bw, vcov = "nonrobust")
  nw <- function(v, h) sapply(d$z, function(z0) {
    w <- exp(-0.5 * ((d$z - z0) / h)^2)
    sum(w * v) / sum(w)
  })
  ey <- d$y - nw(d$y, 0.1)
  ex <- cbind(d$x1 - nw(d$x1, 0.15), d$x2 - nw(d$x2, 0.2))
  ols <- lm.fit(ex, ey)
  expect_equal(unname(coef(fit)), unname(ols$coefficients), tolerance = 1e-10)
  s2 <- sum(ols$residuals^2) / (n - 2 - 1)
  expect_equal(unname(sqrt(diag(vcov(fit)))), sqrt(diag(s2 * solve(crossprod(ex)))),
               tolerance = 1e-9)
  B <- solve(crossprod(ex))
  hc0 <- B %*% crossprod(ex * ols$residuals) %*% B
  expect_equal(unname(vcov(fit, "HC0")), hc0, tolerance = 1e-9)
  expect_equal(unname(fitted(fit)), d$y - ols$residuals, tolerance = 1e-10)
  nd <- data.frame(z = c(0.3, 0.7), x1 = c(0, 1), x2 = c(1, -1))
  expect_length(predict(fit, nd), 2)
  expect_output(print(summary(fit)), "Partially linear")
  expect_error(kplm(y ~ x1 + z | z, data = d, bw = matrix(0.2, 3, 1)), "both sides")
  expect_error(kplm(y ~ x1 + x2, data = d), "y ~ x \\| z")
  expect_error(kplm(y ~ x1 + x2 | z, data = d, bw = matrix(0.2, 2, 1)), "one row per")
})

test_that("kplm on wage1 selects each conditional mean by cross-validation", {
  d <- wage1()
  # E[female | exper] is flat in exper: its cv.ls falls all the way to the box's upper end
  # (0.2505142864 at h = 5000 against 0.2505143187 at h = 696, where a search that stopped on
  # an absolute gradient tolerance used to end), and kplm says so.
  expect_warning(fit <- kplm(lwage ~ female + married + educ + tenure | exper, data = d),
                 "E\\[female")
  expect_equal(rownames(fit$bw), c("lwage", "female", "married", "educ", "tenure"))
  b <- kbw(lwage ~ exper, data = d, method = "lc")
  expect_equal(unname(fit$bw["lwage", "exper"]), unname(b$bw), tolerance = 1e-12)
  expect_true(coef(fit)[["female"]] < 0 && coef(fit)[["educ"]] > 0)
})

test_that("kscoef matches kernel-weighted least squares and its leave-one-out CV", {
  set.seed(3)
  n <- 90
  d <- data.frame(z = round(runif(n) * 12) / 12, x = rnorm(n))
  d$y <- 1 + d$x * (1 + d$z) + rnorm(n, sd = 0.1)
  fit <- kscoef(y ~ x | z, data = d, bw = 0.2)
  W <- cbind(1, d$x)
  beta_at <- function(z0, skip = 0) {
    w <- exp(-0.5 * ((d$z - z0) / 0.2)^2)
    if (skip > 0) w[skip] <- 0
    qr.coef(qr(W * sqrt(w)), d$y * sqrt(w))
  }
  B <- coef(fit, newdata = data.frame(z = c(0.25, 0.5)))
  expect_equal(unname(B[1, ]), unname(beta_at(0.25)), tolerance = 1e-9)
  expect_equal(unname(B[2, ]), unname(beta_at(0.5)), tolerance = 1e-9)
  loo <- sapply(seq_len(n), function(i) sum(W[i, ] * beta_at(d$z[i], i)))
  expect_equal(fit$cv, mean((d$y - loo)^2), tolerance = 1e-10)
  expect_equal(unname(predict(fit, data.frame(z = 0.5, x = 2))),
               sum(c(1, 2) * beta_at(0.5)), tolerance = 1e-9)
  # Selection: on 13 distinct values of z the criterion falls to the search box's floor
  # (a warning says so); on continuous z it has an interior minimum.
  expect_warning(kscoef(y ~ x | z, data = d), "edge of its search box")
  d$z <- runif(n)
  d$y <- 1 + d$x * (1 + sin(3 * d$z)) + rnorm(n, sd = 0.1)
  sel <- kscoef(y ~ x | z, data = d)
  expect_identical(sel$selection$at_bound, 0L)
  for (f in c(0.9, 1.1)) {
    expect_gte(kscoef(y ~ x | z, data = d, bw = sel$bw * f)$cv, sel$cv)
  }
  expect_error(kscoef(y ~ x | z, data = d, bw = c(0.1, 0.2)), "one bandwidth per")
})

test_that("coef(kscoef, se = TRUE) equals a direct weighted least-squares sandwich", {
  set.seed(11)
  n <- 120
  d <- data.frame(z = round(runif(n) * 15) / 15, x1 = rnorm(n), x2 = rnorm(n))
  d$y <- 1 + d$x1 * (1 + d$z) - d$x2 * d$z + (0.1 + d$z) * rnorm(n)
  h <- 0.25
  f <- kscoef(y ~ x1 + x2 | z, data = d, bw = h)
  W <- cbind(1, d$x1, d$x2)
  kw <- function(z) exp(-0.5 * ((d$z - z) / h)^2)
  beta_at <- function(z) {
    w <- kw(z)
    solve(crossprod(W, W * w), crossprod(W, w * d$y))
  }
  e2 <- (d$y - sapply(seq_len(n), function(i) sum(W[i, ] * beta_at(d$z[i]))))^2
  zn <- c(0.1, 0.5, 0.9)
  r <- coef(f, data.frame(z = zn), se = TRUE)
  expect_named(r, c("coefficients", "se"))
  for (j in seq_along(zn)) {
    w <- kw(zn[j])
    Mi <- solve(crossprod(W, W * w))
    S <- Mi %*% crossprod(W, W * (w^2 * e2)) %*% Mi
    expect_equal(unname(r$se[j, ]), sqrt(diag(S)), tolerance = 1e-9)
    expect_equal(unname(r$coefficients[j, ]), drop(beta_at(zn[j])), tolerance = 1e-9)
  }
  expect_equal(dim(coef(f, se = TRUE)$se), c(n, 3L))
  expect_error(coef(f, se = NA), "^se: must be TRUE or FALSE")
})
