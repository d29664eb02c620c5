/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/barrier.h - the one vocabulary for memory order in the tree: loads,
 * stores and read-modify-writes with the ordering in their name, fences, and
 * the spin-wait hint.
 *
 * It lives in proto/ because every layer may include proto/ (memcached,
 * offload, chain, rnic, softnic, librdn and the tests) and several of them
 * share memory with each other or with the NIC: the offload's table and
 * items are read by WQEs, softnic's doorbells and CQs are shared with the
 * client, memcached's hash table is read by lock-free readers. One header
 * means one spelling of each ordering everywhere.
 *
 * The helpers are the compiler's __atomic builtins under names that say the
 * ordering, so a reader sees at each access what it pairs with. They take a
 * pointer to a plain object of 1, 2, 4 or 8 bytes (an integer or a pointer;
 * big-endian words have the _be32/_be64 helpers at the end). Shared fields
 * are never _Atomic-qualified: every access that can race with another
 * thread's goes through a helper. Every read-modify-write returns the value
 * before the operation, as the fetch_ prefix says.
 *
 * The _seq_cst helpers put their accesses in one total order, which a
 * sleep/wake handshake needs (store my flag, then load yours: with
 * acquire/release both sides may miss the other). Some seq_cst uses (plain
 * counters, stop flags) could be weaker; making one so is a change to argue
 * on its own, at that access.
 */
#ifndef PROTO_BARRIER_H
#define PROTO_BARRIER_H

#include <stdint.h>

#include "proto/byteorder.h"

/* Loads. */
#define load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define load_seq_cst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)

/* Stores. */
#define store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define store_seq_cst(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Read-modify-writes; each returns the value *p held before it. */
#define fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define fetch_add_seq_cst(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define fetch_sub_relaxed(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define fetch_sub_release(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELEASE)
#define fetch_sub_acq_rel(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_ACQ_REL)
#define fetch_sub_seq_cst(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define fetch_or_relaxed(p, v)  __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define fetch_or_seq_cst(p, v)  __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define fetch_and_relaxed(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELAXED)
#define fetch_and_seq_cst(p, v) __atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST)
#define fetch_xor_seq_cst(p, v) __atomic_fetch_xor((p), (v), __ATOMIC_SEQ_CST)
#define exchange_acquire(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define exchange_seq_cst(p, v)  __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)

/*
 * Compare-and-swap: if *p equals *expected, stores desired and returns true
 * (with the named ordering); otherwise copies *p into *expected and returns
 * false (relaxed, except cas_seq_cst's seq_cst). Strong: it never fails
 * spuriously, so it also serves loops written for a weak CAS.
 */
#define cas_relaxed(p, expected, desired)                                      \
    __atomic_compare_exchange_n((p), (expected), (desired), 0,                 \
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define cas_release(p, expected, desired)                                      \
    __atomic_compare_exchange_n((p), (expected), (desired), 0,                 \
                                __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define cas_seq_cst(p, expected, desired)                                      \
    __atomic_compare_exchange_n((p), (expected), (desired), 0,                 \
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/* Fences: order the plain and relaxed accesses around them. */
#define fence_acquire() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define fence_release() __atomic_thread_fence(__ATOMIC_RELEASE)
#define fence_seq_cst() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/*
 * Big-endian words (proto/byteorder.h): sparse's atomic builtins refuse
 * __bitwise types, so a be32/be64 shared with the NIC goes through these.
 */
static inline be32 load_acquire_be32(const be32 *p)
{
    return (__force be32)load_acquire((const uint32_t *)p);
}

static inline void store_seq_cst_be32(be32 *p, be32 v)
{
    store_seq_cst((uint32_t *)p, (__force uint32_t)v);
}

static inline be64 load_acquire_be64(const be64 *p)
{
    return (__force be64)load_acquire((const uint64_t *)p);
}

static inline void store_release_be64(be64 *p, be64 v)
{
    store_release((uint64_t *)p, (__force uint64_t)v);
}

/* Tells the CPU the caller is spinning (x86 PAUSE); a no-op elsewhere. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#endif /* PROTO_BARRIER_H */
