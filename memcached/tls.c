/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/tls.c - TLS through OpenSSL (see tls.h).
 */
#include "config.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/items.h"
#include "memcached/settings.h"
#include "memcached/tls.h"
#include "proto/barrier.h"

#define SESSION_ID_CONTEXT "memcached" /* scope of cached sessions */
#define SSL_ERR_MAX        256         /* one OpenSSL error string */
#define WBUF_MAX           (1024 * 1024)

struct tls_config tls_config = {
    .keyformat = SSL_FILETYPE_PEM,
    .wbuf_kb = 16, /* one TLS record holds at most 16 KB */
    .min_version = 2,
};

/*
 * The context new connections get: swapped by refresh_certs under
 * ctx_lock, taken (SSL_new() references it) under ctx_lock.
 */
static SSL_CTX *server_ctx;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t last_refresh; /* items_now() of the last load; atomic */
static uint64_t handshake_errors, new_sessions; /* atomic */

/* Each thread's copy buffer of tls_writev(): allocated on first use,
 * freed when the thread ends (wbuf_key's destructor). */
static pthread_key_t wbuf_key;
static pthread_once_t wbuf_once = PTHREAD_ONCE_INIT;
static bool wbuf_key_ok;

/* ssl_verify_mode 0..3 as OpenSSL's flags (what stats settings shows). */
static int verify_flags(void)
{
    static const int flags[] = {
        SSL_VERIFY_NONE,
        SSL_VERIFY_PEER,
        SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
        SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT |
            SSL_VERIFY_CLIENT_ONCE,
    };
    return flags[tls_config.verify_mode];
}

static const int min_versions[] = {TLS1_VERSION, TLS1_1_VERSION, TLS1_2_VERSION,
                                   TLS1_3_VERSION};

/* The copy buffer's size: ssl_wbuf_size, but at least a byte (memcached
 * takes 0 too) and at most WBUF_MAX (it multiplies in 32 bits; beyond a
 * megabyte only the count of SSL_write() calls would change). */
static size_t wbuf_size(void)
{
    size_t n = (size_t)tls_config.wbuf_kb * 1024;

    return n == 0 ? 1 : n > WBUF_MAX ? WBUF_MAX : n;
}

static void wbuf_key_create(void)
{
    wbuf_key_ok = pthread_key_create(&wbuf_key, free) == 0;
}

/* This thread's copy buffer; NULL when out of memory. */
static char *thread_wbuf(void)
{
    char *buf;

    pthread_once(&wbuf_once, wbuf_key_create);
    if (!wbuf_key_ok)
        return NULL;
    buf = pthread_getspecific(wbuf_key);
    if (buf == NULL) {
        buf = malloc(wbuf_size());
        if (buf != NULL && pthread_setspecific(wbuf_key, buf) != 0) {
            free(buf);
            buf = NULL;
        }
    }
    return buf;
}

static int new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
    (void)ssl;
    (void)sess;
    fetch_add_relaxed(&new_sessions, 1);
    return 0; /* the session's reference stays OpenSSL's */
}

/* The oldest error queued on this thread, as memcached formats it. */
static void first_ssl_error(char *buf, size_t size)
{
    unsigned long e = ERR_get_error();

    buf[0] = '\0';
    if (e != 0)
        ERR_error_string_n(e, buf, size);
}

/*
 * Loads chain, key and CA file into ctx as memcached does (same calls,
 * same order, same messages). Returns true, or false with the message +
 * "\r\n" in err; the other queued OpenSSL errors are printed on stderr.
 */
