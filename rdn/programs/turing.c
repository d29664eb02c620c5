/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/turing.c - a Turing machine on a recycled ring (see
 * turing.h for the encoding and the step).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "rdn/programs/turing.h"

#define CELL      256
#define ROW       256
#define ENTRY     16
#define MOVE_L    8
#define MOVE_R    32
#define LOOP_RING 32

/* Layout of the machine's memory. */
#define CELLS_OFF 0
#define ROWS_OFF  (TM_MAX_CELLS * CELL)
#define MISC_OFF  (ROWS_OFF + (TM_MAX_STATES + 1) * ROW)
#define SYMBUF    (MISC_OFF + 0)
#define HALTW     (MISC_OFF + 8)
#define STEPS     (MISC_OFF + 16)
#define STATE_OFF (MISC_OFF + 64)
#define MEM_BYTES (STATE_OFF + 256)

/* Busy beavers: A = 0, B = 1, C = 2, D = 3. */
const struct tm_machine tm_bb2 = {
    "bb2", 2, {{{1, 1, 1}, {1, -1, 1}}, {{1, -1, 0}, {1, 1, TM_HALT}}}};
const struct tm_machine tm_bb3 = {"bb3",
                                  3,
                                  {{{1, 1, 1}, {1, 1, TM_HALT}},
                                   {{0, 1, 2}, {1, 1, 1}},
                                   {{1, -1, 2}, {1, -1, 0}}}};
const struct tm_machine tm_bb4 = {"bb4",
                                  4,
                                  {{{1, 1, 1}, {1, -1, 1}},
                                   {{1, -1, 0}, {0, -1, 2}},
                                   {{1, 1, TM_HALT}, {1, -1, 3}},
                                   {{1, 1, 3}, {0, 1, 0}}}};

static const unsigned all_access =
    RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
    RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;

static uint64_t addr_of(const struct turing *t, size_t off)
{
    return (uint64_t)(uintptr_t)(t->mem.ptr + off);
}

/* The blank tape: symbols 0, neighbour pointers (ends point to self). */
static void lay_tape(struct turing *t)
{
    for (unsigned i = 0; i < t->ncells; i++) {
        uint8_t *cell = t->mem.ptr + CELLS_OFF + (size_t)i * CELL;
        unsigned l = i ? i - 1 : 0, r = i + 1 < t->ncells ? i + 1 : i;

        for (int k = 0; k < 3; k++) {
            chain_put_be64(cell + MOVE_L + 8 * k,
                           addr_of(t, CELLS_OFF + (size_t)l * CELL));
            chain_put_be64(cell + MOVE_R + 8 * k,
                           addr_of(t, CELLS_OFF + (size_t)r * CELL));
        }
    }
}

/* The transition table as rows of entries; halting rows point at row 0. */
static void lay_table(struct turing *t, const struct tm_machine *m)
{
    for (unsigned s = 0; s < m->nstates; s++) {
        for (unsigned c = 0; c < 2; c++) {
            const struct tm_rule *r = &m->rule[s][c];
            uint8_t *e = t->mem.ptr + ROWS_OFF + (size_t)s * ROW + c * ENTRY;
            unsigned next = r->next == TM_HALT ? 0 : r->next;

            chain_put_be64(e, addr_of(t, ROWS_OFF + (size_t)next * ROW));
            e[8] = (uint8_t)(r->write * ENTRY);
            e[9] = r->move < 0 ? MOVE_L : MOVE_R;
            e[10] = r->next == TM_HALT;
        }
    }
}

static int open_queues(struct turing *t, struct rnic_device *dev)
{
    struct chain_q_attr m = {.sq_wqebb = 8, .flags = RNIC_QP_CROSS_CHANNEL};
    struct chain_q_attr l = {.sq_wqebb = LOOP_RING,
                             .flags =
                                 RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND,
                             .cq_flags = RNIC_CQ_IGNORE_OVERRUN};
    int rc;

    rc = chain_q_open(dev, &m, &t->master);
    if (rc == 0)
        rc = chain_q_open(dev, &l, &t->loop);
    if (rc == 0)
        rc = chain_q_connect(&t->master, &t->master);
    if (rc == 0)
        rc = chain_q_connect(&t->loop, &t->loop);
    if (rc == 0)
        rc = chain_buf_open(dev, MEM_BYTES, all_access, &t->mem);
    return rc;
}

static struct chain_loc loc(const struct turing *t, size_t off, uint32_t len)
{
    return chain_buf_loc(&t->mem, off, len);
}

/* A READ of len bytes from src scattered to n placeholder entries. */
static int read_ph(struct turing *t, struct chain_loc src, unsigned n,
                   struct chain_wqe *out)
{
    struct rnic_sge ph[5];

    for (unsigned i = 0; i < n; i++)
        ph[i] = chain_loc_sge(chain_loc_part(t->loop.sink, 0, 1));
    return chain_read(&t->loop, ph, n, src, CHAIN_SIGNALED, out);
}

/*
 * The three-segment lap of one machine step (see turing.h), with the
 * READs' scatter lists left as placeholders for wire().
 */
