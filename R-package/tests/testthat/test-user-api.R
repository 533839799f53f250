# The R package "as users expect it" (issue 9): formula interface, data frames in and out,
# predict/confint/vcov like lm, plots, progress bars, broom tidiers.

test_that("kreg's formula interface handles transformations, factor(), subset, weights, NA", {
  d <- mtcars
  d$wt[4] <- NA
  f <- kreg(log(mpg) ~ wt + factor(cyl), data = d, bw = c(0.6, 0.2), subset = hp < 250)
  keep <- which(mtcars$hp < 250 & !is.na(d$wt))
  expect_equal(nobs(f), length(keep))
  expect_equal(names(f$bw), c("wt", "factor(cyl)"))
  expect_equal(f$var_types, "cu")
  # oracle: the local linear fit at the training rows from a direct weighted least squares
  x <- d$wt[keep]; g <- mtcars$cyl[keep]; y <- log(mtcars$mpg[keep])
  lam <- 0.2; nlev <- 3
  direct <- sapply(seq_along(x), function(i) {
    w <- dnorm((x - x[i]) / 0.6) * ifelse(g == g[i], 1 - lam, lam / (nlev - 1))
    unname(coef(lm(y ~ I(x - x[i]), weights = w))[1])
  })
  expect_equal(unname(fitted(f)), direct, tolerance = 1e-10)
  # na.action = na.exclude pads fitted() and residuals() with NA like lm
  fe <- kreg(mpg ~ wt, data = d, bw = 0.6, na.action = na.exclude)
  expect_equal(length(fitted(fe)), nrow(d))
  expect_true(is.na(fitted(fe))[4] && is.na(residuals(fe))[4])
  # weights multiply the kernel weights: integer weights equal duplicated rows
  w <- rep(1:2, 16)
  fw <- kreg(mpg ~ wt, data = mtcars, bw = 0.6, weights = w)
  fd <- kreg(mpg ~ wt, data = mtcars[rep(seq_len(32), w), ], bw = 0.6)
  nd <- data.frame(wt = c(2, 3, 4.5))
  expect_equal(predict(fw, nd), predict(fd, nd), tolerance = 1e-12)
  # ordered factors map to the ordered (Li-Racine) kernel, unordered ones to Aitchison-Aitken
  d2 <- transform(mtcars, gear = ordered(gear), am = factor(am))
  f2 <- kreg(mpg ~ wt + gear + am, data = d2, bw = c(0.6, 0.3, 0.2))
  expect_equal(f2$var_types, "cou")
  expect_equal(summary(f2)$bandwidths$kernel, c("gaussian", "liracine", "aitchisonaitken"))
  # data frames in, named vectors out (row names kept)
  p <- predict(f2, d2[c("Mazda RX4", "Valiant"), ])
  expect_named(p, c("Mazda RX4", "Valiant"))
})

test_that("kreg predict gives se.fit and intervals in predict.lm's shapes", {
  set.seed(3)
  d <- data.frame(x = runif(150))
  d$y <- sin(4 * d$x) + rnorm(150, sd = 0.2)
  f <- kreg(y ~ x, data = d, bw = 0.1)
  nd <- data.frame(x = c(0.2, 0.5, 0.8), row.names = c("a", "b", "c"))
  ci <- predict(f, nd, interval = "confidence", level = 0.9)
  expect_equal(colnames(ci), c("fit", "lwr", "upr"))
  expect_equal(rownames(ci), c("a", "b", "c"))
  expect_true(all(ci[, "lwr"] < ci[, "fit"] & ci[, "fit"] < ci[, "upr"]))
  s <- predict(f, nd, se.fit = TRUE)
  expect_named(s, c("fit", "se.fit", "df", "residual.scale"))
  # oracle: HC3 variance of a linear smoother, sum_i l_i(x)^2 e_i^2 / (1 - L_ii)^2
  A <- attention_weights(f, nd)
  e2 <- residuals(f)^2 / (1 - f$leverage)^2
  expect_equal(unname(s$se.fit), unname(sqrt(drop(A^2 %*% e2))), tolerance = 1e-10)
  expect_equal(unname(ci[, "upr"] - ci[, "fit"]), qnorm(0.95) * unname(s$se.fit),
               tolerance = 1e-10)
})

