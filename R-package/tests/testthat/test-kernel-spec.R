# The kernel arguments reach the core through the one converter of the R bindings
# (attnreg_r::kernel_spec, bindings/r/r_options.cpp): through every Rcpp entry point that takes
# them, each argument set to a value the computation rejects is rejected naming it, and a
# non-default kernel or categorical kernel changes the numbers. An argument the binding dropped
# (the core's default ran instead) makes the matching expectation fail.

set.seed(20261128)
n <- 60
Z <- cbind(rnorm(n), sample(0:2, n, TRUE), sample(0:3, n, TRUE))
X <- matrix(rnorm(2 * n), n) + 0.3 * Z[, 1]
y <- sin(Z[, 1]) + 0.3 * Z[, 2] - 0.2 * Z[, 3] + drop(X %*% c(1, -0.5)) + rnorm(n, sd = 0.3)
bw <- c(1.5, 0.3, 0.4)
cpp <- function(name) getFromNamespace(name, "attnreg")

# Each path: function(kernel, types, ukertype, okertype, n_threads) -> numbers.
paths <- list(
  kreg = function(k, t, u, o, th) {
    r <- cpp(".kreg_fit_cpp")(Z, matrix(y), bw, numeric(0), 1L, k, t, u, o, 0, "auto", th)
    c(r$fitted, r$loo)
  },
  kbw = function(k, t, u, o, th) {
    cpp(".kbw_cpp")(Z, y, 0L, "cv_ls", k, t, u, o, 0, 1L, 0, 0L, 0L, th, FALSE, numeric(0),
                    "exact", 0L, FALSE)$bw
  },
  kbw_objective = function(k, t, u, o, th) {
    cpp(".kbw_objective_cpp")(Z, y, bw, 1L, "cv_ls", k, t, u, o, 0)$value
  },
  klp_select = function(k, t, u, o, th) {
    cpp(".klp_select_cpp")(Z, y, 2L, "cv_ls", k, t, u, o, 0, th)$bw
  },
  kplm = function(k, t, u, o, th) {
    r <- cpp(".kplm_fit_cpp")(X, y, Z, matrix(bw, 3, 3, byrow = TRUE), 0L, "cv_ls", k, t, u, o, th)
    c(r$coefficients, r$fitted)
  },
  kscoef = function(k, t, u, o, th) {
    cpp(".kscoef_fit_cpp")(X, y, Z, bw, k, t, u, o, TRUE, th)$fitted
  },
  cmstest = function(k, t, u, o, th) {
    r <- cpp(".cms_test_cpp")(X, y, Z, t, k, u, o, bw, 0L, 19L, "mammen", 1, th, 0L)
    c(r$statistic, r$draws)
  }
)

test_that("every kernel argument reaches the core through every Rcpp entry point", {
  for (nm in names(paths)) {
    run <- paths[[nm]]
    r0 <- run("gaussian", "cuo", "aitchisonaitken", "liracine", 0L)
    expect_true(all(is.finite(r0)), info = nm)
    expect_false(identical(run("epanechnikov", "cuo", "aitchisonaitken", "liracine", 0L), r0),
                 info = paste(nm, "kernel"))
    expect_false(identical(run("gaussian", "cuo", "liracine", "liracine", 0L), r0),
                 info = paste(nm, "ukertype"))
    expect_false(identical(run("gaussian", "cuo", "aitchisonaitken", "wangvanryzin", 0L), r0),
                 info = paste(nm, "okertype"))
    expect_error(run("gaussian", "cuz", "aitchisonaitken", "liracine", 0L), "^var_types:",
                 info = nm)
    if (nm != "kbw_objective")
      expect_error(run("gaussian", "cuo", "aitchisonaitken", "liracine", -1L), "^n_threads:",
                   info = nm)
  }
})

test_that("a saved kreg state carries algorithm and truncation to the refit", {
  r <- cpp(".kreg_fit_cpp")(Z, matrix(y), bw, numeric(0), 1L, "gaussian", "cuo",
                            "aitchisonaitken", "liracine", 0, "neighbors", 0L)
  st <- r$state
  expect_identical(st$algorithm, "neighbors")
  st$truncation <- 0  # the Gaussian has no neighbour path without truncation
  expect_error(cpp(".diag_global_cpp")(st, 0L), "^algorithm:")
  st$truncation <- 0.5
  expect_error(cpp(".diag_global_cpp")(st, 0L), "^truncation:")
})