static bool load_certs(SSL_CTX *ctx, char *err, size_t size)
{
    const struct tls_config *t = &tls_config;
    char e[SSL_ERR_MAX];
    int n = -1;

    if (!SSL_CTX_use_certificate_chain_file(ctx, t->chain_cert)) {
        first_ssl_error(e, sizeof(e));
        n = snprintf(err, size, "Error loading the certificate chain: %s : %s",
                     t->chain_cert ? t->chain_cert : "(null)", e);
    } else if (!SSL_CTX_use_PrivateKey_file(ctx, t->key, t->keyformat)) {
        first_ssl_error(e, sizeof(e));
        n = snprintf(err, size, "Error loading the key: %s : %s",
                     t->key ? t->key : "(null)", e);
    } else if (!SSL_CTX_check_private_key(ctx)) {
        first_ssl_error(e, sizeof(e));
        n = snprintf(err, size, "Error validating the certificate: %s", e);
    } else if (t->ca_cert) {
        if (!SSL_CTX_load_verify_locations(ctx, t->ca_cert, NULL)) {
            first_ssl_error(e, sizeof(e));
            n = snprintf(err, size, "Error loading the CA certificate: %s : %s",
                         t->ca_cert, e);
        } else {
            SSL_CTX_set_client_CA_list(ctx,
                                       SSL_load_client_CA_file(t->ca_cert));
        }
    }
    if (n < 0)
        return true;
    /* The reply ends in "\r\n" even when the message was cut. */
    size_t len = (size_t)n < size - 3 ? (size_t)n : size - 3;
    memcpy(err + len, "\r\n", 3);
    ERR_print_errors_fp(stderr);
    return false;
}

