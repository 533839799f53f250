# The attention engine against base-R implementations of each formula.

rmat <- function(n, d, sd = 1) matrix(rnorm(n * d, sd = sd), n, d)

causal_mask <- function(nq, nk) outer(seq_len(nq) + nk - nq, seq_len(nk), ">=")

nw_ref <- function(logits, V, keep) {
  logits[!keep] <- -Inf
  w <- exp(logits - apply(logits, 1, max))
  (w / rowSums(w)) %*% V
}

# Intercept of the local linear fit min sum p_j ||v_j - a - B (k_j - q)||^2 + lam ||B||^2
# (p = normalised weights), as one least-squares problem solved by QR.
local_linear_ref <- function(Q, K, V, W, lam) {
  d <- ncol(K)
  t(vapply(seq_len(nrow(Q)), function(i) {
    p <- W[i, ] / sum(W[i, ])
    keep <- p > 0
    s <- sqrt(p[keep])
    X <- rbind(cbind(s, s * sweep(K[keep, , drop = FALSE], 2, Q[i, ])),
               cbind(0, sqrt(lam) * diag(d)))
    Y <- rbind(s * V[keep, , drop = FALSE], matrix(0, d, ncol(V)))
    qr.coef(qr(X), Y)[1, ]
  }, numeric(ncol(V))))
}

test_that("softmax attention is the softmax formula, with and without the causal mask", {
  set.seed(1)
  Q <- rmat(12, 3); K <- rmat(20, 3); V <- rmat(20, 2)
  expect_equal(softmax_attention(Q, K, V, scale = 0.8),
               nw_ref(0.8 * Q %*% t(K), V, matrix(TRUE, 12, 20)), tolerance = 1e-12)
  K2 <- K[1:12, ]; V2 <- V[1:12, ]
  expect_equal(softmax_attention(Q, K2, V2, causal = TRUE),
               nw_ref(Q %*% t(K2) / sqrt(3), V2, causal_mask(12, 12)), tolerance = 1e-12)
})

test_that("Gaussian NW equals softmax on unit-norm inputs (tau = h^2)", {
  set.seed(2)
  Q <- rmat(10, 4); K <- rmat(15, 4); V <- rmat(15, 2)
  Q <- Q / sqrt(rowSums(Q^2)); K <- K / sqrt(rowSums(K^2))
  expect_equal(nw_rbf_attention(Q, K, V, bandwidth = 0.5),
               softmax_attention(Q, K, V, scale = 1 / 0.25), tolerance = 1e-12)
})

test_that("the three LLA algorithms equal a local linear regression", {
  set.seed(3)
  n <- 25; d <- 3
  Q <- rmat(n, d, 0.8); K <- rmat(n, d, 0.8); V <- rmat(n, 2)
  W <- exp(Q %*% t(K) / 1.5)
  W[!causal_mask(n, n)] <- 0
  ref <- local_linear_ref(Q, K, V, W, 0.2)
  for (m in c("naive", "direct", "blockwise")) {
    got <- lla(Q, K, V, bandwidth = 1.5, ridge = 0.2, causal = TRUE, method = m,
               block_q = 8L, block_k = 8L)
    expect_equal(got, ref, tolerance = 1e-10, info = m)
  }
  # a large ridge is NW, and ridge 0 reproduces a linear function
  expect_equal(lla(Q, K, V, ridge = 1e10, causal = TRUE),
               softmax_attention(Q, K, V, causal = TRUE), tolerance = 1e-7)
  Kl <- rmat(60, 2); Vl <- Kl %*% c(2, -1) + 3; Ql <- rmat(5, 2)
  expect_equal(drop(lla(Ql, Kl, Vl, kernel = "rbf", bandwidth = 1)), drop(Ql %*% c(2, -1) + 3),
               tolerance = 1e-9)
})

test_that("arrays (batch, heads, seq, dim) are slices of matrices, K may be shared", {
  set.seed(4)
  B <- 2; H <- 3; n <- 14; d <- 3
  Q <- array(rnorm(B * H * n * d), c(B, H, n, d))
  K <- array(rnorm(B * H * n * d), c(B, H, n, d))
  V <- array(rnorm(B * H * n * 2), c(B, H, n, 2))
  out <- lla(Q, K, V, ridge = 0.1, causal = TRUE)
  expect_equal(dim(out), c(B, H, n, 2))
  for (b in 1:B) for (h in 1:H) {
    expect_equal(out[b, h, , ], lla(Q[b, h, , ], K[b, h, , ], V[b, h, , ], ridge = 0.1,
                                    causal = TRUE), tolerance = 1e-13)
  }
  Q3 <- array(rnorm(B * n * d), c(B, n, d))
  o3 <- softmax_attention(Q3, K[1, 1, , ], V[1, 1, , ])
  expect_equal(o3[2, , ], softmax_attention(Q3[2, , ], K[1, 1, , ], V[1, 1, , ]))
  # a per-position ridge array (batch, heads, n_q)
  R <- array(runif(B * H * n, 0.05, 1), c(B, H, n))
  oR <- lla(Q, K, V, ridge = R, causal = TRUE, method = "direct")
  expect_equal(oR[2, 3, 7, ], lla(Q, K, V, ridge = R[2, 3, 7], causal = TRUE,
                                  method = "direct")[2, 3, 7, ], tolerance = 1e-12)
})

