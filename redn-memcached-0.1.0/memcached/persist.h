/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/persist.h - the cache's memory outlives the process: building
 * the storage (arena, slab classes, cuckoo index, LRUs) either fresh or by
 * adopting what a previous process left in persistent memory (rdn-nicd
 * keeps the NIC memory of a crashed or kept server, rdn/offload/offload.h).
 *
 * What persists: the item arena and the tables (the NIC reads both, so they
 * are always in NIC memory with --rdn-port) and a small superblock in the
 * offload's metadata (rdn_offload_meta()). The superblock holds everything
 * the memory's meaning depends on (maxbytes, -I, the page size, -f, -n, the
 * arena's address and length, the item header size, the starting
 * hashpower) under a checksum, the pages handed out so far with the slab
 * class of each (written when a page is given to a class, before any of
 * its chunks can hold an item), and the current table (buckets, hashpower,
 * the table being migrated from, the generation) and flush_all's cut-off
 * (both as two checksummed copies and a sequence word, so a kill -9 in the
 * middle of an update leaves the previous copy valid), and a CAS mark no id
 * handed out reaches (moved 2^20 ids at a time). Nothing is written per
 * SET: items and slots are their own record. The CPU-side state (LRUs,
 * free lists, counters, the CAS counter: above the items, the flush
 * cut-off and the mark) is rebuilt from them.
 *
 * Adoption, when the offload re-attached a previous process's memory:
 *   1. the superblock must match the current settings (checked before the
 *      arena is mapped: a different arena length would be discarded by the
 *      offload) and the arena must come back at its old address;
 *   2. every non-empty slot of the current table (and of the table being
 *      migrated from, if a growth was running: both are adopted and the
 *      migration resumes) must name an item inside the arena, at a chunk
 *      boundary of a page of the item's class (the smallest class its size
 *      fits, as item_alloc chooses), with a key of 1..250 bytes and a value
 *      that fit that chunk, equal non-zero head and tail stamps, a key whose
 *      fingerprint is the slot's and one of whose buckets is the slot's,
 *      and a descriptor {total length, the arena's lkey, address} that
 *      matches; no item may be named by two slots and no key may have two
 *      items;
 *   3. items that expired meanwhile (exptime is absolute) or that the
 *      recorded flush_all cut-off kills are not linked: their slots are
 *      cleared, their chunks freed; this is not an error.
 *
 * The consistent-snapshot rule. Items are copy-on-write and sealed (both
 * stamps written) before a slot names them, and every slot write (insert,
 * replace, delete, a cuckoo move, a migration step) happens under the
 * index's single writer lock. A kill -9 therefore interrupts at most one
 * slot operation, which leaves at most one anomaly: a replace that has
 * stored the new address but not yet the new length (a length mismatch),
 * or a move or migration step that has written the destination but not yet
 * cleared the source (one item named by two slots). So at most ONE slot
 * may fail step 2; it is dropped (cleared; for a duplicate, the copy found
 * second, i.e. the old table's or the later bucket's, so the key stays).
 * Two or more anomalies mean the memory is corrupt: the whole table is
 * refused. Refusal (a superblock that does not match, or a table that
 * breaks the rule) prints one line on stderr, always:
 *     rdn: persistent table refused: <reason>; starting empty
 * discards the memory (rdn_offload_discard()) and starts empty. Success
 * prints the items re-attached, the slots dropped, the expired items and
 * the time it took.
 *
 * Not persisted (documented limits): the stash of the index (keys whose
 * every candidate slot is taken even in a fresh table, which takes
 * deliberate multi-collisions; such keys are lost), the LRU order (adopted
 * items are linked in table order, the last one most recent, all with
 * access time now), and the statistics other than curr_items and bytes.
 * (A delayed flush_all pending at the crash is re-armed from its recorded
 * cut-off by memcached/rdn_glue.c.)
 *
 * Threads: persist_storage_init() runs alone at start-up; the hooks it
 * installs run under the slab page lock and the index's writer lock.
 */
#ifndef MEMCACHED_PERSIST_H
#define MEMCACHED_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/arena.h"
#include "memcached/assoc.h"

/* How the storage is built: where its memory comes from, and whether it
 * is a previous process's. */
struct persist_env {
    const struct arena_hooks *arena_hooks; /* NULL: anonymous memory */
    const struct arena_hooks *table_hooks; /* NULL: the arena's */
    void *meta;      /* persist_meta_len() bytes; NULL: nothing persists */
    bool reattached; /* meta and the hooks' memory are a previous process's */
    /* The lkey slot descriptors carry (NULL: 0, no NIC). */
    uint32_t (*lkey)(void *ctx);
    /* Forgets the re-attached memory: zeroes meta, arena and tables in
     * place; the hooks then behave as on a fresh start. 0 or -errno. */
    int (*discard)(void *ctx);
    /* Also told about every table switch (after the superblock). */
    assoc_switch_fn on_switch;
    void *ctx;
    bool prealloc; /* -L */
};

/* What persist_storage_init() did. */
struct persist_result {
    bool adopted;        /* the previous items are served */
    const char *refused; /* why the previous memory was refused, or NULL */
    uint64_t items;      /* items re-attached */
    uint64_t dropped;    /* slots dropped by the snapshot rule (0 or 1) */
    uint64_t expired;    /* items expired or flushed meanwhile */
    double ms;           /* time the validation and adoption took */
};

/* Bytes of metadata the current settings need (for cfg.meta_len). */
size_t persist_meta_len(void);

/*
 * Builds the storage from the settings: arena, slab classes, index, LRUs
 * (and the crawler if configured). With env->meta, keeps the superblock
 * there and, if env->reattached, adopts the previous memory as above.
 * res (may be NULL) says what happened; the outcome is also logged.
 * Returns 0 or a negative errno (the storage could not be built at all;
 * a refused table is not an error).
 */
int persist_storage_init(const struct persist_env *env,
                         struct persist_result *res);

#endif /* MEMCACHED_PERSIST_H */
