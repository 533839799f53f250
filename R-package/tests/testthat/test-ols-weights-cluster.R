# ols_attention with weights (against lm(weights = )) and clustered covariances (vcov = ~firm,
# ~firm + year) against a direct sandwich written out here and sandwich::vcovCL.

make_panel <- function(n = 120, seed = 1) {
  set.seed(seed)
  firm <- rep(seq_len(n), times = sample(1:8, n, replace = TRUE))[seq_len(n)]
  d <- data.frame(x1 = rnorm(n), x2 = runif(n), firm = paste0("f", firm),
                  year = (seq_len(n) %% 7) + 2000)
  d$y <- 1 + d$x1 - 2 * d$x2 + rnorm(length(unique(firm)))[firm] + rnorm(n) * (1 + abs(d$x1))
  d$w <- runif(n, 0.2, 3)
  d
}

# (D'WD)^{-1} sum_g s_g s_g' (D'WD)^{-1}, s_g = sum_{i in g} w_i d_i e_i.
direct_cluster <- function(fit_lm, g) {
  D <- model.matrix(fit_lm)
  w <- if (is.null(weights(fit_lm))) rep(1, nrow(D)) else weights(fit_lm)
  e <- residuals(fit_lm)
  B <- solve(crossprod(D * sqrt(w)))
  S <- rowsum(D * (w * e), g)
  B %*% crossprod(S) %*% B
}

test_that("weighted fits equal lm(weights = ): coefficients, classical and HC standard errors, R^2", {
  for (seed in 1:3) {
    d <- make_panel(100 + 50 * seed, seed)
    d$w[c(3, 17)] <- 0  # weight-0 rows are left out of N, as lm
    fit <- ols_attention(y ~ x1 + x2, data = d, weights = w)
    ref <- lm(y ~ x1 + x2, data = d, weights = w)
    expect_equal(coef(fit), coef(ref), tolerance = 1e-10)
    s <- summary(fit)
    sr <- summary(ref)
    expect_equal(unname(s$coefficients), unname(sr$coefficients), tolerance = 1e-10)
    expect_equal(s$sigma, sr$sigma, tolerance = 1e-10)
    expect_equal(s$r.squared, sr$r.squared, tolerance = 1e-10)
    expect_equal(s$adj.r.squared, sr$adj.r.squared, tolerance = 1e-10)
    expect_equal(fit$df.residual, ref$df.residual)
    expect_equal(nobs(fit), nobs(ref))
    expect_equal(unname(fitted(fit)), unname(fitted(ref)), tolerance = 1e-10)
    expect_equal(unname(residuals(fit)), unname(residuals(ref)), tolerance = 1e-10)
    # sandwich::vcovHC mishandles weight-0 rows (recycling warnings); they carry no information,
    # so compare with the fit on the rows of positive weight.
    ref_pos <- lm(y ~ x1 + x2, data = d[d$w > 0, ], weights = w)
    for (type in c("HC0", "HC1", "HC2", "HC3")) {
      expect_equal(unname(vcov(fit, vcov = type)), unname(sandwich::vcovHC(ref_pos, type = type)),
                   tolerance = 1e-10, info = type)
    }
    # Prediction intervals as predict.lm (weight 1 for the new observation).
    nd <- d[1:4, ]
    expect_equal(unname(predict(fit, nd, interval = "confidence")),
                 unname(predict(ref, nd, interval = "confidence")), tolerance = 1e-10)
    # Attention weights stay exact: predictions, rows summing to 1, zero for weight-0 rows.
    A <- attention_weights(fit, nd)
    expect_equal(drop(A %*% d$y), unname(predict(fit, nd)), tolerance = 1e-10,
                 ignore_attr = TRUE)
    expect_equal(unname(rowSums(A)), rep(1, 4), tolerance = 1e-12)
    expect_true(all(A[, c(3, 17)] == 0))
  }
})

test_that("frequency weights equal the data with repeated rows", {
  d <- make_panel(80, 4)
  d$f <- floor(d$w * 2)
  d$f[1] <- max(d$f[1], 1)
  rep_d <- d[rep(seq_len(nrow(d)), d$f), ]
  fit <- ols_attention(y ~ x1 + x2, data = d, weights = f, weight_type = "frequency")
  ref <- ols_attention(y ~ x1 + x2, data = rep_d)
  expect_equal(coef(fit), coef(ref), tolerance = 1e-10)
  expect_equal(fit$df.residual, ref$df.residual)
  expect_equal(nobs(fit), nrow(rep_d))
  for (type in c("nonrobust", "HC1", "HC3")) {
    expect_equal(vcov(fit, vcov = type), vcov(ref, vcov = type), tolerance = 1e-10, info = type)
  }
  expect_equal(vcov(fit, vcov = ~firm), vcov(ref, vcov = ~firm), tolerance = 1e-10)
})

