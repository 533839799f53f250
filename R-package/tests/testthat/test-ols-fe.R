# ols_attention(y ~ x | f1 + f2): absorbed fixed effects against lm() with factor dummies.

fe_panel <- function(n, levels, seed, disconnected = FALSE) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n))
  for (j in seq_along(levels)) {
    p <- 1 / seq_len(levels[j])
    codes <- sample.int(levels[j], n, replace = TRUE, prob = p / sum(p))
    if (disconnected && j <= 2L) codes[(n %/% 2 + 1):n] <- codes[(n %/% 2 + 1):n] + 1000L
    d[[paste0("f", j)]] <- factor(paste0("L", codes))
    d$x1 <- d$x1 + rnorm(max(codes))[codes]
  }
  d$y <- d$x1 - 0.5 * d$x2 + rnorm(n)
  for (j in seq_along(levels)) d$y <- d$y + 3 * rnorm(nlevels(d[[paste0("f", j)]]))[d[[paste0("f", j)]]]
  d
}

test_that("one-, two- and three-way fixed effects equal lm with factor dummies", {
  cases <- list(list(150, 12, 1, FALSE), list(300, c(30, 8), 2, FALSE),
                list(300, c(40, 10), 3, TRUE), list(300, c(20, 8, 5), 4, FALSE))
  for (cs in cases) {
    d <- fe_panel(cs[[1]], cs[[2]], cs[[3]], cs[[4]])
    fes <- paste0("f", seq_along(cs[[2]]))
    # lm keeps singleton rows: so does this fit.
    fit <- ols_attention(as.formula(paste("y ~ x1 + x2 + x3 |", paste(fes, collapse = " + "))), d,
                         drop_singletons = FALSE)
    ref <- lm(as.formula(paste("y ~ x1 + x2 + x3 +", paste(fes, collapse = " + "))), d)
    xs <- c("x1", "x2", "x3")
    expect_s3_class(fit, "ols_attention_fe")
    expect_equal(coef(fit), coef(ref)[xs], tolerance = 1e-10)
    s <- summary(fit)
    sr <- summary(ref)
    expect_equal(s$coefficients[, 2], sr$coefficients[xs, 2], tolerance = 1e-9)
    expect_equal(fit$df.residual, ref$df.residual)
    expect_equal(s$r.squared, sr$r.squared, tolerance = 1e-10)
    expect_equal(s$adj.r.squared, sr$adj.r.squared, tolerance = 1e-10)
    expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-9)
    expect_equal(unname(confint(fit)), unname(confint(ref)[xs, ]), tolerance = 1e-9)
  }
})

test_that("within R-squared is that of the regression on the demeaned data", {
  d <- fe_panel(250, c(20, 6), 5)
  fit <- ols_attention(y ~ x1 + x2 | f1 + f2, d)
  ref <- lm(y ~ x1 + x2 + f1 + f2, d)
  y_within <- residuals(lm(y ~ f1 + f2, d))
  expect_equal(fit$r.squared.within, 1 - sum(residuals(ref)^2) / sum(y_within^2),
               tolerance = 1e-10)
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Within R-squared", out)))
  expect_true(any(grepl(paste0("f1 \\(", nlevels(d$f1), " levels\\), f2 \\(", nlevels(d$f2),
                               " levels\\)"), out)))
})

test_that("heteroskedasticity-robust covariances equal the dummy regression's", {
  skip_if_not_installed("sandwich")
  d <- fe_panel(200, 15, 6)
  fit <- ols_attention(y ~ x1 + x2 | f1, d)
  ref <- lm(y ~ x1 + x2 + f1, d)
  for (type in c("HC0", "HC1", "HC3")) {
    expect_equal(unname(vcov(fit, vcov = type)),
                 unname(sandwich::vcovHC(ref, type = type)[c("x1", "x2"), c("x1", "x2")]),
                 tolerance = 1e-9)
  }
})

test_that("a regressor absorbed by the fixed effects is NA with a warning naming it", {
  d <- fe_panel(200, c(15, 5), 7)
  d$inf1 <- as.numeric(d$f1) * 0.3
  expect_warning(fit <- ols_attention(y ~ x1 + inf1 + x2 | f1 + f2, d),
                 "collinearity with the fixed effects \\(f1, f2\\): inf1")
  expect_true(is.na(coef(fit)[["inf1"]]))
  ref <- lm(y ~ x1 + x2 + f1 + f2, d)
  expect_equal(coef(fit)[c("x1", "x2")], coef(ref)[c("x1", "x2")], tolerance = 1e-10)
  expect_equal(fit$df.residual, ref$df.residual)
})

