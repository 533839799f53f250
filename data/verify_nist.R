## Check the NIST StRD linear-regression CSVs in data/nist/ against the
## certified values stored beside them.  Run from the repository root:
##   Rscript data/verify_nist.R
## For the well-conditioned sets, lm() must reproduce every certified
## coefficient (and standard error, residual SD, R^2) to >= 6 significant
## digits.  Filip and Wampler5 defeat double-precision QR on the raw
## polynomial basis, so for them only the row count and shape are checked
## here.
dir <- file.path("data", "nist")
summ <- read.csv(file.path(dir, "summary.csv"), stringsAsFactors = FALSE)
n_expected <- c(Norris = 36, Pontius = 40, NoInt1 = 11, NoInt2 = 3, Filip = 82,
                Longley = 16, Wampler1 = 21, Wampler2 = 21, Wampler3 = 21,
                Wampler4 = 21, Wampler5 = 21)
hard <- c("Filip", "Wampler5")
lre <- function(est, cert) {
  ## log relative error (absolute where the certified value is 0), capped at 15
  e <- ifelse(cert == 0, abs(est), abs(est - cert) / abs(cert))
  pmin(15, -log10(pmax(e, 1e-300)))
}
ok <- TRUE
for (i in seq_len(nrow(summ))) {
  nm <- summ$dataset[i]
  d <- read.csv(file.path(dir, paste0(nm, ".csv")))
  cert <- read.csv(file.path(dir, paste0(nm, "_certified.csv")))
  n_ok <- nrow(d) == n_expected[[nm]] && nrow(cert) == summ$n_params[i] &&
          !anyNA(d)
  if (!n_ok) ok <- FALSE
  if (nm %in% hard) {
    cat(sprintf("%-9s n=%3d (expected %3d) params=%2d  [hard set: n/shape check only] %s\n",
                nm, nrow(d), n_expected[[nm]], nrow(cert), if (n_ok) "OK" else "FAIL"))
    next
  }
  if (nm == "Longley") {
    f <- y ~ x1 + x2 + x3 + x4 + x5 + x6
  } else {
    deg <- summ$n_params[i] - summ$intercept[i]
    rhs <- if (deg == 1) "x" else paste0("I(x^", 1:deg, ")", collapse = " + ")
    rhs <- sub("I\\(x\\^1\\)", "x", rhs)
    f <- as.formula(paste("y ~", rhs, if (summ$intercept[i] == 0) "- 1" else ""))
  }
  fit <- lm(f, data = d)
  s <- summary(fit)
  b <- unname(coef(fit))
  se <- unname(s$coefficients[, 2])
  rsd <- s$sigma
  ## for the no-intercept sets NIST's R^2 is the uncentred one, which is
  ## also what summary.lm reports for a model without intercept
  r2 <- s$r.squared
  l_b <- min(lre(b, cert$estimate))
  ## standard errors / residual SD are exactly 0 for Wampler1/2; only check
  ## them where certified non-zero
  nz <- cert$std_error != 0
  l_se <- if (any(nz)) min(lre(se[nz], cert$std_error[nz])) else NA
  l_rsd <- if (summ$residual_sd[i] != 0) lre(rsd, summ$residual_sd[i]) else NA
  l_r2 <- lre(r2, summ$r_squared[i])
  pass <- n_ok && l_b >= 6 && (is.na(l_se) || l_se >= 6) &&
          (is.na(l_rsd) || l_rsd >= 6) && l_r2 >= 6
  if (!pass) ok <- FALSE
  cat(sprintf("%-9s n=%3d params=%2d  min LRE: coef %5.2f  se %5s  rsd %5s  R2 %5.2f  %s\n",
              nm, nrow(d), nrow(cert), l_b,
              if (is.na(l_se)) "  -  " else sprintf("%5.2f", l_se),
              if (is.na(l_rsd)) "  -  " else sprintf("%5.2f", l_rsd),
              l_r2, if (pass) "OK" else "FAIL"))
}
if (!ok) quit(status = 1)
cat("all NIST StRD checks passed\n")
