# Tests of chain (included by t/local.mk).
