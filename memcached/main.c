/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/main.c - command line, start-up and shutdown of the server.
 *
 * Start-up order: parse flags; bind the sockets (so a busy port is an
 * error the caller sees); drop root privileges (-u); daemonize (-d, before
 * any thread exists); map the item arena and build the slab classes, the
 * cuckoo index and the LRUs, or adopt a previous server's
 * (memcached/persist.h); start the workers; run the listener's loop.
 *
 * Shutdown (SIGINT, SIGTERM, SIGUSR1, "shutdown"): the listener's loop
 * ends, the workers finish the request they are in and stop, then the
 * crawler, the index's migration and the offload stop, so that the offload
 * can release (or, with --rdn-keep-on-exit, keep) memory nothing touches.
 */
#include "config.h"

#include <errno.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "memcached/arena.h"
#include "memcached/assoc.h"
#include "memcached/auth.h"
#include "memcached/auth_sasl.h"
#include "memcached/compat_opts.h"
#include "memcached/conn.h"
#include "memcached/items.h"
#include "memcached/listen.h"
#include "memcached/persist.h"
#include "memcached/proto_parse.h"
#include "memcached/rdn_glue.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "memcached/thread.h"
#include "memcached/tls.h"
#include "rdn/rnic/rnic.h"

#define EXIT_OSERR    71 /* sysexits.h EX_OSERR */
#define RESERVED_FDS  32 /* listeners, eventfds, logs, ... */
#define MIN_HASHPOWER 12 /* memcached's -o hashpower bounds */
#define MAX_HASHPOWER 32

static struct event_base *main_base;
static bool prealloc;
static bool maxcore;     /* -r */
static bool lock_memory; /* -k */

