/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_crash.c - `rdn-bench crash [options]`: the crash experiment
 * (the paper's Figure 16). Its one implementation is the Python driver
 * bench/crash-bench, which starts and kills the servers and runs this
 * program's crash-load mode as the GET load of each system; this mode
 * only finds the driver and runs it with the options given.
 *
 * The driver is looked for next to this program, then in the source tree
 * this program was built from (BENCH_SRCDIR). It is told which rdn-bench
 * to run ($RDN_BENCH) and, unless set, the build tree ($top_builddir).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"

#define CRASH_DRIVER "crash-bench"

/* The directory of this program (dir, of cap bytes). 0 or -errno. */
static int self_dir(char *dir, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
    char *slash;

    if (n < 0)
        return -errno;
    dir[n] = '\0';
    slash = strrchr(dir, '/');
    if (!slash)
        return -ENOENT;
    *slash = '\0';
    return 0;
}

/* The driver's path into out: next to us, else in the source tree. */
static int find_driver(const char *dir, char *out, size_t cap)
{
    const char *where[] = {dir, BENCH_SRCDIR};

    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        if ((size_t)snprintf(out, cap, "%s/%s", where[i], CRASH_DRIVER) >= cap)
            continue;
        if (access(out, R_OK) == 0)
            return 0;
    }
    return -ENOENT;
}

/* The build tree: the parent of this program's directory (bench/). */
static void set_builddir(const char *dir)
{
    char top[PATH_MAX];
    char *slash;

    if (getenv("top_builddir"))
        return;
    snprintf(top, sizeof(top), "%s", dir);
    slash = strrchr(top, '/');
    if (slash && slash != top) {
        *slash = '\0';
        setenv("top_builddir", top, 1);
    }
}

int bench_crash(int argc, char **argv)
{
    char dir[PATH_MAX], exe[PATH_MAX + 16], driver[PATH_MAX + 16];
    char **args = calloc((size_t)argc + 2, sizeof(*args));
    int rc = args ? self_dir(dir, sizeof(dir)) : -ENOMEM;

    if (rc == 0)
        rc = find_driver(dir, driver, sizeof(driver));
    if (rc < 0) {
        fprintf(stderr, "rdn-bench crash: cannot find %s: %s\n", CRASH_DRIVER,
                strerror(-rc));
        free(args);
        return rc;
    }
    snprintf(exe, sizeof(exe), "%s/rdn-bench", dir);
    setenv("RDN_BENCH", exe, 1);
    set_builddir(dir);
    args[0] = "python3";
    args[1] = driver;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    execvp(args[0], args);
    rc = -errno;
    fprintf(stderr, "rdn-bench crash: python3: %s\n", strerror(errno));
    free(args);
    return rc;
}
