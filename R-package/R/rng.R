# R's random number generator decides every random draw of the package: a bootstrap without
# `seed` seeds the core's generator from R's stream (so set.seed() reproduces it), and a given
# seed is used without touching the user's stream.

# The seed for the core's generator: `seed` if given (checked), else a draw from R's stream.
.attnreg_seed <- function(seed, arg = "seed") {
  if (is.null(seed)) {
    # Two 26-bit draws: a 52-bit seed, exact in a double.
    u <- floor(stats::runif(2L) * 2^26)
    return(u[1] * 2^26 + u[2])
  }
  if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) || seed < 0 ||
      seed != floor(seed) || seed >= 2^53) {
    stop(arg, ": must be NULL (draw from R's random number generator, so set.seed() decides) ",
         "or a single whole number >= 0", call. = FALSE)
  }
  as.double(seed)
}

# Evaluate `expr` with R's generator seeded by `seed` (NULL: the user's stream as it is), then
# restore the user's .Random.seed (or its absence), as withr::with_seed does.
.attnreg_with_seed <- function(seed, expr) {
  if (is.null(seed)) return(expr)
  seed <- .attnreg_seed(seed)
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit({
    if (had) assign(".Random.seed", old, envir = env) else
      if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
  }, add = TRUE)
  set.seed(seed %% .Machine$integer.max)
  expr
}

# Switch the core's text progress bar on for one call; returns a function that closes it.
.attnreg_progress_on <- function(progress) {
  if (!isTRUE(progress)) return(function(ok = FALSE) invisible(NULL))
  .attnreg_progress(TRUE)
  function(ok = FALSE) .attnreg_progress(FALSE, complete = ok)
}
