/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/assoc.c - the cuckoo index: slots, lookups, placement and
 * displacement, the stash, mutations and the life cycle (see assoc.h for
 * the design, assoc_int.h for the locking). Growth, migration and table
 * retirement are in assoc_grow.c.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/assoc_int.h"
#include "proto/barrier.h"
#include "proto/byteorder.h"

#define VER_STRIPES   8192 /* version counters, a power of two */
#define BFS_MAX_NODES 1024 /* buckets one displacement search visits */
/* Load (%) under which a failed placement is a collision to stash, not a
 * full table to grow. */
#define STASH_LOAD_LIMIT 50

_Static_assert(sizeof(struct rdn_slot) == SLOT_WORDS * 8, "slot words");

struct assoc_state assoc = {
    .wlock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .migrated = PTHREAD_COND_INITIALIZER,
};

static uint64_t ver[VER_STRIPES];

/* The tombstone when there is no arena (tests of the index alone). */
static const struct {
    struct rdn_item head;
    uint64_t tail;
} no_arena_tombstone;

/* ---- words and slots ------------------------------------------------- */

static inline void store_word(uint64_t *w, uint64_t v)
{
    store_release(w, v);
}

/* The descriptor's first word: be32 byte count, then be32 lkey. */
static inline uint64_t desc_count_word(uint32_t byte_count, uint32_t lkey)
{
    struct mlx5_data_seg d = {cpu_to_be32(byte_count), cpu_to_be32(lkey), 0};
    uint64_t w;

    memcpy(&w, &d, sizeof(w));
    return w;
}

static inline uint64_t item_len(const struct rdn_item *it)
{
    return rdn_item_total_len(it->nkey, it->nbytes);
}

/* ---- optimistic versions ---------------------------------------------- */

static inline uint64_t *stripe_of(uint64_t bucket)
{
    return &ver[bucket & (VER_STRIPES - 1)];
}

/* Writer side (wlock held): odd while the bucket is being written. */
static inline void write_begin(uint64_t *v)
{
    store_relaxed(v, load_relaxed(v) + 1);
    fence_release();
}

static inline void write_end(uint64_t *v)
{
    store_release(v, load_relaxed(v) + 1);
}

/* Writes a whole slot in the order assoc.h documents. wlock held. */
static void slot_publish(const struct slot_ref *r, uint64_t match,
                         uint64_t count_word, be64 addr)
{
    uint64_t *w = slot_words(r);
    uint64_t *v = stripe_of(r->bucket);

    write_begin(v);
    store_release_be64(slot_addr_word(r), addr);
    store_word(&w[1], count_word);
    store_word(&w[0], match);
    write_end(v);
}

/*
 * Empties a slot with one store of the match word. The descriptor keeps
 * pointing at the item that was there: a NIC READ racing with the clear may
 * still pair the old match word with it, and must then get a gather entry
 * the NIC can execute (the item stays registered and is not reused before
 * the reader horizon passes; the client rejects it by stamps and key). A
 * zeroed descriptor would arm a WRITE with lkey 0 and kill that client's QP.
 */
void assoc_slot_clear(const struct slot_ref *r)
{
    uint64_t *v = stripe_of(r->bucket);

    write_begin(v);
    store_word(&slot_words(r)[0], assoc.empty_match);
    write_end(v);
    r->t->used--;
}

void assoc_table_init_slots(struct table *t)
{
    uint64_t count = desc_count_word((uint32_t)rdn_item_total_len(0, 0),
                                     load_relaxed(&assoc.lkey));
    be64 addr = cpu_to_be64(assoc.tomb_addr);

    for (uint64_t i = 0; i < (t->mask + 1) * RDN_BUCKET_SLOTS; i++) {
        t->words[i * SLOT_WORDS] = assoc.empty_match;
        t->words[i * SLOT_WORDS + 1] = count;
        *(be64 *)&t->words[i * SLOT_WORDS + 2] = addr;
    }
}

const struct rdn_item *assoc_tombstone(void)
{
    return (const struct rdn_item *)(uintptr_t)assoc.tomb_addr;
}

