test_that("dpi_bandwidth equals KernSmooth::dpill", {
  skip_if_not_installed("KernSmooth")
  set.seed(7)
  x <- runif(600)
  y <- cos(5 * x) + rnorm(600, 0, 0.25)
  expect_equal(dpi_bandwidth(x, y)$bandwidth, KernSmooth::dpill(x, y), tolerance = 1e-9)
  e <- read.csv(system.file("extdata", "engel.csv", package = "attnreg"))
  expect_equal(dpi_bandwidth(e$income, e$foodexp)$bandwidth,
               KernSmooth::dpill(e$income, e$foodexp), tolerance = 1e-9)
  expect_equal(dpi_bandwidth(x, y, binned = FALSE)$bandwidth, KernSmooth::dpill(x, y),
               tolerance = 1e-2)
})

test_that("dpi_bandwidth errors name the argument", {
  expect_error(dpi_bandwidth(1:5, 1:4), "y: has 4 values but x has 5")
  x <- seq(0, 1, length.out = 60)
  expect_error(dpi_bandwidth(x, 2 * x + 1), "^dpi: ")  # no curvature: a pilot fails
})
