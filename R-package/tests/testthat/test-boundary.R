# A warning when a selected bandwidth sits on its search box; summary() notes regressors whose
# bandwidth smooths them out.

# A discrete regressor with exact cells: leave-one-out local constant wants the cell means,
# reached only at the box's lower end (the estimator's limit, where the other cells' weights
# underflow). With noise in the cells a tiny borrowing from the neighbours lowers the
# leave-one-out variance: a genuine interior optimum.
lower_data <- function() {
  set.seed(1)
  x <- sample(0:4, 200, TRUE)
  data.frame(x = x, y = x^2)
}

noise_data <- function() {
  set.seed(2)
  x <- runif(200)
  data.frame(x = x, noise = rnorm(200), y = sin(6 * x) + rnorm(200, 0, 0.3))
}

test_that("kbw warns at the lower end, naming the regressor, value and end", {
  expect_warning(b <- kbw(y ~ x, data = lower_data(), method = "lc"),
                 "kbw: .*'x': h = .* lower end .*factor")
  expect_equal(unname(b$at_bound), -1L)
  expect_equal(unname(b$bw), unname(b$lower))
})

test_that("kbw and kreg warn at the upper end (linear truth, local linear)", {
  set.seed(2)
  x <- runif(200)
  d <- data.frame(x = x, y = 2 * x + rnorm(200))
  expect_warning(b <- kbw(y ~ x, data = d), "'x': h = .* upper end")
  expect_equal(unname(b$at_bound), 1L)
  expect_equal(unname(b$bw), unname(b$upper))
  expect_warning(f <- kreg(y ~ x, data = d, bw = "cv.ls"), "kreg\\(bw = \"cv.ls\"\\)")
  expect_equal(unname(f$kbw$at_bound), 1L)
})

test_that("an interior bandwidth gives no warning and no note", {
  set.seed(1)
  x <- runif(200)
  d <- data.frame(x = x, y = sin(6 * x) + rnorm(200, 0, 0.3))
  expect_no_warning(b <- kbw(y ~ x, data = d))
  expect_equal(unname(b$at_bound), 0L)
  expect_no_warning(f <- kreg(y ~ x, data = d))
  expect_length(summary(f)$notes, 0L)
  expect_no_warning(expect_equal(unname(kbw(y ~ x, data = d, bwmethod = "rot")$at_bound), 0L))
})

test_that("summary notes an irrelevant continuous regressor and not a relevant one", {
  d <- noise_data()
  expect_warning(f <- kreg(y ~ x + noise, data = d), "'noise'")
  s <- summary(f)
  expect_length(s$notes, 1L)
  expect_match(s$notes, "'noise'.*irrelevant regressor")
  expect_false(grepl("'x'", s$notes))
  expect_output(print(s), "Note: 'noise'")
  expect_length(summary(kreg(y ~ x + noise, data = d, bw = c(0.08, 1)))$notes, 0L)
  expect_length(summary(kreg(y ~ x + noise, data = d, bw = c(0.08, 3.5)))$notes, 1L)
})

test_that("summary notes a categorical lambda at its upper bound", {
  set.seed(1)
  x <- runif(150)
  d <- data.frame(x = x, g = factor(sample(c("a", "b", "c"), 150, TRUE)),
                  y = sin(6 * x) + rnorm(150, 0, 0.3))
  n <- summary(kreg(y ~ x + g, data = d, bw = c(0.08, 2 / 3)))$notes  # (c - 1) / c
  expect_length(n, 1L)
  expect_match(n, "'g' has lambda .*irrelevant regressor")
  expect_length(summary(kreg(y ~ x + g, data = d, bw = c(0.08, 0.1)))$notes, 0L)
})
