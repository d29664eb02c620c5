/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/assoc_int.h - what the two halves of the cuckoo index share.
 * Internal to memcached/assoc.c (slots, lookups, placement, the stash,
 * mutations, life cycle) and memcached/assoc_grow.c (growth, migration and
 * table retirement with its grace periods). Nothing else includes it; the
 * API is memcached/assoc.h.
 *
 * Who protects what:
 *   assoc.wlock      serialises every mutation: slot writes, displacement,
 *                    migration, table switches, the stash, the lkey, the
 *                    counters and the retired list.
 *   stripe versions  a writer makes ver[bucket % VER_STRIPES] odd while it
 *                    writes a slot of that bucket; a lookup retries when a
 *                    stripe it read changed (MemC3's optimistic reads).
 *   stash_ver        the same for the stash.
 *   generation       changes with every table switch; a lookup retries when
 *                    it changed under it (it may have used a stale cur/old).
 *   readers          two-phase striped counters: a table taken out of use
 *                    is unmapped only once every lookup that could have
 *                    loaded its pointer has left (a grace period, as SRCU).
 * Slots are read and written only as 8-byte words with atomic builtins.
 */
#ifndef MEMCACHED_ASSOC_INT_H
#define MEMCACHED_ASSOC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "memcached/assoc.h"
#include "proto/barrier.h"

#define READER_STRIPES 64
#define SLOT_WORDS     3 /* match, count|lkey, address */
#define BUCKET_WORDS   (RDN_BUCKET_SLOTS * SLOT_WORDS)

struct table {
    uint64_t *words; /* the rdn_bucket array as 8-byte words */
    uint64_t mask;   /* nbuckets - 1 */
    unsigned hashpower;
    size_t bytes;
    uint64_t used; /* occupied slots */
    struct table *next_retired;
};

/* A slot's place: bucket and slot index in one table. */
struct slot_ref {
    struct table *t;
    uint64_t bucket;
    unsigned slot;
};

struct stash_entry {
    uint64_t fp;
    uint64_t item; /* struct rdn_item address, 0 = free */
};

struct assoc_state {
    bool running;
    bool stop;
    bool expand_wanted;
    pthread_mutex_t wlock;
    pthread_cond_t wake;     /* the migration thread sleeps here */
    pthread_cond_t migrated; /* broadcast when an expansion ends */
    pthread_t thread;
    struct arena_hooks hooks;
    uint64_t empty_match; /* rdn_slot_match(0) */
    uint64_t tomb_addr;   /* assoc_tombstone(), set by assoc_init() */
    uint32_t lkey;        /* written under wlock, read atomically */
    assoc_switch_fn switch_fn;
    void *switch_ctx;

    struct table *cur; /* inserts go here */
    struct table *old; /* being migrated into cur, or NULL */
    uint64_t generation;
    uint64_t migrate_next; /* next bucket of old to migrate */
    struct table *retired; /* out of use, waiting for a grace period */

    uint64_t count;
    uint64_t expansions, displacements;
    uint64_t stash_count;
    uint64_t stash_ver;
    struct stash_entry stash[ASSOC_STASH_SLOTS];
};

extern struct assoc_state assoc; /* defined in assoc.c */

/* ---- words and slots ------------------------------------------------- */

static inline uint64_t *slot_words(const struct slot_ref *r)
{
    return r->t->words + r->bucket * BUCKET_WORDS + r->slot * SLOT_WORDS;
}

static inline uint64_t load_word(const uint64_t *w)
{
    return load_acquire(w);
}

static inline bool slot_empty(const struct slot_ref *r)
{
    return load_word(slot_words(r)) == assoc.empty_match;
}

/* The slot's third word: the be64 address of its item (proto/table.h). */
static inline be64 *slot_addr_word(const struct slot_ref *r)
{
    return (be64 *)&slot_words(r)[2];
}

static inline struct rdn_item *slot_item(const struct slot_ref *r)
{
    return (struct rdn_item *)(uintptr_t)be64_to_cpu(
        load_acquire_be64(slot_addr_word(r)));
}

static inline uint64_t table_slots(const struct table *t)
{
    return (t->mask + 1) * RDN_BUCKET_SLOTS;
}

/* ---- readers: grace periods (state in assoc_grow.c) ------------------- */

struct reader_stripe {
    uint64_t count[2];
} __attribute__((aligned(64)));

extern struct reader_stripe assoc_readers[READER_STRIPES];
extern unsigned assoc_reader_phase;
extern unsigned assoc_reader_next_stripe;
extern __thread int assoc_reader_stripe_of_thread;

/*
 * Announces a lookup (no lock); returns the phase to hand to
 * reader_exit(). A table retired after this call is unmapped only after
 * the matching reader_exit().
 */
static inline unsigned reader_enter(void)
{
    if (assoc_reader_stripe_of_thread < 0)
        assoc_reader_stripe_of_thread =
            (int)(fetch_add_seq_cst(&assoc_reader_next_stripe, 1) %
                  READER_STRIPES);

    unsigned phase = load_seq_cst(&assoc_reader_phase) & 1;

    fetch_add_seq_cst(
        &assoc_readers[assoc_reader_stripe_of_thread].count[phase], 1);
    return phase;
}

static inline void reader_exit(unsigned phase)
{
    fetch_sub_release(
        &assoc_readers[assoc_reader_stripe_of_thread].count[phase], 1);
}

/* ---- assoc.c, for the growth half (wlock held) ----------------------- */

/* Puts it into one of its buckets of t, displacing if need be; false if
 * no displacement path was found. */
bool assoc_place(struct table *t, const struct rdn_keyhash *kh,
                 const struct rdn_item *it);

/* Empties an occupied slot: the match word only, the descriptor stays. */
void assoc_slot_clear(const struct slot_ref *r);

/* Fills a fresh table: empty match words, tombstone descriptors. */
void assoc_table_init_slots(struct table *t);

/* Stashes it under fingerprint fp; false if the stash is full. */
bool assoc_stash_add(uint64_t fp, const struct rdn_item *it);

/* Moves stashed items into the current table where they now fit. */
void assoc_stash_drain(void);

/* The geometry assoc_get_info() reports. */
void assoc_get_info_locked(struct assoc_info *info);

/* ---- assoc_grow.c, for assoc.c ---------------------------------------- */

/*
 * A table of 2^hashpower empty buckets mapped through assoc.hooks, or NULL
 * when memory is exhausted; assoc_table_free() unmaps one no reader can
 * see any more.
 */
struct table *assoc_table_new(unsigned hashpower);
void assoc_table_free(struct table *t);

/*
 * Puts t on the retired list (wlock held, or alone in assoc_stop()); the
 * next assoc_free_retired() unmaps it after a grace period.
 */
void assoc_retire(struct table *t);

/*
 * Unmaps the retired tables once every lookup that could see them has
 * left. Called with wlock held; drops it while waiting.
 */
void assoc_free_retired(void);

/* Before an insert during a growth: migrates a few old buckets (wlock). */
void assoc_grow_assist(void);

/*
 * Starts a growth now, finishing a running one first (wlock held): 0,
 * -ENOSPC (at ASSOC_MAX_HASHPOWER, or a running migration is stuck) or
 * -ENOMEM.
 */
int assoc_grow_now(void);

/* After an insert: asks the migration thread for a growth at
 * ASSOC_EXPAND_PERCENT load. */
void assoc_check_load(void);

/* The migration thread's body (started by assoc_init()). */
void *assoc_migration_thread(void *arg);

#endif /* MEMCACHED_ASSOC_INT_H */
