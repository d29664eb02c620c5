/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slabs.h - memcached's slab allocator, for contiguous items.
 *
 * Item memory is split into size classes. Class 1 holds chunks of
 * 48 + min_chunk bytes (48 being memcached 1.6's item header on 64-bit),
 * each next class is the previous one times factor, rounded up to 8 bytes,
 * exactly as memcached 1.6 computes them, so `stats slabs` shows the same
 * chunk_size sequence as memcached 1.6.18 for the same -f/-n: with the
 * defaults 96, 120, 152, 192, 240, 304, 384, 480, 600, 752, 944, 1184, ...
 * Memory is taken from the arena (arena.h) one page at a time; a page
 * belongs to one class until "slabs reassign" moves it (slabs_move_begin()).
 *
 * Difference from memcached: the NIC sends one item with one RDMA WRITE, so
 * an item must be contiguous. memcached 1.6 stops the classes at half a
 * page (slab_chunk_max) and stores larger items as chains of chunks; here
 * there is no chunked mode: the classes keep growing until item_size_max
 * (-I) and the last class is exactly item_size_max. Pages are 1 MB, or
 * item_size_max when -I is larger than 1 MB. There are at most
 * SLABS_MAX_CLASSES - 1 classes; when a small factor would make more, the
 * last one still is item_size_max (as in memcached).
 *
 * Memory limit (as memcached): a class gets a new page only while the pages
 * handed out stay within mem_limit, except that a class without any page
 * always gets its first one, so every size stays storable.
 *
 * Deferred reuse. CPU readers of an item are protected by the item's
 * refcount (items.c). The NIC can read an item without holding anything, so
 * slabs_free() does not make a chunk allocatable at once: the chunk is put
 * in limbo stamped with the current reclaim epoch (slabs_epoch()). It
 * becomes allocatable once the reader horizon, i.e. the epoch of the oldest
 * reader that may still be running (slabs_set_horizon()), is greater than
 * that stamp. With no horizon set (no RDMA readers) freed chunks are
 * reusable immediately. The rdn module advances the epoch and supplies the
 * horizon.
 *
 * Chunk contents: slabs_free() overwrites the first 16 bytes of the chunk
 * (free-list link and epoch stamp); it never writes beyond them. items.c
 * therefore keeps its CPU-side header (at least 16 bytes) in front of the
 * NIC-visible struct rdn_item, and items.c (not slabs, which does not know
 * the item layout) clears the rdn_item's head stamp (proto/item.h) before
 * calling slabs_free().
 *
 * Locks: each class has a mutex protecting its free list, limbo list and
 * page/chunk counts; a global mutex serialises taking a new page (mem_limit
 * accounting). Lock order: class lock, then the page lock. The per-class
 * operation counters (slabs_count) are relaxed atomics, no lock. All
 * functions are thread-safe after slabs_init(); slabs_init() and
 * slabs_destroy() must run alone.
 */
#ifndef MEMCACHED_SLABS_H
#define MEMCACHED_SLABS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/stat_sink.h"

#define SLABS_MAX_CLASSES     64 /* class ids are 1..63, 0 = none */
#define SLABS_ITEM_HEADER     48 /* memcached 1.6's sizeof(item) on 64-bit */
#define SLABS_CHUNK_ALIGN     8
#define SLABS_PAGE_SIZE       (1024 * 1024)
#define SLABS_DEFAULT_FACTOR  1.25
#define SLABS_DEFAULT_MIN     48            /* -n */
#define SLABS_DEFAULT_ITEMMAX (1024 * 1024) /* -I */
#define SLABS_ITEMMAX_MIN     1024          /* memcached's -I bounds */
#define SLABS_ITEMMAX_MAX     (1024 * 1024 * 1024)

/* The operations counted per class for `stats slabs` (bumped by items.c). */
enum slabs_counter {
    SLABS_GET_HITS,
    SLABS_CMD_SET,
    SLABS_DELETE_HITS,
    SLABS_INCR_HITS,
    SLABS_DECR_HITS,
    SLABS_CAS_HITS,
    SLABS_CAS_BADVAL,
    SLABS_TOUCH_HITS,
    SLABS_NCOUNTERS
};

/*
 * The arena bytes slabs_init() needs for these settings: mem_limit rounded
 * up to whole pages plus one page per class (the first-page allowance).
 * Returns 0 when the settings are invalid (see slabs_init()).
 */
size_t slabs_arena_bytes(size_t mem_limit, double factor, size_t min_chunk,
                         size_t item_size_max);

/*
 * Builds the size classes. mem_limit: -m in bytes (0 = no limit beyond the
 * arena); factor: -f, > 1.0; min_chunk: -n, >= 1; item_size_max: -I, in
 * [SLABS_ITEMMAX_MIN, SLABS_ITEMMAX_MAX]; prealloc (-L): give every class
 * its first page now and fault in the arena's pages.
 *
 * If the arena is not initialised yet, slabs_init() maps it with the
 * default hooks and slabs_arena_bytes() bytes; to use other hooks (NIC
 * memory) call arena_init(slabs_arena_bytes(...), hooks) first.
 * Returns 0, -EINVAL (bad settings), -EBUSY (already initialised) or
 * -ENOMEM.
 */
int slabs_init(size_t mem_limit, double factor, size_t min_chunk,
               size_t item_size_max, bool prealloc);

/*
 * memcached -L: gives every class without a page its first one and faults
 * in the arena's pages up to the memory limit. slabs_init() calls it when
 * asked to; a re-attach calls it after the adopted pages are in place.
 */
void slabs_prealloc(void);

/* Frees the allocator's state (tests); the arena stays. */
void slabs_destroy(void);

/* The smallest class whose chunks hold size bytes; 0 = too large/size 0. */
unsigned slabs_clsid(size_t size);

/* Chunk size of a class (0 for an invalid id); number of classes. */
size_t slabs_chunk_size(unsigned clsid);
unsigned slabs_nclasses(void);

/* The page size in use (1 MB, or item_size_max when that is larger). */
size_t slabs_page_size(void);

/* Distance between pages in the arena: the page size rounded up to 64. Page
 * i starts at arena_base() + i * slabs_page_stride(). */
size_t slabs_page_stride(void);

/* Chunks in one page of a class (0 for an invalid id). */
unsigned slabs_perslab(unsigned clsid);

/*
 * Persistence (memcached/persist.h). fn(ctx, page, clsid) is called when
 * arena page number page is given to class clsid, before any chunk of it
 * is handed out, with the page lock held (pages are given one at a time,
 * in arena order). fn NULL removes the hook. Set it before serving.
 */
typedef void (*slabs_page_fn)(void *ctx, size_t page, unsigned clsid);
void slabs_set_page_hook(slabs_page_fn fn, void *ctx);

/*
 * Re-attach: arena page number page (below arena_used()) belonged to class
 * clsid in a previous process. Gives it to the class again; its chunks
 * whose bit is set in in_use[] (bit j of in_use[j / 64] for chunk j) hold
 * live items, every other chunk goes to the class's free list. Returns 0
 * or -EINVAL. Before any concurrent use of the allocator.
 */
int slabs_adopt_page(size_t page, unsigned clsid, const uint64_t *in_use);

/*
 * A chunk of class clsid able to hold size bytes (size <= the chunk size).
 * Returns NULL if clsid/size are invalid, or if the class has no free chunk
 * and no new page can be had (memory limit or arena exhausted): the caller
 * then evicts from its LRU and retries. The chunk's contents are undefined.
 */
void *slabs_alloc(size_t size, unsigned clsid);

/* Like slabs_alloc(), but only from the chunks the class has: never a new
 * page (a page move's rescues, as memcached's). */
void *slabs_alloc_spare(size_t size, unsigned clsid);

/*
 * Returns a chunk got from slabs_alloc(size, clsid). It goes to limbo and
 * becomes allocatable when the reader horizon passes the current epoch
 * (immediately when no horizon is set). See the header comment for what
 * the caller must have done first (clear the head stamp).
 */
void slabs_free(void *ptr, size_t size, unsigned clsid);

/*
 * Returns how many chunks of class clsid wait in limbo for the reader
 * horizon (0 for an invalid clsid). Takes the class lock.
 */
size_t slabs_limbo_count(unsigned clsid);

/* Bumps one per-class operation counter (relaxed atomic). */
void slabs_count(unsigned clsid, enum slabs_counter which);

/* Zeroes every class's operation counters ("stats reset"). */
void slabs_stats_reset(void);

/* The current reclaim epoch (starts at 1) and advancing it by one. */
uint64_t slabs_epoch(void);
void slabs_epoch_advance(void);

/*
 * Installs the reader horizon: oldest_reader_epoch(ctx) returns the epoch
 * in which the oldest still-running NIC reader started (or a value greater
 * than slabs_epoch() when none runs). A chunk freed in epoch e is reused
 * only when the horizon is > e. fn NULL removes the horizon. The function
 * is called with a class lock held, so it must not call back into slabs.
 */
void slabs_set_horizon(uint64_t (*oldest_reader_epoch)(void *ctx), void *ctx);

/*
 * Page moves ("slabs reassign", memcached's slab rebalancer). Class 0 is
 * memcached's global page pool: pages no class owns, which the next class
 * needing a page takes before any new one. One move runs at a time:
 *
 * slabs_move_begin(src, dst) picks the first page (in arena order) of class
 * src (-1: the next class with a page to spare, round robin) to go to class
 * dst (0: the pool). From then on no chunk of that page is handed out:
 * its free chunks and uncarved rest are withdrawn at once, and chunks of
 * it freed later are withdrawn when they would become allocatable, i.e.
 * only once the reader horizon has passed them (the NIC never reads a
 * reused chunk: the same rule as any free). The caller (items level) must
 * then unlink the page's live items; slabs_move_finish() completes the
 * move once every chunk is withdrawn: the page's chunks are dst's free
 * chunks (the page hook is told of the new class first). A move from the
 * pool completes at once. Returns memcached's outcomes: SAME (src == dst),
 * BADCLASS (an id outside 0..nclasses, or -1 found no class), NOSPARE
 * (src has fewer than 2 pages), RUNNING (a move is under way), OK.
 */
enum slabs_reassign {
    SLABS_REASSIGN_OK,
    SLABS_REASSIGN_RUNNING,
    SLABS_REASSIGN_BADCLASS,
    SLABS_REASSIGN_NOSPARE,
    SLABS_REASSIGN_SAME,
};
enum slabs_reassign slabs_move_begin(int src, int dst);

/* The move under way: its page, classes, and chunks withdrawn so far. */
struct slabs_move {
    char *page;
    unsigned src, dst;
    size_t chunk_size;
    unsigned perslab, captured;
};
/* Fills *m and returns true if a move is under way. */
bool slabs_move_current(struct slabs_move *m);

/* Completes the move if all of its page's chunks are withdrawn; returns
 * true if it did (false: not yet, or no move). */
bool slabs_move_finish(void);

/* Pages moved so far (memcached's slabs_moved) and pages in the pool
 * (slab_global_page_pool). */
void slabs_page_counts(uint64_t *moved, uint64_t *pool);

/* Pages a class holds and its free chunks, its uncarved rest included
 * (both 0 for an invalid id). Takes the class lock. */
void slabs_class_pages(unsigned clsid, uint64_t *pages, uint64_t *free_chunks);

/*
 * cache_memlimit: the memory limit from now on (pages already handed out
 * stay). Returns 0, or -EINVAL when memory was preallocated (-L, as
 * memcached) or the limit is beyond the arena, which is mapped (and, with
 * the offload, registered with the NIC) once at start.
 */
int slabs_adjust_mem_limit(size_t limit);

/*
 * `stats slabs` as memcached 1.6.18: per class with pages, "N:chunk_size",
 * chunks_per_page, total_pages, total_chunks, used_chunks, free_chunks,
 * free_chunks_end, get_hits, cmd_set, delete_hits, incr_hits, decr_hits,
 * cas_hits, cas_badval, touch_hits; then active_slabs and total_malloced,
 * and this allocator's own limbo_chunks. Chunks in limbo count as used.
 * `stats sizes` is not produced here: it is a histogram of live items,
 * which items.c keeps.
 */
void slabs_stats(stat_sink_fn sink, void *ctx);

/* Bytes of pages handed to classes (memcached's total_malloced). */
size_t slabs_total_malloced(void);

#endif /* MEMCACHED_SLABS_H */
