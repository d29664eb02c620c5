/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/auth.c - -Y's password file and ASCII authentication command,
 * and the credential check both protocols' logins share with the rdn
 * handshake (see auth.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memcached/auth.h"
#include "memcached/auth_sasl.h"
#include "memcached/conn.h"
#include "memcached/proto_parse.h"
#include "memcached/settings.h"
#include "memcached/stats.h"

/* memcached gives up on an authentication line this long without '\n'. */
#define AUTH_LINE_MAX 2048

struct auth_entry {
    const char *user, *pass; /* into the file's bytes */
    size_t nuser, npass;
};

/* The loaded file; replaced whole under the lock by a (re)load. */
static struct {
    pthread_mutex_t lock;
    char *data;
    struct auth_entry *e;
    size_t n;
} file = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Splits data (len bytes) into entries; -EINVAL for a line without ':'. */
static int parse_entries(char *data, size_t len, struct auth_entry **out,
                         size_t *n)
{
    struct auth_entry *e = NULL;
    size_t cap = 0, cnt = 0;

    for (size_t at = 0; at < len;) {
        char *line = data + at;
        size_t rest = len - at;
        char *nl = memchr(line, '\n', rest);
        size_t llen = nl ? (size_t)(nl - line) : rest;
        char *colon = memchr(line, ':', llen);

        at += llen + 1;
        if (colon == NULL || memchr(line, '\0', (size_t)(colon - line))) {
            free(e);
            return -EINVAL;
        }
        if (cnt == cap) {
            cap = cap ? cap * 2 : 8;
            struct auth_entry *ne = realloc(e, cap * sizeof(*e));
            if (ne == NULL) {
                free(e);
                return -ENOMEM;
            }
            e = ne;
        }
        char *pass = colon + 1;
        size_t np = strcspn(pass, "\r\n"); /* data is NUL-terminated */
        if (np > llen - (size_t)(pass - line))
            np = llen - (size_t)(pass - line);
        e[cnt++] = (struct auth_entry){.user = line,
                                       .nuser = (size_t)(colon - line),
                                       .pass = pass,
                                       .npass = np};
    }
    *out = e;
    *n = cnt;
    return 0;
}

int auth_file_load(const char *path)
{
    struct auth_entry *e = NULL;
    struct stat st;
    size_t n = 0;
    int rc;

    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -errno;
    if (fstat(fileno(f), &st) != 0) {
        rc = -errno;
        goto err_close;
    }
    char *data = calloc(1, (size_t)st.st_size + 1);
    if (data == NULL) {
        rc = -ENOMEM;
        goto err_close;
    }
    size_t len = fread(data, 1, (size_t)st.st_size, f);
    rc = parse_entries(data, len, &e, &n);
    if (rc < 0)
        goto err_free;
    fclose(f);
    pthread_mutex_lock(&file.lock);
    char *old_data = file.data;
    struct auth_entry *old_e = file.e;
    file.data = data;
    file.e = e;
    file.n = n;
    pthread_mutex_unlock(&file.lock);
    free(old_data);
    free(old_e);
    return 0;

err_free:
    free(data);
err_close:
    fclose(f);
    return rc;
}

void auth_file_reload(void)
{
    if (settings.auth_file == NULL)
        return;
    int rc = auth_file_load(settings.auth_file);
    if (rc < 0)
        fprintf(stderr, "Could not reload authfile [%s]: %s\n",
                settings.auth_file,
                rc == -EINVAL ? "malformed entry" : strerror(-rc));
}

/* Equal bytes, in time that depends on n only. */
static bool same_bytes(const char *a, const char *b, size_t n)
{
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static bool file_check(const char *user, size_t nuser, const char *pass,
                       size_t npass)
{
    bool ok = false;

    pthread_mutex_lock(&file.lock);
    for (size_t i = 0; i < file.n; i++) {
        const struct auth_entry *e = &file.e[i];
        /* Every entry is compared, so the time tells nothing either. */
        ok |=
            e->nuser == nuser && e->npass == npass &&
            same_bytes(user, e->user, nuser) & same_bytes(pass, e->pass, npass);
    }
    pthread_mutex_unlock(&file.lock);
    return ok;
}

bool auth_check(const char *user, size_t nuser, const char *pass, size_t npass)
{
    if (settings.auth_file)
        return file_check(user, nuser, pass, npass);
    if (settings.sasl)
        return auth_sasl_checkpass(user, nuser, pass, npass);
    return false;
}

bool auth_enabled(void)
{
    return settings.auth_file != NULL || settings.sasl;
}

/*
 * The command line "set <any> <any> <any> <n>": consumed, and then the
 * data block of n + 2 bytes, "user pass\r\n", is awaited (as memcached,
 * which reads the line first).
 */
static enum bin_result login_line(struct conn *c, char *buf, size_t avail,
                                  size_t *used)
{
    struct token tok[MAX_TOKENS];
    uint64_t size;

    if (avail < 2)
        return BIN_NEED_MORE;
    char *nl = memchr(buf, '\n', avail);
    if (nl == NULL)
        return avail > AUTH_LINE_MAX ? BIN_CLOSE : BIN_NEED_MORE;
    *used = (size_t)(nl - buf) + 1;
    *nl = '\0'; /* the '\r' stays: the number parsers stop at it */
    size_t ntok = tokenize(buf, tok, MAX_TOKENS);
    if (ntok < 6 || strcmp(tok[0].value, "set") != 0 ||
        !parse_u64(tok[4].value, &size)) {
        conn_out_error(c, "CLIENT_ERROR unauthenticated");
        return BIN_DONE;
    }
    /* memcached reads the size as an unsigned long and keeps its low 32
     * bits (safe_strtoul() into a uint32_t). */
    c->auth_data = (size_t)(uint32_t)size + 2;
    return BIN_DONE;
}

/* The data block of the command: checks the login it carries. */
static enum bin_result login_data(struct conn *c, char *buf, size_t avail,
                                  size_t *used)
{
    struct token tok[MAX_TOKENS];
    size_t len = c->auth_data;

    if (avail < len)
        return BIN_NEED_MORE;
    *used = len;
    c->auth_data = 0;
    if (memcmp(buf + len - 2, "\r\n", 2) != 0) {
        conn_out_error(c, "CLIENT_ERROR bad command line termination");
        return BIN_DONE;
    }
    buf[len - 2] = '\0';
    if (tokenize(buf, tok, MAX_TOKENS) < 3) {
        conn_out_error(c, "CLIENT_ERROR bad authentication token format");
        return BIN_DONE;
    }
    stats_inc(TC_AUTH_CMDS);
    if (file_check(tok[0].value, strlen(tok[0].value), tok[1].value,
                   strlen(tok[1].value))) {
        c->authenticated = true;
        conn_out_error(c, "STORED");
    } else {
        stats_inc(TC_AUTH_ERRORS);
        conn_out_error(c, "CLIENT_ERROR authentication failure");
    }
    return BIN_DONE;
}

enum bin_result auth_ascii_process(struct conn *c, char *buf, size_t avail,
                                   size_t *used)
{
    return c->auth_data ? login_data(c, buf, avail, used)
                        : login_line(c, buf, avail, used);
}