/* Puts item it (fingerprint fp) into the empty slot r. wlock held. */
static void slot_fill(const struct slot_ref *r, uint64_t fp,
                      const struct rdn_item *it)
{
    slot_publish(r, rdn_slot_match(fp),
                 desc_count_word((uint32_t)item_len(it), assoc.lkey),
                 cpu_to_be64((uint64_t)(uintptr_t)it));
    r->t->used++;
}

/* The fingerprint a match word carries (its 48 id bits). */
static uint64_t match_fp(uint64_t match)
{
    struct mlx5_ctrl_seg c;

    memcpy(&c, &match, sizeof(match));
    return (uint64_t)(be32_to_cpu(c.opmod_idx_opcode) >> 24) << 40 |
           (uint64_t)mlx5_ctrl_wqe_index(&c) << 24 | mlx5_ctrl_qpn(&c);
}

/* ---- lookups ---------------------------------------------------------- */

/* The buckets a lookup reads and the versions it saw them at. */
struct probe {
    unsigned n;
    struct table *t[4];
    uint64_t bucket[4];
    uint64_t v[4];
    uint64_t stash_v;
};

static void probe_add(struct probe *p, struct table *t,
                      const struct rdn_keyhash *kh)
{
    if (t == NULL)
        return;
    p->t[p->n] = t;
    p->bucket[p->n++] = kh->bucket1 & t->mask;
    p->t[p->n] = t;
    p->bucket[p->n++] = kh->bucket2 & t->mask;
}

/* Snapshots the versions; false if a writer is inside one of them. */
static bool probe_begin(struct probe *p)
{
    for (unsigned i = 0; i < p->n; i++) {
        p->v[i] = load_acquire(stripe_of(p->bucket[i]));
        if (p->v[i] & 1)
            return false;
    }
    p->stash_v = load_acquire(&assoc.stash_ver);
    return !(p->stash_v & 1);
}

/* True if no writer touched the probed buckets since probe_begin(). */
static bool probe_unchanged(const struct probe *p)
{
    fence_acquire();
    for (unsigned i = 0; i < p->n; i++)
        if (load_relaxed(stripe_of(p->bucket[i])) != p->v[i])
            return false;
    return load_relaxed(&assoc.stash_ver) == p->stash_v;
}

/*
 * Whether item it has key key[0..nkey). it may be an item of another key
 * that is being freed and reused: the read is then garbage, and the
 * version check that follows makes the lookup retry.
 */
static bool key_equals(const struct rdn_item *it, const char *key, size_t nkey)
{
    return load_relaxed(&it->nkey) == nkey && memcmp(it + 1, key, nkey) == 0;
}

static struct rdn_item *bucket_find(struct table *t, uint64_t bucket,
                                    uint64_t match, const char *key,
                                    size_t nkey)
{
    for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
        struct slot_ref r = {t, bucket, i};
        struct rdn_item *it;

        if (load_word(slot_words(&r)) != match)
            continue;
        /* A delete may clear the slot meanwhile: the item it still names
         * may then be freed, and the version check makes us retry. */
        it = slot_item(&r);
        if (key_equals(it, key, nkey))
            return it;
    }
    return NULL;
}

static struct rdn_item *stash_find(uint64_t fp, const char *key, size_t nkey)
{
    if (load_seq_cst(&assoc.stash_count) == 0)
        return NULL;
    for (unsigned i = 0; i < ASSOC_STASH_SLOTS; i++) {
        struct stash_entry *e = &assoc.stash[i];
        uint64_t item = load_acquire(&e->item);

        if (item != 0 && load_relaxed(&e->fp) == fp &&
            key_equals((struct rdn_item *)(uintptr_t)item, key, nkey))
            return (struct rdn_item *)(uintptr_t)item;
    }
    return NULL;
}

void assoc_keyhash(const char *key, size_t nkey, struct rdn_keyhash *kh)
{
    rdn_keyhash(key, nkey, ASSOC_KH_HASHPOWER, kh);
}

