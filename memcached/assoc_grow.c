/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/assoc_grow.c - the cuckoo index's growth: building the larger
 * table, migrating the old one into it (the migration thread, plus a few
 * buckets per insert), and retiring tables after a grace period (see
 * assoc.h for the design, assoc_int.h for the locking).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "memcached/assoc_int.h"
#include "proto/barrier.h"

#define MIGRATE_BATCH  128 /* old buckets moved per writer-lock hold */
#define MIGRATE_ASSIST 2   /* old buckets each insert migrates first */

struct reader_stripe assoc_readers[READER_STRIPES];
unsigned assoc_reader_phase;
unsigned assoc_reader_next_stripe;
__thread int assoc_reader_stripe_of_thread = -1;

/* ---- readers: grace periods ------------------------------------------ */

/*
 * Waits until no lookup counts in phase's counters (after the phase flip
 * that made new lookups count in the other phase).
 */
static void drain_phase(unsigned phase)
{
    struct timespec nap = {0, 100 * 1000};

    for (int i = 0; i < READER_STRIPES; i++)
        while (load_seq_cst(&assoc_readers[i].count[phase]) != 0)
            nanosleep(&nap, NULL);
}

/*
 * Returns once every lookup that started before the call has finished.
 * Readers entering after a flip count in the other phase, so no wait can be
 * starved. Two flips are needed (as in SRCU): a lookup may read the phase,
 * be preempted across a whole flip-and-drain, and then count itself in the
 * phase that was just drained; that lookup may already have loaded a table
 * pointer retired later, and only the second drain waits for it. Only the
 * migration thread (or assoc_stop, alone) calls it.
 */
static void wait_for_readers(void)
{
    for (int flip = 0; flip < 2; flip++)
        drain_phase(fetch_xor_seq_cst(&assoc_reader_phase, 1) & 1);
}

/* ---- tables ---------------------------------------------------------- */

struct table *assoc_table_new(unsigned hashpower)
{
    struct table *t = calloc(1, sizeof(*t));
    uint64_t nbuckets = UINT64_C(1) << hashpower;

    if (t == NULL)
        return NULL;
    t->hashpower = hashpower;
    t->mask = nbuckets - 1;
    t->bytes = nbuckets * sizeof(struct rdn_bucket);
    t->words = assoc.hooks.map(t->bytes, assoc.hooks.ctx);
    if (t->words == NULL) {
        free(t);
        return NULL;
    }
    assoc_table_init_slots(t);
    return t;
}

void assoc_table_free(struct table *t)
{
    assoc.hooks.unmap(t->words, t->bytes, assoc.hooks.ctx);
    free(t);
}

void assoc_retire(struct table *t)
{
    t->next_retired = assoc.retired;
    assoc.retired = t;
}

void assoc_free_retired(void)
{
    struct table *list = assoc.retired;

    assoc.retired = NULL;
    pthread_mutex_unlock(&assoc.wlock);
    wait_for_readers();
    while (list != NULL) {
        struct table *next = list->next_retired;

        assoc_table_free(list);
        list = next;
    }
    pthread_mutex_lock(&assoc.wlock);
}

/* Tells the switch hook about the geometry. wlock held. */
static void report_switch(void)
{
    struct assoc_info info;

    if (assoc.switch_fn == NULL)
        return;
    assoc_get_info_locked(&info);
    assoc.switch_fn(assoc.switch_ctx, &info);
}

/* ---- growth (wlock held) ---------------------------------------------- */

/* Makes n the table inserts go to; the current one starts migrating. */
static void switch_to(struct table *n)
{
    store_seq_cst(&assoc.old, load_seq_cst(&assoc.cur));
    store_seq_cst(&assoc.cur, n);
    fetch_add_seq_cst(&assoc.generation, 1);
    assoc.migrate_next = 0;
    assoc.expansions++;
    report_switch();
    pthread_cond_signal(&assoc.wake);
}

static void end_expansion(void)
{
    struct table *o = load_seq_cst(&assoc.old);

    store_seq_cst(&assoc.old, NULL);
    fetch_add_seq_cst(&assoc.generation, 1);
    assoc_retire(o);
    assoc_stash_drain();
    report_switch();
    pthread_cond_broadcast(&assoc.migrated);
    pthread_cond_signal(&assoc.wake);
}

/*
 * Moves the residents of bucket b of the old table into the new one (or
 * the stash). False if one fits in neither; it then stays where it is,
 * still found by lookups, and migration retries later.
 */
static bool migrate_bucket(struct table *o, uint64_t b)
{
    struct table *t = load_seq_cst(&assoc.cur);

    for (unsigned i = 0; i < RDN_BUCKET_SLOTS; i++) {
        struct slot_ref r = {o, b, i};
        struct rdn_item *it;
        struct rdn_keyhash kh;

        if (slot_empty(&r))
            continue;
        it = slot_item(&r);
        assoc_keyhash(rdn_item_key(it), it->nkey, &kh);
        if (!assoc_place(t, &kh, it) && !assoc_stash_add(kh.fp, it))
            return false;
        assoc_slot_clear(&r); /* placed first, cleared second */
    }
    return true;
}