test_that("vcov = ~firm and ~firm + year match the direct sandwich and sandwich::vcovCL", {
  d <- make_panel(150, 5)
  for (weighted in c(FALSE, TRUE)) {
    fit <- if (weighted) ols_attention(y ~ x1 + x2, data = d, weights = w) else
      ols_attention(y ~ x1 + x2, data = d)
    ref <- if (weighted) lm(y ~ x1 + x2, data = d, weights = w) else lm(y ~ x1 + x2, data = d)
    n <- nrow(d); k <- 3
    G <- length(unique(d$firm))
    V0 <- direct_cluster(ref, d$firm)
    expect_equal(unname(vcov(fit, vcov = ~firm, cluster_type = "CR0")), unname(V0),
                 tolerance = 1e-10)
    V1 <- V0 * G / (G - 1) * (n - 1) / (n - k)
    expect_equal(unname(vcov(fit, vcov = ~firm)), unname(V1), tolerance = 1e-10)
    expect_equal(unname(vcov(fit, vcov = ~firm)),
                 unname(sandwich::vcovCL(ref, cluster = ~firm, type = "HC1")), tolerance = 1e-10)
    # CR2 (Bell and McCaffrey 2002): sum_g s_g s_g' with s_g = X_g' (I - H_gg)^{-1/2} e_g on the
    # W^{1/2}-transformed data (X = W^{1/2} D, e = W^{1/2} residuals).
    Xw <- model.matrix(ref) * sqrt(if (weighted) d$w else 1)
    ew <- residuals(ref) * sqrt(if (weighted) d$w else 1)
    B <- solve(crossprod(Xw))
    meat <- Reduce(`+`, lapply(split(seq_len(n), d$firm), function(i) {
      H <- Xw[i, , drop = FALSE] %*% B %*% t(Xw[i, , drop = FALSE])
      e <- eigen(diag(length(i)) - H, symmetric = TRUE)
      s <- crossprod(Xw[i, , drop = FALSE],
                     e$vectors %*% (crossprod(e$vectors, ew[i]) / sqrt(e$values)))
      tcrossprod(s)
    }))
    expect_equal(unname(vcov(fit, vcov = ~firm, cluster_type = "CR2")), unname(B %*% meat %*% B),
                 tolerance = 1e-10)
    if (!weighted) {
      # sandwich's clustered HC2 scales by (G-1)/G, undone by its default cadjust = TRUE.
      expect_equal(unname(vcov(fit, vcov = ~firm, cluster_type = "CR2")),
                   unname(sandwich::vcovCL(ref, cluster = ~firm, type = "HC2")), tolerance = 1e-10)
    }
    # Two-way: V_firm + V_year - V_intersection, one factor with G = min(G_firm, G_year).
    # An indefinite V gets the eigenvalue fix of Cameron, Gelbach and Miller (2011, sec. 2.3).
    cgm_fix <- function(V) {
      ev <- eigen((V + t(V)) / 2, symmetric = TRUE)
      if (min(ev$values) >= -1e-12 * max(abs(ev$values))) return(V)
      ev$vectors %*% diag(pmax(ev$values, 0), nrow(V)) %*% t(ev$vectors)
    }
    Vt <- V0 + direct_cluster(ref, d$year) - direct_cluster(ref, paste(d$firm, d$year))
    Gm <- min(G, 7)
    expect_equal(unname(suppressWarnings(vcov(fit, vcov = ~firm + year, cluster_type = "CR0"))),
                 unname(cgm_fix(Vt)), tolerance = 1e-10)
    expect_equal(unname(suppressWarnings(vcov(fit, vcov = ~firm + year))),
                 unname(cgm_fix(Vt * Gm / (Gm - 1) * (n - 1) / (n - k))), tolerance = 1e-10)
    # summary / confint / predict use t with G - 1 degrees of freedom.
    s <- suppressWarnings(summary(fit, vcov = ~firm + year))
    expect_equal(s$df_inference, Gm - 1)
    expect_equal(unname(s$n_clusters), c(G, 7))
    se <- sqrt(diag(V1))
    expect_equal(unname(summary(fit, vcov = ~firm)$coefficients[, 4]),
                 unname(2 * pt(-abs(coef(fit) / se), G - 1)), tolerance = 1e-10)
    ci <- confint(fit, vcov = ~firm)
    expect_equal(unname(ci[, 2]), unname(coef(fit) + qt(0.975, G - 1) * se), tolerance = 1e-10)
    p <- predict(fit, d[1:3, ], interval = "confidence", vcov = ~firm)
    expect_equal(unname(p[, "upr"] - p[, "fit"]),
                 unname(qt(0.975, G - 1) * sqrt(rowSums((cbind(1, as.matrix(d[1:3, c("x1", "x2")])) %*% V1) *
                                                          cbind(1, as.matrix(d[1:3, c("x1", "x2")]))))),
                 tolerance = 1e-10)
    expect_output(print(summary(fit, vcov = ~firm)), "clustered by firm")
  }
  # With subset: the clustering variable is matched to the rows the fit used.
  fs <- ols_attention(y ~ x1 + x2, data = d, subset = x2 > 0.3)
  rs <- lm(y ~ x1 + x2, data = d, subset = x2 > 0.3)
  expect_equal(unname(vcov(fs, vcov = ~firm)),
               unname(sandwich::vcovCL(rs, cluster = d$firm[d$x2 > 0.3], type = "HC1")),
               tolerance = 1e-10)
})

