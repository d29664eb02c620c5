# SPDX-License-Identifier: BSD-3-Clause
# Tests of authentication (included by t/local.mk): -S (SASL) and -Y (the
# ASCII auth file) side by side with Debian's memcached, a SASL login
# through libmemcached (t/sasl_login, built when libsasl2 is), and the
# login the rdn handshake wants from an authenticating server.
if HAVE_SASL
check_PROGRAMS += t/sasl_login
t_sasl_login_SOURCES = t/sasl_login.c
t_sasl_login_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_sasl_login_LDADD = $(LIBMEMCACHED_LIBS) $(SASL_LIBS)
endif
AUTH_PY_TESTS = t/proto_auth.py t/auth_rdn.py
TESTS += $(AUTH_PY_TESTS)
dist_check_SCRIPTS += $(AUTH_PY_TESTS)

# The -Y file's format and reloads (memcached/auth.c).
check_PROGRAMS += t/test_auth
TESTS += t/test_auth
t_test_auth_SOURCES = t/test_auth.c $(TESTUTIL)
t_test_auth_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
t_test_auth_LDADD = $(MCSERVER_LIBS) $(CHECK_LIBS)
