/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/shm.c - memfd, mapping, futex and clock helpers shared by the
 * engine and the client library.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rdn/softnic/shm_int.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int sn_memfd_create(const char *name, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

    if (fd < 0)
        return -errno;
    if (ftruncate(fd, (off_t)len) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        int err = -errno;

        close(fd);
        return err;
    }
    return fd;
}

int sn_memfd_check(int fd, size_t len)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);

    if (seals < 0)
        return -errno;
    if (!(seals & F_SEAL_SHRINK))
        return -EPERM;
    if (fstat(fd, &st) < 0)
        return -errno;
    if ((size_t)st.st_size < len)
        return -EINVAL;
    return 0;
}

int sn_map(int fd, size_t len, void *addr, void **out)
{
    int flags = MAP_SHARED | (addr ? MAP_FIXED_NOREPLACE : 0);
    void *p = mmap(addr, len, PROT_READ | PROT_WRITE, flags, fd, 0);

    if (p == MAP_FAILED)
        return -errno;
    if (addr && p != addr) { /* kernels without MAP_FIXED_NOREPLACE */
        munmap(p, len);
        return -EEXIST;
    }
    *out = p;
    return 0;
}

void sn_futex_wake(uint32_t *word, int n)
{
    syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
}

void sn_futex_wait(uint32_t *word, uint32_t val, int64_t timeout_ns)
{
    struct timespec ts, *tsp = NULL;

    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
        tsp = &ts;
    }
    syscall(SYS_futex, word, FUTEX_WAIT, val, tsp, NULL, 0);
}

uint64_t sn_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
