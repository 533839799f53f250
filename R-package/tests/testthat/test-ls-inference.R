# logLik / AIC / BIC / anova against lm, model frames that do not re-evaluate the call,
# confint methods and kreg's refusal of interaction terms.

test_that("logLik, AIC and BIC equal lm's", {
  d <- transform(mtcars, cyl = factor(cyl))
  d$hp[4] <- NA
  forms <- list(mpg ~ wt, mpg ~ wt + hp + cyl, mpg ~ wt + I(wt^2) - 1, log(mpg) ~ poly(disp, 3))
  for (f in forms) {
    fit <- ols_attention(f, data = d)
    l <- lm(f, data = d)
    expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(l)), tolerance = 1e-10)
    expect_identical(attr(logLik(fit), "df"), attr(logLik(l), "df"))
    expect_identical(attr(logLik(fit), "nobs"), attr(logLik(l), "nobs"))
    expect_equal(AIC(fit), AIC(l), tolerance = 1e-10)
    expect_equal(BIC(fit), BIC(l), tolerance = 1e-10)
  }
  for (s in 1:3) {
    set.seed(s)
    n <- c(9, 60, 400)[s]
    x <- matrix(rnorm(n * 3), n, 3) * c(1, 1e3, 1e-3)[s]
    y <- drop(x %*% c(1, -1, 2)) + rnorm(n)
    dd <- data.frame(y = y, x)
    expect_equal(as.numeric(logLik(ols_attention(y ~ ., dd))), as.numeric(logLik(lm(y ~ ., dd))),
                 tolerance = 1e-10)
  }
  # rank-deficient: df counts the estimated (non-aliased) coefficients, as lm
  d2 <- transform(mtcars, wt2 = 2 * wt)
  fit2 <- suppressWarnings(ols_attention(mpg ~ wt + wt2 + hp, data = d2))
  l2 <- lm(mpg ~ wt + wt2 + hp, data = d2)
  expect_identical(attr(logLik(fit2), "df"), attr(logLik(l2), "df"))
  expect_equal(AIC(fit2), AIC(l2), tolerance = 1e-10)
  # several models at once, as AIC(lm1, lm2)
  a <- AIC(ols_attention(mpg ~ wt, mtcars), ols_attention(mpg ~ wt + hp, mtcars))
  b <- AIC(lm(mpg ~ wt, mtcars), lm(mpg ~ wt + hp, mtcars))
  expect_equal(a$AIC, b$AIC, tolerance = 1e-10)
  expect_equal(a$df, b$df)
  expect_error(logLik(ols_attention(mpg ~ wt, mtcars), REML = TRUE), "REML: restricted")
  expect_error(logLik(ols_attention(cbind(mpg, qsec) ~ wt, mtcars)), "single response")
})

test_that("anova of nested fits equals anova.lm", {
  d <- transform(mtcars, cyl = factor(cyl))
  m1 <- ols_attention(mpg ~ wt, data = d)
  m2 <- ols_attention(mpg ~ wt + hp, data = d)
  m3 <- ols_attention(mpg ~ wt + hp + cyl + wt:hp, data = d)
  l1 <- lm(mpg ~ wt, data = d); l2 <- lm(mpg ~ wt + hp, data = d)
  l3 <- lm(mpg ~ wt + hp + cyl + wt:hp, data = d)
  a <- anova(m1, m2, m3)
  b <- anova(l1, l2, l3)
  expect_s3_class(a, "anova")
  expect_identical(names(a), names(b))
  expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-10)
  expect_equal(as.matrix(anova(m1, m3)), as.matrix(anova(l1, l3)), tolerance = 1e-10)
  # larger model first: negative differences, as anova.lm
  expect_equal(as.matrix(anova(m3, m1)), as.matrix(anova(l3, l1)), tolerance = 1e-10)
  expect_output(print(a), "Analysis of Variance Table")
  expect_output(print(a), "Model 2: mpg ~ wt \\+ hp")
  # one model: sequential sums of squares, as anova(lm)
  for (f in list(mpg ~ wt + hp + cyl + wt:hp, mpg ~ cyl + wt - 1, log(mpg) ~ poly(disp, 2) + am)) {
    expect_equal(as.matrix(anova(ols_attention(f, data = d))), as.matrix(anova(lm(f, data = d))),
                 tolerance = 1e-10)
    expect_identical(rownames(anova(ols_attention(f, data = d))), rownames(anova(lm(f, data = d))))
  }
  # an aliased term is left out, as lm does
  d2 <- transform(d, wt2 = 2 * wt)
  a2 <- anova(suppressWarnings(ols_attention(mpg ~ wt + hp + wt2, data = d2)))
  expect_equal(as.matrix(a2), as.matrix(anova(lm(mpg ~ wt + hp + wt2, data = d2))), tolerance = 1e-10)
  expect_output(print(anova(m3)), "Response: mpg")
  expect_error(anova(m1, lm(mpg ~ wt, d)), "argument 2 is not an ols_attention fit")
  expect_error(anova(m2, ols_attention(mpg ~ wt + qsec, data = d)), "not nested")
  expect_error(anova(m1, ols_attention(qsec ~ wt + hp, data = d)), "different response")
  dm <- d; dm$hp[1] <- NA
  expect_error(anova(m1, ols_attention(mpg ~ wt + hp, data = dm)), "different numbers of observations")
})