struct rdn_item *assoc_find(const char *key, size_t nkey,
                            const struct rdn_keyhash *kh)
{
    struct rdn_item *found;

    if (key == NULL || kh == NULL || nkey == 0 || nkey > RDN_KEY_MAX)
        return NULL;

    uint64_t match = rdn_slot_match(kh->fp);
    unsigned phase = reader_enter();

    for (;;) {
        uint64_t gen = load_seq_cst(&assoc.generation);
        struct table *t = load_seq_cst(&assoc.cur);
        struct table *o = load_seq_cst(&assoc.old);
        struct probe p = {0};

        if (t == NULL) { /* not initialised */
            found = NULL;
            break;
        }
        probe_add(&p, o, kh);
        probe_add(&p, t, kh);
        if (!probe_begin(&p)) {
            sched_yield();
            continue;
        }
        found = NULL;
        for (unsigned i = 0; i < p.n && found == NULL; i++)
            found = bucket_find(p.t[i], p.bucket[i], match, key, nkey);
        if (found == NULL)
            found = stash_find(kh->fp, key, nkey);
        if (probe_unchanged(&p) && load_seq_cst(&assoc.generation) == gen)
            break;
    }
    reader_exit(phase);
    return found;
}

/* ---- placement (wlock held) ----------------------------------------- */

static int free_slot(struct table *t, uint64_t bucket)
{
    for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
        struct slot_ref r = {t, bucket, i};

        if (slot_empty(&r))
            return (int)i;
    }
    return -1;
}

/* Moves a slot's content into the empty slot dst: copy, then clear. */
static void slot_move(const struct slot_ref *src, const struct slot_ref *dst)
{
    const uint64_t *w = slot_words(src);

    slot_publish(dst, load_word(&w[0]), load_word(&w[1]),
                 load_acquire_be64(slot_addr_word(src)));
    dst->t->used++;
    assoc_slot_clear(src);
    assoc.displacements++;
}

struct bfs_node {
    uint64_t bucket;
    int parent;     /* index of the node whose slot moves here; -1 = root */
    unsigned pslot; /* that slot in the parent's bucket */
};

/* Visited buckets of one search: open addressing, cleared per search. */
#define BFS_SEEN_SLOTS (BFS_MAX_NODES * 4)
static uint64_t bfs_seen[BFS_SEEN_SLOTS]; /* bucket + 1; wlock */
static struct bfs_node bfs_queue[BFS_MAX_NODES];

/* Marks bucket seen; false if it already was. */
static bool bfs_mark(uint64_t bucket)
{
    uint64_t h = (bucket * UINT64_C(0x9e3779b97f4a7c15)) >> 52;

    for (;; h = (h + 1) % BFS_SEEN_SLOTS) {
        if (bfs_seen[h] == bucket + 1)
            return false;
        if (bfs_seen[h] == 0) {
            bfs_seen[h] = bucket + 1;
            return true;
        }
    }
}

/*
 * Having found that the resident of (q[idx].bucket, slot) can move to the
 * empty slot (dest, dslot), shifts every resident along the path back to
 * the root one step, last move first, so each key stays findable. Returns
 * the slot freed in the root bucket.
 */
static struct slot_ref run_path(struct table *t, int idx, unsigned slot,
                                uint64_t dest, unsigned dslot)
{
    struct slot_ref dst = {t, dest, dslot};
    struct slot_ref src = {t, bfs_queue[idx].bucket, slot};

    for (;;) {
        slot_move(&src, &dst);
        if (bfs_queue[idx].parent < 0)
            return src;
        dst = src;
        src = (struct slot_ref){t, bfs_queue[bfs_queue[idx].parent].bucket,
                                bfs_queue[idx].pslot};
        idx = bfs_queue[idx].parent;
    }
}

/*
 * Frees a slot in b1 or b2 (both full) by a breadth-first search for the
 * shortest chain of residents ending at a bucket with room (libcuckoo's
 * BFS over MemC3's layout). The alternate bucket of a resident comes from
 * its fingerprint alone. Buckets are visited at most once, so a path never
 * moves one slot twice. False if no path within BFS_MAX_NODES buckets.
 */
static bool make_room(struct table *t, uint64_t b1, uint64_t b2,
                      struct slot_ref *hole)
{
    int n = 0;

