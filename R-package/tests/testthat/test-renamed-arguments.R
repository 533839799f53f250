# The inference vocabulary's renames (NEWS.md, "Renamed arguments"): each old argument still
# works for one release with a deprecation warning naming the old and the new one, gives the
# result of the new argument exactly, and giving both is an error.

set.seed(11)
d <- data.frame(x = runif(120))
d$y <- sin(2 * pi * d$x) + rnorm(120, sd = 0.3)
f <- kreg(y ~ x, data = d, bw = 0.1)
nd <- data.frame(x = c(0.1, 0.5, 0.9))

check_renamed <- function(call_new, call_old, call_both, old, new) {
  ref <- call_new()
  expect_warning(got <- call_old(), sprintf("'%s' is deprecated.*use '%s'", old, new))
  expect_identical(got, ref)
  expect_error(call_both(), sprintf("got both '%s' \\(deprecated\\) and '%s'", old, new))
}

test_that("diagnose, predict, plug-in bandwidths, tradeoff: kind -> vcov", {
  check_renamed(function() diagnose(f, nd, vcov = "HC2"), function() diagnose(f, nd, kind = "hc2"),
                function() diagnose(f, nd, kind = "hc2", vcov = "HC2"), "kind", "vcov")
  expect_identical(diagnose(f, nd, vcov = "nonrobust"), diagnose(f, nd, vcov = "const"))
  check_renamed(function() predict(f, nd, se.fit = TRUE, vcov = "HC1"),
                function() predict(f, nd, se.fit = TRUE, kind = "hc1"),
                function() predict(f, nd, se.fit = TRUE, kind = "hc1", vcov = "HC1"), "kind",
                "vcov")
  check_renamed(function() mse_dpi(d$x, d$y, vcov = "hc1"), function() mse_dpi(d$x, d$y, kind = "hc1"),
                function() mse_dpi(d$x, d$y, kind = "hc1", vcov = "hc1"), "kind", "vcov")
  check_renamed(function() imse_dpi(d$x, d$y, vcov = "nn"), function() imse_dpi(d$x, d$y, kind = "nn"),
                function() imse_dpi(d$x, d$y, kind = "nn", vcov = "nn"), "kind", "vcov")
  check_renamed(function() tradeoff(d$x, d$y, c(0.05, 0.1), vcov = "HC3"),
                function() tradeoff(d$x, d$y, c(0.05, 0.1), kind = "hc3"),
                function() tradeoff(d$x, d$y, c(0.05, 0.1), kind = "hc3", vcov = "HC3"),
                "kind", "vcov")
})

test_that("bootstrap_bands: type -> bootstrap, kind -> vcov", {
  check_renamed(function() bootstrap_bands(f, nd, R = 49, bootstrap = "mammen", seed = 2),
                function() bootstrap_bands(f, nd, R = 49, type = "mammen", seed = 2),
                function() bootstrap_bands(f, nd, R = 49, type = "mammen", bootstrap = "mammen"),
                "type", "bootstrap")
  check_renamed(function() bootstrap_bands(f, nd, R = 49, vcov = "HC1", seed = 2),
                function() bootstrap_bands(f, nd, R = 49, kind = "hc1", seed = 2),
                function() bootstrap_bands(f, nd, R = 49, kind = "hc1", vcov = "HC1"),
                "kind", "vcov")
})

test_that("gradients: n_boot -> R", {
  check_renamed(function() gradients(f, average = TRUE, se_method = "bootstrap", R = 29, seed = 3),
                function() gradients(f, average = TRUE, se_method = "bootstrap", n_boot = 29, seed = 3),
                function() gradients(f, average = TRUE, se_method = "bootstrap", n_boot = 29, R = 29),
                "n_boot", "R")
})

test_that("vcov(type =) -> vcov(vcov =) for OLS, ridge and PCR", {
  fits <- list(ols_attention(mpg ~ wt + hp, data = mtcars),
               ridge_attention(mpg ~ wt + hp, data = mtcars, lambda = 2),
               pcr_attention(mpg ~ wt + hp, data = mtcars, rank = 1))
  for (fit in fits) {
    check_renamed(function() vcov(fit, vcov = "HC3"), function() vcov(fit, type = "HC3"),
                  function() vcov(fit, type = "HC3", vcov = "HC3"), "type", "vcov")
  }
})
