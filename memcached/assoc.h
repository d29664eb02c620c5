/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/assoc.h - the key index: a set-associative cuckoo table in the
 * style of MemC3, laid out exactly as proto/table.h so the NIC can read it.
 *
 * A key has two candidate buckets of RDN_BUCKET_SLOTS slots
 * (proto/keyhash.h). A slot holds the NOP-shaped match word carrying the
 * key's 48-bit fingerprint and an mlx5 data segment {be32 byte count =
 * rdn_item_total_len(nkey, nbytes), be32 lkey, be64 address of the struct
 * rdn_item}. An insert into two full buckets moves residents to their other
 * bucket along a path found by breadth-first search; each move copies the
 * slot to its new place before clearing the old one, so a key that is
 * present is always in at least one of its buckets.
 *
 * Slot store order (what a NIC reader can see; each store is 8 bytes). A
 * READ of a bucket is not atomic: it may combine any of the values each
 * word held while it ran. So the rule is that every descriptor word a slot
 * ever holds is part of an executable gather entry: the lkey is always the
 * arena's (assoc_set_lkey() relabels every slot), and every address is the
 * start of an item or the tombstone (assoc_tombstone(), in the arena's
 * zero tail), all inside the registered arena; the arena's registration
 * extends an item's largest size past its end, so any address paired with
 * any byte count stays inside it. A slot is never zeroed:
 *   fresh:   the empty match word and the tombstone's descriptor.
 *   insert:  descriptor (address, then count/lkey), then the match word:
 *            the slot matches only once it points at the item.
 *   delete:  the match word alone (back to the empty word); the descriptor
 *            keeps naming the deleted item, so a READ that still saw the
 *            old match word sends that item (its memory is not reused until
 *            the reader horizon passes it; the client checks stamps and key).
 *   replace: same key, so the match word stays; the descriptor is rewritten
 *            (address, then count/lkey). A reader racing with it may get the
 *            new address with the old byte count or the reverse; it detects
 *            that because it checks both stamps, the key, and that the byte
 *            count is rdn_item_total_len() of the header it received
 *            (proto/item.h).
 *   move:    the destination slot is written as an insert, then the source
 *            slot is cleared as a delete. A NIC reader that reads the two
 *            buckets at different instants may miss a key being moved (a
 *            false miss, never a wrong value); CPU readers never miss.
 * So no READ sees a slot that matches and points at nothing: the worst a
 * race yields is a torn item (stamp 0 for the tombstone), never a WRITE the
 * NIC rejects.
 *
 * Growth: when the table is 85% full, or an insert finds no displacement
 * path, a table twice as large is built: the new table becomes the one
 * inserts go to (generation + 1), a background thread migrates the old
 * table's buckets in small batches (and every insert migrates two first,
 * so the new table cannot fill up before the old one is empty), and
 * lookups and deletes look in both until it is done (generation + 1 again, old
 * memory unmapped once no CPU reader can be in it). So the generation is odd
 * exactly while an expansion runs. Inserts never fail because the table is
 * full: they expand (synchronously if need be). Keys whose every candidate slot
 * is taken even in a fresh table (fingerprints and bucket bits colliding, which
 * takes deliberate multi-collisions) go to a small CPU-only stash
 * (ASSOC_STASH_SLOTS): found by assoc_find(), not visible to the NIC.
 *
 * Concurrency: all mutations (insert, delete, replace, displacement,
 * migration, table switch) are serialised by one writer mutex, as MemC3's
 * single writer. Lookups take no lock: they read under optimistic version
 * counters striped over buckets (a writer makes a stripe odd while it
 * changes a bucket of it; a reader retries when a stripe it read changed),
 * and announce themselves in per-thread-striped reader counters (two
 * phases, as in SRCU) so an old table is unmapped only after every lookup
 * that could see it has finished. Callers (items.c) serialise mutations of
 * one key with their striped item locks (kh->lock32) and hold that lock
 * around assoc_find() and the use of its result; assoc is safe for
 * concurrent mutations of different keys and lookups, and tolerates items
 * of other keys being freed (not unmapped: they live in the arena) while a
 * lookup compares their keys. An item must stay valid while it is in the
 * table: items.c removes it (assoc_delete/assoc_replace) before freeing.
 *
 * Key hashes: assoc's callers hash a key once with assoc_keyhash(), which
 * computes rdn_keyhash() at 64 bits of bucket index; assoc reduces it to
 * the current table(s) with a mask (bucket & mask is the same as hashing at
 * the smaller hashpower, see proto/keyhash.h).
 */
#ifndef MEMCACHED_ASSOC_H
#define MEMCACHED_ASSOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memcached/arena.h"
#include "memcached/stat_sink.h"
#include "proto/item.h"
#include "proto/keyhash.h"

#define ASSOC_DEFAULT_HASHPOWER 16 /* memcached's default -o hashpower */
#define ASSOC_MIN_HASHPOWER     1
#define ASSOC_MAX_HASHPOWER     40
#define ASSOC_KH_HASHPOWER      64 /* assoc_keyhash()'s bucket width */
#define ASSOC_STASH_SLOTS       64
/* Load that triggers a growth: two-slot buckets place about 89% before an
 * insert finds no displacement path, so the background growth starts
 * before inserts would have to grow the table themselves. */
#define ASSOC_EXPAND_PERCENT 85

/* Hashes a key for every assoc_* call (rdn_keyhash at 64 bits). */
void assoc_keyhash(const char *key, size_t nkey, struct rdn_keyhash *kh);

