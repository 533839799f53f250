# attnreg against R np 0.70-4's outputs on np's data (tests/fixtures/np, made by
# tests/fixtures/np/make_np_fixtures.R; attnreg never calls np). The fixtures live in the
# repository, not in the package: skipped where they are absent (an installed package's check).
# Tolerances as python-package/tests/test_np_fixtures.py: fits 1e-12 relative, np's gerr 1e-10
# (both compute the local variance as E[y^2|x] - m(x)^2), conditional distributions 1.2e-7
# absolute (np's Gaussian CDF uses Numerical Recipes' erfcc, fractional error < 1.2e-7).

np_fixture <- function(name) {
  for (dir in c(Sys.getenv("ATTNREG_NP_FIXTURES"), "../../../tests/fixtures/np",
                "tests/fixtures/np")) {
    f <- file.path(dir, name)
    if (nzchar(dir) && file.exists(f)) return(read.csv(f, stringsAsFactors = FALSE))
  }
  skip("np fixtures (tests/fixtures/np) not found")
}
np_bw <- function(case) {
  b <- np_fixture("bandwidths.csv")
  b[b$case == case, ]
}

test_that("kreg lc on cps71 at np's cv.ls bandwidth: fits, gradients and np's gerr", {
  b <- np_bw("cps71_lc_ls")
  f <- np_fixture("cps71_lc_ls.csv")
  cps <- read.csv(system.file("extdata", "cps71.csv", package = "attnreg", mustWork = TRUE))
  m <- kreg(logwage ~ age, data = cps, method = "lc", bw = b$bandwidth)
  nd <- data.frame(age = f$age)
  expect_lt(max(abs(predict(m, nd) / f$mean - 1)), 1e-12)
  est <- gradients(m, newdata = nd)[, 1]
  se <- gradients(m, se = TRUE, newdata = nd, se_method = "np")[, 1]
  expect_lt(max(abs(est - f$grad)), 1e-10 * max(abs(f$grad)))
  expect_lt(max(abs(se / f$gerr - 1)), 1e-10)
})

test_that("kqreg and kcdist on Italy with np's default kernel on ordered(year)", {
  b <- np_bw("italy_cdist_ls")
  it <- read.csv(system.file("extdata", "Italy.csv", package = "attnreg", mustWork = TRUE))
  f <- np_fixture("italy_cdist_ls.csv")
  cf <- kcdist(gdp ~ ordered(year), data = it, bw = b$bandwidth)  # okertype = "liracine"
  nd <- data.frame(year = f$year, gdp = f$gdp)
  expect_lt(max(abs(predict(cf, nd) - f$condist)), 1.2e-7)
  q <- np_fixture("italy_qreg.csv")
  # F at np's quantiles is tau to within np's CDF accuracy
  Fq <- predict(cf, data.frame(year = q$year, gdp = q$quantile))
  expect_lt(max(abs(Fq - q$tau)), 1.2e-7 + 1e-12)
  kq <- kqreg(gdp ~ ordered(year), data = it, bw = b$bandwidth, tau = 0.5)
  med <- q[q$tau == 0.5, ]
  got <- as.matrix(predict(kq, data.frame(year = med$year), tau = 0.5))[, 1]
  expect_lt(max(abs(got / med$quantile - 1)), 1e-5)
})

test_that("one default per kernel option, np's (the normalised form on a density's variable)", {
  ns <- asNamespace("attnreg")
  seen <- 0L
  for (f in getNamespaceExports("attnreg")) {
    fn <- get(f, envir = ns)
    if (!is.function(fn)) next
    a <- formals(fn)
    if (!is.null(a$ukertype)) {
      expect_identical(a$ukertype, "aitchisonaitken", info = f)
      seen <- seen + 1L
    }
    if (!is.null(a$okertype)) {
      expect_identical(a$okertype, if (f == "kdens") "nliracine" else "liracine", info = f)
      seen <- seen + 1L
    }
    if (!is.null(a$oykertype)) expect_identical(a$oykertype, "nliracine", info = f)
  }
  expect_gt(seen, 10L)
})

# np's defaults on ordered variables (section 6 of the generator): np's okertype = "liracine"
# is its normalised Li-Racine kernel on a density's own variable, attnreg's "nliracine". The R
# face codes an ordered factor by its level positions, which equal np's codes up to a shift
# when the levels are consecutive integers (Italy's years; the simulated xo and yo): only those
# cases are run here (python-package/tests/test_np_fixtures.py runs the others).
test_that("kdens on Italy's gdp and ordered(year) at np's bandwidths, np's default kernel", {
  it <- read.csv(system.file("extdata", "Italy.csv", package = "attnreg", mustWork = TRUE))
  for (crit in c("ml", "ls")) {
    b <- np_bw(paste0("italy_udens_", crit))
    f <- np_fixture(paste0("italy_udens_", crit, ".csv"))
    d <- kdens(~ gdp + ordered(year), data = it, bw = b$bandwidth)
    expect_identical(d$okertype, "nliracine")
    p <- predict(d, data.frame(gdp = f$gdp, year = f$year))
    expect_lt(max(abs(p / f$dens - 1)), 1e-12)
  }
  expect_error(kdens(~ gdp + ordered(year), data = it, bw = b$bandwidth, okertype = "liracine"),
               "^ordered_kernel: .*use li_racine_normalized")
})

test_that("kcdens and kcdist with an ordered response at np's bandwidths", {
  sim <- np_fixture("sim_ordered.csv")
  sim$xo <- ordered(sim$xo)
  sim$yo <- ordered(sim$yo)
  for (case in c("sim_cdens_ml", "sim_cdens_ls", "sim_cdens_fixed", "sim_cdist_ls",
                 "sim_cdist_fixed")) {
    b <- np_bw(case)
    f <- np_fixture(paste0(case, ".csv"))
    f <- f[f$yo %in% levels(sim$yo), ]  # the R face refuses levels never seen in the fit
    bw <- b$bandwidth[match(c("xo", "z", "yo"), b$variable)]
    fit <- if (grepl("cdens", case)) kcdens(yo ~ xo + z, data = sim, bw = bw)
           else kcdist(yo ~ xo + z, data = sim, bw = bw)
    expect_identical(fit$oykertype, "nliracine")
    nd <- data.frame(xo = f$xo, z = f$z, yo = f$yo)
    p <- predict(fit, nd)
    expect_lt(max(abs(p - f$value) / pmax(abs(f$value), 1e-300)), 1e-12, label = case)
  }
})