test_that("ols_attention predict(se.fit, interval) and confint match lm", {
  for (s in 1:3) {
    set.seed(s)
    n <- c(25, 60, 200)[s]
    d <- data.frame(a = rnorm(n), b = runif(n), g = factor(sample(letters[1:3], n, TRUE)))
    d$y <- 1 + 2 * d$a - d$b + as.integer(d$g) + rnorm(n)
    f <- ols_attention(y ~ a + b + g, data = d)
    l <- lm(y ~ a + b + g, data = d)
    nd <- d[1:5, ]
    for (iv in c("confidence", "prediction")) {
      expect_equal(predict(f, nd, interval = iv, level = 0.9),
                   predict(l, nd, interval = iv, level = 0.9), tolerance = 1e-10)
    }
    pf <- predict(f, nd, se.fit = TRUE)
    pl <- predict(l, nd, se.fit = TRUE)
    expect_equal(pf$se.fit, pl$se.fit, tolerance = 1e-10)
    expect_equal(pf$df, pl$df)
    expect_equal(pf$residual.scale, pl$residual.scale, tolerance = 1e-12)
    expect_equal(unname(predict(f, se.fit = TRUE)$se.fit),
                 unname(predict(l, se.fit = TRUE)$se.fit), tolerance = 1e-10)
    expect_equal(confint(f), confint(l), tolerance = 1e-10)
    expect_equal(confint(f, "a", level = 0.8), confint(l, "a", level = 0.8), tolerance = 1e-10)
    # robust: sqrt(x' V x) with the HC3 covariance (a direct sandwich in float64)
    X <- model.matrix(l)
    h <- rowSums(X * t(solve(crossprod(X), t(X))))
    B <- solve(crossprod(X))
    V <- B %*% crossprod(X * (residuals(l) / (1 - h))) %*% B
    Xn <- model.matrix(delete.response(terms(l)), nd, xlev = l$xlevels)
    expect_equal(unname(predict(f, nd, se.fit = TRUE, vcov = "HC3")$se.fit),
                 unname(sqrt(rowSums((Xn %*% V) * Xn))), tolerance = 1e-9)
    expect_equal(unname(confint(f, vcov = "HC3")[, 2]),
                 unname(coef(l) + qt(0.975, l$df.residual) * sqrt(diag(V))), tolerance = 1e-9)
  }
  # aliased columns are left out of the standard errors, as lm does
  set.seed(9)
  d <- data.frame(a = rnorm(20), b = rnorm(20))
  d$c <- d$a + d$b
  d$y <- rnorm(20)
  expect_warning(f <- ols_attention(y ~ a + b + c, data = d), "aliased")
  l <- lm(y ~ a + b + c, data = d)
  expect_equal(predict(f, d[1:3, ], se.fit = TRUE)$se.fit,
               suppressWarnings(predict(l, d[1:3, ], se.fit = TRUE)$se.fit), tolerance = 1e-9)
})

test_that("every plot type draws and returns its data", {
  pdf(NULL)
  on.exit(dev.off())
  d <- transform(mtcars, am = factor(am), gear = ordered(gear))
  f <- kreg(mpg ~ wt + hp + am + gear, data = d, bw = c(0.6, 40, 0.2, 0.3))
  p <- plot(f, var = "hp", bands = "confidence")
  expect_equal(names(p), c("grid", "fit", "lwr", "upr"))
  part <- plot(f, type = "partial", bands = "confidence")
  expect_named(part, c("wt", "hp", "am", "gear"))
  expect_equal(nrow(part$am), 2L)
  expect_equal(as.character(part$gear$level), c("3", "4", "5"))
  # partial effect of am at the medians equals predict at the held point
  held <- data.frame(wt = median(d$wt), hp = median(d$hp), am = factor(c("0", "1")),
                     gear = ordered("3", levels = levels(d$gear)))
  expect_equal(part$am$fit, unname(predict(f, held)), tolerance = 1e-12)
  w <- plot(f, type = "attention", query = 5)
  expect_equal(unname(w), unname(attention_weights(f, d[5, ])[1, ]), tolerance = 1e-12)
  w1 <- plot(kreg(mpg ~ wt, data = mtcars, bw = 0.5), type = "attention",
             query = data.frame(wt = 3))
  expect_equal(sum(w1), 1, tolerance = 1e-12)
  fcv <- kreg(mpg ~ wt, data = mtcars)
  cv <- plot(fcv, type = "cv")
  expect_true(is.data.frame(cv) && all(c("bw", "objective") %in% names(cv)))
  expect_error(plot(f, type = "cv"), "no criterion curve")
  expect_error(plot(f, type = "partial", var = "zz"), "var: not a regressor: zz")
  expect_error(plot(f, type = "attention", query = 99), "query: a training row number")
  expect_error(plot(f, var = "am"), "var: 'am' is not a continuous regressor")
})