/*
 * Maps the table of 2^hashpower buckets through hooks (NULL = the arena's
 * hooks, arena_anon_hooks when the arena is not set up), fills it with
 * empty slots and starts the migration thread. hashpower must be in
 * [ASSOC_MIN_HASHPOWER, ASSOC_MAX_HASHPOWER]. Returns 0, -EINVAL, -EBUSY
 * (already running), -ENOMEM, or the error of pthread_create negated.
 */
int assoc_init(unsigned hashpower, const struct arena_hooks *hooks);

/*
 * Re-attach (memcached/persist.h): runs the index over tables a previous
 * process left, instead of mapping a fresh one. buckets/hashpower: the
 * table inserts went to; old_buckets/old_hashpower: the table it was
 * migrating from (NULL when no growth ran), whose migration resumes;
 * generation: the last one reported (odd exactly when old_buckets is set).
 * Every occupied slot must name a live item (the caller validated them);
 * the stash starts empty. The tables are given back through hooks (NULL as
 * in assoc_init()) when retired. Returns 0, -EINVAL, -EBUSY or the error of
 * pthread_create negated.
 */
struct assoc_adopt {
    void *buckets;
    unsigned hashpower;
    void *old_buckets;
    unsigned old_hashpower;
    uint64_t generation;
};
int assoc_adopt(const struct assoc_adopt *a, const struct arena_hooks *hooks);

/*
 * Stops and joins the migration thread and unmaps the table(s), even in
 * the middle of an expansion (shutdown and tests; assoc_init() may follow).
 * No other assoc call may run during or after it.
 */
void assoc_stop(void);

/*
 * The item whose key is key[0..nkey), or NULL. kh must be
 * assoc_keyhash(key, nkey). Compares the fingerprint, then the full key
 * through the item's header (proto/item.h). The caller holds the key's item
 * lock so the item found stays valid.
 */
struct rdn_item *assoc_find(const char *key, size_t nkey,
                            const struct rdn_keyhash *kh);

/*
 * Publishes it under its key (it->nkey, key bytes, nbytes must be set;
 * kh = assoc_keyhash of its key). The key must not be present. Returns 0,
 * -EINVAL (NULL arguments) or -ENOSPC (table at ASSOC_MAX_HASHPOWER, or
 * stash full: not reachable without deliberate hash multi-collisions).
 */
int assoc_insert(struct rdn_item *it, const struct rdn_keyhash *kh);

/*
 * Publishes new_it in the slot of old_it (same key), so a lookup sees old_it
 * or new_it, never neither. Returns 0, -EINVAL or -ENOENT (old_it is not in
 * the table).
 */
int assoc_replace(struct rdn_item *old_it, struct rdn_item *new_it,
                  const struct rdn_keyhash *kh);

/* Removes exactly it's slot. Returns 0, -EINVAL or -ENOENT. */
int assoc_delete(struct rdn_item *it, const struct rdn_keyhash *kh);

/*
 * The lkey written into every descriptor (the item arena's memory region);
 * 0 until set. Rewrites the lkey of every slot already in the table, empty
 * ones included. Call it before any NIC reads the table.
 */
void assoc_set_lkey(uint32_t lkey);

/*
 * The item a never-used slot's descriptor names: all zero (stamp 0, so a
 * client that gets it judges the read torn), rdn_item_total_len(0, 0)
 * bytes, in the arena's zero tail (arena_zero_tail()), or a static zero
 * item when assoc_init() ran without an arena. Valid after assoc_init().
 */
const struct rdn_item *assoc_tombstone(void);

struct assoc_info {
    void *buckets;     /* the table inserts go to (NIC-visible) */
    uint64_t nbuckets; /* 2^hashpower */
    unsigned hashpower;
    uint64_t generation; /* +1 when a growth starts, +1 when it ends */
    bool expanding;      /* an older table still holds keys */
    void *old_buckets;   /* that older table while expanding, else NULL */
    uint64_t old_nbuckets;
};

/* A consistent snapshot of the table geometry (takes the writer mutex). */
void assoc_get_info(struct assoc_info *info);

/*
 * Called with the writer mutex held whenever the generation changes, with
 * the new geometry; the old table's memory is unmapped (through the hooks)
 * only after the call that reports the end of its expansion. The rdn module
 * uses it to re-register the table with the NIC; its unmap hook must keep
 * memory that NIC chains may still read until they are done. fn NULL
 * removes the hook. fn must not call assoc functions.
 */
typedef void (*assoc_switch_fn)(void *ctx, const struct assoc_info *info);
void assoc_set_switch_hook(assoc_switch_fn fn, void *ctx);

/* Calls the switch hook (if any) with the current geometry, under the
 * writer mutex, as a switch would: the hook's first report. */
void assoc_report_geometry(void);

/*
 * Asks for a growth now (tests, and the trigger policy): returns 0 once it
 * is started, -EALREADY if one is running, -ENOSPC at ASSOC_MAX_HASHPOWER,
 * -ENOMEM. If wait, returns only after the migration finished.
 */
int assoc_expand(bool wait);

/* Number of items in the table (and stash). */
uint64_t assoc_count(void);

/*
 * memcached's hash_power_level, hash_bytes, hash_is_expanding, plus
 * assoc_items, assoc_generation, assoc_expansions, assoc_displacements
 * (slot moves by cuckoo paths) and assoc_stash_items.
 */
void assoc_stats(stat_sink_fn sink, void *ctx);

#endif /* MEMCACHED_ASSOC_H */
