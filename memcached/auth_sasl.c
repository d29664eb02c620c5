/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/auth_sasl.c - SASL through Cyrus SASL (see auth_sasl.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcached/auth_sasl.h"
#include "memcached/settings.h"

#ifdef HAVE_SASL

#include <sasl/sasl.h>

struct auth_sasl {
    sasl_conn_t *conn;
    bool started; /* a SASL_AUTH began an exchange a STEP may continue */
};

static pthread_mutex_t sasl_lock = PTHREAD_MUTEX_INITIALIZER;
static char hostname[1025];

/* Where memcached looks when $SASL_CONF_PATH is not set: a file
 * memcached.conf in /etc/sasl or /etc/sasl2 (the library wants the
 * directory), or a directory of that name holding memcached.conf. */
static const char *const conf_dirs[] = {"/etc/sasl", "/etc/sasl2"};

static int getconfpath(void *context, char **path)
{
    static char found[64];
    const char *env = getenv("SASL_CONF_PATH");

    (void)context;
    *path = NULL;
    if (env) {
        *path = (char *)env;
    } else {
        for (size_t i = 0; i < sizeof(conf_dirs) / sizeof(conf_dirs[0]); i++) {
            char f[64];
            snprintf(f, sizeof(f), "%s/memcached.conf/memcached.conf",
                     conf_dirs[i]);
            if (access(f, F_OK) == 0) {
                snprintf(found, sizeof(found), "%s/memcached.conf",
                         conf_dirs[i]);
                *path = found;
                break;
            }
            snprintf(f, sizeof(f), "%s/memcached.conf", conf_dirs[i]);
            if (access(f, F_OK) == 0) {
                snprintf(found, sizeof(found), "%s", conf_dirs[i]);
                *path = found;
                break;
            }
        }
    }
    if (SETTING_GET(verbose)) {
        if (*path)
            fprintf(stderr, "Reading configuration from: <%s>\n", *path);
        else
            fprintf(stderr, "Failed to locate a config path\n");
    }
    return *path ? SASL_OK : SASL_FAIL;
}

/* The library's messages on stderr, filtered by -v as memcached does. */
static int sasl_log(void *context, int level, const char *message)
{
    int v = SETTING_GET(verbose);

    (void)context;
    if (level == SASL_LOG_NONE)
        return SASL_OK;
    if (level >= SASL_LOG_NOTE && v < 2)
        return SASL_OK;
    if ((level == SASL_LOG_WARN || level == SASL_LOG_FAIL) && v < 1)
        return SASL_OK;
    fprintf(stderr, "SASL (severity %d): %s\n", level, message);
    return SASL_OK;
}

/* The library's callback table takes every callback as int (*)(void);
 * the cast through void (*)(void) says that this is on purpose. */
typedef int (*sasl_cb_fn)(void);
#define SASL_CB(f) ((sasl_cb_fn)(void (*)(void))(f))

static sasl_callback_t callbacks[] = {
    {SASL_CB_LOG, SASL_CB(sasl_log), NULL},
    {SASL_CB_GETCONFPATH, SASL_CB(getconfpath), NULL},
    {SASL_CB_LIST_END, NULL, NULL},
};

bool auth_sasl_available(void)
{
    return true;
}

int auth_sasl_init(void)
{
    if (gethostname(hostname, sizeof(hostname) - 1) != 0)
        hostname[0] = '\0';
    if (sasl_server_init(callbacks, "memcached") != SASL_OK) {
        fprintf(stderr, "Error initializing sasl.\n");
        return -EIO;
    }
    if (SETTING_GET(verbose))
        fprintf(stderr, "Initialized SASL.\n");
    return 0;
}

/* A new server connection object, as memcached's init_sasl_conn(). Lock
 * held. */
static sasl_conn_t *conn_new(void)
{
    sasl_conn_t *conn = NULL;

    if (sasl_server_new("memcached", NULL, hostname[0] ? hostname : NULL, NULL,
                        NULL, NULL, 0, &conn) != SASL_OK) {
        if (SETTING_GET(verbose))
            fprintf(stderr, "Failed to initialize SASL conn.\n");
        return NULL;
    }
    return conn;
}

/* *s, created on first use; NULL when out of memory. Lock held. */
static struct auth_sasl *session(struct auth_sasl **s)
{
    if (*s == NULL)
        *s = calloc(1, sizeof(**s));
    if (*s && (*s)->conn == NULL)
        (*s)->conn = conn_new();
    return *s;
}

int auth_sasl_list(struct auth_sasl **s, const char **out, size_t *len)
{
    unsigned n = 0;
    int rc = -EIO;

    pthread_mutex_lock(&sasl_lock);
    struct auth_sasl *a = session(s);
    if (a && a->conn &&
        sasl_listmech(a->conn, NULL, "", " ", "", out, &n, NULL) == SASL_OK) {
        *len = n;
        rc = 0;
    }
    pthread_mutex_unlock(&sasl_lock);
    if (rc && SETTING_GET(verbose))
        fprintf(stderr, "Failed to list SASL mechanisms.\n");
    return rc;
}

enum auth_sasl_result auth_sasl_exchange(struct auth_sasl **s, bool step,
                                         const char *mech, const char *data,
                                         size_t len, const char **out,
                                         size_t *outlen)
{
    unsigned n = 0;
    int r = SASL_FAIL;

    *out = NULL;
    *outlen = 0;
    pthread_mutex_lock(&sasl_lock);
    struct auth_sasl *a = session(s);
    if (a && a->conn && !step) {
        r = sasl_server_start(a->conn, mech, len ? data : NULL, (unsigned)len,
                              out, &n);
        a->started = r == SASL_OK || r == SASL_CONTINUE;
    } else if (a && a->conn && a->started) {
        r = sasl_server_step(a->conn, len ? data : NULL, (unsigned)len, out,
                             &n);
    }
    pthread_mutex_unlock(&sasl_lock);
    if (SETTING_GET(verbose))
        fprintf(stderr, "sasl result code:  %d\n", r);
    *outlen = n;
    if (r == SASL_OK)
        return AUTH_SASL_OK;
    return r == SASL_CONTINUE ? AUTH_SASL_CONTINUE : AUTH_SASL_FAIL;
}

bool auth_sasl_checkpass(const char *user, size_t nuser, const char *pass,
                         size_t npass)
{
    bool ok = false;

    pthread_mutex_lock(&sasl_lock);
    sasl_conn_t *conn = conn_new();
    if (conn) {
        ok = sasl_checkpass(conn, user, (unsigned)nuser, pass,
                            (unsigned)npass) == SASL_OK;
        sasl_dispose(&conn);
    }
    pthread_mutex_unlock(&sasl_lock);
    return ok;
}

void auth_sasl_free(struct auth_sasl **s)
{
    if (*s == NULL)
        return;
    pthread_mutex_lock(&sasl_lock);
    if ((*s)->conn)
        sasl_dispose(&(*s)->conn);
    pthread_mutex_unlock(&sasl_lock);
    free(*s);
    *s = NULL;
}

#else /* !HAVE_SASL */

bool auth_sasl_available(void)
{
    return false;
}

int auth_sasl_init(void)
{
    return -ENOTSUP;
}

int auth_sasl_list(struct auth_sasl **s, const char **out, size_t *len)
{
    (void)s;
    *out = NULL;
    *len = 0;
    return -ENOTSUP;
}

enum auth_sasl_result auth_sasl_exchange(struct auth_sasl **s, bool step,
                                         const char *mech, const char *data,
                                         size_t len, const char **out,
                                         size_t *outlen)
{
    (void)s, (void)step, (void)mech, (void)data, (void)len;
    *out = NULL;
    *outlen = 0;
    return AUTH_SASL_FAIL;
}

bool auth_sasl_checkpass(const char *user, size_t nuser, const char *pass,
                         size_t npass)
{
    (void)user, (void)nuser, (void)pass, (void)npass;
    return false;
}

void auth_sasl_free(struct auth_sasl **s)
{
    (void)s;
}

#endif /* HAVE_SASL */