static void usage(void)
{
    printf(
        "memcached " MC_VERSION " (" PACKAGE_STRING ")\n"
        "-p, --port=<num>          TCP port to listen on (default: 11211, "
        "0 = off)\n"
        "-U, --udp-port=<num>      UDP port to listen on (default: 0, off)\n"
        "-s, --unix-socket=<file>  UNIX socket to listen on (disables "
        "network support)\n"
        "-a, --unix-mask=<mask>    access mask for UNIX socket, in octal "
        "(default: 700)\n"
        "-A, --enable-shutdown     enable ascii \"shutdown\" command\n"
        "-l, --listen=<addr>       interface(s) to listen on, comma "
        "separated\n"
        "                          (default: 127.0.0.1, for safety; unlike "
        "memcached,\n"
        "                          which listens on every interface)\n"
        "                          if TLS/SSL is enabled, 'notls' prefix can "
        "be used to\n"
        "                          disable for specific listeners (-l "
        "notls:<ip>:<port>)\n"
        "-d, --daemon              run as a daemon\n"
        "-u, --user=<user>         assume identity of <username> (only when "
        "run as root)\n"
        "-m, --memory-limit=<num>  item memory in megabytes (default: 64)\n"
        "-M, --disable-evictions   return error on memory exhausted instead "
        "of evicting\n"
        "-c, --conn-limit=<num>    max simultaneous connections (default: "
        "1024)\n"
        "-v, --verbose             verbose (print errors/warnings while in "
        "event loop)\n"
        "-vv                       very verbose (also print client "
        "commands/responses)\n"
        "-h, --help                print this help and exit\n"
        "-V, --version             print version and exit\n"
        "-P, --pidfile=<file>      save PID in <file>, only used with -d "
        "option\n"
        "-f, --slab-growth-factor=<num> chunk size growth factor (default: "
        "1.25)\n"
        "-n, --slab-min-size=<bytes> min space used for key+value+flags "
        "(default: 48)\n"
        "-L, --enable-largepages   preallocate the item memory at start\n"
        "-D <char>                 per-prefix stats delimiter (default: "
        "\":\"); turns\n"
        "                          \"stats detail\" on\n"
        "-t, --threads=<num>       number of threads to use (default: 4)\n"
        "-R, --max-reqs-per-event  maximum number of requests per event "
        "(default: 20)\n"
        "-b, --listen-backlog=<num> set the backlog queue limit (default: "
        "1024)\n"
        "-B, --protocol=<name>     protocol - one of ascii, binary, or auto "
        "(default: auto-negotiate)\n"
        "-I, --max-item-size=<num> adjusts max item size (default: 1m, min: "
        "1k, max: 1024m)\n"
        "-F, --disable-flush-all   disable flush_all command\n"
        "-C, --disable-cas         disable use of CAS\n"
        "-X, --disable-dumping     disable stats cachedump and lru_crawler "
        "metadump\n"
        "-W, --disable-watch       disable watch commands (live "
        "logging)\n"
        "-r, --enable-coredumps    maximize core file limit\n"
        "-k, --lock-memory         lock down all paged memory\n"
        "-i, --license             print the license and exit\n"
        "-Z, --enable-ssl          enable TLS/SSL (the TCP memcached "
        "protocol; see\n"
        "                          -o ssl_*)\n"
        "-e, --memory-file=<file>  refused: the restartable cache here is "
        "the\n"
        "                          offload's (--rdn-port, "
        "--rdn-keep-on-exit)\n"
        "%s"
        "-Y, --auth-file=<file>    (EXPERIMENTAL) enable ASCII protocol "
        "authentication. format:\n"
        "                          user:pass\\nuser2:pass2\\n (also "
        "required by the\n"
        "                          --rdn-port handshake)\n" RDN_GLUE_USAGE
        "-o, --extended            comma separated list of extended options\n"
        "   - hashpower:           starting hash table size as a power of 2 "
        "(%d-%d,\n"
        "                          default %d); the table grows at run "
        "time\n"
        "   - hash_algorithm:      murmur3 (the only one)\n"
        "   - maxconns_fast, no_maxconns_fast: reject connections over -c "
        "at once\n"
        "   - lru_crawler, no_lru_crawler: background expiry crawler "
        "(default: on)\n"
        "   - lru_crawler_sleep:   microseconds to sleep between batches "
        "(default: 100)\n"
        "   - lru_crawler_tocrawl: max items to crawl per class per run "
        "(default: 0, all)\n"
        "   - track_sizes:         enable dynamic reports for 'stats "
        "sizes'\n"
        "   - modern:              accepted (memcached: nothing now)\n"
        "   - no_modern:           memcached 1.4's defaults: no slab "
        "reassign or\n"
        "                          automove, no segmented LRU\n"
        "   - idle_timeout:        timeout for idle connections. (default: 0, "
        "no timeout)\n"
        "   - slab_chunk_max:      maximum slab chunk size in bytes, checked "
        "as memcached\n"
        "                          does; no effect here (items are never "
        "chunked)\n"
        "   - slab_reassign, no_slab_reassign: allow page moves between "
        "classes\n"
        "   - slab_automove:       0 off, 1 move pages by LRU age (default), "
        "2 on\n"
        "                          every eviction; no_slab_automove: 0\n"
        "   - slab_automove_ratio: a page moves when the youngest class's "
        "age is\n"
        "                          below this share of the oldest's "
        "(default: 0.80)\n"
        "   - slab_automove_window: seconds of history automove 1 weighs "
        "(default: 30)\n"
        "   - no_chunked_items,\n"
        "     tail_repair_time, lru_maintainer, no_lru_maintainer, "
        "hot_lru_pct,\n"
        "     warm_lru_pct, hot_max_factor, warm_max_factor, "
        "temporary_ttl,\n"
        "     watcher_logbuf_size, worker_logbuf_size, read_buf_mem_limit,\n"
        "     inline_ascii_resp, no_inline_ascii_resp:\n"
        "                          checked as memcached 1.6.18 checks them; no "
        "effect here\n"
        "                          (this server has no such machinery)\n"
        "%s",
        /* memcached lists -S only when it has SASL */
        auth_sasl_available()
            ? "-S, --enable-sasl         turn on Sasl authentication (binary "
              "protocol; also\n"
              "                          required by the --rdn-port "
              "handshake)\n"
            : "",
        MIN_HASHPOWER, MAX_HASHPOWER, ASSOC_DEFAULT_HASHPOWER, compat_usage);
}

static void print_license(void)
{
    printf("memcached " MC_VERSION " (" PACKAGE_STRING ")\n\n"
           "Copyright (c) 2026, the RedN memcached authors. All rights "
           "reserved.\n"
           "Distributed under the BSD 3-Clause License (the LICENSE file "
           "of the\n"
           "source). Written for compatibility with memcached (BSD "
           "licensed, Danga\n"
           "Interactive, Inc.); uses libevent (3-clause BSD license, Niels "
           "Provos and\n"
           "Nick Mathewson).\n");
}

/*
 * The memcached version clients see on the first line, as memcached prints
 * it (scripts parse it), then this package's version and the NIC providers
 * built in (what --rdn-device can choose from).
 */
static void print_version(void)
{
    const char *name;

    printf("memcached " MC_VERSION "\n" PACKAGE_STRING "; NIC providers:");
    for (size_t i = 0; (name = rnic_provider_name(i)) != NULL; i++)
        printf(" %s", name);
    printf("\n");
}

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry \"memcached -h\" for the list of options.\n");
    exit(MC_EXIT_USAGE);
}

/* A whole non-negative decimal number, at most max, or a usage error. */
static long long number_arg(const char *opt, const char *s, long long min,
                            long long max)
{
    char *end;

    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min || v > max)
        usage_error("Invalid value for %s: \"%s\" (expected an integer "
                    "from %lld to %lld)",
                    opt, s, min, max);
    return v;
}

