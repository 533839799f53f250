# rd_plot: the same core as Python attnreg.rd.rdplot (checked there against rdrobust 2.1.1's
# rdplot); here the R face against direct computations in R and the bad-input policy.

sim_rd <- function(n, seed, c = 0) {
  set.seed(seed)
  x <- c + 2 * rbeta(n, 2, 3) - 0.8
  y <- 1 + 2 * (x - c) - 1.5 * (x - c)^2 + 0.8 * (x >= c) + rnorm(n, 0, 0.5)
  list(x = x, y = y)
}

test_that("rd_plot bins are the means of [e_j, e_j+1) and the fit is lm's", {
  d <- sim_rd(400, 1, c = 2)
  w <- runif(400, 0.5, 2)
  r <- rd_plot(d$y, d$x, c = 2, p = 3, nbins = c(6, 9), weights = w, hide = TRUE)
  expect_equal(unname(r$J), c(6, 9))
  for (s in c("left", "right")) {
    m <- if (s == "left") d$x < 2 else d$x >= 2
    b <- r$bins[r$bins$side == s, ]
    e <- c(b$left_edge, b$right_edge[nrow(b)])
    idx <- findInterval(d$x[m], e, rightmost.closed = TRUE)
    expect_equal(b$n, tabulate(idx, nbins = nrow(b)))
    ok <- b$n > 0
    expect_equal(b$mean_y[ok], as.vector(tapply(d$y[m], idx, mean)), tolerance = 1e-12)
    fit <- lm(d$y[m] ~ poly(d$x[m] - 2, 3, raw = TRUE), weights = w[m])
    expect_equal(unname(r$coef[, s]), unname(coef(fit)), tolerance = 1e-9)
  }
})

test_that("rd_plot selects the numbers of bins of the es rule by hand", {
  d <- sim_rd(500, 11)
  r <- rd_plot(d$y, d$x, binselect = "es", hide = TRUE)
  n <- length(d$x)
  m <- d$x < 0
  o <- order(d$x[m])
  xl <- d$x[m][o]; yl <- d$y[m][o]
  b <- coef(lm(yl ~ poly(xl, 4, raw = TRUE)))
  d1 <- b[2] + 2 * b[3] * xl + 3 * b[4] * xl^2 + 4 * b[5] * xl^3
  rl <- -min(d$x)
  B <- rl^2 / (12 * n) * sum(d1^2)
  V <- 0.5 / rl * sum(diff(xl) * diff(yl)^2)
  expect_equal(r$J[["left"]], ceiling((2 * B / V * n)^(1 / 3)))
  expect_equal(r$J_mv[["left"]], ceiling(var(yl) / V * n / log(n)^2))
})

test_that("rd_plot on the senate data matches the Python face's rdrobust-checked numbers", {
  data(senate, package = "attnreg", envir = environment())
  expect_equal(dim(senate), c(1390L, 17L))
  r <- rd_plot(senate$vote, senate$margin, hide = TRUE)
  expect_s3_class(r, "rd_plot")
  expect_equal(r$n_dropped, 93)
  expect_equal(unname(r$n), c(595, 702))
  expect_equal(r$binselect, "esmv")
  expect_equal(unname(r$J), c(15, 35))  # rdrobust 2.1.1 rdplot: J = (15, 35)
  expect_output(print(r), "esmv")
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  expect_silent(plot(r, ci = TRUE))
  grDevices::dev.off()
  expect_true(file.exists(f))
})

test_that("rd_plot refuses bad input with the argument's name", {
  d <- sim_rd(100, 2)
  expect_error(rd_plot(d$y, d$x, binselect = "foo", hide = TRUE), "arg")
  expect_error(rd_plot(d$y, d$x, c = 50, hide = TRUE), "c: ")
  expect_error(rd_plot(d$y, d$x, weights = -rep(1, 100), hide = TRUE), "weights")
  expect_error(rd_plot(d$y, d$x, level = 95, hide = TRUE), "fraction")
  expect_error(rd_plot(d$y, d$x, nbins = 2.5, hide = TRUE), "nbins")
  x <- d$x; x[3] <- Inf
  expect_error(rd_plot(d$y, x, hide = TRUE), "infinite")
})

