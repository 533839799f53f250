extdata <- function(...) system.file("extdata", ..., package = "attnreg", mustWork = TRUE)

test_that("ols_attention matches lm on random designs of several shapes", {
  for (s in 1:4) {
    set.seed(s)
    n <- c(12, 40, 200, 7)[s]; p <- c(1, 3, 6, 2)[s]
    d <- as.data.frame(matrix(rnorm(n * p, 2, 3), n, p))
    d$y <- rnorm(n) + as.matrix(d) %*% seq_len(p)
    f <- ols_attention(y ~ ., data = d)
    l <- lm(y ~ ., data = d)
    expect_equal(coef(f), coef(l), tolerance = 1e-10)
    expect_equal(unname(f$std_errors), unname(coef(summary(l))[, 2]), tolerance = 1e-10)
    expect_equal(f$sigma, summary(l)$sigma, tolerance = 1e-12)
    expect_equal(summary(f)$r.squared, summary(l)$r.squared, tolerance = 1e-12)
    expect_equal(vcov(f), vcov(l), tolerance = 1e-10)
    nd <- d[seq_len(min(n, 3)), ]
    A <- attention_weights(f, nd)
    expect_equal(dim(A), c(nrow(nd), n))
    expect_equal(unname(rowSums(A)), rep(1, nrow(nd)), tolerance = 1e-12)
    expect_equal(unname(drop(A %*% d$y)), unname(predict(f, nd)), tolerance = 1e-10)
    expect_equal(unname(predict(f, nd)), unname(predict(l, nd)), tolerance = 1e-10)
  }
})

test_that("factors, no-intercept models and NA handling follow lm", {
  d <- transform(mtcars, cyl = factor(cyl))
  d$hp[3] <- NA
  f <- ols_attention(mpg ~ wt + hp + cyl, data = d)
  l <- lm(mpg ~ wt + hp + cyl, data = d)
  expect_equal(coef(f), coef(l), tolerance = 1e-10)
  expect_equal(residuals(f), residuals(l), tolerance = 1e-10)
  expect_equal(nobs(f), 31L)
  f0 <- ols_attention(mpg ~ wt - 1, data = mtcars)
  expect_equal(coef(f0), coef(lm(mpg ~ wt - 1, data = mtcars)), tolerance = 1e-12)
  A0 <- attention_weights(f0, mtcars[1:3, ])
  expect_equal(unname(drop(A0 %*% mtcars$mpg)), unname(predict(f0, mtcars[1:3, ])),
               tolerance = 1e-12)
  expect_error(predict(f, data.frame(wt = 3, hp = NA, cyl = "4")), "newdata: contains missing")
})

test_that("NIST StRD Longley certified values are reproduced", {
  d <- read.csv(extdata("nist", "Longley.csv"))
  cert <- read.csv(extdata("nist", "Longley_certified.csv"))
  f <- ols_attention(y ~ ., data = d)
  lre <- function(est, cert) pmin(15, -log10(abs(est - cert) / abs(cert)))
  expect_true(all(lre(unname(coef(f)), cert$estimate) > 11))
  expect_true(all(lre(unname(f$std_errors), cert$std_error) > 11))
})

test_that("rank-deficient designs are aliased like lm, never silently wrong", {
  set.seed(1)
  d <- data.frame(a = rnorm(20), b = rnorm(20))
  d$c <- d$a + d$b
  d$y <- rnorm(20)
  expect_warning(f <- ols_attention(y ~ a + b + c, data = d), "aliased")
  expect_equal(sum(is.na(coef(f))), 1L)
  expect_equal(f$rank, 3)
  l <- lm(y ~ a + b + c, data = d)
  expect_equal(unname(fitted(f)), unname(fitted(l)), tolerance = 1e-10)
})

test_that("bad input gives clear errors", {
  d <- data.frame(x = c(1, 2, Inf, 4), y = c(1, 2, 3, 4))
  expect_error(ols_attention(y ~ x, data = d), "X: contains Inf at row 3")
  expect_error(ols_attention(~ x, data = d), "formula: needs a response")
  f <- ols_attention(mpg ~ wt, data = mtcars)
  expect_error(attention_weights(f), "newdata")
  info <- attnreg_build_info()
  expect_true(is.character(info$version) && is.logical(info$cuda_compiled))
})
