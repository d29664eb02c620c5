/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/persist_int.h - the superblock's layout and what the two halves
 * of memcached/persist.h share: persist.c (the superblock, the hooks that
 * keep it current, building the storage) and persist_adopt.c (validating
 * and adopting a previous process's table and items).
 *
 * Layout in the offload's metadata (host-endian, offsets in bytes; the
 * end-to-end test t/offload_restart.py reads it too):
 *     0  magic "RDNMCSB1", 8 version, 12 zero
 *    16  geo: maxbytes, item_size_max, page_size, factor (IEEE-754 bits),
 *        min_chunk, arena_len, max_pages (8 bytes each), item_header,
 *        min_hashpower (4 bytes each), arena_base (8)
 *    88  sum: checksum of bytes 0..87 (written once, at format)
 *    96  npages: pages handed out (page_class[] of each is set first)
 *   104  table_seq: table[table_seq & 1] is the current record
 *   112  table[2]: buckets, hashpower, old_buckets, old_hashpower,
 *        generation, sum (of the record's first 40 bytes); 48 bytes each
 *   208  flush_seq: flush[flush_seq & 1] is the current record
 *   216  flush[2]: flush_all's cut-off: oldest_live, oldest_cas, sum (of
 *        the first 16 bytes); 24 bytes each
 *   264  cas_mark: no CAS id at or above it was handed out (items.h's
 *        CAS hook moves it ahead of the ids, a block at a time)
 *   272  page_class[max_pages]: slab class of each page handed out
 */
#ifndef MEMCACHED_PERSIST_INT_H
#define MEMCACHED_PERSIST_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "memcached/items.h"
#include "memcached/persist.h"

#define PERSIST_MAGIC   UINT64_C(0x314253434d4e4452) /* "RDNMCSB1" */
#define PERSIST_VERSION 3

/* Everything the memory's meaning depends on. */
struct persist_geo {
    uint64_t maxbytes;
    uint64_t item_size_max;
    uint64_t page_size;
    uint64_t factor_bits;
    uint64_t min_chunk;
    uint64_t arena_len;
    uint64_t max_pages;
    uint32_t item_header; /* offsetof(struct item, nic) */
    uint32_t min_hashpower;
    uint64_t arena_base;
};

/* Where the index's tables are; one of two copies (see table_seq). */
struct persist_table {
    uint64_t buckets;
    uint64_t hashpower;
    uint64_t old_buckets; /* 0 unless a growth migrates from it */
    uint64_t old_hashpower;
    uint64_t generation;
    uint64_t sum;
};

/* flush_all's cut-off (struct items_flush_cut); one of two copies. */
struct persist_flush {
    uint64_t oldest_live;
    uint64_t oldest_cas;
    uint64_t sum;
};

struct persist_sb {
    uint64_t magic;
    uint32_t version;
    uint32_t rsvd;
    struct persist_geo geo;
    uint64_t sum;
    uint64_t npages;
    uint64_t table_seq;
    struct persist_table table[2];
    uint64_t flush_seq;
    struct persist_flush flush[2];
    uint64_t cas_mark;
    uint8_t page_class[];
};

_Static_assert(sizeof(struct persist_geo) == 72, "geo layout");
_Static_assert(sizeof(struct persist_sb) == 272, "superblock layout");

/*
 * Adopts the table and items sb describes (its header already checked
 * against the settings and the arena, which is mapped; the slab classes
 * are built and have no page yet). Validates first, writing nothing: a
 * table that breaks the snapshot rule (persist.h) sets res->refused and
 * leaves everything as it was. Otherwise clears the dropped and expired
 * slots, gives the pages back to their classes, starts the index over the
 * tables and the LRUs (items_init()), links the live items and raises the
 * CAS counter, and sets res->adopted. Returns 0, or a negative errno when
 * memory ran out or the index could not start.
 */
int persist_adopt(const struct persist_sb *sb, const struct persist_env *env,
                  struct persist_result *res);

/* The table record in use, or NULL if its checksum is wrong. */
const struct persist_table *persist_table_current(const struct persist_sb *sb);

/* The flush_all cut-off recorded; false if its checksum is wrong. */
bool persist_flush_current(const struct persist_sb *sb,
                           struct items_flush_cut *cut);

#endif /* MEMCACHED_PERSIST_INT_H */