    memset(bfs_seen, 0, sizeof(bfs_seen));
    bfs_mark(b1);
    bfs_mark(b2);
    bfs_queue[n++] = (struct bfs_node){b1, -1, 0};
    bfs_queue[n++] = (struct bfs_node){b2, -1, 0};
    for (int head = 0; head < n; head++) {
        uint64_t bucket = bfs_queue[head].bucket;

        for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
            struct slot_ref r = {t, bucket, i};
            uint64_t fp = match_fp(load_word(slot_words(&r)));
            uint64_t alt = bucket ^ rdn_keyhash_alt(fp, t->mask);
            int j;

            if (!bfs_mark(alt))
                continue;
            j = free_slot(t, alt);
            if (j >= 0) {
                *hole = run_path(t, head, i, alt, (unsigned)j);
                return true;
            }
            if (n < BFS_MAX_NODES)
                bfs_queue[n++] = (struct bfs_node){alt, head, i};
        }
    }
    return false;
}

bool assoc_place(struct table *t, const struct rdn_keyhash *kh,
                 const struct rdn_item *it)
{
    uint64_t b1 = kh->bucket1 & t->mask, b2 = kh->bucket2 & t->mask;
    struct slot_ref hole = {t, b1, 0};
    int j;

    if ((j = free_slot(t, b1)) >= 0)
        hole.slot = (unsigned)j;
    else if ((j = free_slot(t, b2)) >= 0)
        hole = (struct slot_ref){t, b2, (unsigned)j};
    else if (!make_room(t, b1, b2, &hole))
        return false;
    slot_fill(&hole, kh->fp, it);
    return true;
}

/* ---- the stash (wlock held) ------------------------------------------- */

bool assoc_stash_add(uint64_t fp, const struct rdn_item *it)
{
    for (unsigned i = 0; i < ASSOC_STASH_SLOTS; i++) {
        struct stash_entry *e = &assoc.stash[i];

        if (e->item != 0)
            continue;
        write_begin(&assoc.stash_ver);
        store_relaxed(&e->fp, fp);
        store_release(&e->item, (uint64_t)(uintptr_t)it);
        write_end(&assoc.stash_ver);
        fetch_add_seq_cst(&assoc.stash_count, 1);
        return true;
    }
    return false;
}

static void stash_set(struct stash_entry *e, const struct rdn_item *it)
{
    write_begin(&assoc.stash_ver);
    store_release(&e->item, (uint64_t)(uintptr_t)it);
    write_end(&assoc.stash_ver);
    if (it == NULL)
        fetch_sub_seq_cst(&assoc.stash_count, 1);
}

static struct stash_entry *stash_entry_of(const struct rdn_item *it)
{
    for (unsigned i = 0; i < ASSOC_STASH_SLOTS; i++)
        if (assoc.stash[i].item == (uint64_t)(uintptr_t)it)
            return &assoc.stash[i];
    return NULL;
}

void assoc_stash_drain(void)
{
    struct table *t = load_seq_cst(&assoc.cur);

    for (unsigned i = 0; i < ASSOC_STASH_SLOTS; i++) {
        struct stash_entry *e = &assoc.stash[i];
        struct rdn_item *it = (struct rdn_item *)(uintptr_t)e->item;
        struct rdn_keyhash kh;

        if (it == NULL)
            continue;
        assoc_keyhash(rdn_item_key(it), it->nkey, &kh);
        if (assoc_place(t, &kh, it))
            stash_set(e, NULL); /* in the table first, then out of here */
    }
}

/* ---- mutations --------------------------------------------------------- */

/*
 * During a growth every insert first helps the migration along
 * (assoc_grow_assist()).
 *
 * An insert that finds no room in a table that is not nearly full has hit
 * colliding keys a bigger table would not separate: it is stashed. In a
 * full table it grows the table (synchronously) and tries again.
 */
static int insert_locked(struct rdn_item *it, const struct rdn_keyhash *kh)
{
    assoc_grow_assist();
    for (int attempt = 0;; attempt++) {
        struct table *t = load_seq_cst(&assoc.cur);
        int rc = 0;

        if (assoc_place(t, kh, it))
            return 0;
        if (attempt < 2 && t->used * 100 >= table_slots(t) * STASH_LOAD_LIMIT &&
            (rc = assoc_grow_now()) == 0)
            continue;
        if (assoc_stash_add(kh->fp, it))
            return 0;
        return rc < 0 ? rc : -ENOSPC;
    }
}