/* -I: bytes, with an optional k or m suffix. */
static size_t size_arg(const char *s)
{
    char *end;

    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || strchr(s, '-'))
        usage_error("Invalid value for -I: \"%s\"", s);
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    if (*end != '\0')
        usage_error("Invalid value for -I: \"%s\"", s);
    if (v < SLABS_ITEMMAX_MIN)
        usage_error("Item max size cannot be less than 1024 bytes.");
    if (v > SLABS_ITEMMAX_MAX)
        usage_error("Cannot set item size limit higher than 1 GB.");
    return (size_t)v;
}

/*
 * -o options of memcached 1.6.18 for machinery this server does not have
 * (segmented LRU, slab rebalancing, the logger, tail repair): accepted
 * when memcached would accept them, refused with its message otherwise,
 * and without effect.
 */
enum knob_kind {
    KNOB_FLAG,  /* takes no value (one given is ignored, as memcached) */
    KNOB_INT,   /* atoi()'s reading, in [min, max] */
    KNOB_FLOAT, /* atof()'s reading, > 0 and, with max 1, <= 1 */
    KNOB_UINT,  /* a whole unsigned 32-bit number (safe_strtoul) */
};

struct knob {
    const char *name;
    enum knob_kind kind;
    int min, max;        /* KNOB_FLAG: max is what it stores in *value */
    const char *missing; /* message without a value; NULL: allowed */
    const char *bad;     /* message for a value out of range */
    int *value;          /* where an int or flag is kept, for the */
    bool *given;         /* cross-checks (check_knobs()) and stats */
    double *dvalue;      /* where a float is kept */
    uint32_t *uvalue;    /* where an unsigned one is kept, times scale */
    uint32_t scale;      /* (wrapping at 32 bits, as memcached's) */
};

/* Whether -o temporary_ttl was given (a cross-check needs it). */
static bool temporary_ttl;

static const struct knob knobs[] = {
    {.name = "slab_reassign",
     .kind = KNOB_FLAG,
     .max = 1,
     .value = &settings.slab_reassign},
    {.name = "no_slab_reassign",
     .kind = KNOB_FLAG,
     .max = 0,
     .value = &settings.slab_reassign},
    {.name = "no_slab_automove",
     .kind = KNOB_FLAG,
     .max = 0,
     .value = &settings.slab_automove},
    {.name = "inline_ascii_resp", .kind = KNOB_FLAG},
    {.name = "no_inline_ascii_resp", .kind = KNOB_FLAG},
    {.name = "lru_maintainer",
     .kind = KNOB_FLAG,
     .max = 1,
     .value = &settings.lru_maintainer},
    {.name = "no_lru_maintainer",
     .kind = KNOB_FLAG,
     .max = 0,
     .value = &settings.lru_maintainer},
    {.name = "slab_automove",
     .kind = KNOB_INT,
     .min = 0,
     .max = 2,
     .bad = "slab_automove must be between 0 and 2",
     .value = &settings.slab_automove},
    {.name = "slab_automove_window",
     .kind = KNOB_INT,
     .min = 3,
     .max = INT_MAX,
     .missing = "Missing slab_automove_window argument",
     .bad = "slab_automove_window must be > 2",
     .value = &settings.slab_automove_window},
    {.name = "tail_repair_time",
     .kind = KNOB_INT,
     .min = 10,
     .max = INT_MAX,
     .missing = "Missing numeric argument for tail_repair_time",
     .bad = "Cannot set tail_repair_time to less than 10 seconds"},
    {.name = "hot_lru_pct",
     .kind = KNOB_INT,
     .min = 1,
     .max = 79,
     .missing = "Missing hot_lru_pct argument",
     .bad = "hot_lru_pct must be > 1 and < 80",
     .value = &settings.lru.hot_lru_pct},
    {.name = "warm_lru_pct",
     .kind = KNOB_INT,
     .min = 1,
     .max = 79,
     .missing = "Missing warm_lru_pct argument",
     .bad = "warm_lru_pct must be > 1 and < 80",
     .value = &settings.lru.warm_lru_pct},
    {.name = "temporary_ttl",
     .kind = KNOB_INT,
     .min = INT_MIN,
     .max = INT_MAX,
     .missing = "Missing temporary_ttl argument",
     .value = &settings.lru.temporary_ttl,
     .given = &temporary_ttl},
    {.name = "slab_automove_ratio",
     .kind = KNOB_FLOAT,
     .max = 1,
     .missing = "Missing slab_automove_ratio argument",
     .bad = "slab_automove_ratio must be > 0 and < 1",
     .dvalue = &settings.slab_automove_ratio},
    {.name = "hot_max_factor",
     .kind = KNOB_FLOAT,
     .missing = "Missing hot_max_factor argument",
     .bad = "hot_max_factor must be > 0",
     .dvalue = &settings.lru.hot_max_factor},
    {.name = "warm_max_factor",
     .kind = KNOB_FLOAT,
     .missing = "Missing warm_max_factor argument",
     .bad = "warm_max_factor must be > 0",
     .dvalue = &settings.lru.warm_max_factor},
    {.name = "watcher_logbuf_size",
     .kind = KNOB_UINT,
     .missing = "Missing watcher_logbuf_size argument",
     .bad = "could not parse argument to watcher_logbuf_size",
     .uvalue = &settings.watcher_logbuf_size,
     .scale = 1024},
    {.name = "worker_logbuf_size",
     .kind = KNOB_UINT,
     .missing = "Missing worker_logbuf_size argument",
     .bad = "could not parse argument to worker_logbuf_size",
     .uvalue = &settings.worker_logbuf_size,
     .scale = 1024},
    {.name = "read_buf_mem_limit",
     .kind = KNOB_UINT,
     .missing = "Missing read_buf_mem_limit argument",
     .bad = "could not parse argument to read_buf_mem_limit",
     .uvalue = &settings.read_buf_mem_limit,
     .scale = 1024 * 1024},
};

