# Every attention path against an explicit mask built in a few lines of base R. Masks are
# aligned at the bottom right, as FlashAttention's window_size: query i sits at key position
# a_i = i + n_k - n_q; causal keeps j <= a_i, a causal window w also j > a_i - w, a non-causal
# one |j - a_i| < w. Tolerance: 64 n_k eps on O(1) inputs, times 1e3 for the solves of LLA and
# Mesa (ridge 0.5 keeps their systems' condition numbers below about 1e3).

explicit_mask <- function(nq, nk, causal, window) {
  a <- matrix(seq_len(nq) + nk - nq, nq, nk)
  j <- matrix(seq_len(nk), nq, nk, byrow = TRUE)
  keep <- matrix(TRUE, nq, nk)
  if (causal) {
    keep <- keep & j <= a
    if (window > 0) keep <- keep & j > a - window
  } else if (window > 0) {
    keep <- keep & abs(j - a) < window
  }
  keep
}

mask_weights <- function(method, Q, K, keep, ridge) {
  d <- ncol(Q)
  W <- matrix(0, nrow(Q), nrow(K))
  for (i in seq_len(nrow(Q))) {
    m <- keep[i, ]
    q <- Q[i, ]
    Km <- K[m, , drop = FALSE]
    if (method == "softmax" || method == "lla") w <- exp(drop(Km %*% q) / sqrt(d))
    if (method == "nw_rbf") w <- exp(-rowSums(sweep(Km, 2, q)^2) / (2 * sqrt(d)))
    if (method == "linear") {
      phi <- function(x) ifelse(x > 0, x + 1, exp(x))
      w <- drop(phi(Km) %*% phi(q))
    }
    if (method %in% c("softmax", "nw_rbf", "linear")) W[i, m] <- w / sum(w)
    if (method == "lla") {
      z <- sweep(Km, 2, q)
      om <- sum(w); mu <- drop(crossprod(z, w))
      rho <- solve(crossprod(z * sqrt(w)) + ridge * om * diag(d), mu)
      W[i, m] <- w * (1 - drop(z %*% rho)) / (om - sum(mu * rho))
    }
    if (method == "mesa") W[i, m] <- drop(Km %*% solve(crossprod(Km) + ridge * diag(d), q))
  }
  W
}

shapes <- list(c(5, 12, 0, 0), c(5, 12, 1, 0), c(5, 12, 0, 3), c(5, 12, 1, 3), c(12, 12, 0, 4),
               c(12, 12, 1, 4), c(12, 5, 0, 0), c(12, 5, 0, 9), c(7, 20, 0, 25), c(7, 20, 1, 25))

test_that("every attention path keeps exactly the keys of the explicit mask", {
  ridge <- 0.5
  for (s in shapes) for (seed in 1:2) {
    set.seed(seed)
    nq <- s[1]; nk <- s[2]; causal <- s[3] == 1; window <- s[4]
    Q <- matrix(rnorm(nq * 3), nq) / sqrt(3)
    K <- matrix(rnorm(nk * 3), nk) / sqrt(3)
    V <- matrix(rnorm(nk * 2), nk)
    keep <- explicit_mask(nq, nk, causal, window)
    for (method in c("softmax", "nw_rbf", "lla", "linear", "mesa")) {
      W <- mask_weights(method, Q, K, keep, ridge)
      tol <- 64 * nk * .Machine$double.eps * (if (method %in% c("lla", "mesa")) 1e3 else 1)
      tol <- tol * max(1, abs(W %*% V))
      got <- switch(method,
        softmax = softmax_attention(Q, K, V, causal = causal, window = window,
                                    block_q = 2L, block_k = 3L),
        nw_rbf = nw_rbf_attention(Q, K, V, causal = causal, window = window),
        lla = lla(Q, K, V, ridge = ridge, causal = causal, window = window),
        linear = linear_attention(Q, K, V, causal = causal, window = window),
        mesa = mesa_attention(Q, K, V, ridge = ridge, causal = causal, window = window))
      label <- sprintf("%s nq=%d nk=%d causal=%s window=%d", method, nq, nk, causal, window)
      expect_lt(max(abs(got - W %*% V)), tol, label = label)
      r <- if (method == "mesa") ridge else if (method == "lla") ridge else NULL
      Wg <- attn_weights(Q, K, method = method, ridge = r, causal = causal, window = window)
      expect_lt(max(abs(Wg - W)), tol, label = paste("attn_weights", label))
      expect_true(all(Wg[!keep] == 0), label = paste("masked keys", label))
    }
  }
})

test_that("a query that sees no key, and a window that is not a whole number, are errors", {
  set.seed(3)
  Q <- matrix(rnorm(36), 12); K <- matrix(rnorm(15), 5); V <- matrix(rnorm(10), 5)
  expect_error(softmax_attention(Q, K, V, window = 2), "window: query 1 sees no key")
  for (w in list(2.5, -1, NA_real_, Inf, c(2, 3), "2", TRUE)) {
    expect_error(softmax_attention(K, K, V, window = w), "window: must be one whole number",
                 label = format(w))
    expect_error(lla(K, K, V, ridge = 1, window = w), "window: must be one whole number")
    expect_error(attn_weights(K, K, window = w), "window: must be one whole number")
  }
  # 2 given as a double is the whole number 2.
  expect_equal(softmax_attention(K, K, V, window = 2), softmax_attention(K, K, V, window = 2L))
})
