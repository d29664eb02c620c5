/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/compat_opts.c - memcached's TLS options, checked and stored
 * for tls.c, and its extstore and NAPI options, checked and ignored (see
 * compat_opts.h).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/compat_opts.h"
#include "memcached/proto_parse.h"
#include "memcached/tls.h"

#define EXT_WBUF_DEFAULT_MB 4 /* memcached's ext_wbuf_size default */

/* Each kind's dst, where the value goes (NULL: checked only). */
enum compat_kind {
    C_FLAG,   /* no value needed; one given is ignored. dst: bool */
    C_STR,    /* a value is required. dst: const char * */
    C_LONG,   /* safe_strtol. dst: int32_t */
    C_ULONG,  /* safe_strtoul. dst: uint32_t */
    C_DOUBLE, /* safe_strtod */
    C_RANGE,  /* safe_strtol, then min..max ("Invalid <name>. ..."). dst:
               * int32_t */
};

struct compat {
    const char *name;
    enum compat_kind kind;
    long min, max; /* C_RANGE */
    void *dst;
};

static const struct compat compat[] = {
    {"ssl_chain_cert", C_STR, 0, 0, &tls_config.chain_cert},
    {"ssl_key", C_STR, 0, 0, &tls_config.key},
    {"ssl_verify_mode", C_RANGE, 0, 3, &tls_config.verify_mode},
    {"ssl_keyformat", C_LONG, 0, 0, &tls_config.keyformat},
    {"ssl_ciphers", C_STR, 0, 0, &tls_config.ciphers},
    {"ssl_ca_cert", C_STR, 0, 0, &tls_config.ca_cert},
    {"ssl_wbuf_size", C_ULONG, 0, 0, &tls_config.wbuf_kb},
    {"ssl_session_cache", C_FLAG, 0, 0, &tls_config.session_cache},
    {"ssl_kernel_tls", C_FLAG, 0, 0, &tls_config.kernel_tls},
    {"ssl_min_version", C_RANGE, 0, 3, &tls_config.min_version},
    {"ext_page_size", C_ULONG, 0, 0, NULL},
    {"ext_wbuf_size", C_ULONG, 0, 0, NULL},
    {"ext_threads", C_ULONG, 0, 0, NULL},
    {"ext_io_depth", C_ULONG, 0, 0, NULL},
    {"ext_item_size", C_ULONG, 0, 0, NULL},
    {"ext_item_age", C_ULONG, 0, 0, NULL},
    {"ext_low_ttl", C_ULONG, 0, 0, NULL},
    {"ext_recache_rate", C_ULONG, 0, 0, NULL},
    {"ext_compact_under", C_ULONG, 0, 0, NULL},
    {"ext_drop_under", C_ULONG, 0, 0, NULL},
    {"ext_max_sleep", C_ULONG, 0, 0, NULL},
    {"ext_max_frag", C_DOUBLE, 0, 0, NULL},
    {"ext_drop_unread", C_FLAG, 0, 0, NULL},
    {"slab_automove_freeratio", C_DOUBLE, 0, 0, NULL},
    {"no_hashexpand", C_FLAG, 0, 0, NULL},
    {"drop_privileges", C_FLAG, 0, 0, NULL},
    {"no_drop_privileges", C_FLAG, 0, 0, NULL},
    {"slab_sizes", C_FLAG, 0, 0, NULL},
};

/* The extstore options memcached's "stats settings" shows, in its order:
 * the value given (times scale) or memcached's default. */
static struct shown {
    const char *name;
    int prec; /* decimals shown; -1: a flag, "yes" / "no" */
    double value, scale;
} shown[] = {
    {"ext_item_size", 0, 512, 1},
    {"ext_item_age", 0, 4294967295.0, 1},
    {"ext_low_ttl", 0, 0, 1},
    {"ext_recache_rate", 0, 2000, 1},
    {"ext_wbuf_size", 0, EXT_WBUF_DEFAULT_MB * 1048576.0, 1048576},
    {"ext_compact_under", 0, 0, 1},
    {"ext_drop_under", 0, 0, 1},
    {"ext_max_sleep", 0, 1000000, 1},
    {"ext_max_frag", 2, 0.8, 1},
    {"slab_automove_freeratio", 3, 0.01, 1},
    {"ext_drop_unread", -1, 0, 1},
};