static int build_lap(struct turing *t, uint64_t head, uint64_t state)
{
    struct chain_loc cell = {.ptr = (uint8_t *)(uintptr_t)head,
                             .rkey = t->mem.mr->rkey};
    struct chain_loc row = {.ptr = (uint8_t *)(uintptr_t)state,
                            .rkey = t->mem.mr->rkey};
    struct rnic_sge sym = chain_loc_sge(loc(t, SYMBUF, 1));
    int rc;

    rc = chain_recycled_begin(&t->rl, &t->loop,
                              loc(t, STATE_OFF, CHAIN_RECYCLED_STATE(3)));
    if (rc == 0)
        rc = chain_fadd(&t->loop, loc(t, STEPS, 8), 1, NULL, 0, NULL);
    if (rc == 0)
        rc = read_ph(t, cell, 1, &t->read_a);
    if (rc == 0)
        rc = chain_recycled_next(&t->rl);
    if (rc == 0)
        rc = read_ph(t, row, 5, &t->read_b);
    if (rc == 0)
        rc = chain_recycled_break_if(&t->rl, loc(t, HALTW, 8), 1, CHAIN_FENCE);
    if (rc == 0)
        rc = chain_recycled_next(&t->rl);
    if (rc == 0)
        rc = chain_write(&t->loop, &sym, 1, cell, 0, &t->write_c);
    if (rc == 0)
        rc = read_ph(t, cell, 3, &t->read_d);
    return rc < 0 ? rc : chain_recycled_end(&t->rl);
}

static void set_sge(const struct chain_wqe *w, unsigned i, struct chain_loc l)
{
    struct rnic_sge s = chain_loc_sge(l);

    chain_wqe_set_sge(w, i, &s);
}

/* Wires the READs' scatter lists into the registers they load. */
static void wire(struct turing *t)
{
    struct chain_loc a, b, c, d;

    chain_field(&t->read_a, CHAIN_F_RADDR, 0, &a);
    chain_field(&t->read_b, CHAIN_F_RADDR, 0, &b);
    chain_field(&t->write_c, CHAIN_F_RADDR, 0, &c);
    chain_field(&t->read_d, CHAIN_F_RADDR, 0, &d);
    /* symbol -> low byte of the row address */
    set_sge(&t->read_a, 0, chain_be_byte(b, 0));
    /* entry -> next row, symbol to write, low byte of the move, halt */
    set_sge(&t->read_b, 0, b);
    set_sge(&t->read_b, 1, loc(t, SYMBUF, 1));
    set_sge(&t->read_b, 2, chain_be_byte(d, 0));
    set_sge(&t->read_b, 3, loc(t, HALTW, 1));
    set_sge(&t->read_b, 4, chain_loc_part(t->loop.sink, 16, 5));
    /* neighbour's address -> HEAD in the three WQEs that use it */
    set_sge(&t->read_d, 0, a);
    set_sge(&t->read_d, 1, c);
    set_sge(&t->read_d, 2, d);
}

int turing_build(struct turing *t, struct rnic_device *dev,
                 const struct tm_machine *m, unsigned ncells, unsigned start)
{
    int rc;

    if (!t || !dev || !m || m->nstates == 0 || m->nstates > TM_MAX_STATES ||
        ncells == 0 || ncells > TM_MAX_CELLS || start >= ncells)
        return -EINVAL;
    memset(t, 0, sizeof(*t));
    t->ncells = ncells;
    rc = open_queues(t, dev);
    if (rc < 0)
        goto fail;
    lay_tape(t);
    lay_table(t, m);
    rc = build_lap(t, addr_of(t, CELLS_OFF + (size_t)start * CELL),
                   addr_of(t, ROWS_OFF));
    if (rc < 0)
        goto fail;
    wire(t);
    rc = chain_recycled_release(&t->rl, &t->master);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    turing_destroy(t);
    return rc;
}

int turing_start(struct turing *t)
{
    return chain_q_doorbell(&t->master);
}

void turing_destroy(struct turing *t)
{
    chain_q_close(&t->loop);
    chain_q_close(&t->master);
    chain_buf_close(&t->mem);
}

const uint64_t *turing_steps_word(const struct turing *t)
{
    return (const uint64_t *)(t->mem.ptr + STEPS);
}

void turing_result(const struct turing *t, struct tm_result *r)
{
    struct chain_loc a;

    memset(r, 0, sizeof(*r));
    r->steps = load_acquire(turing_steps_word(t));
    chain_field(&t->read_a, CHAIN_F_RADDR, 0, &a);
    r->head =
        (unsigned)((be64_to_cpu(*(const be64 *)a.ptr) - addr_of(t, CELLS_OFF)) /
                   CELL);
    for (unsigned i = 0; i < t->ncells; i++) {
        r->tape[i] = t->mem.ptr[CELLS_OFF + (size_t)i * CELL] / ENTRY;
        r->ones += r->tape[i];
    }
}

bool tm_reference(const struct tm_machine *m, unsigned ncells, unsigned start,
                  uint64_t max_steps, struct tm_result *r)
{
    unsigned state = 0;
    bool halted = false;

    memset(r, 0, sizeof(*r));
    r->head = start;
    while (!halted && r->steps < max_steps) {
        const struct tm_rule *rule = &m->rule[state][r->tape[r->head]];

        r->tape[r->head] = rule->write;
        if (rule->move < 0 && r->head > 0)
            r->head--;
        else if (rule->move > 0 && r->head + 1 < ncells)
            r->head++;
        r->steps++;
        halted = rule->next == TM_HALT;
        state = rule->next;
    }
    for (unsigned i = 0; i < ncells; i++)
        r->ones += r->tape[i];
    return halted;
}
