# Tests of storage (included by t/local.mk).
