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
  expect_error(rd_density(x, vce = "bootstrap"), "vce: must be \"jackknife\" or \"plugin\"")
  expect_error(rd_density(x, fitselect = "both"), "fitselect: must be \"unrestricted\"")
  expect_error(rd_density(x, fitselect = "restricted", bwselect = "each"), "'diff', 'sum' or")
  expect_error(rd_density(x, fitselect = "restricted", h = c(0.5, 0.6)), "one bandwidth")
  expect_error(rd_density(x, h = -1), "h:")
  expect_error(rd_density(c(x, Inf)), "infinite")
  expect_error(rd_density(x, bino_p = 2), "bino_p")
  expect_error(rd_density(x, bwselect = "mserd"))
})

test_that("rd_density's plug-in variance and restricted model match rddensity 3.0", {
  # Fixed numbers from Python rddensity 3.0 (PyPI) on the senate margin (93 NA dropped), e.g.
  # rddensity(margin, fitselect="restricted", vce="plugin"): h, T, p-value, densities. The core
  # agrees with it live to ~1e-8 (python-package/tests/test_rd_density_models.py); 1e-6 here.
  data(senate, package = "attnreg", envir = environment())
  x <- senate$margin
  ref <- list(
    list(kw = list(fitselect = "restricted"),
         want = c(19.30709524411338, 19.30709524411338, -1.5186551863036675,
                  0.12884931226732754, 0.020266855360657872, 0.016115179870745115)),
    list(kw = list(fitselect = "restricted", vce = "plugin"),
         want = c(18.753397579587922, 18.753397579587922, -1.476752444979155,
                  0.13974200825133964, 0.020315649956278655, 0.01613002132807084)),
    list(kw = list(vce = "plugin"),
         want = c(20.35133331369507, 27.97507610154157, -0.8610651678545496,
                  0.38920215207050535, 0.021857772608924724, 0.018263388086121424)),
    list(kw = list(fitselect = "restricted", vce = "plugin", h = 15, p = 1),
         want = c(15, 15, -1.2622668321410562, 0.2068527873513879, 0.019146124560745395,
                  0.015230179610852214)))
  for (r in ref) {
    m <- do.call(rd_density, c(list(x), r$kw))
    got <- unname(c(m$h, m$statistic, m$p_value, m$density[c("left", "right")]))
    expect_equal(got, r$want, tolerance = 1e-6)
    expect_equal(m$fitselect, if (is.null(r$kw$fitselect)) "unrestricted" else r$kw$fitselect)
  }
})

test_that("rd_density's restricted densities are the slopes of one weighted lm fit", {
  # One fit over [c - h, c + h]: a common level and u^2, u^3 and a slope per side (Cattaneo,
  # Jansson and Ma 2018, section 2). lm's QR against the core's Cholesky: 1e-9.
  set.seed(5)
  x <- rnorm(1500)
  cc <- 0.3; h <- 0.7
  m <- rd_density(x, c = cc, h = h, fitselect = "restricted", bino_nw = 0)
  xs <- sort(x); n <- length(xs); F <- (seq_len(n) - 1) / (n - 1)
  keep <- xs >= cc - h & xs <= cc + h
  u <- (xs[keep] - cc) / h
  ul <- ifelse(u < 0, u, 0); ur <- ifelse(u >= 0, u, 0)
  b <- coef(lm(F[keep] ~ ul + ur + I(u^2) + I(u^3), weights = (1 - abs(u)) / h))
  expect_equal(unname(m$density[c("left", "right")]), unname(b[c("ul", "ur")]) / h,
               tolerance = 1e-9)
})