int assoc_insert(struct rdn_item *it, const struct rdn_keyhash *kh)
{
    int rc;

    if (it == NULL || kh == NULL)
        return -EINVAL;
    pthread_mutex_lock(&assoc.wlock);
    if (load_seq_cst(&assoc.cur) == NULL) {
        rc = -EINVAL;
    } else if ((rc = insert_locked(it, kh)) == 0) {
        fetch_add_seq_cst(&assoc.count, 1);
        assoc_check_load();
    }
    pthread_mutex_unlock(&assoc.wlock);
    return rc;
}

/* The slot holding item it (in the old or the current table). */
static bool slot_of(const struct rdn_item *it, const struct rdn_keyhash *kh,
                    struct slot_ref *out)
{
    struct table *tables[2] = {load_seq_cst(&assoc.old),
                               load_seq_cst(&assoc.cur)};

    for (int k = 0; k < 2; k++) {
        struct table *t = tables[k];
        uint64_t buckets[2];

        if (t == NULL)
            continue;
        buckets[0] = kh->bucket1 & t->mask;
        buckets[1] = kh->bucket2 & t->mask;
        for (int b = 0; b < 2; b++)
            for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
                *out = (struct slot_ref){t, buckets[b], i};
                if (!slot_empty(out) && slot_item(out) == it)
                    return true;
            }
    }
    return false;
}

int assoc_delete(struct rdn_item *it, const struct rdn_keyhash *kh)
{
    struct slot_ref r;
    struct stash_entry *e;
    int rc = 0;

    if (it == NULL || kh == NULL)
        return -EINVAL;
    pthread_mutex_lock(&assoc.wlock);
    if (load_seq_cst(&assoc.cur) != NULL && slot_of(it, kh, &r))
        assoc_slot_clear(&r);
    else if (load_seq_cst(&assoc.cur) != NULL && (e = stash_entry_of(it)))
        stash_set(e, NULL);
    else
        rc = -ENOENT;
    if (rc == 0)
        fetch_sub_seq_cst(&assoc.count, 1);
    pthread_mutex_unlock(&assoc.wlock);
    return rc;
}

int assoc_replace(struct rdn_item *old_it, struct rdn_item *new_it,
                  const struct rdn_keyhash *kh)
{
    struct slot_ref r;
    struct stash_entry *e;
    int rc = 0;

    if (old_it == NULL || new_it == NULL || kh == NULL)
        return -EINVAL;
    pthread_mutex_lock(&assoc.wlock);
    if (load_seq_cst(&assoc.cur) != NULL && slot_of(old_it, kh, &r))
        slot_publish(&r, rdn_slot_match(kh->fp),
                     desc_count_word((uint32_t)item_len(new_it), assoc.lkey),
                     cpu_to_be64((uint64_t)(uintptr_t)new_it));
    else if (load_seq_cst(&assoc.cur) != NULL && (e = stash_entry_of(old_it)))
        stash_set(e, new_it);
    else
        rc = -ENOENT;
    pthread_mutex_unlock(&assoc.wlock);
    return rc;
}

/*
 * Rewrites the lkey half of every slot's count|lkey word in t, empty slots
 * included: their descriptors (the tombstone, or the item last there) must
 * stay executable for a READ that races with the next insert.
 */
static void relabel_lkey(struct table *t)
{
    if (t == NULL)
        return;
    for (uint64_t b = 0; b <= t->mask; b++)
        for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
            struct slot_ref r = {t, b, i};
            uint64_t *v = stripe_of(b);
            uint64_t *w = &slot_words(&r)[1];
            struct mlx5_data_seg d;

            memcpy(&d, w, sizeof(*w)); /* wlock: no other writer */
            write_begin(v);
            store_word(w,
                       desc_count_word(be32_to_cpu(d.byte_count), assoc.lkey));
            write_end(v);
        }
}

void assoc_set_lkey(uint32_t lkey)
{
    pthread_mutex_lock(&assoc.wlock);
    store_relaxed(&assoc.lkey, lkey);
    relabel_lkey(load_seq_cst(&assoc.old));
    relabel_lkey(load_seq_cst(&assoc.cur));
    pthread_mutex_unlock(&assoc.wlock);
}