/* Migrates up to max old buckets; -ENOSPC if stuck (see above). */
static int migrate_some(uint64_t max)
{
    struct table *o = load_seq_cst(&assoc.old);

    for (; o != NULL && max > 0; max--) {
        if (!migrate_bucket(o, assoc.migrate_next))
            return -ENOSPC;
        if (++assoc.migrate_next > o->mask) {
            end_expansion();
            break;
        }
    }
    return 0;
}

/*
 * During a growth every insert first migrates MIGRATE_ASSIST old buckets
 * (as Redis's incremental rehash), so the migration ends within
 * nbuckets / MIGRATE_ASSIST inserts even if the thread never runs, and the
 * new table (twice the old) cannot fill up before the old one is empty.
 */
void assoc_grow_assist(void)
{
    if (load_seq_cst(&assoc.old) != NULL)
        migrate_some(MIGRATE_ASSIST); /* stuck: the thread retries later */
}

int assoc_grow_now(void)
{
    struct table *t, *n;

    if (load_seq_cst(&assoc.old) != NULL && migrate_some(UINT64_MAX) < 0)
        return -ENOSPC;
    t = load_seq_cst(&assoc.cur);
    if (t->hashpower >= ASSOC_MAX_HASHPOWER)
        return -ENOSPC;
    n = assoc_table_new(t->hashpower + 1);
    if (n == NULL)
        return -ENOMEM;
    switch_to(n);
    return 0;
}

/* Whether the table inserts go to is loaded enough to grow. wlock held. */
static bool growth_due(const struct table *t)
{
    return load_seq_cst(&assoc.count) * 100 >=
           table_slots(t) * ASSOC_EXPAND_PERCENT;
}

/*
 * The background half of the load trigger: maps the larger table without
 * holding wlock (it can be big), then switches unless a writer grew the
 * table meanwhile. A request made before a synchronous growth (or before
 * deletes) is dropped when the current table is no longer that full.
 * Called and returns with wlock held.
 */
static void grow_in_background(void)
{
    struct table *t = load_seq_cst(&assoc.cur), *n;

    if (load_seq_cst(&assoc.old) != NULL ||
        t->hashpower >= ASSOC_MAX_HASHPOWER || !growth_due(t))
        return;
    pthread_mutex_unlock(&assoc.wlock);
    n = assoc_table_new(t->hashpower + 1);
    pthread_mutex_lock(&assoc.wlock);
    if (n == NULL)
        return; /* an insert that finds no room grows synchronously */
    if (load_seq_cst(&assoc.cur) != t || load_seq_cst(&assoc.old) != NULL)
        assoc_table_free(n); /* never published: no reader can have it */
    else
        switch_to(n);
}

void assoc_check_load(void)
{
    struct table *t = load_seq_cst(&assoc.cur);

    if (load_seq_cst(&assoc.old) == NULL && !assoc.expand_wanted &&
        growth_due(t)) {
        assoc.expand_wanted = true;
        pthread_cond_signal(&assoc.wake);
    }
}

/*
 * The migration thread: grows the table when asked, migrates the old
 * table in batches (dropping wlock between them so writers keep going),
 * and unmaps retired tables.
 */
void *assoc_migration_thread(void *arg)
{
    struct timespec backoff = {0, 10 * 1000 * 1000};

    (void)arg;
    pthread_mutex_lock(&assoc.wlock);
    while (!assoc.stop) {
        if (assoc.retired != NULL) {
            assoc_free_retired();
        } else if (load_seq_cst(&assoc.old) != NULL) {
            int rc = migrate_some(MIGRATE_BATCH);

            pthread_mutex_unlock(&assoc.wlock);
            if (rc < 0)
                nanosleep(&backoff, NULL);
            else
                sched_yield();
            pthread_mutex_lock(&assoc.wlock);
        } else if (assoc.expand_wanted) {
            assoc.expand_wanted = false;
            grow_in_background();
        } else {
            pthread_cond_wait(&assoc.wake, &assoc.wlock);
        }
    }
    pthread_mutex_unlock(&assoc.wlock);
    return NULL;
}

int assoc_expand(bool wait)
{
    int rc;

    pthread_mutex_lock(&assoc.wlock);
    if (!assoc.running)
        rc = -EINVAL;
    else if (load_seq_cst(&assoc.old) != NULL)
        rc = -EALREADY;
    else
        rc = assoc_grow_now();
    if (rc == 0 && wait) {
        uint64_t started = assoc.expansions;

        while (load_seq_cst(&assoc.old) != NULL && assoc.expansions == started)
            pthread_cond_wait(&assoc.migrated, &assoc.wlock);
    }
    pthread_mutex_unlock(&assoc.wlock);
    return rc;
}
