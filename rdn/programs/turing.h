/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/programs/turing.h - a Turing machine that runs on the NIC.
 *
 * The machine's transition table, its tape and its registers live in NIC
 * memory and WQE fields; one lap of a recycled loop (chain.h) executes one
 * step with nothing but READ, WRITE, FADD and CAS, and the loop stops
 * itself when a transition says halt. The CPU writes the table and the
 * tape, rings one doorbell and reads the tape afterwards.
 *
 * How a step is done without arithmetic (Dolan's "mov is Turing complete"
 * in RDMA form): every address the machine computes is a pointer whose low
 * byte is replaced by a byte it read, so a READ of that pointer is an
 * indexed load.
 *   - A cell is 256-byte aligned: [0] its symbol, stored as the column
 *     offset sym*16; [8..31] three copies of the left neighbour's address;
 *     [32..55] three of the right neighbour's (big-endian).
 *   - A state is a 256-byte aligned row of entries, entry c at row + 16c:
 *     next row (big-endian), symbol to write, move (8 = left, 32 = right),
 *     halt flag.
 * Registers: HEAD (the current cell) sits in the address fields of three
 * WQEs, STATE (the current row) in one.
 * One step = three segments of the lap, each released only after the
 * previous one's READ completed (doorbell order), because each rewrites
 * the address of the next one's READ:
 *   seg 0  READ  cell[HEAD].sym        -> low byte of READ_B's address
 *   seg 1  READ_B entry[STATE][sym]    -> STATE, write-symbol buffer, low
 *                                         byte of READ_D's address, halt
 *          break if halt (READ + CAS on the lap's last SEND_EN)
 *   seg 2  WRITE write-symbol -> cell[HEAD].sym
 *          READ_D the three copies of the neighbour -> HEAD (three fields)
 */
#ifndef RDN_PROGRAMS_TURING_H
#define RDN_PROGRAMS_TURING_H

#include <stdbool.h>
#include <stdint.h>

#include "rdn/chain/chain.h"

#define TM_MAX_STATES 8
#define TM_MAX_CELLS  128
#define TM_HALT       0xff /* next state of a halting transition */

/* What the machine does in state s reading symbol c (0 or 1). */
struct tm_rule {
    uint8_t write; /* 0 or 1 */
    int8_t move;   /* -1 left, +1 right */
    uint8_t next;  /* state index or TM_HALT */
};

struct tm_machine {
    const char *name;
    unsigned nstates;
    struct tm_rule rule[TM_MAX_STATES][2];
};

/* The 2-, 3- and 4-state busy beavers (known step counts 6, 14, 107). */
extern const struct tm_machine tm_bb2, tm_bb3, tm_bb4;

/* A run's outcome, from the NIC or from the CPU reference. */
struct tm_result {
    uint64_t steps;
    unsigned head; /* cell index */
    unsigned ones;
    uint8_t tape[TM_MAX_CELLS];
};

struct turing {
    struct chain_q master, loop;
    struct chain_buf mem; /* cells, rows, buffers, loop state */
    struct chain_recycled rl;
    struct chain_wqe read_a, read_b, write_c, read_d;
    unsigned ncells;
};

/*
 * Builds the machine on a blank tape of ncells, head at cell `start`, and
 * posts its release; turing_start() rings the one doorbell. Returns 0,
 * -EINVAL (a machine, tape or start out of range), or the chain_* error.
 * The caller owns *t and destroys it with turing_destroy().
 */
int turing_build(struct turing *t, struct rnic_device *dev,
                 const struct tm_machine *m, unsigned ncells, unsigned start);
/* Rings the doorbell: the machine runs. Returns 0 or chain_q_doorbell()'s
 * error. */
int turing_start(struct turing *t);
/* Destroys the queues and memory (a running machine stops with them). */
void turing_destroy(struct turing *t);
/* The step counter the NIC bumps (to wait on). */
const uint64_t *turing_steps_word(const struct turing *t);
/* Reads the NIC's state: steps so far, head, tape. */
void turing_result(const struct turing *t, struct tm_result *r);

/* The same machine on the CPU (max_steps bounds a non-halting one). */
bool tm_reference(const struct tm_machine *m, unsigned ncells, unsigned start,
                  uint64_t max_steps, struct tm_result *r);

#endif /* RDN_PROGRAMS_TURING_H */