/* ---- life cycle and information ------------------------ */

/*
 * Takes the hooks and the tombstone for a table about to be built or
 * adopted; -EINVAL or -EBUSY, else 0 with wlock held.
 */
static int start_begin(const struct arena_hooks *hooks)
{
    if (hooks == NULL)
        hooks = arena_hooks();
    if (hooks->map == NULL || hooks->unmap == NULL)
        return -EINVAL;
    pthread_mutex_lock(&assoc.wlock);
    if (assoc.running) {
        pthread_mutex_unlock(&assoc.wlock);
        return -EBUSY;
    }
    assoc.hooks = *hooks;
    assoc.empty_match = rdn_slot_match(0);
    /* Without an arena no NIC reads the table: any zero item will do. */
    assoc.tomb_addr =
        (uint64_t)(uintptr_t)(arena_ready()
                                  ? arena_zero_tail()
                                  : (const void *)&no_arena_tombstone);
    return 0;
}

/*
 * Publishes cur (and old, being migrated into cur) and starts the
 * migration thread; drops wlock. On failure the tables are freed.
 */
static int start_end(struct table *cur, struct table *old, uint64_t generation)
{
    int rc;

    store_seq_cst(&assoc.cur, cur);
    store_seq_cst(&assoc.old, old);
    store_seq_cst(&assoc.generation, generation);
    store_seq_cst(&assoc.count, cur->used + (old ? old->used : 0));
    assoc.migrate_next = 0;
    assoc.stop = false;
    rc = -pthread_create(&assoc.thread, NULL, assoc_migration_thread, NULL);
    if (rc < 0) {
        store_seq_cst(&assoc.cur, NULL);
        store_seq_cst(&assoc.old, NULL);
        store_seq_cst(&assoc.count, 0);
        store_seq_cst(&assoc.generation, 0);
        assoc_table_free(cur);
        if (old)
            assoc_table_free(old);
    } else {
        assoc.running = true;
    }
    pthread_mutex_unlock(&assoc.wlock);
    return rc;
}

int assoc_init(unsigned hashpower, const struct arena_hooks *hooks)
{
    struct table *t;
    int rc;

    if (hashpower < ASSOC_MIN_HASHPOWER || hashpower > ASSOC_MAX_HASHPOWER)
        return -EINVAL;
    if ((rc = start_begin(hooks)) < 0)
        return rc;
    t = assoc_table_new(hashpower);
    if (t == NULL) {
        pthread_mutex_unlock(&assoc.wlock);
        return -ENOMEM;
    }
    return start_end(t, NULL, 0);
}

/* A table over existing buckets, its occupied slots counted. */
static struct table *table_adopt(void *buckets, unsigned hashpower)
{
    struct table *t;

    if (buckets == NULL || hashpower < ASSOC_MIN_HASHPOWER ||
        hashpower > ASSOC_MAX_HASHPOWER || !(t = calloc(1, sizeof(*t))))
        return NULL;
    t->words = buckets;
    t->hashpower = hashpower;
    t->mask = (UINT64_C(1) << hashpower) - 1;
    t->bytes = (t->mask + 1) * sizeof(struct rdn_bucket);
    for (uint64_t i = 0; i < table_slots(t); i++)
        if (t->words[i * SLOT_WORDS] != assoc.empty_match)
            t->used++;
    return t;
}

int assoc_adopt(const struct assoc_adopt *a, const struct arena_hooks *hooks)
{
    struct table *cur, *old = NULL;
    int rc;

    if (a == NULL || (a->old_buckets != NULL) != (a->generation & 1))
        return -EINVAL;
    if ((rc = start_begin(hooks)) < 0)
        return rc;
    cur = table_adopt(a->buckets, a->hashpower);
    if (cur != NULL && a->old_buckets != NULL &&
        (a->old_hashpower >= a->hashpower ||
         !(old = table_adopt(a->old_buckets, a->old_hashpower)))) {
        free(cur);
        cur = NULL;
    }
    if (cur == NULL) {
        pthread_mutex_unlock(&assoc.wlock);
        return -EINVAL;
    }
    return start_end(cur, old, a->generation);
}

