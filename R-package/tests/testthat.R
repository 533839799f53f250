library(testthat)
library(attnreg)
test_check("attnreg")