static void note_shown(const char *name, double v)
{
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
        if (strcmp(shown[i].name, name) == 0)
            shown[i].value = v * shown[i].scale;
}

static char msg[160];
static bool ext_path_given;
static unsigned long ext_wbuf_mb = EXT_WBUF_DEFAULT_MB;
static long napi_ids;

/* memcached's storage_conf_parse(): "<file>:<size><m|g|t|p>[:bucket]". */
static const char *ext_path(const char *val)
{
    char copy[1024];
    char *save = NULL;

    if (val == NULL)
        return "missing argument to ext_path, ie: ext_path=/d/file:5G";
    snprintf(copy, sizeof(copy), "%s", val);
    if (strtok_r(copy, ":", &save) == NULL)
        return "failed to parse ext_path argument";
    if (strtok_r(NULL, ":", &save) == NULL)
        return "must supply size to ext_path, ie: ext_path=/f/e:64m "
               "(M|G|T|P supported)";
    char *bucket = strtok_r(NULL, ",", &save);
    if (bucket != NULL && strcmp(bucket, "default") != 0) {
        if (strcmp(bucket, "compact") == 0 || strcmp(bucket, "lowttl") == 0 ||
            strcmp(bucket, "chunked") == 0)
            return "ext_path only presently supports the default bucket";
        snprintf(msg, sizeof(msg), "Unknown extstore bucket: %s", bucket);
        return msg;
    }
    ext_path_given = true;
    return NULL;
}

int compat_option(const char *opt, const char *val, const char **err)
{
    const struct compat *k = NULL;
    uint32_t u = 0;
    int32_t l = 0;
    double d = 0;

    if (strcmp(opt, "ext_path") == 0) {
        *err = ext_path(val);
        return *err ? -1 : 1;
    }
    if (strcmp(opt, "sock_cookie_id") == 0)
        return 1; /* memcached ignores a bad value (and dies without one) */
    for (size_t i = 0; i < sizeof(compat) / sizeof(compat[0]); i++)
        if (strcmp(opt, compat[i].name) == 0)
            k = &compat[i];
    if (k == NULL)
        return 0;
    if (k->kind == C_FLAG) {
        if (k->dst)
            *(bool *)k->dst = true;
        note_shown(k->name, 1);
        return 1;
    }
    if (val == NULL) {
        snprintf(msg, sizeof(msg), "Missing %s argument", k->name);
        *err = msg;
        return -1;
    }
    if (strcmp(k->name, "ext_page_size") == 0 && ext_path_given) {
        *err = "Must specify ext_page_size before any ext_path arguments";
        return -1;
    }
    bool ok = true;
    switch (k->kind) {
    case C_LONG:
    case C_RANGE:
        ok = parse_i32(val, &l);
        break;
    case C_ULONG:
        ok = parse_u32(val, &u);
        if (ok && strcmp(k->name, "ext_wbuf_size") == 0)
            ext_wbuf_mb = u;
        break;
    case C_DOUBLE:
        ok = parse_double(val, &d);
        break;
    default:
        break;
    }
    if (!ok) {
        snprintf(msg, sizeof(msg), "could not parse argument to %s", k->name);
        *err = msg;
        return -1;
    }
    if (k->kind == C_RANGE && (l < k->min || l > k->max)) {
        snprintf(msg, sizeof(msg), "Invalid %s. Use help to see valid options.",
                 k->name);
        *err = msg;
        return -1;
    }
    note_shown(k->name, k->kind == C_ULONG ? u : d);
    if (k->dst == NULL)
        return 1;
    if (k->kind == C_STR)
        *(const char **)k->dst = val;
    else if (k->kind == C_ULONG)
        *(uint32_t *)k->dst = u;
    else
        *(int32_t *)k->dst = l;
    return 1;
}