test_that("predict, attention weights and fixed effects reproduce the fit", {
  d <- fe_panel(160, c(12, 4), 8)
  fit <- ols_attention(y ~ x1 + x2 | f1 + f2, d, fe_tol = 1e-13)
  ref <- lm(y ~ x1 + x2 + f1 + f2, d)
  nd <- d[1:6, ]
  nd$x1 <- nd$x1 + 1
  expect_equal(unname(predict(fit, nd)), unname(predict(ref, nd)), tolerance = 1e-10)
  A <- attention_weights(fit, nd)
  expect_equal(unname(drop(A %*% d$y)), unname(predict(fit, nd)), tolerance = 1e-10)
  A0 <- attention_weights(fit)
  expect_equal(dim(A0), c(160L, 160L))
  expect_equal(unname(drop(A0 %*% d$y)), unname(fitted(ref)), tolerance = 1e-10)
  expect_equal(unname(rowSums(A0)), rep(1, 160), tolerance = 1e-10)
  fe <- fixed_effects(fit)
  expect_named(fe, c("f1", "f2"))
  expect_equal(fe$f2[[1]], 0)
  expect_equal(names(fe$f1), levels(d$f1))
  # one factor: group means of y - X b
  f1 <- ols_attention(y ~ x1 + x2 | f1, d)
  r <- d$y - as.matrix(d[, c("x1", "x2")]) %*% coef(f1)
  expect_equal(fixed_effects(f1)$f1, tapply(r, d$f1, mean)[names(fixed_effects(f1)$f1)],
               tolerance = 1e-12, ignore_attr = TRUE)
  # saveRDS round trip (the object keeps its data)
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  expect_equal(predict(readRDS(path), nd), predict(fit, nd))
})

test_that("interactions in the absorbed part and bad input", {
  d <- fe_panel(200, c(6, 4), 9)
  fit <- ols_attention(y ~ x1 | f1:f2, d)
  ref <- lm(y ~ x1 + interaction(f1, f2, drop = TRUE), d)
  expect_equal(coef(fit)[["x1"]], coef(ref)[["x1"]], tolerance = 1e-10)
  nd <- d[1:2, ]
  nd$f1 <- factor(c("L1", "Lnew"))
  fit2 <- ols_attention(y ~ x1 + x2 | f1 + f2, d)
  expect_error(predict(fit2, nd), "fixed effect 'f1' has level\\(s\\) not seen in the fit: 'Lnew'")
  expect_error(predict(fit2, d[1:2, ], interval = "confidence"), "not available with absorbed")
  expect_error(attention_factors(fit2), "not available for a fit with absorbed fixed effects")
  fe_only <- ols_attention(y ~ 1 | f1, d)  # fixed effects alone: lm with the dummies
  expect_equal(unname(fitted(fe_only)), unname(fitted(lm(y ~ f1, d))), tolerance = 1e-10)
  d$f1[3] <- NA
  fit3 <- ols_attention(y ~ x1 | f1, d)
  expect_equal(nobs(fit3), 199L)
})

test_that("weights with absorbed fixed effects equal lm with dummies and weights", {
  set.seed(31)
  n <- 120
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), f = sample(letters[1:7], n, TRUE),
                  g = sample(LETTERS[1:4], n, TRUE), w = runif(n, 0.3, 3))
  d$y <- d$x1 - 2 * d$x2 + match(d$f, letters) + rnorm(n)
  for (fml in list(y ~ x1 + x2 | f, y ~ x1 + x2 | f + g)) {
    fit <- ols_attention(fml, d, weights = w)
    dummies <- if (length(fml[[3]][[3]]) == 1L) y ~ x1 + x2 + factor(f) else
      y ~ x1 + x2 + factor(f) + factor(g)
    ref <- lm(dummies, d, weights = w)
    expect_equal(coef(fit), coef(ref)[c("x1", "x2")], tolerance = 1e-9)
    expect_equal(fit$df.residual, ref$df.residual)
    s <- summary(fit)
    expect_equal(unname(s$coefficients[, 2]),
                 unname(summary(ref)$coefficients[c("x1", "x2"), 2]), tolerance = 1e-8)
    expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-8)
    expect_equal(nobs(fit), n)
    expect_equal(as.numeric(logLik(fit)), as.numeric(logLik(ref)), tolerance = 1e-8)
    A <- attention_weights(fit, d[1:3, ])
    expect_equal(unname(drop(A %*% d$y)), unname(fitted(ref)[1:3]), tolerance = 1e-8)
  }
  # Frequency weights: the unweighted fit of the data with rows repeated.
  d$fw <- rep(1:3, length.out = n)
  fw <- ols_attention(y ~ x1 + x2 | f, d, weights = fw, weight_type = "frequency")
  rep_d <- d[rep(seq_len(n), d$fw), ]
  rf <- ols_attention(y ~ x1 + x2 | f, rep_d)
  expect_equal(coef(fw), coef(rf), tolerance = 1e-10)
  expect_equal(fw$df.residual, rf$df.residual)
  expect_equal(vcov(fw, vcov = "HC1"), vcov(rf, vcov = "HC1"), tolerance = 1e-9)
  d$w[5] <- 0  # a row of weight 0 is left out, as lm leaves it out of n and the df
  expect_equal(coef(ols_attention(y ~ x1 + x2 | f, d, weights = w)),
               coef(ols_attention(y ~ x1 + x2 | f, d[-5, ], weights = w)), tolerance = 1e-12)
})