/* Checks val for the knob named opt as memcached does; false if opt is
 * none of them. */
static bool knob_option(const char *opt, const char *val)
{
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
        const struct knob *k = &knobs[i];
        if (strcmp(opt, k->name) != 0)
            continue;
        if (k->kind == KNOB_FLAG) {
            if (k->value)
                *k->value = k->max;
            return true;
        }
        if (val == NULL) {
            if (k->missing)
                usage_error("%s", k->missing);
            return true;
        }
        if (k->given)
            *k->given = true;
        if (k->kind == KNOB_INT) {
            int v = atoi(val);
            if (k->bad && (v < k->min || v > k->max))
                usage_error("%s", k->bad);
            if (k->value)
                *k->value = v;
        } else if (k->kind == KNOB_FLOAT) {
            double v = atof(val);
            if (v <= 0 || (k->max == 1 && v > 1))
                usage_error("%s", k->bad);
            if (k->dvalue)
                *k->dvalue = v;
        } else {
            uint32_t v;
            if (!parse_u32(val, &v))
                usage_error("%s", k->bad);
            if (k->uvalue)
                *k->uvalue = v * k->scale;
        }
        return true;
    }
    return false;
}

/* memcached's checks across the knobs, once every option is read. */
static void check_knobs(void)
{
    if (temporary_ttl)
        settings.lru.temp_lru = true;
    if (settings.lru.hot_lru_pct + settings.lru.warm_lru_pct > 80)
        usage_error("hot_lru_pct + warm_lru_pct cannot be more than 80%% "
                    "combined");
    if (temporary_ttl && !settings.lru_maintainer)
        usage_error("temporary_ttl requires lru_maintainer to be enabled");
}

/* One "-o" suboption. */
static void extended_option(char *opt, bool *chunk_max_set)
{
    char *val = strchr(opt, '=');

    if (val)
        *val++ = '\0';
    const char *err = NULL;
    int compat = compat_option(opt, val, &err);

    if (compat < 0)
        usage_error("%s", err);
    if (compat > 0 || knob_option(opt, val)) {
        /* validated; no effect here */
    } else if (strcmp(opt, "no_chunked_items") == 0) {
        settings.slab_chunk_max = MC_SLAB_PAGE_SIZE;
    } else if (strcmp(opt, "hashpower") == 0 && val) {
        settings.hashpower_init =
            (int)number_arg("-o hashpower", val, MIN_HASHPOWER, MAX_HASHPOWER);
    } else if (strcmp(opt, "hash_algorithm") == 0 && val) {
        if (strcmp(val, "murmur3") != 0)
            usage_error("Unknown hash_algorithm option \"%s\" (supported: "
                        "murmur3)",
                        val);
    } else if (strcmp(opt, "maxconns_fast") == 0 && !val) {
        settings.maxconns_fast = true;
    } else if (strcmp(opt, "no_maxconns_fast") == 0 && !val) {
        settings.maxconns_fast = false;
    } else if (strcmp(opt, "lru_crawler") == 0 && !val) {
        settings.lru_crawler = true;
    } else if (strcmp(opt, "no_lru_crawler") == 0 && !val) {
        settings.lru_crawler = false;
    } else if (strcmp(opt, "lru_crawler_sleep") == 0 && val) {
        settings.lru_crawler_sleep =
            (int)number_arg("-o lru_crawler_sleep", val, 0, 1000000);
    } else if (strcmp(opt, "lru_crawler_tocrawl") == 0 && val) {
        settings.lru_crawler_tocrawl =
            (uint32_t)number_arg("-o lru_crawler_tocrawl", val, 0, UINT32_MAX);
    } else if (strcmp(opt, "track_sizes") == 0 && !val) {
        settings.track_sizes = true;
    } else if (strcmp(opt, "idle_timeout") == 0) {
        if (!val)
            usage_error("Missing numeric argument for idle_timeout");
        /* memcached takes atoi()'s reading, whatever follows the digits. */
        settings.idle_timeout = atoi(val);
    } else if (strcmp(opt, "slab_chunk_max") == 0) {
        char *end;
        if (!val)
            usage_error("Missing slab_chunk_max argument");
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < INT_MIN || v > INT_MAX)
            usage_error("could not parse argument to slab_chunk_max");
        settings.slab_chunk_max = (int)v;
        *chunk_max_set = true;
    } else if (strcmp(opt, "modern") == 0 && !val) {
        /* accepted for compatibility: nothing to switch */
    } else if (strcmp(opt, "no_modern") == 0 && !val) {
        if (!*chunk_max_set)
            settings.slab_chunk_max = MC_SLAB_PAGE_SIZE;
        settings.lru_maintainer = 0;
        settings.lru.segmented = false;
        settings.slab_reassign = 0;
        settings.slab_automove = 0;
    } else {
        usage_error("Illegal suboption \"%s%s%s\"", opt, val ? "=" : "",
                    val ? val : "");
    }
}

