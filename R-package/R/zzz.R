.onLoad <- function(libname, pkgname) {
  .attnreg_init()  # installs the core's Ctrl-C checker (R_CheckUserInterrupt, main thread)
  .register_tidiers()  # tidy/glance/augment with generics (broom), which stay in Suggests
  invisible()
}
