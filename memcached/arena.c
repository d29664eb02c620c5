/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/arena.c - one mapped region, carved by a bump pointer.
 *
 * The region is mapped with a guard tail of one page beyond the usable
 * size: a lock-free lookup may compare a key against a chunk that was just
 * recycled (assoc.c then retries), and the tail keeps such a read of up to
 * RDN_KEY_MAX bytes past the last chunk inside mapped memory. Nothing
 * writes the tail, so its first bytes also serve as a permanently valid,
 * all-zero item for the NIC (arena_zero_tail()).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memcached/arena.h"
#include "proto/barrier.h"

#define ARENA_ALIGN 64

static void *anon_map(size_t len, void *ctx)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

static void anon_unmap(void *addr, size_t len, void *ctx)
{
    munmap(addr, len);
}

const struct arena_hooks arena_anon_hooks = {anon_map, anon_unmap, NULL};

/* Set by arena_init() before any concurrent use; only next moves after. */
static struct {
    char *base;
    size_t size;   /* usable bytes */
    size_t mapped; /* size + guard tail */
    struct arena_hooks hooks;
    size_t next; /* offset of the first byte not handed out */
} arena;

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return (n + page - 1) / page * page;
}

int arena_init(size_t bytes, const struct arena_hooks *hooks)
{
    if (bytes == 0 || bytes > SIZE_MAX / 2)
        return -EINVAL;
    if (hooks == NULL)
        hooks = &arena_anon_hooks;
    if (hooks->map == NULL || hooks->unmap == NULL)
        return -EINVAL;
    if (arena.base != NULL)
        return -EBUSY;

    size_t size = page_round(bytes);
    size_t mapped = size + page_round(1);
    void *p = hooks->map(mapped, hooks->ctx);

    if (p == NULL)
        return -ENOMEM;
    arena.base = p;
    arena.size = size;
    arena.mapped = mapped;
    arena.hooks = *hooks;
    store_seq_cst(&arena.next, 0);
    return 0;
}

bool arena_ready(void)
{
    return arena.base != NULL;
}

void *arena_base(void)
{
    return arena.base;
}

size_t arena_size(void)
{
    return arena.size;
}

size_t arena_used(void)
{
    return load_relaxed(&arena.next);
}

int arena_set_used(size_t used)
{
    if (arena.base == NULL || used > arena.size || used % ARENA_ALIGN)
        return -EINVAL;
    store_seq_cst(&arena.next, used);
    return 0;
}

const struct arena_hooks *arena_hooks(void)
{
    return arena.base != NULL ? &arena.hooks : &arena_anon_hooks;
}

void *arena_page_alloc(size_t len)
{
    if (arena.base == NULL || len == 0 || len > arena.size)
        return NULL;
    len = (len + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

    size_t off = load_relaxed(&arena.next);

    do {
        if (len > arena.size - off)
            return NULL;
    } while (!cas_relaxed(&arena.next, &off, off + len));
    return arena.base + off;
}

const void *arena_zero_tail(void)
{
    return arena.base != NULL ? arena.base + arena.size : NULL;
}

bool arena_contains(const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)arena.base;

    return arena.base != NULL && a >= base && len <= arena.size &&
           a - base <= arena.size - len;
}

void arena_destroy(void)
{
    if (arena.base == NULL)
        return;
    arena.hooks.unmap(arena.base, arena.mapped, arena.hooks.ctx);
    arena.base = NULL;
    arena.size = 0;
    arena.mapped = 0;
    store_seq_cst(&arena.next, 0);
}
