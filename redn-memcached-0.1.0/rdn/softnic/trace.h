/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/trace.h - the WQE trace file format, shared by the engine
 * (writer) and rdn-trace (reader).
 *
 * A text file: a first line "# softnic-trace 1", then one line per WQE at
 * its completion (in completion order, per QP in WQE order):
 *
 *   dev qpn index opcode status fetch_ns start_ns end_ns
 *
 * dev is the device id, qpn and index (the WQE's 16-bit wqe_counter) in
 * hex, opcode the mlx5 opcode name, status the rnic_wc_status number; the
 * times are CLOCK_MONOTONIC nanoseconds: fetch = the engine read the WQE,
 * start = it began executing (timed models: its start in the model; a WAIT
 * starts when its count was met), end = it completed inside the NIC.
 */
#ifndef RDN_SOFTNIC_TRACE_H
#define RDN_SOFTNIC_TRACE_H

#include <stdint.h>

#define SN_TRACE_HEADER "# softnic-trace 1"

struct sn_trace_rec {
    uint32_t dev, qpn;
    uint16_t index;
    uint8_t opcode, status;
    uint64_t fetch_ns, start_ns, end_ns;
};

/* The mlx5 opcode's name ("NOP", "WRITE", ...), "OP_xx" if unknown. */
const char *sn_opcode_name(uint8_t opcode, char buf[8]);
/* Parses an opcode name back; returns -1 if unknown. */
int sn_opcode_parse(const char *name);

#endif /* RDN_SOFTNIC_TRACE_H */