test_that("rd_plot with covariates: one lm for both sides, bins from lm on bin indicators", {
  set.seed(21)
  n <- 500
  c0 <- 2
  x <- c0 + 2 * rbeta(n, 2, 3) - 0.8
  z <- cbind(income = rnorm(n) + 0.5 * (x - c0), age = runif(n))
  y <- 1 + 2 * (x - c0) - (x - c0)^2 + 0.8 * (x >= c0) + z %*% c(1, -0.5) + rnorm(n, 0, 0.5)
  y <- as.vector(y)
  for (ev in list("mean", 0)) {
    r <- rd_plot(y, x, c = c0, p = 2, covs = as.data.frame(z), covs_eval = ev, hide = TRUE)
    zeval <- if (identical(ev, "mean")) colMeans(z) else c(0, 0)
    expect_equal(names(r$coef_covs), c("income", "age"))
    L <- as.numeric(x < c0)
    u <- x - c0
    # weights K_h = K(u / h) / h: the sides weigh 1 / h_side (uniform kernel, h = the range)
    wk <- ifelse(L == 1, 1 / (c0 - min(x)), 1 / (max(x) - c0))
    fit <- lm(y ~ 0 + L + I(L * u) + I(L * u^2) + I((1 - L)) + I((1 - L) * u) +
                I((1 - L) * u^2) + z, weights = wk)
    b <- unname(coef(fit))
    expect_equal(unname(r$coef_covs), b[7:8], tolerance = 1e-9)
    expect_equal(unname(r$coef[, "left"]), b[1:3], tolerance = 1e-9)
    expect_equal(unname(r$coef[, "right"]), b[4:6], tolerance = 1e-9)
    cl <- r$curve[r$curve$side == "left", ]
    expect_equal(cl$y, b[1] + b[2] * (cl$x - c0) + b[3] * (cl$x - c0)^2 + sum(zeval * b[7:8]),
                 tolerance = 1e-9)
    # bins: y on every bin indicator (both sides) and z
    bin <- integer(n)
    for (s in c("left", "right")) {
      m <- if (s == "left") x < c0 else x >= c0
      bb <- r$bins[r$bins$side == s, ]
      e <- c(bb$left_edge, bb$right_edge[nrow(bb)])
      bin[m] <- as.integer(rownames(bb))[findInterval(x[m], e, rightmost.closed = TRUE,
                                                       all.inside = TRUE)]
    }
    fb <- lm(y ~ 0 + factor(bin) + z)
    cb <- coef(fb)
    nb <- length(unique(bin))
    expect_equal(unname(r$coef_covs_bins), unname(cb[nb + 1:2]), tolerance = 1e-9)
    ok <- r$bins$n > 0
    expect_equal(r$bins$mean_y[ok], unname(cb[1:nb]) + sum(zeval * cb[nb + 1:2]),
                 tolerance = 1e-9)
    expect_equal(r$bins$mean_y_unadjusted[ok], as.vector(tapply(y, bin, mean)),
                 tolerance = 1e-12)
  }
})

test_that("rd_plot covariates: collinear dropped with a warning, NA rows dropped, bad input", {
  set.seed(22)
  n <- 400
  x <- runif(n, -1, 1)
  z <- cbind(a = rnorm(n), b = rnorm(n))
  y <- x + z[, 1] + rnorm(n)
  zz <- cbind(z, a_plus_b = z[, 1] + z[, 2])
  expect_warning(r <- rd_plot(y, x, covs = zz, hide = TRUE),
                 "dropped collinear covariates: a_plus_b")
  expect_equal(r$covs_dropped, "a_plus_b")
  ref <- rd_plot(y, x, covs = z, hide = TRUE)
  expect_equal(r$coef_covs, ref$coef_covs)
  expect_error(rd_plot(y, x, covs = zz, covs_drop = FALSE, hide = TRUE),
               "'a_plus_b' collinear with earlier covariates")
  expect_error(rd_plot(y, x, covs = cbind(z, side = as.numeric(x >= 0)), hide = TRUE),
               "'side' is a polynomial")
  expect_error(rd_plot(y, x, covs = z, covs_eval = "median", hide = TRUE), "covs_eval")
  expect_error(rd_plot(y, x, covs = z[-1, ], hide = TRUE), "one row per observation")
  z2 <- z
  z2[c(3, 9), 2] <- NA
  r2 <- rd_plot(y, x, covs = z2, hide = TRUE)
  expect_equal(r2$n_dropped, 2)
  r3 <- rd_plot(y[-c(3, 9)], x[-c(3, 9)], covs = z[-c(3, 9), ], hide = TRUE)
  expect_equal(r2$bins, r3$bins)
  expect_output(print(r2), "covariate-adjusted")
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  expect_silent(plot(r2, ci = TRUE))
  grDevices::dev.off()
  expect_true(file.exists(f))
})
