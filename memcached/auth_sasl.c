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

/* $MEMCACHED_SASL_PWDB (memcached's --enable-sasl-pwdb), or NULL. */
static const char *pwdb;

/*
 * The password check of $MEMCACHED_SASL_PWDB, read at every login as
 * memcached reads it: "user:password" lines (user or user@host); the
 * password given must be
 * what follows "user:" up to the line's end, a ':' (more fields may
 * follow) or a NUL. Lock held.
 */
static int pwdb_checkpass(sasl_conn_t *conn, void *context, const char *user,
                          const char *pass, unsigned passlen,
                          struct propctx *propctx)
{
    size_t nuser = strlen(user), nhost = strlen(hostname), cap = 0;
    char *line = NULL;
    bool ok = false;
    ssize_t n;

    (void)conn, (void)context, (void)propctx;
    /* The library names the user user@realm, the realm being our host
     * name: a line may name it either way. */
    size_t nbare = nuser > nhost + 1 && user[nuser - nhost - 1] == '@' &&
                           strcmp(user + nuser - nhost, hostname) == 0
                       ? nuser - nhost - 1
                       : nuser;
    FILE *f = fopen(pwdb, "r");
    if (f == NULL) {
        if (SETTING_GET(verbose))
            fprintf(stderr, "WARNING: Failed to open sasl database <%s>\n",
                    pwdb);
        return SASL_NOAUTHZ;
    }
    while ((n = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)n, nu;
        if (len > nuser && memcmp(line, user, nuser) == 0 && line[nuser] == ':')
            nu = nuser;
        else if (len > nbare && memcmp(line, user, nbare) == 0 &&
                 line[nbare] == ':')
            nu = nbare;
        else
            continue;
        const char *p = line + nu + 1;
        size_t rest = len - nu - 1;
        ok = passlen <= rest && memcmp(p, pass, passlen) == 0 &&
             (passlen == rest || strchr(":\r\n", p[passlen]) != NULL);
        break; /* the user's first line decides */
    }
    free(line);
    fclose(f);
    if (!ok && SETTING_GET(verbose))
        fprintf(stderr, "INFO: User <%s> failed to authenticate\n", user);
    return ok ? SASL_OK : SASL_NOAUTHZ;
}

/* The pwdb check comes first, and only with $MEMCACHED_SASL_PWDB set. */
static sasl_callback_t callbacks[] = {
    {SASL_CB_SERVER_USERDB_CHECKPASS, SASL_CB(pwdb_checkpass), NULL},
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
    pwdb = getenv("MEMCACHED_SASL_PWDB");
    /* Without a pwdb the table starts at the log callback. */
    if (sasl_server_init(pwdb ? callbacks : callbacks + 1, "memcached") !=
        SASL_OK) {
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

/* The n bytes at s as a C string in a new buffer; NULL when they hold a
 * NUL (the library would read a shorter string: "pw\0x" would pass as
 * "pw") or memory is short. */
static char *c_string(const char *s, size_t n)
{
    char *c = memchr(s, '\0', n) ? NULL : malloc(n + 1);

    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

bool auth_sasl_checkpass(const char *user, size_t nuser, const char *pass,
                         size_t npass)
{
    /* sasl_checkpass() takes lengths, but its password check (auxprop)
     * compares the password as a C string: the handshake's AUTH hands
     * bytes that end where its receive buffer ends, and whatever the heap
     * held after them made right logins fail at random. */
    char *u = c_string(user, nuser), *p = c_string(pass, npass);
    bool ok = false;

    pthread_mutex_lock(&sasl_lock);
    sasl_conn_t *conn = u && p ? conn_new() : NULL;
    if (conn) {
        ok = sasl_checkpass(conn, u, (unsigned)nuser, p, (unsigned)npass) ==
             SASL_OK;
        sasl_dispose(&conn);
    }
    pthread_mutex_unlock(&sasl_lock);
    free(u);
    free(p);
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
