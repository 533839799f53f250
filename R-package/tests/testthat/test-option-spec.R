# Every R default against the one option table of the C++ core (option_spec.hpp): a default
# written differently in an R function's formals fails here with the option's name.

spec <- attnreg:::.option_spec()
spec_row <- function(family, name) {
  i <- which(spec$family == family & spec$name == name)
  if (length(i) != 1L) return(NULL)
  list(family = family, name = name, type = spec$type[i], default = spec$default[[i]],
       none_ok = spec$none_ok[i])
}
# R spells some names np's way ("cv.ls", "aitchisonaitken"); compare names without . and _.
norm <- function(x) gsub("[._]", "", x)

agrees <- function(value, row) {
  if (is.null(value)) return(row$none_ok || is.null(row$default))
  if (is.null(row$default)) return(FALSE)
  if (is.character(value)) value <- value[1L]  # match.arg choices: the first is the default
  switch(row$type,
         bool = is.logical(value) && identical(value, row$default),
         string = is.character(value) && norm(value) == norm(row$default),
         is.numeric(value) && isTRUE(all.equal(as.double(value), as.double(row$default))))
}

# function -> family and R argument -> option name (NA: not an option of the family)
faces <- list(
  list(attnreg::softmax_attention, "attention", c()),
  list(attnreg::nw_rbf_attention, "attention", c()),
  list(attnreg::lla, "attention", c(method = "algorithm")),
  list(attnreg::linear_attention, "attention", c(tau = "feature_tau")),
  list(attnreg::mesa_attention, "mesa", c()),
  list(attnreg::attn_weights, "attention", c(tau = "feature_tau")),
  list(attnreg:::.attn_call, "attention", c(tau = "feature_tau")),
  list(attnreg::kreg, "local_fit", c(ukertype = "unordered_kernel", okertype = "ordered_kernel",
                                     method = NA, degree = NA, approx = NA, grid_size = NA)),
  list(attnreg::kbw, "bandwidth", c(bwmethod = "method", ukertype = "unordered_kernel",
                                    okertype = "ordered_kernel", nstart = "n_starts",
                                    method = NA)),
  list(attnreg::ridge_attention, "ridge", c(lambda = "alpha")),
  list(attnreg::pcr_attention, "pcr", c()),
  list(attnreg::attention_regression, "attention_regression", c())
)
names(faces) <- c("softmax_attention", "nw_rbf_attention", "lla", "linear_attention",
                  "mesa_attention", "attn_weights", ".attn_call", "kreg", "kbw",
                  "ridge_attention", "pcr_attention", "attention_regression")

test_that("the option table is well formed", {
  expect_identical(spec_row("attention", "block_q")$default, 64L)
  expect_true(all(nzchar(spec$doc)))
  expect_false(anyDuplicated(paste(spec$family, spec$name)) > 0)
})

for (fname in names(faces)) {
  test_that(paste0(fname, "'s defaults are the option table's"), {
    face <- faces[[fname]]
    f <- face[[1]]
    family <- face[[2]]
    alias <- face[[3]]
    checked <- 0L
    fa <- formals(f)
    for (arg in names(fa)) {
      if (identical(fa[[arg]], quote(expr = ))) next  # no default
      expr <- fa[[arg]]
      name <- if (arg %in% names(alias)) alias[[arg]] else arg
      if (is.na(name)) next
      row <- spec_row(family, name)
      if (is.null(row) && family == "mesa") row <- spec_row("attention", name)
      if (is.null(row)) next
      value <- eval(expr, baseenv())
      checked <- checked + 1L
      expect_true(agrees(value, row),
                  info = sprintf("%s(%s = %s) differs from %s.%s = %s", fname, arg,
                                 deparse(value), family, name, deparse(row$default)))
    }
    expect_gt(checked, 0L)
  })
}

test_that("the attention keywords go through the core's table", {
  set.seed(1)
  Q <- matrix(rnorm(15), 5)
  expect_equal(softmax_attention(Q, Q, Q, block_q = 2L, block_k = 2L), softmax_attention(Q, Q, Q),
               tolerance = 1e-13)
  expect_error(attnreg:::attn_forward_cpp(Q, Q, Q, 0, list(block_size = 8L), "cpu"),
               "block_size: not an option of attention")
  expect_error(attnreg:::attn_forward_cpp(Q, Q, Q, 0, list(block_q = "8"), "cpu"),
               "block_q: must be an integer")
})

# The inference vocabulary (the table's "inference" family): every R function that takes one of
# these concepts spells it the table's R way (vcov, level, cluster, seed, R, bootstrap); an old
# spelling (kind, type, n_boot) survives only as a deprecated argument without a default.
inference <- list(
  diagnose = list(attnreg::diagnose, c("vcov", "level", "cluster")),
  predict.kreg = list(attnreg:::predict.kreg, c("vcov", "level")),
  plot.kreg = list(attnreg:::plot.kreg, c("vcov", "level", "R", "seed")),
  mse_dpi = list(attnreg::mse_dpi, "vcov"),
  imse_dpi = list(attnreg::imse_dpi, "vcov"),
  tradeoff = list(attnreg::tradeoff, "vcov"),
  bootstrap_bands = list(attnreg::bootstrap_bands, c("R", "bootstrap", "level", "seed", "vcov")),
  gradients.kreg = list(attnreg:::gradients.kreg, c("R", "seed", "level")),
  sigtest = list(attnreg::sigtest, c("R", "bootstrap", "seed")),
  summary.ols_attention = list(attnreg:::summary.ols_attention, "vcov"),
  vcov.ols_attention = list(attnreg:::vcov.ols_attention, "vcov"),
  vcov.ridge_attention = list(attnreg:::vcov.ridge_attention, "vcov"),
  vcov.pcr_attention = list(attnreg:::vcov.pcr_attention, "vcov"),
  vcov.kplm = list(attnreg:::vcov.kplm, "vcov"),
  confint.ols_attention = list(attnreg:::confint.ols_attention, c("level", "vcov"))
)
r_name <- function(concept) spec$r[spec$family == "inference" & spec$name == concept]

test_that("the inference family names each concept in both faces", {
  expect_identical(vapply(c("cov_type", "level", "groups", "random_state", "replications",
                            "bootstrap"), r_name, ""),
                   c(cov_type = "vcov", level = "level", groups = "cluster",
                     random_state = "seed", replications = "R", bootstrap = "bootstrap"))
  expect_identical(spec$python[spec$family == "inference" & spec$name == "groups"], "groups")
  expect_identical(spec_row("inference", "level")$default, 0.95)
})

for (fname in names(inference)) {
  test_that(paste0(fname, " spells the inference arguments the R way"), {
    fa <- formals(inference[[fname]][[1]])
    for (a in inference[[fname]][[2]]) expect_true(a %in% names(fa), info = paste(fname, a))
    for (old in intersect(c("kind", "type", "n_boot"), names(fa))) {
      if (fname %in% c("predict.kreg", "plot.kreg") && old == "type") next  # response/gradient
      expect_true(identical(fa[[old]], quote(expr = )),
                  info = paste0(fname, "(", old, ") must be a deprecated alias without default"))
    }
    if ("level" %in% names(fa)) {
      expect_equal(eval(fa$level, baseenv()), spec_row("inference", "level")$default,
                   info = fname)
    }
  })
}
