# rd_robust / rd_bwselect: the R face of attnreg.rd. The agreement with rdrobust 2.1.1 is tested
# live in python-package/tests/test_rd.py (same core); here: a direct weighted least-squares
# oracle of the two one-sided fits (lm with weights), the weights identity, the selectors and
# the bad-input messages.

rd_sim <- function(n = 800, seed = 1) {
  set.seed(seed)
  x <- runif(n, -1, 1)
  y <- 1 + 0.8 * x - 0.5 * x^2 + 0.6 * (x >= 0) + rnorm(n, sd = 0.3)
  list(x = x, y = y)
}

test_that("rd_robust's conventional estimate is the difference of two weighted lm fits", {
  d <- rd_sim()
  h <- 0.5
  fit <- rd_robust(d$y, d$x, h = h, b = 0.8)
  side <- function(s) {
    k <- pmax(1 - abs(d$x / h), 0) / h
    keep <- s & k > 0
    unname(coef(lm(d$y[keep] ~ d$x[keep], weights = k[keep]))[1])
  }
  ref <- side(d$x >= 0) - side(d$x < 0)
  # lm's QR and the core's Cholesky of a 2 x 2 Gram (condition < 1e3): agreement to 1e-10.
  expect_equal(fit$table["conventional", "coef"], ref, tolerance = 1e-10)
  expect_equal(sum(attention_weights(fit) * d$y), ref, tolerance = 1e-10)
  expect_true(all(attention_weights(fit)[abs(d$x) > 0.8] == 0))
  expect_equal(unname(fit$bandwidths), c(h, h, 0.8, 0.8))
})

test_that("rd_robust drops incomplete rows, selects bandwidths and clusters", {
  d <- rd_sim(seed = 2)
  y <- d$y
  y[c(3, 10)] <- NA
  fit <- rd_robust(y, d$x)
  expect_equal(fit$n_dropped, 2)
  expect_equal(attention_weights(fit)[c(3, 10)], c(0, 0))
  expect_equal(sum(attention_weights(fit) * ifelse(is.na(y), 0, y)),
               fit$table["conventional", "coef"], tolerance = 1e-10)
  bw <- rd_bwselect(y, d$x, all = TRUE)
  expect_equal(rownames(bw), c("mserd", "msetwo", "msesum", "msecomb1", "msecomb2", "cerrd",
                               "certwo", "cersum", "cercomb1", "cercomb2"))
  expect_equal(unname(bw["mserd", ]), unname(fit$bandwidths), tolerance = 1e-12)
  cl <- rd_robust(y, d$x, cluster = rep(1:40, length.out = length(y)))
  expect_equal(cl$vce, "cr1")
  expect_true(is.finite(cl$table["robust", "se"]))
  # CR2/CR3 (formulas in the core; the Python tests compare them with rdrobust and a direct
  # oracle): hc2 with clusters is cr2, as rdrobust maps it; cr2 without clusters is an error.
  ids <- rep(1:40, length.out = length(y))
  c2 <- rd_robust(y, d$x, cluster = ids, vce = "hc2")
  expect_equal(c2$vce, "cr2")
  expect_equal(c2$table, rd_robust(y, d$x, cluster = ids, vce = "cr2")$table)
  c3 <- rd_robust(y, d$x, cluster = ids, vce = "cr3")
  expect_equal(c3$vce, "cr3")
  expect_false(isTRUE(all.equal(c3$table[, "se"], c2$table[, "se"])))
  expect_error(rd_robust(y, d$x, vce = "cr2"), "vce: .*need cluster ids")
})

test_that("rd_robust refuses bad input with messages naming the argument", {
  d <- rd_sim(seed = 3)
  expect_error(rd_robust(d$y, d$x, level = 95), "level is a fraction")
  expect_error(rd_robust(d$y, d$x, c = 5), "c: the cutoff")
  expect_error(rd_robust(d$y, d$x, p = 2, q = 2), "q: must be greater than p")
  expect_error(rd_robust(d$y, d$x, weights = c(-1, rep(1, length(d$x) - 1))), "weights: negative")
  expect_error(rd_robust(d$y, replace(d$x, 4, Inf)), "x: infinite value at row 4")
  expect_error(rd_robust(d$y, d$x, covs = cbind(a = 2 * d$x)), "collinear with the running")
  expect_error(rd_robust(d$y, d$x, fuzzy = rep(1, length(d$x))), "no variation")
})

test_that("rd_density's densities are the slopes of two weighted lm fits of the ECDF", {
  # Cattaneo, Jansson and Ma (2020): regress F_i = (i - 1)/(n - 1) at the sorted x on a cubic in
  # (x - c)/h with triangular weights per side; the slope / h is the density at c. lm's QR and
  # the core's Cholesky of a 4 x 4 Gram in bandwidth units (condition < 1e4): 1e-9.
  set.seed(3)
  x <- rexp(800)
  cc <- 0.7; h <- 0.5
  m <- rd_density(x, c = cc, h = h)
  xs <- sort(x); n <- length(xs); F <- (seq_len(n) - 1) / (n - 1)
  for (side in c("left", "right")) {
    keep <- if (side == "left") xs < cc & xs >= cc - h else xs >= cc & xs <= cc + h
    u <- (xs[keep] - cc) / h
    b <- coef(lm(F[keep] ~ u + I(u^2) + I(u^3), weights = (1 - abs(u)) / h))
    expect_equal(unname(m$density[side]), unname(b[2]) / h, tolerance = 1e-9)
  }
  expect_equal(unname(m$h), c(h, h))
  expect_null(m$bandwidths)
  expect_equal(m$statistic, unname(m$density["diff"] / m$se["diff"]), tolerance = 1e-12)
  expect_equal(m$p_value, 2 * pnorm(-abs(m$statistic)), tolerance = 1e-10)
})

test_that("rd_density selects bandwidths, drops NA and runs binomial tests by R's rule", {
  set.seed(4)
  x <- c(rnorm(3000, 0.2), NA, NA)
  m <- rd_density(x)
  expect_equal(m$n_dropped, 2)
  expect_equal(m$bwselect, "comb")
  tab <- m$bandwidths
  expect_equal(unname(m$h["left"]), median(tab[c("left", "diff", "sum"), "bandwidth"]))
  expect_equal(unname(m$h["right"]), median(tab[c("right", "diff", "sum"), "bandwidth"]))
  xx <- x[!is.na(x)]
  XL <- sort(abs(xx[xx < 0])); XR <- sort(xx[xx >= 0])
  b <- m$binomial
  expect_equal(b$w_left[1], max(XL[20], XR[20]))
  for (j in seq_len(nrow(b))) {
    nl <- sum(XL <= b$w_left[j]); nr <- sum(XR <= b$w_right[j])
    expect_equal(c(b$n_left[j], b$n_right[j]), c(nl, nr))
    expect_equal(b$p_value[j], binom.test(nl, nl + nr, 0.5)$p.value, tolerance = 1e-9)
  }
  manip <- c(xx, runif(1500, 0, 1))
  expect_lt(rd_density(manip)$p_value, 1e-3)
})

test_that("rd_density refuses bad input with a message naming the argument", {
  x <- seq(-1, 1, length.out = 200)
  expect_error(rd_density(x, c = 5), "c:")
  expect_error(rd_density(x, p = 0), "p:")
  expect_error(rd_density(x, vce = "plugin"), "jackknife")
  expect_error(rd_density(x, h = -1), "h:")
  expect_error(rd_density(c(x, Inf)), "infinite")
  expect_error(rd_density(x, bino_p = 2), "bino_p")
  expect_error(rd_density(x, bwselect = "mserd"))
})
