# diagnose(vcov = "nn"): nprobust's nearest-neighbour residual variance (3 neighbours) against a
# direct oracle.

nn_sigma2 <- function(x, y, J = 3) {
  vapply(seq_along(x), function(i) {
    d <- abs(x - x[i])
    d[i] <- Inf
    nb <- d <= sort(d)[min(J, length(x) - 1)]
    sum(nb) / (sum(nb) + 1) * (y[i] - mean(y[nb]))^2
  }, numeric(1))
}

test_that("kind = 'nn' standard errors use nearest-neighbour residuals", {
  set.seed(3)
  d <- data.frame(x = round(runif(90) * 15) / 15)
  d$y <- cos(4 * d$x) + (0.1 + 0.3 * d$x) * rnorm(90)
  fit <- kreg(y ~ x, data = d, bw = 0.15)
  nd <- data.frame(x = c(0.2, 0.5, 0.8))
  dg <- diagnose(fit, nd, vcov = "nn")
  L <- attention_weights(fit, nd)
  expect_equal(unname(dg$se), unname(sqrt(drop(L^2 %*% nn_sigma2(d$x, d$y)))),
               tolerance = 1e-12)
})

test_that("vcov = 'nn' with two regressors: neighbours by scaled Euclidean distance", {
  # Gaussian kernel: every row is in every point's window, so omega is one vector.
  set.seed(4)
  d <- data.frame(x = round(runif(90) * 15) / 15, z = runif(90))
  d$y <- cos(4 * d$x) + d$z + 0.2 * rnorm(90)
  h <- c(0.2, 0.3)
  fit <- kreg(y ~ x + z, data = d, bw = h)
  nn2 <- vapply(seq_len(90), function(i) {
    d2 <- ((d$x - d$x[i]) / h[1])^2 + ((d$z - d$z[i]) / h[2])^2
    d2[i] <- Inf
    nb <- d2 <= sort(d2)[3]
    sum(nb) / (sum(nb) + 1) * (d$y[i] - mean(d$y[nb]))^2
  }, numeric(1))
  nd <- d[1:3, c("x", "z")]
  dg <- diagnose(fit, nd, vcov = "nn")
  L <- attention_weights(fit, nd)
  expect_equal(unname(dg$se), unname(sqrt(drop(L^2 %*% nn2))), tolerance = 1e-10)
})