/* memcached's checks of slab_chunk_max against -I and its 1 MB slab page
 * (where memcached divides by a zero or negative value, an error). */
static void check_chunk_max(void)
{
    int v = settings.slab_chunk_max;
    size_t max = settings.item_size_max;

    if (v <= 0)
        usage_error("slab_chunk_max (bytes: %d) must be positive", v);
    if ((size_t)v > max)
        usage_error("slab_chunk_max (bytes: %d) cannot be larger than -I "
                    "(item_size_max %zu)",
                    v, max);
    if (max % (size_t)v != 0)
        usage_error("-I (item_size_max: %zu) must be evenly divisible by "
                    "slab_chunk_max (bytes: %d)",
                    max, v);
    if (MC_SLAB_PAGE_SIZE % v != 0)
        usage_error("slab_chunk_max (bytes: %d) must divide evenly into %d "
                    "(slab_page_size)",
                    v, MC_SLAB_PAGE_SIZE);
}

/* One login's rule: it means protocol p unless -B said another (then
 * exit with bad_proto), and no UDP (bad_udp). */
static void auth_protocol(bool protocol_set, enum mc_protocol p,
                          const char *bad_proto, const char *bad_udp)
{
    if (!protocol_set) {
        settings.protocol = p;
    } else if (settings.protocol != p) {
        fprintf(stderr, "%s\n", bad_proto);
        exit(MC_EXIT_USAGE);
    }
    if (settings.udpport) {
        fprintf(stderr, "%s\n", bad_udp);
        exit(MC_EXIT_USAGE);
    }
}

/* memcached's rules: -S means the binary protocol and no UDP, -Y the
 * ASCII protocol and no UDP (-Y after -S: ASCII, as memcached). */
static void check_auth(bool protocol_set)
{
    if (settings.sasl)
        auth_protocol(protocol_set, MC_PROTO_BINARY,
                      "ERROR: You cannot allow the ASCII protocol while "
                      "using SASL.",
                      "ERROR: Cannot enable UDP while using binary SASL "
                      "authentication.");
    if (settings.auth_file)
        auth_protocol(protocol_set, MC_PROTO_ASCII,
                      "ERROR: You cannot allow the BINARY protocol while "
                      "using ascii authentication tokens.",
                      "Cannot use UDP with ascii authentication enabled (-U "
                      "0 to disable)");
}

/* -S: the SASL library; -Y: the password file (memcached's messages). */
static void auth_start(void)
{
    if (settings.sasl && auth_sasl_init() != 0)
        exit(EXIT_FAILURE);
    if (settings.auth_file == NULL)
        return;
    int rc = auth_file_load(settings.auth_file);
    if (rc == -EINVAL) {
        fprintf(stderr,
                "Authfile [%s] has a malformed entry. Should be "
                "'user:password'\n",
                settings.auth_file);
        exit(EXIT_FAILURE);
    }
    if (rc < 0) {
        fprintf(stderr, "Could not open authfile [%s] for reading, error %s\n",
                settings.auth_file, strerror(-rc));
        exit(EXIT_FAILURE);
    }
}