test_that("bad weights and clustering variables give clear errors", {
  d <- make_panel(60, 6)
  d$bad <- d$w
  d$bad[5] <- -1
  expect_error(ols_attention(y ~ x1, data = d, weights = bad), "weights: weight 5 is -1")
  d$bad[5] <- Inf
  expect_error(ols_attention(y ~ x1, data = d, weights = bad), "finite")
  d$zero <- 0
  expect_error(ols_attention(y ~ x1, data = d, weights = zero), "all weights are zero")
  expect_error(ols_attention(y ~ x1, data = d, weights = w, weight_type = "probability"),
               "should be one of")
  fit <- ols_attention(y ~ x1, data = d)
  d$one <- "a"
  fit1 <- ols_attention(y ~ x1, data = d)
  expect_error(vcov(fit1, vcov = ~one), "'one' has a single level")
  d$gna <- d$firm
  d$gna[3] <- NA
  fit2 <- ols_attention(y ~ x1, data = d)
  expect_error(vcov(fit2, vcov = ~gna), "'gna' is missing \\(NA\\) in 1 rows")
  expect_error(vcov(fit, vcov = ~nothere), "cannot find the clustering variable 'nothere'")
  expect_error(summary(fit, vcov = "cluster"), "use vcov = ~firm")
  expect_error(vcov(fit, vcov = ~firm + year, cluster_type = "CR2"), "CR2 is one-way only")
  expect_error(vcov(fit, vcov = ~firm + year + x1), "one or two clustering variables")
})

test_that("weighted ridge and PCR equal their closed forms; attention stays exact", {
  d <- make_panel(90, 7)
  d$w[c(2, 9)] <- 0
  fit <- ridge_attention(y ~ x1 + x2, data = d, weights = w, lambda = 2)
  D <- cbind(1, d$x1, d$x2)
  P <- diag(c(0, 2, 2))
  b <- solve(crossprod(D * sqrt(d$w)) + P, crossprod(D, d$w * d$y))
  expect_equal(unname(coef(fit)), drop(b), tolerance = 1e-10)
  expect_equal(unname(fitted(fit)), drop(D %*% b), tolerance = 1e-10)
  A <- attention_weights(fit, d[1:5, ])
  expect_equal(unname(rowSums(A)), rep(1, 5), tolerance = 1e-12)
  expect_equal(drop(A %*% d$y), unname(predict(fit, d[1:5, ])), tolerance = 1e-10,
               ignore_attr = TRUE)
  expect_true(all(A[, c(2, 9)] == 0))
  pc <- pcr_attention(y ~ x1 + x2, data = d, weights = w)
  expect_equal(coef(pc), coef(lm(y ~ x1 + x2, data = d, weights = w)), tolerance = 1e-10)
  # A weighted grid with GCV: integer weights = repeated rows.
  d$f <- floor(d$w * 2)
  d$f[1] <- max(d$f[1], 1)
  rep_d <- d[rep(seq_len(nrow(d)), d$f), ]
  g1 <- ridge_attention(y ~ x1 + x2, data = d, weights = f, lambda = 10^seq(-2, 2, length = 9),
                        select = "gcv")
  g2 <- ridge_attention(y ~ x1 + x2, data = rep_d, lambda = 10^seq(-2, 2, length = 9),
                        select = "gcv")
  expect_equal(g1$selection$gcv, g2$selection$gcv, tolerance = 1e-10)
  expect_equal(coef(g1), coef(g2), tolerance = 1e-10)
})
