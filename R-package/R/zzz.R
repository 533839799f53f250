.onLoad <- function(libname, pkgname) {
  .attnreg_init()  # installs the core's Ctrl-C checker (R_CheckUserInterrupt, main thread)
  invisible()
}
