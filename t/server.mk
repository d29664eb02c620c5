# Tests of server (included by t/local.mk).
