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
