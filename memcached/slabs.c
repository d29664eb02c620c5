/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/slabs.c - size classes of contiguous chunks carved from arena
 * pages, with deferred reuse for chunks the NIC may still read.
 *
 * A class hands out chunks from, in order: its free list, the uncarved rest
 * of its newest page, its limbo chunks whose epoch the reader horizon has
 * passed, and a new page. Freed chunks are linked through their first 8
 * bytes; limbo chunks carry their epoch in the next 8 (see slabs.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcached/arena.h"
#include "memcached/slabs.h"
#include "proto/barrier.h"

struct free_chunk {
    struct free_chunk *next;
    uint64_t epoch; /* limbo only: the epoch it was freed in */
};

struct slabclass {
    pthread_mutex_t lock; /* protects every field below but counters */
    size_t size;          /* chunk size (constant after init) */
    unsigned perslab;     /* chunks per page (constant after init) */
    unsigned pages;
    struct free_chunk *free_head;
    uint64_t nfree;
    char *carve;         /* next uncarved chunk of the newest page */
    unsigned carve_left; /* chunks left to carve there */
    struct free_chunk *limbo_head, *limbo_tail; /* oldest epoch first */
    uint64_t nlimbo;
    /* The page being moved out of this class (slabs_move_begin()): its
     * chunks that come free are counted in captured instead of going back
     * to the free list, so none is handed out again; once all perslab are
     * in, the page changes hands. */
    char *moving;
    unsigned captured;
    uint64_t counters[SLABS_NCOUNTERS];
};

/* The one move at a time (page lock). */
struct page_move {
    char *page; /* NULL: no move */
    unsigned src, dst;
};

static struct {
    bool ready;
    unsigned nclasses; /* class ids 1..nclasses */
    size_t page_size;
    size_t page_stride; /* page_size rounded up to the arena's 64 */
    size_t item_size_max;
    size_t mem_limit;
    pthread_mutex_t page_lock; /* protects malloced and the page hook */
    size_t malloced;
    slabs_page_fn page_fn;
    void *page_ctx;
    uint64_t epoch;
    size_t max_pages;     /* arena pages: entries of page_owner */
    uint8_t *page_owner;  /* class of each handed-out page; page lock */
    char **pool;          /* memcached's class 0: pages owned by no class */
    size_t npool;         /* (page lock) */
    uint64_t pages_moved; /* slabs_moved (page lock) */
    struct page_move mv;  /* page lock to start or end; src lock between */
    bool preallocated;    /* -L: memcached then refuses cache_memlimit */
    /* The horizon is written with every class lock held, read under one. */
    uint64_t (*horizon)(void *ctx);
    void *horizon_ctx;
    struct slabclass cls[SLABS_MAX_CLASSES];
} slabs;

static const char *const counter_names[SLABS_NCOUNTERS] = {
    [SLABS_GET_HITS] = "get_hits",       [SLABS_CMD_SET] = "cmd_set",
    [SLABS_DELETE_HITS] = "delete_hits", [SLABS_INCR_HITS] = "incr_hits",
    [SLABS_DECR_HITS] = "decr_hits",     [SLABS_CAS_HITS] = "cas_hits",
    [SLABS_CAS_BADVAL] = "cas_badval",   [SLABS_TOUCH_HITS] = "touch_hits",
};

static bool settings_valid(double factor, size_t min_chunk,
                           size_t item_size_max)
{
    return factor > 1.0 && min_chunk >= 1 && min_chunk <= SLABS_ITEMMAX_MAX &&
           item_size_max >= SLABS_ITEMMAX_MIN &&
           item_size_max <= SLABS_ITEMMAX_MAX;
}

static size_t page_size_for(size_t item_size_max)
{
    return item_size_max > SLABS_PAGE_SIZE ? item_size_max : SLABS_PAGE_SIZE;
}

/*
 * Computes the chunk sizes the way memcached 1.6 does (unsigned size times
 * a double factor, truncated, then aligned to 8; stop once the unaligned
 * size reaches max / factor), except that max is item_size_max rather than
 * half a page. sizes[1..n] receive the sizes; returns n.
 */
static unsigned compute_sizes(double factor, size_t min_chunk,
                              size_t item_size_max,
                              size_t sizes[SLABS_MAX_CLASSES])
{
    size_t size = SLABS_ITEM_HEADER + min_chunk;
    unsigned i = 0;

    while (++i < SLABS_MAX_CLASSES - 1) {
        if ((double)size >= (double)item_size_max / factor)
            break;
        if (size % SLABS_CHUNK_ALIGN)
            size += SLABS_CHUNK_ALIGN - size % SLABS_CHUNK_ALIGN;
        sizes[i] = size;
        size = (size_t)((double)size * factor);
    }
    sizes[i] = item_size_max;
    return i;
}

size_t slabs_arena_bytes(size_t mem_limit, double factor, size_t min_chunk,
                         size_t item_size_max)
{
    size_t sizes[SLABS_MAX_CLASSES];

    if (!settings_valid(factor, min_chunk, item_size_max))
        return 0;

    size_t page = page_size_for(item_size_max);
    unsigned n = compute_sizes(factor, min_chunk, item_size_max, sizes);
    size_t limit_pages = (mem_limit + page - 1) / page;

    return (limit_pages + n) * page;
}

static size_t page_index(const void *p)
{
    return (size_t)((const char *)p - (char *)arena_base()) / slabs.page_stride;
}

/* Records that page now belongs to class clsid and tells the page hook,
 * before any of its chunks is handed out. Called with the page lock. */
static void page_owned(char *page, unsigned clsid)
{
    size_t i = page_index(page);

    if (i < slabs.max_pages)
        slabs.page_owner[i] = (uint8_t)clsid;
    if (slabs.page_fn != NULL)
        slabs.page_fn(slabs.page_ctx, i, clsid);
}

/* Takes a page for c: one of the pool's, else a new one if the memory
 * limit allows. Called with c->lock. */
static bool grab_page(struct slabclass *c)
{
    void *page = NULL;

    pthread_mutex_lock(&slabs.page_lock);
    if (slabs.npool > 0) {
        page = slabs.pool[--slabs.npool];
    } else if (slabs.mem_limit == 0 || c->pages == 0 ||
               slabs.malloced + slabs.page_size <= slabs.mem_limit) {
        page = arena_page_alloc(slabs.page_size);
        if (page != NULL)
            slabs.malloced += slabs.page_size;
    }
    if (page != NULL)
        page_owned(page, (unsigned)(c - slabs.cls));
    pthread_mutex_unlock(&slabs.page_lock);
    if (page == NULL)
        return false;
    c->pages++;
    c->carve = page;
    c->carve_left = c->perslab;
    return true;
}

/*
 * memcached -L: every class gets its first page now, and the arena's pages
 * up to the memory limit are faulted in so the first stores do not pay for
 * page faults.
 */
void slabs_prealloc(void)
{
    size_t os_page = (size_t)sysconf(_SC_PAGESIZE);
    size_t touch = slabs.mem_limit != 0 && slabs.mem_limit < arena_size()
                       ? slabs.mem_limit
                       : arena_size();
    volatile char *base = arena_base();

    slabs.preallocated = true;

    for (unsigned i = 1; i <= slabs.nclasses; i++) {
        struct slabclass *c = &slabs.cls[i];

        pthread_mutex_lock(&c->lock);
        if (c->pages == 0)
            grab_page(c);
        pthread_mutex_unlock(&c->lock);
    }
    for (size_t off = 0; off < touch; off += os_page)
        base[off] = base[off];
}

int slabs_init(size_t mem_limit, double factor, size_t min_chunk,
               size_t item_size_max, bool prealloc)
{
    size_t sizes[SLABS_MAX_CLASSES];

    if (!settings_valid(factor, min_chunk, item_size_max))
        return -EINVAL;
    if (slabs.ready)
        return -EBUSY;
    if (!arena_ready()) {
        int rc = arena_init(
            slabs_arena_bytes(mem_limit, factor, min_chunk, item_size_max),
            NULL);
        if (rc < 0)
            return rc;
    }

    memset(&slabs, 0, sizeof(slabs));
    slabs.nclasses = compute_sizes(factor, min_chunk, item_size_max, sizes);
    slabs.page_size = page_size_for(item_size_max);
    slabs.page_stride = (slabs.page_size + 63) & ~(size_t)63;
    slabs.item_size_max = item_size_max;
    slabs.mem_limit = mem_limit;
    slabs.max_pages = arena_size() / slabs.page_stride;
    slabs.page_owner = calloc(slabs.max_pages ? slabs.max_pages : 1, 1);
    slabs.pool = calloc(slabs.max_pages ? slabs.max_pages : 1, sizeof(char *));
    if (slabs.page_owner == NULL || slabs.pool == NULL) {
        free(slabs.page_owner);
        free(slabs.pool);
        return -ENOMEM;
    }
    pthread_mutex_init(&slabs.page_lock, NULL);
    store_seq_cst(&slabs.epoch, 1);
    for (unsigned i = 1; i <= slabs.nclasses; i++) {
        struct slabclass *c = &slabs.cls[i];

        pthread_mutex_init(&c->lock, NULL);
        c->size = sizes[i];
        c->perslab = (unsigned)(slabs.page_size / sizes[i]);
    }
    slabs.ready = true;
    if (prealloc)
        slabs_prealloc();
    return 0;
}

void slabs_destroy(void)
{
    if (!slabs.ready)
        return;
    for (unsigned i = 1; i <= slabs.nclasses; i++)
        pthread_mutex_destroy(&slabs.cls[i].lock);
    pthread_mutex_destroy(&slabs.page_lock);
    free(slabs.page_owner);
    free(slabs.pool);
    memset(&slabs, 0, sizeof(slabs));
}

unsigned slabs_clsid(size_t size)
{
    if (!slabs.ready || size == 0 || size > slabs.item_size_max)
        return 0;

    unsigned lo = 1, hi = slabs.nclasses;

    while (lo < hi) { /* the first class whose chunks are >= size */
        unsigned mid = lo + (hi - lo) / 2;

        if (slabs.cls[mid].size >= size)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static struct slabclass *class_of(unsigned clsid)
{
    if (!slabs.ready || clsid == 0 || clsid > slabs.nclasses)
        return NULL;
    return &slabs.cls[clsid];
}

size_t slabs_chunk_size(unsigned clsid)
{
    struct slabclass *c = class_of(clsid);

    return c != NULL ? c->size : 0;
}

unsigned slabs_nclasses(void)
{
    return slabs.ready ? slabs.nclasses : 0;
}

size_t slabs_page_size(void)
{
    return slabs.page_size;
}

size_t slabs_page_stride(void)
{
    return slabs.page_stride;
}

unsigned slabs_perslab(unsigned clsid)
{
    struct slabclass *c = class_of(clsid);

    return c != NULL ? c->perslab : 0;
}

void slabs_set_page_hook(slabs_page_fn fn, void *ctx)
{
    pthread_mutex_lock(&slabs.page_lock);
    slabs.page_fn = fn;
    slabs.page_ctx = ctx;
    pthread_mutex_unlock(&slabs.page_lock);
}

int slabs_adopt_page(size_t page, unsigned clsid, const uint64_t *in_use)
{
    struct slabclass *c = class_of(clsid);
    char *base;

    if (c == NULL || in_use == NULL || page >= arena_used() / slabs.page_stride)
        return -EINVAL;
    base = (char *)arena_base() + page * slabs.page_stride;
    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&slabs.page_lock);
    slabs.malloced += slabs.page_size;
    if (page < slabs.max_pages)
        slabs.page_owner[page] = (uint8_t)clsid;
    pthread_mutex_unlock(&slabs.page_lock);
    c->pages++;
    /* Last chunk first, so the free list hands them out in page order. */
    for (unsigned j = c->perslab; j-- > 0;) {
        struct free_chunk *f = (struct free_chunk *)(base + j * c->size);

        if (in_use[j / 64] & (UINT64_C(1) << (j % 64)))
            continue;
        f->next = c->free_head;
        c->free_head = f;
        c->nfree++;
    }
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* True if chunk p lies in the page being moved out of class c (its lock). */
static bool in_moving_page(const struct slabclass *c, const void *p)
{
    const char *q = p;

    return c->moving != NULL && q >= c->moving &&
           q < c->moving + slabs.page_size;
}

/* Makes a chunk allocatable again, or keeps it for a page move (nothing
 * can read a chunk that gets here: see slabs_free()). Called with c->lock. */
static void free_push(struct slabclass *c, struct free_chunk *f)
{
    if (in_moving_page(c, f)) {
        c->captured++;
        return;
    }
    f->next = c->free_head;
    c->free_head = f;
    c->nfree++;
}

/*
 * Moves the limbo chunks the reader horizon has passed to the free list;
 * without a horizon every limbo chunk qualifies. Called with c->lock.
 */
static void reclaim_limbo(struct slabclass *c)
{
    if (c->limbo_head == NULL)
        return;

    uint64_t horizon =
        slabs.horizon != NULL ? slabs.horizon(slabs.horizon_ctx) : UINT64_MAX;

    while (c->limbo_head != NULL && c->limbo_head->epoch < horizon) {
        struct free_chunk *f = c->limbo_head;

        c->limbo_head = f->next;
        if (c->limbo_head == NULL)
            c->limbo_tail = NULL;
        c->nlimbo--;
        free_push(c, f);
    }
}

/* A chunk of c from its free list or the newest page. Called with c->lock. */
static void *take_chunk(struct slabclass *c)
{
    if (c->free_head != NULL) {
        struct free_chunk *f = c->free_head;

        c->free_head = f->next;
        c->nfree--;
        return f;
    }
    if (c->carve_left > 0) {
        void *p = c->carve;

        c->carve += c->size;
        c->carve_left--;
        return p;
    }
    return NULL;
}

static void *alloc_chunk(size_t size, unsigned clsid, bool new_page)
{
    struct slabclass *c = class_of(clsid);
    void *p;

    if (c == NULL || size == 0 || size > c->size)
        return NULL;
    pthread_mutex_lock(&c->lock);
    p = take_chunk(c);
    if (p == NULL) {
        reclaim_limbo(c);
        p = take_chunk(c);
    }
    if (p == NULL && new_page && grab_page(c))
        p = take_chunk(c);
    pthread_mutex_unlock(&c->lock);
    return p;
}

void *slabs_alloc(size_t size, unsigned clsid)
{
    return alloc_chunk(size, clsid, true);
}

void *slabs_alloc_spare(size_t size, unsigned clsid)
{
    return alloc_chunk(size, clsid, false);
}

void slabs_free(void *ptr, size_t size, unsigned clsid)
{
    struct slabclass *c = class_of(clsid);
    struct free_chunk *f = ptr;

    if (c == NULL || ptr == NULL || size > c->size)
        return;
    pthread_mutex_lock(&c->lock);
    if (slabs.horizon == NULL) {
        free_push(c, f);
    } else {
        f->next = NULL;
        f->epoch = load_seq_cst(&slabs.epoch);
        if (c->limbo_tail != NULL)
            c->limbo_tail->next = f;
        else
            c->limbo_head = f;
        c->limbo_tail = f;
        c->nlimbo++;
    }
    pthread_mutex_unlock(&c->lock);
}

size_t slabs_limbo_count(unsigned clsid)
{
    struct slabclass *c = class_of(clsid);
    size_t n;

    if (c == NULL)
        return 0;
    pthread_mutex_lock(&c->lock);
    n = c->nlimbo;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void slabs_count(unsigned clsid, enum slabs_counter which)
{
    struct slabclass *c = class_of(clsid);

    if (c != NULL && (unsigned)which < SLABS_NCOUNTERS)
        fetch_add_relaxed(&c->counters[which], 1);
}

void slabs_stats_reset(void)
{
    for (unsigned i = 1; i < SLABS_MAX_CLASSES; i++)
        for (int k = 0; k < SLABS_NCOUNTERS; k++)
            store_relaxed(&slabs.cls[i].counters[k], 0);
}

uint64_t slabs_epoch(void)
{
    return load_seq_cst(&slabs.epoch);
}

void slabs_epoch_advance(void)
{
    fetch_add_seq_cst(&slabs.epoch, 1);
}

void slabs_set_horizon(uint64_t (*oldest_reader_epoch)(void *ctx), void *ctx)
{
    if (!slabs.ready)
        return;
    for (unsigned i = 1; i <= slabs.nclasses; i++)
        pthread_mutex_lock(&slabs.cls[i].lock);
    slabs.horizon = oldest_reader_epoch;
    slabs.horizon_ctx = ctx;
    for (unsigned i = slabs.nclasses; i >= 1; i--)
        pthread_mutex_unlock(&slabs.cls[i].lock);
}

/* ---- page moves (slabs reassign) ---- */

/* memcached's choice for src -1: the next class, round robin, with a
 * page to spare. Page lock not needed: a stale count only picks badly. */
static int pick_source(int dst)
{
    static unsigned cur;

    for (unsigned tries = slabs.nclasses; tries > 0; tries--) {
        cur = cur % slabs.nclasses + 1;
        if ((int)cur == dst)
            continue;
        pthread_mutex_lock(&slabs.cls[cur].lock);
        unsigned pages = slabs.cls[cur].pages;
        pthread_mutex_unlock(&slabs.cls[cur].lock);
        if (pages > 1)
            return (int)cur;
    }
    return -1;
}

/* The first page of the arena class src owns (page lock held). */
static char *first_page_of(unsigned src)
{
    for (size_t i = 0; i < slabs.max_pages; i++)
        if (slabs.page_owner[i] == src)
            return (char *)arena_base() + i * slabs.page_stride;
    return NULL;
}

/* Gives a whole free page, taken from its class, to class dst (0: the
 * pool) and counts the move. No lock held (it takes dst's, then the page
 * lock, in the allocator's order). */
static void page_give(char *page, unsigned dst)
{
    if (dst == 0) {
        /* The persistence record keeps the old class: a re-attach gives
         * the (empty) page back to it. */
        pthread_mutex_lock(&slabs.page_lock);
        slabs.page_owner[page_index(page)] = 0;
        slabs.pool[slabs.npool++] = page;
        slabs.pages_moved++;
        pthread_mutex_unlock(&slabs.page_lock);
        return;
    }
    struct slabclass *d = &slabs.cls[dst];

    pthread_mutex_lock(&d->lock);
    pthread_mutex_lock(&slabs.page_lock);
    page_owned(page, dst);
    slabs.pages_moved++;
    pthread_mutex_unlock(&slabs.page_lock);
    d->pages++;
    for (unsigned j = d->perslab; j-- > 0;) {
        struct free_chunk *f = (struct free_chunk *)(page + j * d->size);

        f->next = d->free_head;
        d->free_head = f;
        d->nfree++;
    }
    pthread_mutex_unlock(&d->lock);
}

enum slabs_reassign slabs_move_begin(int src, int dst)
{
    if (!slabs.ready)
        return SLABS_REASSIGN_BADCLASS;
    if (src == dst)
        return SLABS_REASSIGN_SAME;
    if (src == -1)
        src = pick_source(dst);
    if (src < 0 || src > (int)slabs.nclasses || dst < 0 ||
        dst > (int)slabs.nclasses)
        return SLABS_REASSIGN_BADCLASS;
    if (src == 0) { /* from the pool: no chunk to wait for */
        enum slabs_reassign r = SLABS_REASSIGN_NOSPARE;
        char *page = NULL;

        pthread_mutex_lock(&slabs.page_lock);
        if (slabs.mv.page != NULL) {
            r = SLABS_REASSIGN_RUNNING;
        } else if (slabs.npool >= 2) {
            page = slabs.pool[--slabs.npool];
            r = SLABS_REASSIGN_OK;
        }
        pthread_mutex_unlock(&slabs.page_lock);
        if (page != NULL)
            page_give(page, (unsigned)dst);
        return r;
    }

    struct slabclass *c = &slabs.cls[src];
    enum slabs_reassign r = SLABS_REASSIGN_OK;

    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&slabs.page_lock);
    char *page = c->pages >= 2 ? first_page_of((unsigned)src) : NULL;
    if (slabs.mv.page != NULL)
        r = SLABS_REASSIGN_RUNNING;
    else if (page == NULL)
        r = SLABS_REASSIGN_NOSPARE;
    else
        slabs.mv = (struct page_move){
            .page = page, .src = (unsigned)src, .dst = (unsigned)dst};
    pthread_mutex_unlock(&slabs.page_lock);
    if (r == SLABS_REASSIGN_OK) {
        c->moving = page;
        c->captured = 0;
        /* Its free chunks and uncarved rest are out of circulation now. */
        for (struct free_chunk **pp = &c->free_head; *pp != NULL;) {
            if (in_moving_page(c, *pp)) {
                *pp = (*pp)->next;
                c->nfree--;
                c->captured++;
            } else {
                pp = &(*pp)->next;
            }
        }
        if (c->carve_left > 0 && in_moving_page(c, c->carve)) {
            c->captured += c->carve_left;
            c->carve_left = 0;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

bool slabs_move_current(struct slabs_move *m)
{
    bool busy = false;

    if (!slabs.ready)
        return false;
    pthread_mutex_lock(&slabs.page_lock);
    if (slabs.mv.page != NULL) {
        m->page = slabs.mv.page;
        m->src = slabs.mv.src;
        m->dst = slabs.mv.dst;
        busy = true;
    }
    pthread_mutex_unlock(&slabs.page_lock);
    if (busy) {
        struct slabclass *c = &slabs.cls[m->src];

        pthread_mutex_lock(&c->lock);
        m->chunk_size = c->size;
        m->perslab = c->perslab;
        m->captured = c->captured;
        pthread_mutex_unlock(&c->lock);
    }
    return busy;
}

bool slabs_move_finish(void)
{
    struct slabs_move m;

    if (!slabs_move_current(&m))
        return false;

    struct slabclass *c = &slabs.cls[m.src];
    bool done;

    pthread_mutex_lock(&c->lock);
    /* Chunks whose readers are gone come out of limbo into the move. */
    reclaim_limbo(c);
    done = c->captured >= c->perslab;
    if (done) {
        c->pages--;
        c->moving = NULL;
        pthread_mutex_lock(&slabs.page_lock);
        /* No class's until page_give(): a move that begins in between
         * must not take it for one of src's pages again. */
        slabs.page_owner[page_index(m.page)] = 0;
        slabs.mv = (struct page_move){0};
        pthread_mutex_unlock(&slabs.page_lock);
    }
    pthread_mutex_unlock(&c->lock);
    if (done)
        page_give(m.page, m.dst);
    return done;
}

void slabs_class_pages(unsigned clsid, uint64_t *pages, uint64_t *free_chunks)
{
    struct slabclass *c = class_of(clsid);

    *pages = *free_chunks = 0;
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    *pages = c->pages;
    *free_chunks = c->nfree + c->carve_left;
    pthread_mutex_unlock(&c->lock);
}

void slabs_page_counts(uint64_t *moved, uint64_t *pool)
{
    *moved = *pool = 0;
    if (!slabs.ready)
        return;
    pthread_mutex_lock(&slabs.page_lock);
    *moved = slabs.pages_moved;
    *pool = slabs.npool;
    pthread_mutex_unlock(&slabs.page_lock);
}

int slabs_adjust_mem_limit(size_t limit)
{
    int rc = 0;

    if (!slabs.ready)
        return -EINVAL;
    pthread_mutex_lock(&slabs.page_lock);
    if (slabs.preallocated || limit > arena_size())
        rc = -EINVAL;
    else
        slabs.mem_limit = limit;
    pthread_mutex_unlock(&slabs.page_lock);
    return rc;
}

/* Reports "clsid:name value". */
static void class_stat(stat_sink_fn sink, void *ctx, unsigned clsid,
                       const char *name, uint64_t value)
{
    char key[64];

    snprintf(key, sizeof(key), "%u:%s", clsid, name);
    stat_sinkf(sink, ctx, key, "%llu", (unsigned long long)value);
}

void slabs_stats(stat_sink_fn sink, void *ctx)
{
    unsigned active = 0;
    uint64_t limbo = 0;

    if (!slabs.ready)
        return;
    for (unsigned i = 1; i <= slabs.nclasses; i++) {
        struct slabclass *c = &slabs.cls[i];

        pthread_mutex_lock(&c->lock);
        uint64_t pages = c->pages, total = pages * c->perslab;
        uint64_t nfree = c->nfree + c->carve_left;

        limbo += c->nlimbo;
        pthread_mutex_unlock(&c->lock);
        if (pages == 0)
            continue;
        active++;
        class_stat(sink, ctx, i, "chunk_size", c->size);
        class_stat(sink, ctx, i, "chunks_per_page", c->perslab);
        class_stat(sink, ctx, i, "total_pages", pages);
        class_stat(sink, ctx, i, "total_chunks", total);
        class_stat(sink, ctx, i, "used_chunks", total - nfree);
        class_stat(sink, ctx, i, "free_chunks", nfree);
        /* memcached 1.6 carves whole pages at once and reports 0 here. */
        class_stat(sink, ctx, i, "free_chunks_end", 0);
        for (int k = 0; k < SLABS_NCOUNTERS; k++)
            class_stat(sink, ctx, i, counter_names[k],
                       load_relaxed(&c->counters[k]));
    }
    stat_sinkf(sink, ctx, "active_slabs", "%u", active);
    stat_sinkf(sink, ctx, "total_malloced", "%zu", slabs_total_malloced());
    stat_sinkf(sink, ctx, "limbo_chunks", "%llu", (unsigned long long)limbo);
}

size_t slabs_total_malloced(void)
{
    size_t n;

    if (!slabs.ready)
        return 0;
    pthread_mutex_lock(&slabs.page_lock);
    n = slabs.malloced;
    pthread_mutex_unlock(&slabs.page_lock);
    return n;
}