static void parse_args(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"port", required_argument, NULL, 'p'},
        {"udp-port", required_argument, NULL, 'U'},
        {"unix-socket", required_argument, NULL, 's'},
        {"unix-mask", required_argument, NULL, 'a'},
        {"enable-shutdown", no_argument, NULL, 'A'},
        {"listen", required_argument, NULL, 'l'},
        {"daemon", no_argument, NULL, 'd'},
        {"user", required_argument, NULL, 'u'},
        {"memory-limit", required_argument, NULL, 'm'},
        {"disable-evictions", no_argument, NULL, 'M'},
        {"conn-limit", required_argument, NULL, 'c'},
        {"verbose", optional_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"pidfile", required_argument, NULL, 'P'},
        {"slab-growth-factor", required_argument, NULL, 'f'},
        {"slab-min-size", required_argument, NULL, 'n'},
        {"enable-largepages", no_argument, NULL, 'L'},
        {"threads", required_argument, NULL, 't'},
        {"max-reqs-per-event", required_argument, NULL, 'R'},
        {"listen-backlog", required_argument, NULL, 'b'},
        {"protocol", required_argument, NULL, 'B'},
        {"max-item-size", required_argument, NULL, 'I'},
        {"disable-flush-all", no_argument, NULL, 'F'},
        {"disable-cas", no_argument, NULL, 'C'},
        {"disable-dumping", no_argument, NULL, 'X'},
        {"disable-watch", no_argument, NULL, 'W'},
        {"enable-coredumps", no_argument, NULL, 'r'},
        {"lock-memory", no_argument, NULL, 'k'},
        {"license", no_argument, NULL, 'i'},
        {"enable-ssl", no_argument, NULL, 'Z'},
        {"memory-file", required_argument, NULL, 'e'},
        {"napi_ids", required_argument, NULL, 'N'},
        {"extended", required_argument, NULL, 'o'},
        {"enable-sasl", no_argument, NULL, 'S'},
        {"auth-file", required_argument, NULL, 'Y'},
        {"rdn-port", required_argument, NULL, RDN_OPT_PORT},
        {"rdn-device", required_argument, NULL, RDN_OPT_DEVICE},
        {"rdn-clients", required_argument, NULL, RDN_OPT_CLIENTS},
        {"rdn-baselines", required_argument, NULL, RDN_OPT_BASELINES},
        {"rdn-keep-on-exit", no_argument, NULL, RDN_OPT_KEEP},
        {NULL, 0, NULL, 0},
    };
    int ch;
    bool item_size_set = false;
    bool chunk_max_set = false;
    bool protocol_set = false;

    opterr = 0;
    while ((ch = getopt_long(
                argc, argv,
                ":p:U:s:a:Al:du:m:Mc:vhVP:f:n:LD:t:R:b:B:I:FCXWo:rkiZe:N:SY:",
                longopts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            settings.port = (int)number_arg("-p", optarg, 0, 65535);
            break;
        case 'U':
            settings.udpport = (int)number_arg("-U", optarg, 0, 65535);
            break;
        case 's':
            settings.socketpath = optarg;
            break;
        case 'a': {
            char *end;
            long mask = strtol(optarg, &end, 8);
            if (end == optarg || *end != '\0' || mask < 0 || mask > 0777)
                usage_error("Invalid value for -a: \"%s\" (an octal mode)",
                            optarg);
            settings.access = (int)mask;
            break;
        }
        case 'A':
            settings.shutdown_command = true;
            break;
        case 'l':
            settings.inter = optarg;
            break;
        case 'd':
            settings.daemonize = true;
            break;
        case 'u':
            settings.username = optarg;
            break;
        case 'm':
            settings.maxbytes =
                (size_t)number_arg("-m", optarg, 1, 1 << 30) * 1024 * 1024;
            break;
        case 'M':
            settings.evict_to_free = false;
            break;
        case 'c':
            settings.maxconns = (int)number_arg("-c", optarg, 1, 1 << 24);
            break;
        case 'v':
            settings.verbose++;
            break;
        case 'h':
            usage();
            exit(EXIT_SUCCESS);
        case 'V':
            print_version();
            exit(EXIT_SUCCESS);
        case 'P':
            settings.pid_file = optarg;
            break;
        case 'f': {
            char *end;
            settings.factor = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(settings.factor > 1.0))
                usage_error("Factor must be greater than 1");
            break;
        }
        case 'n':
            settings.chunk_size = (int)number_arg("-n", optarg, 1, 1 << 20);
            break;
        case 'L':
            prealloc = true;
            break;
        case 'D':
            if (strlen(optarg) != 1)
                usage_error("-D needs a single character");
            settings.prefix_delimiter = optarg[0];
            settings.detail_enabled = true;
            break;
        case 't':
            settings.num_threads = (int)number_arg("-t", optarg, 1, 256);
            break;
        case 'R':
            settings.reqs_per_event = (int)number_arg("-R", optarg, 1, 1 << 20);
            break;
        case 'b':
            settings.backlog = (int)number_arg("-b", optarg, 1, 1 << 20);
            break;
        case 'B':
            protocol_set = true;
            if (strcmp(optarg, "auto") == 0)
                settings.protocol = MC_PROTO_NEGOTIATE;
            else if (strcmp(optarg, "binary") == 0)
                settings.protocol = MC_PROTO_BINARY;
            else if (strcmp(optarg, "ascii") == 0)
                settings.protocol = MC_PROTO_ASCII;
            else
                usage_error("Invalid value for binding protocol: %s\n"
                            " -- should be one of auto, binary, or ascii",
                            optarg);
            break;
        case 'I':
            settings.item_size_max = size_arg(optarg);
            item_size_set = true;
            break;
        case 'F':
            settings.flush_enabled = false;
            break;
        case 'C':
            settings.use_cas = false;
            break;
        case 'X':
            settings.dump_enabled = false;
            break;
        case 'W':
            settings.watch_enabled = false;
            break;
        case 'r':
            maxcore = true;
            break;
        case 'k':
            lock_memory = true;
            break;
        case 'i':
            print_license();
            exit(EXIT_SUCCESS);
        case 'Z':
            tls_config.enabled = true;
            break;
        case 'e':
            usage_error("-e (a memory file for a restartable cache) is not "
                        "supported here: the offload keeps its items across "
                        "restarts (--rdn-port, --rdn-keep-on-exit)");
        case 'N': {
            const char *err = compat_napi_ids(optarg);
            if (err)
                usage_error("%s", err);
            break;
        }
        case 'o': {
            char *save = NULL;
            for (char *o = strtok_r(optarg, ",", &save); o;
                 o = strtok_r(NULL, ",", &save))
                extended_option(o, &chunk_max_set);
            break;
        }
        case 'S':
            if (!auth_sasl_available()) {
                fprintf(stderr, "This server is not built with SASL "
                                "support.\n");
                exit(MC_EXIT_USAGE);
            }
            settings.sasl = true;
            break;
        case 'Y':
            settings.auth_file = optarg;
            break;
        case RDN_OPT_PORT:
        case RDN_OPT_DEVICE:
        case RDN_OPT_CLIENTS:
        case RDN_OPT_BASELINES:
        case RDN_OPT_KEEP:
            if (rdn_glue_option(ch, optarg) != 0)
                usage_error("Invalid value for an --rdn-* option: \"%s\"",
                            optarg);
            break;
        case ':':
            usage_error("Option %s%c requires an argument", optopt ? "-" : "",
                        optopt ? optopt : ' ');
        default:
            if (optopt)
                usage_error("Illegal option -%c", optopt);
            usage_error("Illegal option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        usage_error("Unexpected argument \"%s\"", argv[optind]);
    if (item_size_set && settings.item_size_max > settings.maxbytes / 2)
        usage_error("Cannot set item size limit higher than 1/2 of memory "
                    "max.");
    check_chunk_max();
    check_knobs();
    check_auth(protocol_set);
    const char *err = compat_check(settings.num_threads, settings.udpport,
                                   (unsigned long)settings.item_size_max);
    if (err)
        usage_error("%s", err);
}

/* -r: memcached's core file limit raise (fatal if cores stay off). */
static void raise_core_limit(void)
{
    struct rlimit rl = {.rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY};

    if (setrlimit(RLIMIT_CORE, &rl) != 0 && getrlimit(RLIMIT_CORE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_CORE, &rl);
    }
    if (getrlimit(RLIMIT_CORE, &rl) != 0 || rl.rlim_cur == 0) {
        fprintf(stderr, "failed to ensure corefile creation\n");
        exit(EXIT_OSERR);
    }
}

/* Enough descriptors for -c connections. */
static int setup_fd_limit(void)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)settings.maxconns + RESERVED_FDS;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < need) {
        rl.rlim_cur = need;
        if (rl.rlim_max < need)
            rl.rlim_max = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            fprintf(stderr, "failed to set rlimit for open files. Try "
                            "starting as root or requesting smaller maxconns "
                            "value.\n");
            exit(EXIT_OSERR);
        }
    }
    return (int)rl.rlim_cur;
}