test_that("causal outputs ignore future keys and values; windows ignore old ones", {
  set.seed(5)
  n <- 30
  Q <- rmat(n, 3); K <- rmat(n, 3); V <- rmat(n, 2)
  K2 <- K; V2 <- V
  K2[16:n, ] <- K2[16:n, ] + 4; V2[16:n, ] <- -V2[16:n, ]
  fs <- list(function(k, v) lla(Q, k, v, ridge = 0.1, causal = TRUE, block_k = 8L),
             function(k, v) softmax_attention(Q, k, v, causal = TRUE),
             function(k, v) mesa_attention(Q, k, v, causal = TRUE),
             function(k, v) linear_attention(Q, k, v, causal = TRUE))
  for (f in fs) {
    a <- f(K, V); b <- f(K2, V2)
    expect_identical(a[1:15, ], b[1:15, ])
    expect_gt(max(abs(a[16:n, ] - b[16:n, ])), 1e-3)
  }
  K3 <- K; K3[1:10, ] <- K3[1:10, ] + 5
  a <- lla(Q, K, V, ridge = 0.1, causal = TRUE, window = 5L)
  b <- lla(Q, K3, V, ridge = 0.1, causal = TRUE, window = 5L)
  expect_equal(a[15:n, ], b[15:n, ], tolerance = 1e-12)
})

test_that("Mesa is a ridge regression refitted at each position", {
  set.seed(6)
  n <- 20; d <- 3
  Q <- rmat(n, d); K <- rmat(n, d); V <- rmat(n, 2)
  got <- mesa_attention(Q, K, V, ridge = 0.5, causal = TRUE)
  for (i in c(1, 7, n)) {
    Ki <- K[1:i, , drop = FALSE]; Vi <- V[1:i, , drop = FALSE]
    Wt <- solve(crossprod(Ki) + 0.5 * diag(d), crossprod(Ki, Vi))
    expect_equal(got[i, ], drop(Q[i, ] %*% Wt), tolerance = 1e-10)
  }
})

test_that("linear attention and the Epanechnikov feature map", {
  set.seed(7)
  Q <- rmat(8, 3); K <- rmat(25, 3); V <- rmat(25, 2)
  Q <- Q / sqrt(rowSums(Q^2)); K <- K / sqrt(rowSums(K^2))
  D2 <- outer(rowSums(Q^2), rowSums(K^2), "+") - 2 * Q %*% t(K)
  W <- 1 - D2 / 4.5
  W[W < 0] <- 0
  expect_equal(linear_attention(Q, K, V, feature_map = "epanechnikov", tau = 4.5),
               (W / rowSums(W)) %*% V, tolerance = 1e-12)
})

test_that("attention weights reproduce the outputs and LLA rows sum to one", {
  set.seed(8)
  K <- rmat(15, 2); V <- rmat(15, 2)
  W <- attn_weights(K, K, method = "lla", ridge = 0.1, causal = TRUE)
  expect_equal(rowSums(W), rep(1, 15), tolerance = 1e-12)
  expect_true(any(W < 0))
  expect_equal(W %*% V, lla(K, K, V, ridge = 0.1, causal = TRUE), tolerance = 1e-10)
  Wm <- attn_weights(K, K, method = "mesa", causal = TRUE)
  expect_equal(Wm %*% V, mesa_attention(K, K, V, causal = TRUE), tolerance = 1e-10)
})

test_that("diagnostics and warnings of the conjugate-gradient solver", {
  set.seed(9)
  Q <- rmat(20, 6); K <- rmat(20, 6); V <- rmat(20, 1)
  res <- lla(Q, K, V, ridge = 0.01, causal = TRUE, info = TRUE)
  expect_true(res$info$cg_converged)
  expect_true(res$info$cg_max_iterations >= 1)
  expect_warning(lla(Q, K, V, ridge = 0.01, causal = TRUE, cg_max_iter = 1L), "cg_max_iter")
})

test_that("bad input gives errors that name the argument", {
  set.seed(10)
  Q <- rmat(10, 3); K <- rmat(10, 3); V <- rmat(10, 2)
  Kn <- K; Kn[4, 2] <- NA
  expect_error(softmax_attention(Q, Kn, V), "K: contains NaN at \\(batch 1, head 1, position 4, column 2\\)")
  expect_error(lla(Q, K, V, causal = TRUE), "ridge: must be > 0 for lla")
  expect_error(softmax_attention(Q, K, V[1:9, ]), "V: has seq = 9")
  expect_error(nw_rbf_attention(Q, K, V, bandwidth = -1), "bandwidth: must be > 0")
  expect_error(softmax_attention(data.frame(Q), K, V), "Q: expected a matrix")
  expect_error(softmax_attention(Q, K, V, device = "cuda"), "device")
  expect_error(linear_attention(-abs(Q), abs(K), V, feature_map = "identity"), "normaliser")
})