void compat_stats(stat_sink_fn sink, void *ctx)
{
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        if (shown[i].prec >= 0)
            stat_sinkf(sink, ctx, shown[i].name, "%.*f", shown[i].prec,
                       shown[i].value);
        else
            sink(ctx, shown[i].name, shown[i].value ? "yes" : "no");
    }
}

void compat_napi_stats(stat_sink_fn sink, void *ctx)
{
    if (napi_ids)
        stat_sinkf(sink, ctx, "num_napi_ids", "%ld", napi_ids);
    else
        sink(ctx, "num_napi_ids", "(null)");
}

const char *compat_napi_ids(const char *arg)
{
    napi_ids = atoi(arg);
    if (napi_ids <= 0)
        return "Maximum number of NAPI IDs must be greater than 0";
    return NULL;
}

const char *compat_check(int threads, int udpport, unsigned long item_max)
{
    if (napi_ids > threads) {
        snprintf(msg, sizeof(msg),
                 "Number of napi_ids(%ld) cannot be greater than number of "
                 "threads(%d)",
                 napi_ids, threads);
        return msg;
    }
    if (ext_path_given && item_max > ext_wbuf_mb * 1024 * 1024) {
        snprintf(msg, sizeof(msg),
                 "-I (item_size_max: %lu) cannot be larger than "
                 "ext_wbuf_size: %lu",
                 item_max, ext_wbuf_mb * 1024 * 1024);
        return msg;
    }
    if (ext_path_given && udpport)
        return "Cannot use UDP with extstore enabled (-U 0 to disable)";
    return NULL;
}

const char compat_usage[] =
    "   - ssl_chain_cert:      certificate chain file in PEM format\n"
    "   - ssl_key:             private key, if not part of the "
    "ssl_chain_cert\n"
    "   - ssl_keyformat:       private key format (PEM, DER or ENGINE) "
    "(default: PEM)\n"
    "   - ssl_verify_mode:     peer certificate verification mode, default "
    "is 0(None).\n"
    "                          valid values are 0(None), 1(Request), "
    "2(Require)\n"
    "                          or 3(Once)\n"
    "   - ssl_ciphers:         specify cipher list to be used\n"
    "   - ssl_ca_cert:         PEM format file of acceptable client CA's\n"
    "   - ssl_wbuf_size:       size in kilobytes of per-connection SSL "
    "output buffer\n"
    "                          (default: 16)\n"
    "   - ssl_session_cache:   enable server-side SSL session cache, to "
    "support session\n"
    "                          resumption\n"
    "   - ssl_kernel_tls:      enable kernel TLS offload\n"
    "   - ssl_min_version:     minimum protocol version to accept "
    "(default: tlsv1.2)\n"
    "                          valid values are 0(tlsv1.0), 1(tlsv1.1), "
    "2(tlsv1.2), or 3(tlsv1.3).\n"
    "                          (TLS covers the TCP memcached protocol "
    "only: not UDP,\n"
    "                          unix sockets or the RDMA path)\n"
    "   - ext_path, ext_page_size, ext_wbuf_size, ext_threads, "
    "ext_io_depth,\n"
    "     ext_item_size, ext_item_age, ext_low_ttl, ext_drop_unread,\n"
    "     ext_recache_rate, ext_compact_under, ext_drop_under, "
    "ext_max_frag,\n"
    "     ext_max_sleep, slab_automove_freeratio: external storage, checked "
    "as\n"
    "                          memcached checks them; no effect here (items "
    "stay in\n"
    "                          memory, which the NIC reads)\n"
    "   - no_hashexpand, sock_cookie_id, slab_sizes, drop_privileges,\n"
    "     no_drop_privileges: accepted; no effect here\n"
    "-N, --napi_ids=<num>      number of napi ids (checked as memcached; no "
    "effect\n"
    "                          here)\n";