/* memcached's rule: root needs -u, and runs as that user. */
static void drop_privileges(void)
{
    if (getuid() != 0 && geteuid() != 0)
        return;
    if (settings.username == NULL || *settings.username == '\0') {
        fprintf(stderr, "can't run as root without the -u switch\n");
        exit(MC_EXIT_USAGE);
    }
    struct passwd *pw = getpwnam(settings.username);
    if (pw == NULL) {
        fprintf(stderr, "can't find the user %s to switch to\n",
                settings.username);
        exit(MC_EXIT_USAGE);
    }
    if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 ||
        setuid(pw->pw_uid) != 0) {
        fprintf(stderr, "failed to assume identity of user %s\n",
                settings.username);
        exit(EXIT_OSERR);
    }
}

static void daemonize(void)
{
    pid_t pid = fork();

    if (pid < 0) {
        perror("fork");
        exit(EXIT_OSERR);
    }
    if (pid > 0)
        _exit(EXIT_SUCCESS);
    if (setsid() < 0) {
        perror("setsid");
        exit(EXIT_OSERR);
    }
    if (chdir("/") != 0)
        perror("chdir");
    if (settings.verbose == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            if (fd > STDERR_FILENO)
                close(fd);
        }
    }
}

static void write_pid_file(void)
{
    FILE *f = fopen(settings.pid_file, "w");

    if (f == NULL) {
        fprintf(stderr, "Could not open the pid file %s for writing: %s\n",
                settings.pid_file, strerror(errno));
        return;
    }
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
}