test_that("progress = TRUE draws a bar on stderr and does not change results", {
  set.seed(1)
  d <- data.frame(x = runif(3000))
  d$y <- sin(6 * d$x) + rnorm(3000, sd = 0.3)
  msg <- capture.output(f <- kreg(y ~ x, data = d, bw = 0.05, progress = TRUE),
                        type = "message")
  expect_true(any(grepl("100%", msg)))
  expect_equal(fitted(f), fitted(kreg(y ~ x, data = d, bw = 0.05)))
  msg <- capture.output(b <- kbw(y ~ x, data = d[1:300, ], progress = TRUE), type = "message")
  expect_true(any(grepl("bandwidth search: [0-9]+ evaluations", msg)))
  msg <- capture.output(mc <- monte_carlo(function(X) X[, 1]^2, n = 60, R = 20, seed = 1,
                                          estimators = c("lc", "ols"), progress = TRUE),
                        type = "message")
  expect_true(any(grepl("100%", msg)))
  expect_equal(mc$integrated, monte_carlo(function(X) X[, 1]^2, n = 60, R = 20, seed = 1,
                                          estimators = c("lc", "ols"))$integrated)
  # attention in pieces: identical output (whole query blocks / batch entries per piece)
  Q <- matrix(rnorm(700 * 4), 700); K <- matrix(rnorm(500 * 4), 500)
  V <- matrix(rnorm(500 * 2), 500)
  msg <- capture.output(o <- lla(Q, K, V, ridge = 0.1, progress = TRUE), type = "message")
  expect_true(any(grepl("100%", msg)))
  expect_identical(o, lla(Q, K, V, ridge = 0.1))
  Qa <- array(rnorm(3 * 2 * 50 * 4), c(3, 2, 50, 4))
  Ka <- array(rnorm(3 * 2 * 60 * 4), c(3, 2, 60, 4))
  Va <- array(rnorm(3 * 2 * 60 * 3), c(3, 2, 60, 3))
  r <- array(runif(3 * 2 * 50, 0.1, 1), c(3, 2, 50))
  suppressMessages(oa <- lla(Qa, Ka, Va, ridge = r, progress = TRUE))
  expect_identical(oa, lla(Qa, Ka, Va, ridge = r))
  oc <- suppressMessages(softmax_attention(Q[1:500, ], K, V, causal = TRUE, progress = TRUE))
  expect_identical(oc, softmax_attention(Q[1:500, ], K, V, causal = TRUE))
})

test_that("a Ctrl-C in a long core computation stops it with an R condition", {
  skip_on_cran()
  skip_if(.Platform$OS.type != "unix")
  # a separate R process gets SIGINT during a long bandwidth search; the search must return
  # to R promptly (as an interrupt or an error), not run to the end or crash
  rscript <- file.path(R.home("bin"), "Rscript")
  lib <- dirname(system.file(package = "attnreg"))
  ready <- tempfile()
  code <- paste0(
    ".libPaths(c('", lib, "', .libPaths())); library(attnreg); set.seed(1);",
    "d <- data.frame(x = runif(40000), z = runif(40000)); d$y <- sin(9 * d$x) + rnorm(40000);",
    "file.create('", ready, "');",
    "r <- tryCatch(kbw(y ~ x + z, data = d, nstart = 20),",
    "interrupt = function(e) 'interrupted', error = function(e) conditionMessage(e));",
    "cat('RESULT:', if (is.character(r)) r else 'finished', '\\n')")
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  out <- tempfile()
  # start it, wait until it is inside kbw() (the marker file), then press "Ctrl-C"
  system(paste0("'", rscript, "' '", f, "' > '", out, "' 2>&1 & pid=$!; ",
                "for i in $(seq 600); do [ -e '", ready, "' ] && break; sleep 0.1; done; ",
                "sleep 2; t0=$(date +%s); kill -INT $pid; wait $pid; ",
                "echo ELAPSED $(( $(date +%s) - t0 )) >> '", out, "'"))
  res <- readLines(out)
  expect_true(any(grepl("RESULT: (interrupted|computation interrupted by the user)", res)),
              info = paste(res, collapse = "\n"))
  elapsed <- as.numeric(sub("ELAPSED ", "", grep("^ELAPSED", res, value = TRUE)))
  # the search would run for minutes; after the signal it stops within a block of work
  expect_lt(elapsed, 30)
})

