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
  d$z <- runif(90)
  fit2 <- kreg(y ~ x + z, data = d, bw = c(0.2, 0.3))
  expect_error(diagnose(fit2, d[1:2, ], vcov = "nn"), "one continuous regressor")
})
