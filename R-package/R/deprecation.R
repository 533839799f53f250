# Renamed arguments (NEWS.md, "Renamed arguments"): the old name keeps working for one release
# with a deprecation warning naming the old and the new argument; giving both is an error.
.renamed_arg <- function(fn, old, new, value, new_missing) {
  if (!new_missing) {
    stop(sprintf("%s: got both '%s' (deprecated) and '%s'; pass '%s' only", fn, old, new, new),
         call. = FALSE)
  }
  .Deprecated(msg = sprintf("%s: argument '%s' is deprecated and will be removed in the next release; use '%s' instead",
                            fn, old, new))
  value
}
