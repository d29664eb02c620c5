# Tests of softnic (included by t/local.mk).
