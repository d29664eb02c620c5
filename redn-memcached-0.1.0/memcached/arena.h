/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/arena.h - the one region all item memory comes from.
 *
 * The slab allocator takes its pages from a single arena so that the whole
 * item store is one contiguous range: the rdn module can register it with
 * the NIC as one memory region (one lkey for every item descriptor). How the
 * arena (and the cuckoo table, see assoc.h) is mapped is decided by a small
 * hook: by default anonymous private memory whose pages are only faulted in
 * when touched; the rdn module passes hooks that map NIC-registrable memfd
 * memory instead.
 *
 * The arena is process-global. arena_init() and arena_destroy() must not run
 * concurrently with anything else; arena_page_alloc() is thread-safe (an
 * atomic bump pointer).
 */
#ifndef MEMCACHED_ARENA_H
#define MEMCACHED_ARENA_H

#include <stdbool.h>
#include <stddef.h>

/*
 * map: returns len bytes of zero-filled, page-aligned, readable and writable
 *      memory, or NULL. len is always a multiple of the system page size.
 *      On a re-attach (memcached/persist.h) it returns the memory a previous
 *      process left, contents intact, instead.
 * unmap: gives back a region map returned, with the same len.
 * ctx: passed to both.
 */
struct arena_hooks {
    void *(*map)(size_t len, void *ctx);
    void (*unmap)(void *addr, size_t len, void *ctx);
    void *ctx;
};

/* The default hooks: anonymous private mmap (MAP_NORESERVE, lazy pages). */
extern const struct arena_hooks arena_anon_hooks;

/*
 * Maps an arena of bytes (rounded up to the system page size) through hooks
 * (NULL = arena_anon_hooks). Returns 0, -EINVAL (bytes 0, or hooks without
 * map/unmap), -EBUSY (already initialised) or -ENOMEM (map failed).
 */
int arena_init(size_t bytes, const struct arena_hooks *hooks);

/* True between a successful arena_init() and arena_destroy(). */
bool arena_ready(void);

/* The arena's first byte and its usable size (0/NULL when not ready). */
void *arena_base(void);
size_t arena_size(void);

/* Bytes handed out by arena_page_alloc() so far. */
size_t arena_used(void);

/*
 * Re-attach: the arena was mapped over memory a previous process carved
 * (hooks that return existing memory), and its first used bytes are in
 * use. Sets the bump pointer there. 0, or -EINVAL (not ready, used not a
 * multiple of 64 or beyond the arena). Before any arena_page_alloc().
 */
int arena_set_used(size_t used);

/*
 * The hooks the arena was mapped with (arena_anon_hooks when not ready), so
 * other NIC-visible memory (the cuckoo table) can be mapped the same way.
 */
const struct arena_hooks *arena_hooks(void);

/*
 * Carves the next len bytes (rounded up to 64, the cache line) off the
 * arena: a bump allocator, nothing is ever given back. Returns NULL when the
 * arena is exhausted or not ready. Thread-safe.
 */
void *arena_page_alloc(size_t len);

/*
 * The guard tail after the usable size: ARENA_TAIL_ZERO bytes that are zero
 * forever (never handed out, never written) and inside the mapping, so NIC
 * registration covers them. NULL when not ready. The cuckoo index points
 * the descriptor of a never-used slot here (an item with stamp 0).
 */
#define ARENA_TAIL_ZERO 64
const void *arena_zero_tail(void);

/* True if [p, p + len) lies inside the arena. */
bool arena_contains(const void *p, size_t len);

/* Unmaps the arena (tests and shutdown). Nothing may use it afterwards. */
void arena_destroy(void);

#endif /* MEMCACHED_ARENA_H */