/* SIGHUP: memcached reloads the -Y file (and never dies of it). */
static void hup_cb(evutil_socket_t sig, short which, void *arg)
{
    (void)sig;
    (void)which;
    (void)arg;
    auth_file_reload();
}

static void stop_cb(evutil_socket_t sig, short which, void *arg)
{
    (void)which;
    (void)arg;
    if (settings.verbose)
        fprintf(stderr, "Signal handled: %s.\n", strsignal((int)sig));
    event_base_loopbreak(main_base);
}

/*
 * Maps the item arena and builds the storage: slab classes, the cuckoo
 * index, the LRUs. With --rdn-port the memory is the offload's NIC memory,
 * and a previous server's is adopted (memcached/persist.h); otherwise
 * anonymous memory.
 */
static void storage_init(void)
{
    struct persist_env env = {.prealloc = prealloc};
    int rc;

    rdn_glue_storage_env(&env);
    rc = persist_storage_init(&env, NULL);
    if (rc != 0) {
        fprintf(stderr, "failed to set up item memory: %s\n", strerror(-rc));
        exit(EXIT_OSERR);
    }
}

/* -Z: memcached's check, then the certificates (its messages, exit 64). */
static void start_tls(void)
{
    if (!tls_config.enabled)
        return;
    if (settings.port == 0) {
        fprintf(stderr, "ERROR: You cannot enable SSL without a TCP port.\n");
        exit(MC_EXIT_USAGE);
    }
    if (tls_start() != 0)
        exit(MC_EXIT_USAGE);
}

static void bind_sockets(int *udp_fd)
{
    *udp_fd = -1;
    if (settings.socketpath) {
        if (listen_unix_bind(settings.socketpath, settings.access,
                             settings.backlog) != 0)
            exit(EXIT_OSERR);
        return;
    }
    if (settings.port &&
        listen_tcp_bind(settings.inter, settings.port, settings.backlog) != 0)
        exit(EXIT_OSERR);
    if (settings.udpport) {
        *udp_fd = listen_udp_bind(settings.inter, settings.udpport);
        if (*udp_fd < 0)
            exit(EXIT_OSERR);
    }
}

int main(int argc, char **argv)
{
    int udp_fd;

    settings_init();
    parse_args(argc, argv);
    if (maxcore)
        raise_core_limit();
    if (lock_memory && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        fprintf(stderr, "warning: -k invalid, mlockall() failed: %s\n",
                strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    if (conns_init(setup_fd_limit()) != 0) {
        fprintf(stderr, "out of memory\n");
        return EXIT_OSERR;
    }
    start_tls();
    bind_sockets(&udp_fd);
    drop_privileges();
    auth_start();
    if (settings.daemonize)
        daemonize();
    if (settings.daemonize && settings.pid_file)
        write_pid_file();

    evthread_use_pthreads();
    stats_thread_register();
    stats_init();
    if (rdn_glue_init() != 0)
        return EXIT_OSERR;
    storage_init();
    if (rdn_glue_start() != 0)
        return EXIT_OSERR;
    if (threads_start(settings.num_threads, udp_fd) != 0) {
        fprintf(stderr, "failed to start worker threads\n");
        return EXIT_OSERR;
    }
    main_base = event_base_new();
    if (main_base == NULL || listen_start(main_base) != 0) {
        fprintf(stderr, "failed to start the listener\n");
        return EXIT_OSERR;
    }
    struct event *sigs[] = {
        evsignal_new(main_base, SIGINT, stop_cb, NULL),
        evsignal_new(main_base, SIGTERM, stop_cb, NULL),
        evsignal_new(main_base, SIGUSR1, stop_cb, NULL),
        evsignal_new(main_base, SIGHUP, hup_cb, NULL),
    };
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        event_add(sigs[i], NULL);
    event_base_loop(main_base, 0);

    threads_stop();
    rdn_glue_stop();
    items_stop();
    assoc_stop();
    rdn_glue_close();

    if (settings.daemonize && settings.pid_file)
        unlink(settings.pid_file);
    if (settings.socketpath)
        unlink(settings.socketpath);
    return EXIT_SUCCESS;
}