void assoc_stop(void)
{
    struct table *t;

    pthread_mutex_lock(&assoc.wlock);
    if (!assoc.running) {
        pthread_mutex_unlock(&assoc.wlock);
        return;
    }
    assoc.stop = true;
    pthread_cond_signal(&assoc.wake);
    pthread_mutex_unlock(&assoc.wlock);
    pthread_join(assoc.thread, NULL);

    /* Alone now: no lookups may run during or after assoc_stop(). */
    if ((t = load_seq_cst(&assoc.old)) != NULL)
        assoc_retire(t);
    assoc_retire(load_seq_cst(&assoc.cur));
    store_seq_cst(&assoc.cur, NULL);
    store_seq_cst(&assoc.old, NULL);
    pthread_mutex_lock(&assoc.wlock);
    assoc_free_retired();
    memset(assoc.stash, 0, sizeof(assoc.stash));
    store_seq_cst(&assoc.stash_count, 0);
    store_seq_cst(&assoc.count, 0);
    store_seq_cst(&assoc.generation, 0);
    assoc.expansions = assoc.displacements = 0;
    assoc.expand_wanted = false;
    store_relaxed(&assoc.lkey, 0);
    assoc.running = false;
    pthread_mutex_unlock(&assoc.wlock);
}

void assoc_get_info_locked(struct assoc_info *info)
{
    struct table *t = load_seq_cst(&assoc.cur);
    struct table *o = load_seq_cst(&assoc.old);

    memset(info, 0, sizeof(*info));
    if (t == NULL)
        return;
    info->buckets = t->words;
    info->nbuckets = t->mask + 1;
    info->hashpower = t->hashpower;
    info->generation = load_seq_cst(&assoc.generation);
    info->expanding = o != NULL;
    if (o != NULL) {
        info->old_buckets = o->words;
        info->old_nbuckets = o->mask + 1;
    }
}

void assoc_get_info(struct assoc_info *info)
{
    pthread_mutex_lock(&assoc.wlock);
    assoc_get_info_locked(info);
    pthread_mutex_unlock(&assoc.wlock);
}

void assoc_set_switch_hook(assoc_switch_fn fn, void *ctx)
{
    pthread_mutex_lock(&assoc.wlock);
    assoc.switch_fn = fn;
    assoc.switch_ctx = ctx;
    pthread_mutex_unlock(&assoc.wlock);
}

void assoc_report_geometry(void)
{
    struct assoc_info info;

    pthread_mutex_lock(&assoc.wlock);
    if (assoc.switch_fn != NULL) {
        assoc_get_info_locked(&info);
        assoc.switch_fn(assoc.switch_ctx, &info);
    }
    pthread_mutex_unlock(&assoc.wlock);
}

uint64_t assoc_count(void)
{
    return load_seq_cst(&assoc.count);
}

void assoc_stats(stat_sink_fn sink, void *ctx)
{
    struct assoc_info info;
    uint64_t expansions, displacements;

    pthread_mutex_lock(&assoc.wlock);
    assoc_get_info_locked(&info);
    expansions = assoc.expansions;
    displacements = assoc.displacements;
    pthread_mutex_unlock(&assoc.wlock);

    stat_sinkf(sink, ctx, "hash_power_level", "%u", info.hashpower);
    stat_sinkf(sink, ctx, "hash_bytes", "%llu",
               (unsigned long long)(info.nbuckets * sizeof(struct rdn_bucket)));
    stat_sinkf(sink, ctx, "hash_is_expanding", "%d", info.expanding ? 1 : 0);
    stat_sinkf(sink, ctx, "assoc_items", "%llu",
               (unsigned long long)assoc_count());
    stat_sinkf(sink, ctx, "assoc_generation", "%llu",
               (unsigned long long)info.generation);
    stat_sinkf(sink, ctx, "assoc_expansions", "%llu",
               (unsigned long long)expansions);
    stat_sinkf(sink, ctx, "assoc_displacements", "%llu",
               (unsigned long long)displacements);
    stat_sinkf(sink, ctx, "assoc_stash_items", "%llu",
               (unsigned long long)load_seq_cst(&assoc.stash_count));
}
