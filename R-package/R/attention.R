# Attention as regression: softmax / Nadaraya-Watson, Local Linear Attention, linear attention
# and Mesa on the CPU core. The numerics live in the C++ core (core/src/attention*.cpp); this
# file checks and forwards arguments and turns the core's diagnostics into R warnings.

.attn_array <- function(x, name) {
  if (!is.matrix(x) && !is.array(x)) {
    stop(name, ": expected a matrix (seq, dim) or an array (batch, seq, dim) or ",
         "(batch, heads, seq, dim), got ", class(x)[1], call. = FALSE)
  }
  if (!is.numeric(x) && !is.logical(x)) {
    stop(name, ": expected numbers, got ", typeof(x), call. = FALSE)
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

# An optional number: NULL means "the default" (NA on the way to the core); a value given must
# be one finite number - NA, NaN or Inf is an error naming the argument, never the default.
.attn_num <- function(x, name = deparse(substitute(x))) {
  if (is.null(x)) return(NA_real_)
  if (!is.numeric(x) || length(x) != 1L || !is.finite(x)) {
    stop(name, ": must be one finite number or NULL (for the default), got ",
         if (length(x) == 1L) format(x) else paste("length", length(x)), call. = FALSE)
  }
  as.double(x)
}

# A window: NULL or 0 = none, otherwise one whole number >= 0 (2.5 is an error, never 2).
.attn_window <- function(window) {
  if (is.null(window)) return(0L)
  if (!is.numeric(window) || length(window) != 1L || !is.finite(window) ||
      window != round(window) || window < 0 || window > .Machine$integer.max) {
    stop("window: must be one whole number >= 0 (0 or NULL = no window), got ",
         if (length(window) == 1L) format(window) else paste("length", length(window)),
         call. = FALSE)
  }
  as.integer(window)
}

# The same check for an entry of the core's option list, where NULL (not NA) is the default.
.attn_opt <- function(x, name = deparse(substitute(x))) {
  if (is.null(x)) NULL else .attn_num(x, name)
}

# A ridge keeps its dim attribute (an array (batch, heads, n_q)); as.double() would drop it.
.attn_ridge <- function(r) {
  if (!is.numeric(r)) stop("ridge: expected numbers, got ", typeof(r), call. = FALSE)
  storage.mode(r) <- "double"
  r
}

.attn_call <- function(Q, K, V, method, causal = FALSE, window = 0L, scale = NULL,
                       bandwidth = NULL, ridge = 0, algorithm = "blockwise", kernel = "dot",
                       block_q = 64L, block_k = 64L, cg_tol = NULL, cg_max_iter = 0L,
                       feature_map = "elu_plus_one", tau = 4, normalize = TRUE,
                       n_threads = 0L, device = "cpu", info = FALSE, progress = FALSE) {
  Q <- .attn_array(Q, "Q")
  K <- .attn_array(K, "K")
  V <- .attn_array(V, "V")
  window <- .attn_window(window)
  # The core's keywords (its option table, attnreg:::.option_spec()); NULL = the default.
  options <- list(method = method, causal = isTRUE(causal), window = as.integer(window),
                  scale = .attn_opt(scale), bandwidth = .attn_opt(bandwidth),
                  algorithm = algorithm, kernel = kernel, block_q = as.integer(block_q),
                  block_k = as.integer(block_k), cg_tol = .attn_opt(cg_tol),
                  cg_max_iter = as.integer(cg_max_iter), feature_map = feature_map,
                  feature_tau = as.double(tau), normalize = isTRUE(normalize),
                  n_threads = as.integer(n_threads))
  run <- function(Q, K, V, ridge) {
    attn_forward_cpp(Q, K, V, .attn_ridge(ridge), options, device)
  }
  if (isTRUE(progress) && !isTRUE(info)) {
    out <- .attn_chunked(Q, K, V, ridge, run, chunk_rows = as.integer(block_q),
                         rows_ok = !isTRUE(causal) && window == 0)
    return(out)
  }
  res <- run(Q, K, V, ridge)
  for (w in res$info$warnings) warning(w, call. = FALSE)
  if (isTRUE(info)) res else res$output
}

# progress = TRUE: the same computation in pieces, with a text bar on stderr between them
# (and a chance for Ctrl-C to stop the loop). Arrays are split over the batch (first) index;
# a matrix Q over its rows (not causal, no window), in whole query blocks of `chunk_rows`,
# so every piece runs exactly the blocks the single call would and the output is identical.
.attn_chunked <- function(Q, K, V, ridge, run, chunk_rows, rows_ok) {
  nd <- length(dim(Q))
  slice <- function(a, i) {  # a[i, , ...] keeping the rank
    if (is.null(dim(a)) || length(dim(a)) != nd) return(a)
    idx <- c(list(a, i), rep(list(quote(expr = )), nd - 1L), list(drop = FALSE))
    do.call(`[`, idx)
  }
  if (nd >= 3L) {
    pieces <- as.list(seq_len(dim(Q)[1]))
    rslice <- function(r, i) {
      if (length(dim(r)) == 3L) r[i, , , drop = FALSE] else r
    }
    get <- function(i) run(slice(Q, i), slice(K, i), slice(V, i), rslice(ridge, i))
  } else if (rows_ok) {
    n_q <- nrow(Q)
    size <- chunk_rows * max(1L, ceiling(n_q / chunk_rows / 50))
    starts <- seq(1L, n_q, by = size)
    pieces <- lapply(starts, function(a) a:min(n_q, a + size - 1L))
    get <- function(i) {
      r <- if (length(ridge) == n_q && n_q > 1L) ridge[i] else ridge
      run(Q[i, , drop = FALSE], K, V, r)
    }
  } else {
    pieces <- list(seq_len(nrow(Q)))
    get <- function(i) run(Q, K, V, ridge)
  }
  bar <- utils::txtProgressBar(min = 0, max = length(pieces), style = 3, file = stderr())
  on.exit(close(bar))
  outs <- vector("list", length(pieces))
  warns <- character(0)
  for (k in seq_along(pieces)) {
    res <- get(pieces[[k]])
    outs[[k]] <- res$output
    warns <- c(warns, res$info$warnings)
    utils::setTxtProgressBar(bar, k)
  }
  for (w in unique(warns)) warning(w, call. = FALSE)
  if (length(outs) == 1L) return(outs[[1L]])
  if (nd < 3L) return(do.call(rbind, outs))
  o1 <- outs[[1L]]
  out <- array(0, c(dim(Q)[1], dim(o1)[-1]))
  for (k in seq_along(outs)) {
    idx <- c(list(out, k), rep(list(quote(expr = )), nd - 1L), list(value = outs[[k]]))
    out <- do.call(`[<-`, idx)
  }
  out
}

#' Softmax attention (Nadaraya-Watson with the dot-product kernel)
#'
#' \deqn{o_i = \sum_j \frac{\exp(s\, q_i^\top k_j)}{\sum_l \exp(s\, q_i^\top k_l)} v_j,}
#' computed blockwise with a running maximum, so `exp` never overflows. With unit-norm queries
#' and keys this is Nadaraya-Watson regression with a Gaussian kernel of bandwidth
#' \eqn{h = s^{-1/2}} (see [nw_rbf_attention()]). A logit \eqn{s\, q^\top k} that itself
#' overflows double precision (norms near 1e154) is an error naming the (batch, head, query);
#' `scale` or `bandwidth` given as `NA`, `NaN` or `Inf` is an error (`NULL` is the default).
#'
#' @section Shapes: `Q` is a matrix `(n_q, dim)`, an array `(batch, n_q, dim)` or an array
#'   `(batch, heads, n_q, dim)`; `K` has the same layout with `n_k` rows and `V` with `n_k`
#'   rows and `dim_v` columns. The output has `Q`'s layout with `dim_v` columns. A matrix `K`
#'   or `V` is shared by every batch and head. Arrays are read in place (no copy).
#'
#' @section Masks: query `i` sits at key position `a_i = i + n_k - n_q` (bottom-right
#'   alignment: the last query meets the last key; with `n_q == n_k`, `a_i = i`), as
#'   FlashAttention aligns its causal mask and `window_size` when the lengths differ.
#'   `causal = TRUE` lets query `i` use keys `j <= a_i` (needs `n_q <= n_k`). `window = w` (a
#'   whole number; 0 = none) keeps the keys `a_i - w < j <= a_i` (causal: the last `w`) or
#'   `|j - a_i| < w` (not causal). A query that sees no key is an error naming the window.
#'
#' @param Q,K,V Queries, keys and values (see Shapes).
#' @param scale The inverse temperature \eqn{s} (default `1 / sqrt(dim)`).
#' @param causal,window Masks (see Masks).
#' @param block_q,block_k Query rows and keys per block of the blockwise computation.
#' @param n_threads Threads (0 = OpenMP default); results do not depend on it.
#' @param device `"cpu"`, or `"cuda"` for the GPU backend (an error when this build has no
#'   CUDA or no GPU is visible).
#' @param info When `TRUE`, return `list(output, info)` with the core's diagnostics.
#' @param progress Show a text progress bar (on stderr): the call runs in pieces (over the
#'   batch index of an array, or over query blocks of a matrix `Q` when neither `causal` nor
#'   `window` is set; otherwise in one piece), with the same result, and Ctrl-C (Esc in the R
#'   GUI) stops it between pieces. Ignored with `info = TRUE`.
#' @return The attention output (see Shapes), or a list when `info = TRUE`.
#' @examples
#' set.seed(1)
#' Q <- matrix(rnorm(20 * 4), 20); K <- matrix(rnorm(30 * 4), 30); V <- matrix(rnorm(30 * 2), 30)
#' o <- softmax_attention(Q, K, V)
#' w <- exp(Q %*% t(K) / 2); all.equal(o, (w / rowSums(w)) %*% V)
#' @export
softmax_attention <- function(Q, K, V, scale = NULL, causal = FALSE, window = 0L,
                              block_q = 64L, block_k = 64L, n_threads = 0L,
                              device = c("cpu", "cuda"), info = FALSE, progress = FALSE) {
  .attn_call(Q, K, V, "softmax", causal = causal, window = window, scale = scale,
             block_q = block_q, block_k = block_k, n_threads = n_threads,
             device = match.arg(device), info = info, progress = progress)
}

#' Nadaraya-Watson attention with a Gaussian kernel
#'
#' \deqn{o_i = \sum_j \frac{\exp(-\|q_i - k_j\|^2 / 2h^2)}{\sum_l \exp(-\|q_i - k_l\|^2 / 2h^2)} v_j.}
#' The default bandwidth \eqn{h = dim^{1/4}} makes it equal to [softmax_attention()] with its
#' default scale on unit-norm inputs (temperature \eqn{\tau = h^2}).
#'
#' @inheritParams softmax_attention
#' @param bandwidth The Gaussian bandwidth \eqn{h > 0}.
#' @return The attention output, or a list when `info = TRUE`.
#' @examples
#' set.seed(1)
#' Q <- matrix(rnorm(10 * 3), 10); K <- matrix(rnorm(40 * 3), 40); V <- matrix(rnorm(40), 40)
#' nw_rbf_attention(Q, K, V, bandwidth = 0.8)
#' @export
nw_rbf_attention <- function(Q, K, V, bandwidth = NULL, causal = FALSE, window = 0L,
                             block_q = 64L, block_k = 64L, n_threads = 0L,
                             device = c("cpu", "cuda"), info = FALSE, progress = FALSE) {
  .attn_call(Q, K, V, "nw_rbf", causal = causal, window = window, bandwidth = bandwidth,
             block_q = block_q, block_k = block_k, n_threads = n_threads,
             device = match.arg(device), info = info, progress = progress)
}

#' Local Linear Attention
#'
#' At each query \eqn{q} the kernel-weighted local linear regression of the values on the keys
#' (Zuo et al., "Local Linear Attention", eqs. 6-8)
#' \deqn{\min_{a, B} \sum_j w_j \|v_j - a - B (k_j - q)\|^2 + \lambda\, \omega \|B\|_F^2,
#'   \quad \omega = \sum_j w_j,}
#' is solved and its intercept returned: \eqn{o = \sum_j s_j v_j} with
#' \eqn{s_j = w_j (1 - z_j^\top \rho) / (\omega - \mu^\top \rho)}, \eqn{z_j = k_j - q},
#' \eqn{\mu = \sum_j w_j z_j}, \eqn{\rho = \Sigma^{-1} \mu},
#' \eqn{\Sigma = \sum_j w_j z_j z_j^\top + \lambda \omega I}. The ridge is scaled by the weight
#' sum, so the fit does not change when every weight is multiplied by a constant (this is what
#' makes the blockwise algorithm's running maximum exact). `ridge = Inf` in the limit gives
#' Nadaraya-Watson; `ridge = 0` is classical local linear regression, which reproduces linear
#' functions exactly.
#'
#' @inheritParams softmax_attention
#' @param bandwidth \eqn{h} of the kernel: \eqn{w = \exp(q^\top k / h)} for `kernel = "dot"`
#'   (default \eqn{\sqrt{dim}}) or \eqn{\exp(-\|q - k\|^2 / 2h^2)} for `kernel = "rbf"`
#'   (default \eqn{dim^{1/4}}).
#' @param ridge \eqn{\lambda \ge 0}: one number, one per query position, or an array
#'   `(batch, heads, n_q)`. Causal attention needs `ridge > 0` (the first positions see fewer
#'   keys than dimensions).
#' @param method `"blockwise"` (FlashLLA: conjugate gradients with a matrix-free
#'   \eqn{\Sigma p}, memory linear in the sequence length), `"direct"` (per-query
#'   \eqn{dim \times dim} statistics and a Cholesky solve; exact, for small `dim`) or
#'   `"naive"` (materialises all weights; the reference).
#' @param kernel `"dot"` or `"rbf"`.
#' @param scale Alternative to `bandwidth` for the dot kernel (`scale = 1 / bandwidth`).
#' @param cg_tol,cg_max_iter Conjugate-gradient stopping rule of `method = "blockwise"`:
#'   relative residual (default `1e-12`) and iteration cap (default `2 dim + 10`). A query
#'   that does not converge gives a warning.
#' @return The attention output, or a list when `info = TRUE` (CG iterations per query block,
#'   convergence, the smallest \eqn{(\omega - \mu^\top\rho)/\omega}).
#' @examples
#' set.seed(2)
#' K <- matrix(rnorm(60 * 2), 60); V <- K %*% c(1, -2) + 0.5      # a linear function
#' Q <- matrix(rnorm(5 * 2), 5)
#' cbind(lla = drop(lla(Q, K, V, kernel = "rbf", bandwidth = 1)),
#'       truth = drop(Q %*% c(1, -2) + 0.5),
#'       nw = drop(nw_rbf_attention(Q, K, V, bandwidth = 1)))
#' @export
lla <- function(Q, K, V, bandwidth = NULL, ridge = 0, causal = FALSE, window = 0L,
                method = c("blockwise", "direct", "naive"), kernel = c("dot", "rbf"),
                scale = NULL, block_q = 64L, block_k = 64L, cg_tol = NULL, cg_max_iter = 0L,
                n_threads = 0L, device = c("cpu", "cuda"), info = FALSE, progress = FALSE) {
  .attn_call(Q, K, V, "lla", causal = causal, window = window, scale = scale,
             bandwidth = bandwidth, ridge = ridge, algorithm = match.arg(method),
             kernel = match.arg(kernel), block_q = block_q, block_k = block_k, cg_tol = cg_tol,
             cg_max_iter = cg_max_iter, n_threads = n_threads, device = match.arg(device),
             info = info, progress = progress)
}

#' Linear attention with a feature map
#'
#' \deqn{o_i = \frac{\sum_j \phi(q_i)^\top \phi(k_j) v_j}{\sum_j \phi(q_i)^\top \phi(k_j)}}
#' (or the numerator alone with `normalize = FALSE`). Causal attention runs the recurrence
#' \eqn{S_i = S_{i-1} + \phi(k_i) v_i^\top}. Feature maps: `"elu_plus_one"`
#' (\eqn{elu(x) + 1}, Katharopoulos et al.), `"relu"`, `"identity"`, and `"epanechnikov"`,
#' \eqn{\phi(x) = (\sqrt{1 - 2/\tau}, \sqrt{2/\tau}\, x)}, which on unit-norm inputs with
#' \eqn{\tau \ge 4} is Nadaraya-Watson with the Epanechnikov kernel
#' \eqn{\max(0, 1 - \|q - k\|^2/\tau)}.
#'
#' @inheritParams softmax_attention
#' @param feature_map One of `"elu_plus_one"`, `"relu"`, `"identity"`, `"epanechnikov"`.
#' @param tau Temperature of the Epanechnikov map (`>= 2`).
#' @param normalize Divide by \eqn{\sum_j \phi(q)^\top\phi(k_j)} (an error where it is not
#'   positive).
#' @return The attention output, or a list when `info = TRUE`.
#' @examples
#' set.seed(3)
#' Q <- matrix(rnorm(8 * 3), 8); K <- matrix(rnorm(20 * 3), 20); V <- matrix(rnorm(20), 20)
#' linear_attention(Q, K, V, causal = FALSE)
#' @export
linear_attention <- function(Q, K, V, feature_map = c("elu_plus_one", "relu", "identity",
                                                       "epanechnikov"),
                             tau = 4, normalize = TRUE, causal = FALSE, window = 0L,
                             n_threads = 0L, device = c("cpu", "cuda"), info = FALSE,
                             progress = FALSE) {
  .attn_call(Q, K, V, "linear", causal = causal, window = window,
             feature_map = match.arg(feature_map), tau = tau, normalize = normalize,
             n_threads = n_threads, device = match.arg(device), info = info, progress = progress)
}

#' Mesa attention: a global ridge regression at each position
#'
#' \eqn{o_i = S_i H_i^{-1} q_i} with \eqn{S_i = \sum_j v_j k_j^\top} and
#' \eqn{H_i = \sum_j k_j k_j^\top + \lambda I} over the keys query \eqn{i} may use (Zuo et
#' al., eq. 2; causal attention updates \eqn{S} and \eqn{H} recurrently). The prediction of
#' the ridge regression of the values on the keys, fitted on those keys.
#'
#' @inheritParams softmax_attention
#' @param ridge \eqn{\lambda} (not scaled by a weight sum); one number, one per query
#'   position, or an array `(batch, heads, n_q)`.
#' @return The attention output, or a list when `info = TRUE`.
#' @examples
#' set.seed(4)
#' K <- matrix(rnorm(30 * 3), 30); V <- matrix(rnorm(30), 30)
#' mesa_attention(K, K, V, ridge = 1, causal = TRUE)[1:3, ]
#' @export
mesa_attention <- function(Q, K, V, ridge = 1, causal = FALSE, window = 0L, n_threads = 0L,
                           device = c("cpu", "cuda"), info = FALSE, progress = FALSE) {
  .attn_call(Q, K, V, "mesa", causal = causal, window = window, ridge = ridge,
             n_threads = n_threads, device = match.arg(device), info = info, progress = progress)
}

#' Attention weights of an attention method
#'
#' The matrix (or array) \eqn{W} with `output = W %*% V`: row \eqn{i} holds the weight of each
#' value in query \eqn{i}'s output (the equivalent kernel of the estimator). Rows sum to one
#' for softmax, Nadaraya-Watson, LLA and normalised linear attention; LLA weights can be
#' negative. Computed in double precision with all \eqn{n_q \times n_k} weights in memory.
#'
#' @param Q,K Queries and keys, as for [softmax_attention()].
#' @param method One of `"softmax"`, `"nw_rbf"`, `"lla"`, `"linear"`, `"mesa"`.
#' @param scale,bandwidth,kernel Kernel of `softmax`, `nw_rbf` and `lla` (see those functions).
#' @param ridge Ridge of `lla` (default 0) and `mesa` (default 1).
#' @param causal,window Masks.
#' @param feature_map,tau,normalize Feature map of `linear`.
#' @param n_threads Threads (0 = OpenMP default).
#' @return An array with `Q`'s layout and `n_k` columns.
#' @examples
#' set.seed(5)
#' K <- matrix(rnorm(12 * 2), 12); V <- matrix(rnorm(12), 12)
#' W <- attn_weights(K, K, method = "lla", ridge = 0.1, causal = TRUE)
#' all.equal(W %*% V, lla(K, K, V, ridge = 0.1, causal = TRUE))
#' @export
attn_weights <- function(Q, K, method = c("softmax", "nw_rbf", "lla", "linear", "mesa"),
                         scale = NULL, bandwidth = NULL, ridge = NULL,
                         kernel = c("dot", "rbf"), causal = FALSE, window = 0L,
                         feature_map = c("elu_plus_one", "relu", "identity", "epanechnikov"),
                         tau = 4, normalize = TRUE, n_threads = 0L) {
  method <- match.arg(method)
  if (is.null(ridge)) ridge <- if (method == "mesa") 1 else 0
  options <- list(method = method, causal = isTRUE(causal), window = .attn_window(window),
                  scale = .attn_opt(scale), bandwidth = .attn_opt(bandwidth),
                  kernel = match.arg(kernel), feature_map = match.arg(feature_map),
                  feature_tau = as.double(tau), normalize = isTRUE(normalize),
                  n_threads = as.integer(n_threads))
  attn_weights_cpp(.attn_array(Q, "Q"), .attn_array(K, "K"), .attn_ridge(ridge), options)
}