test_that("model.frame and model.matrix work when the data lived only inside a function", {
  fit_in_function <- function(fitter, ...) {
    local_data <- data.frame(wage = exp(rnorm(30)), educ = runif(30, 8, 18),
                             region = gl(3, 10, labels = c("n", "s", "w")))
    fitter(log(wage) ~ educ + I(educ^2) + region, data = local_data, ...)
  }
  set.seed(1)
  f <- fit_in_function(ols_attention)
  set.seed(1)
  l <- fit_in_function(lm)
  expect_equal(model.matrix(f), model.matrix(l))
  expect_equal(model.frame(f), model.frame(l), ignore_attr = TRUE)
  expect_identical(colnames(model.matrix(f)), names(coef(f)))
  set.seed(1)
  r <- fit_in_function(ridge_attention, lambda = 1)
  expect_equal(model.matrix(r), model.matrix(l))
  set.seed(1)
  p <- fit_in_function(pcr_attention, rank = 2)
  expect_equal(model.matrix(p), model.matrix(l))
  # predict() without newdata and confint() still work there too
  expect_equal(unname(predict(f, interval = "confidence")), unname(predict(l, interval = "confidence")),
               tolerance = 1e-10)
  expect_equal(unname(confint(f)), unname(confint(l)), tolerance = 1e-10)
})

test_that("confint of shrinkage, attention and kernel fits explains why there is none", {
  expect_error(confint(ridge_attention(mpg ~ wt + hp, mtcars, lambda = 1)),
               "ridge coefficients are shrunk.*ols_attention")
  expect_error(confint(pcr_attention(mpg ~ wt + hp, mtcars, rank = 1)),
               "keeps 1 component.*ols_attention")
  k <- kreg(mpg ~ wt, data = mtcars, bw = 0.5)
  expect_error(confint(k), "no coefficients.*interval = \"confidence\"")
})

test_that("kreg and kbw refuse interaction terms, naming them", {
  d <- transform(mtcars, cyl = factor(cyl))
  expect_error(kreg(mpg ~ wt * hp, data = d, bw = c(1, 50)),
               "interaction term 'wt:hp' cannot be used in a kernel regression.*mpg ~ wt \\+ hp")
  expect_error(kreg(mpg ~ wt + wt:cyl, data = d, bw = c(1, 0.2)),
               "interaction term 'wt:cyl'.*product kernel.*mpg ~ wt \\+ cyl")
  expect_error(kbw(mpg ~ wt * hp, data = d), "interaction term 'wt:hp'")
  # without interactions the same variables fit
  expect_s3_class(kreg(mpg ~ wt + hp, data = d, bw = c(1, 50)), "kreg")
})

test_that("logLik, AIC and anova of weighted fits equal lm's (once ols_attention takes weights)", {
  w_ok <- tryCatch({ols_attention(mpg ~ wt, data = mtcars, weights = rep(1, 32)); TRUE},
                   error = function(e) FALSE)
  skip_if_not(w_ok, "ols_attention() takes no weights in this build")
  d <- transform(mtcars, w = 1 / disp, cyl = factor(cyl))
  d$w[5] <- 0  # a zero weight leaves the row out of logLik's count, as lm
  f1 <- ols_attention(mpg ~ wt, data = d, weights = w)
  f2 <- ols_attention(mpg ~ wt + hp + cyl, data = d, weights = w)
  l1 <- lm(mpg ~ wt, data = d, weights = w)
  l2 <- lm(mpg ~ wt + hp + cyl, data = d, weights = w)
  expect_equal(as.numeric(logLik(f2)), as.numeric(logLik(l2)), tolerance = 1e-10)
  expect_identical(attr(logLik(f2), "nobs"), attr(logLik(l2), "nobs"))
  expect_equal(AIC(f2), AIC(l2), tolerance = 1e-10)
  expect_equal(BIC(f2), BIC(l2), tolerance = 1e-10)
  expect_equal(as.matrix(anova(f1, f2)), as.matrix(anova(l1, l2)), tolerance = 1e-10)
  expect_equal(as.matrix(anova(f2)), as.matrix(anova(l2)), tolerance = 1e-10)
})

test_that("logLik and anova of fits with absorbed fixed effects match lm with dummies", {
  d <- transform(mtcars, cyl = factor(cyl), gear = factor(gear))
  fe <- suppressWarnings(tryCatch(ols_attention(mpg ~ wt | cyl, data = d), error = function(e) NULL))
  skip_if_not(inherits(fe, "ols_attention_fe"), "ols_attention() absorbs no fixed effects in this build")
  fe2 <- ols_attention(mpg ~ wt + hp | cyl, data = d)
  l <- lm(mpg ~ wt + cyl, data = d)
  l2 <- lm(mpg ~ wt + hp + cyl, data = d)
  expect_equal(as.numeric(logLik(fe)), as.numeric(logLik(l)), tolerance = 1e-10)
  expect_identical(as.numeric(attr(logLik(fe), "df")), as.numeric(attr(logLik(l), "df")))
  expect_equal(AIC(fe2), AIC(l2), tolerance = 1e-10)
  expect_equal(BIC(fe2), BIC(l2), tolerance = 1e-10)
  expect_equal(as.matrix(anova(fe, fe2)), as.matrix(anova(l, l2)), tolerance = 1e-10)
  # adding fixed effects is nesting too; swapping them is not
  expect_equal(as.matrix(anova(ols_attention(mpg ~ wt, data = d), fe)),
               as.matrix(anova(lm(mpg ~ wt, data = d), l)), tolerance = 1e-10)
  expect_error(anova(fe, ols_attention(mpg ~ wt | gear, data = d)), "not nested")
  expect_error(anova(fe), "absorbed fixed effects")
})