/* A server context with every setting but the certificates. */
static SSL_CTX *ctx_new(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

    if (ctx == NULL)
        return NULL;
    SSL_CTX_set_min_proto_version(ctx, min_versions[tls_config.min_version]);
    SSL_CTX_set_verify(ctx, verify_flags(), NULL);
    if (tls_config.session_cache) {
        SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_set_session_id_context(
            ctx, (const unsigned char *)SESSION_ID_CONTEXT,
            sizeof(SESSION_ID_CONTEXT) - 1);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    if (tls_config.kernel_tls)
        SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    /* A retried SSL_write() may see the same bytes at another address
     * (the per-thread copy) and more of them. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return ctx;
}

/* A complete context: settings, then certificates (see load_certs). */
static SSL_CTX *ctx_build(char *err, size_t size)
{
    SSL_CTX *ctx = ctx_new();

    if (ctx == NULL) {
        snprintf(err, size, "Error creating the TLS context\r\n");
        return NULL;
    }
    if (!load_certs(ctx, err, size)) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int tls_start(void)
{
    char err[SSL_ERR_MAX + 4096];

    if (!tls_config.enabled)
        return 0;
    SSL_CTX *ctx = ctx_build(err, sizeof(err));
    if (ctx == NULL) {
        fputs(err, stderr);
        return -EINVAL;
    }
    if (tls_config.ciphers &&
        !SSL_CTX_set_cipher_list(ctx, tls_config.ciphers)) {
        fprintf(stderr, "Error setting the provided cipher(s): %s\n",
                tls_config.ciphers);
        SSL_CTX_free(ctx);
        return -EINVAL;
    }
    server_ctx = ctx;
    store_relaxed(&last_refresh, items_now());
    return 0;
}

bool tls_refresh_certs(char *err, size_t size)
{
    if (!tls_config.enabled) {
        snprintf(err, size, "Error TLS not enabled\r\n");
        return false;
    }
    SSL_CTX *ctx = ctx_build(err, size);
    if (ctx == NULL)
        return false;
    /* The cipher list was accepted at start; it is the same string. */
    if (tls_config.ciphers)
        SSL_CTX_set_cipher_list(ctx, tls_config.ciphers);
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX *old = server_ctx;
    server_ctx = ctx;
    pthread_mutex_unlock(&ctx_lock);
    SSL_CTX_free(old); /* live sessions hold their own references */
    store_relaxed(&last_refresh, items_now());
    return true;
}

struct ssl_st *tls_conn_new(int fd)
{
    SSL *ssl = NULL;

    pthread_mutex_lock(&ctx_lock);
    if (server_ctx)
        ssl = SSL_new(server_ctx);
    pthread_mutex_unlock(&ctx_lock);
    if (ssl == NULL)
        return NULL;
    if (!SSL_set_fd(ssl, fd)) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_accept_state(ssl);
    return ssl;
}

void tls_conn_free(struct ssl_st *ssl)
{
    if (ssl == NULL)
        return;
    ERR_clear_error();
    /* Only after a handshake: an alert to a client that never finished
     * one is noise; the non-blocking socket makes this never wait. */
    if (SSL_is_init_finished(ssl))
        SSL_shutdown(ssl);
    SSL_free(ssl);
    ERR_clear_error();
}

/* A failed read or write. During the handshake it counts as a handshake
 * error, unless the peer just closed (e.g. a port probe). After it, a
 * close without close_notify is an ordinary end (0). */
static ssize_t failed(SSL *ssl, int err)
{
    unsigned long e = ERR_peek_error();
    bool eof = (err == SSL_ERROR_SSL && ERR_GET_LIB(e) == ERR_LIB_SSL &&
                ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) ||
               (err == SSL_ERROR_SYSCALL && errno == 0);

    if (!SSL_is_init_finished(ssl) && !eof) {
        fetch_add_relaxed(&handshake_errors, 1);
        if (SETTING_GET(verbose))
            fprintf(stderr, "SSL connection failed with error code : %d : %s\n",
                    err, strerror(errno));
    }
    ERR_clear_error();
    return eof && SSL_is_init_finished(ssl) ? 0 : TLS_FAILED;
}

/* What an SSL_read()/SSL_write() result rc <= 0 means for the caller. */
static ssize_t io_result(SSL *ssl, int rc)
{
    int err = SSL_get_error(ssl, rc);

    switch (err) {
    case SSL_ERROR_WANT_READ:
        return TLS_WAIT_READABLE;
    case SSL_ERROR_WANT_WRITE:
        return TLS_WAIT_WRITABLE;
    case SSL_ERROR_ZERO_RETURN:
        return 0; /* close_notify */
    default:
        return failed(ssl, err);
    }
}

ssize_t tls_read(struct ssl_st *ssl, void *buf, size_t len, bool *more)
{
    int n = len > INT32_MAX ? INT32_MAX : (int)len;

    *more = false;
    ERR_clear_error();
    errno = 0;
    int rc = SSL_read(ssl, buf, n);
    if (rc > 0) {
        *more = SSL_pending(ssl) > 0;
        return rc;
    }
    return io_result(ssl, rc);
}

ssize_t tls_writev(struct ssl_st *ssl, const struct iovec *iov, int niov)
{
    size_t room = wbuf_size(), used = 0;
    char *wbuf = thread_wbuf();

    if (wbuf == NULL)
        return TLS_FAILED;
    for (int i = 0; i < niov && used < room; i++) {
        size_t n = iov[i].iov_len < room - used ? iov[i].iov_len : room - used;
        memcpy(wbuf + used, iov[i].iov_base, n);
        used += n;
    }
    if (used == 0)
        return 0;
    ERR_clear_error();
    errno = 0;
    int rc = SSL_write(ssl, wbuf, (int)used);
    if (rc > 0)
        return rc;
    ssize_t r = io_result(ssl, rc);
    return r == 0 ? TLS_FAILED : r;
}

void tls_stats(stat_sink_fn sink, void *ctx)
{
    if (!tls_config.enabled)
        return;
    if (tls_config.session_cache)
        stat_sinkf(sink, ctx, "ssl_new_sessions", "%llu",
                   (unsigned long long)load_relaxed(&new_sessions));
    stat_sinkf(sink, ctx, "ssl_handshake_errors", "%llu",
               (unsigned long long)load_relaxed(&handshake_errors));
    stat_sinkf(sink, ctx, "time_since_server_cert_refresh", "%u",
               items_now() - load_relaxed(&last_refresh));
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

void tls_settings_stats(stat_sink_fn sink, void *ctx)
{
    static const char *const versions[] = {"tlsv1.0", "tlsv1.1", "tlsv1.2",
                                           "tlsv1.3"};
    const struct tls_config *t = &tls_config;

    sink(ctx, "ssl_enabled", yes_no(t->enabled));
    sink(ctx, "ssl_chain_cert", t->chain_cert ? t->chain_cert : "(null)");
    sink(ctx, "ssl_key", t->key ? t->key : "(null)");
    stat_sinkf(sink, ctx, "ssl_verify_mode", "%d", verify_flags());
    stat_sinkf(sink, ctx, "ssl_keyformat", "%d", t->keyformat);
    sink(ctx, "ssl_ciphers", t->ciphers ? t->ciphers : "NULL");
    sink(ctx, "ssl_ca_cert", t->ca_cert ? t->ca_cert : "NULL");
    stat_sinkf(sink, ctx, "ssl_wbuf_size", "%u", t->wbuf_kb * 1024u);
    sink(ctx, "ssl_session_cache", yes_no(t->session_cache));
    sink(ctx, "ssl_kernel_tls", yes_no(t->kernel_tls));
    sink(ctx, "ssl_min_version", versions[t->min_version]);
}