test_that("broom tidiers are registered and return data frames", {
  skip_if_not_installed("generics")
  skip_if_not_installed("broom")
  f <- kreg(mpg ~ wt + hp, data = mtcars, bw = c(0.5, 40))
  t <- generics::tidy(f)
  expect_equal(t$term, c("wt", "hp"))
  expect_equal(t$bandwidth, c(0.5, 40))
  g <- generics::glance(f)
  expect_equal(nrow(g), 1L)
  expect_equal(g$nobs, 32L)
  expect_equal(g$cv, f$cv)
  a <- broom::augment(f, data = mtcars)
  expect_equal(nrow(a), 32L)
  expect_equal(a$.fitted, unname(fitted(f)))
  expect_equal(a$.hat, unname(f$leverage))
  an <- broom::augment(f, newdata = data.frame(wt = c(2, 3), hp = c(100, 150)), se_fit = TRUE,
                       interval = "confidence")
  expect_true(all(c(".fitted", ".se.fit", ".lower", ".upper") %in% names(an)))
  o <- ols_attention(mpg ~ wt + hp, data = mtcars)
  l <- lm(mpg ~ wt + hp, data = mtcars)
  to <- broom::tidy(o, conf.int = TRUE)
  tl <- broom::tidy(l, conf.int = TRUE)
  expect_equal(to$term, tl$term)
  expect_equal(to$estimate, tl$estimate, tolerance = 1e-10)
  expect_equal(to$std.error, tl$std.error, tolerance = 1e-10)
  expect_equal(to$p.value, tl$p.value, tolerance = 1e-8)
  expect_equal(to$conf.low, tl$conf.low, tolerance = 1e-10)
  go <- broom::glance(o)
  gl <- broom::glance(l)
  expect_equal(go$r.squared, gl$r.squared, tolerance = 1e-12)
  expect_equal(go$adj.r.squared, gl$adj.r.squared, tolerance = 1e-12)
  expect_equal(go$df, unname(gl$df))
  ao <- broom::augment(o)
  al <- broom::augment(l)
  expect_equal(ao$.hat, al$.hat, tolerance = 1e-10)
  expect_equal(ao$.fitted, al$.fitted, tolerance = 1e-10)
  ao2 <- broom::augment(o, newdata = mtcars[1:3, ], interval = "prediction")
  expect_equal(ao2$.upper, unname(predict(l, mtcars[1:3, ], interval = "prediction")[, "upr"]),
               tolerance = 1e-10)
  r <- ridge_attention(mpg ~ wt + hp, data = mtcars, lambda = 2)
  expect_equal(broom::tidy(r)$estimate, unname(coef(r)))
  expect_equal(broom::glance(r)$lambda, 2)
  ar <- broom::augment(r, data = mtcars)
  expect_equal(ar$.fitted, unname(fitted(r)))
  expect_true(all(ar$.hat > 0 & ar$.hat < 1))
  p <- pcr_attention(mpg ~ wt + hp + disp, data = mtcars, rank = 2)
  expect_equal(broom::glance(p)$rank, 2)
  expect_equal(nrow(broom::tidy(p)), 4L)
  b <- kbw(mpg ~ wt, data = mtcars)
  expect_equal(broom::tidy(b)$bandwidth, unname(b$bw))
  expect_equal(broom::glance(b)$bw.method, "cv.ls")
})
