# The version comes from the repository's VERSION file: build-package.sh writes it into
# DESCRIPTION and into the core's compile flags, so both must agree.
test_that("the package version is the version compiled into the core", {
  expect_identical(as.character(utils::packageVersion("attnreg")), attnreg_build_info()$version)
  expect_match(attnreg_build_info()$version, "^[0-9]+\\.[0-9]+\\.[0-9]+$")
})

test_that("citation() cites the package and the papers it implements, without a warning", {
  expect_no_warning(cit <- utils::citation("attnreg"))
  expect_gte(length(cit), 7L)
  expect_match(format(cit[1], style = "text"), "attnreg", fixed = TRUE)
  expect_true(any(grepl("2510.01450", format(cit, style = "text"), fixed = TRUE)))
  expect_true(any(grepl("Ruppert", format(cit, style = "text"), fixed = TRUE)))
})

test_that("DESCRIPTION declares the MIT licence with its LICENSE file", {
  expect_identical(unname(utils::packageDescription("attnreg")$License), "MIT + file LICENSE")
})

test_that("build_info says what Python's says, CUDA in one line", {
  b <- attnreg_build_info()
  expect_identical(names(b), c("version", "openmp", "max_threads", "blas", "cuda_compiled",
                               "cuda_archs", "gpu_count", "gpu_name", "cuda_error", "cuda", "simd"))
  expect_false(b$cuda_compiled)  # the R package is CPU-only
  expect_identical(b$cuda, paste0("not compiled: ", b$cuda_error))
  expect_match(b$cuda_error, "built without the CUDA backend (the R package is CPU-only)", fixed = TRUE)
})
