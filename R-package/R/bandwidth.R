#' Direct plug-in bandwidth for local-linear regression
#'
#' The Ruppert-Sheather-Wand (1995) direct plug-in bandwidth for 1-D local-linear regression
#' with the Gaussian kernel, \eqn{h = [\hat\sigma^2 (b - a) / (2 \sqrt{\pi} \hat\theta_{22}
#' n)]^{1/5}}. With `binned = TRUE` it equals `KernSmooth::dpill(x, y)` to rounding; with
#' `binned = FALSE` the pilot functionals come from exact local fits at the data points.
#'
#' @param x,y Numeric vectors of the same length (no missing values).
#' @param blockmax,divisor,trim,proptrun,gridsize As in `KernSmooth::dpill`.
#' @param binned Use dpill's 401-point linear-binning grid (default) or exact pilot fits.
#' @return A list with `bandwidth` (the Gaussian kernel's standard deviation) and the pilot
#'   estimates (`sigma2`, `theta22`, `n_blocks`, `gamma`, `lambda`, ...).
#' @examples
#' set.seed(1)
#' x <- runif(400); y <- sin(6 * x) + rnorm(400, 0, 0.3)
#' dpi_bandwidth(x, y)$bandwidth
#' @export
dpi_bandwidth <- function(x, y, blockmax = 5L, divisor = 20L, trim = 0.01, proptrun = 0.05,
                          gridsize = 401L, binned = TRUE) {
  if (!is.numeric(x) || !is.numeric(y)) {
    stop("x, y: must be numeric vectors", call. = FALSE)
  }
  .dpi_cpp(as.double(x), as.double(y), as.integer(blockmax), as.integer(divisor),
           as.double(trim), as.double(proptrun), as.integer(gridsize), isTRUE(binned))
}
