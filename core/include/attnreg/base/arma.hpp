// attnreg: the one place the core includes Armadillo. Every core header includes THIS file,
// never <armadillo> directly: in the R package (ATTNREG_R_BUILD) Armadillo must come with
// RcppArmadillo's configuration (32-bit uword, R's RNG, no wrapper library), and every
// translation unit of one shared library must see the same configuration.
#pragma once

#if defined(ATTNREG_R_BUILD)
#include <RcppArmadillo.h>
#else
#include <armadillo>
#endif
