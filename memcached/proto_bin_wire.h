/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_bin_wire.h - the wire format of memcached's binary
 * protocol (memcached 1.6.18's protocol_binary.h describes the same bytes):
 * magic numbers, opcodes, status codes, the 24-byte packet header and the
 * layouts of the extras each command carries.
 *
 * Every packet is a header followed by bodylen bytes of body: extlen bytes
 * of extras, then keylen bytes of key, then the value (the rest). All
 * integers are big-endian on the wire, so packets are encoded and decoded
 * field by field at the offsets below rather than through a struct.
 */
#ifndef MEMCACHED_PROTO_BIN_WIRE_H
#define MEMCACHED_PROTO_BIN_WIRE_H

#define BIN_REQ_MAGIC  0x80 /* a request; also how -B auto recognizes one */
#define BIN_RES_MAGIC  0x81 /* a response */
#define BIN_HEADER_LEN 24
#define BIN_RAW_BYTES  0x00 /* the only datatype */

/* Offsets of the header fields (requests and responses alike). */
#define BIN_OFF_MAGIC    0
#define BIN_OFF_OPCODE   1
#define BIN_OFF_KEYLEN   2 /* 16 bits */
#define BIN_OFF_EXTLEN   4
#define BIN_OFF_DATATYPE 5
#define BIN_OFF_STATUS   6  /* 16 bits: vbucket id in requests, unused */
#define BIN_OFF_BODYLEN  8  /* 32 bits: extras + key + value */
#define BIN_OFF_OPAQUE   12 /* 32 bits, echoed unchanged (not byte-swapped) */
#define BIN_OFF_CAS      16 /* 64 bits */

enum bin_opcode {
    BIN_CMD_GET = 0x00,
    BIN_CMD_SET = 0x01,
    BIN_CMD_ADD = 0x02,
    BIN_CMD_REPLACE = 0x03,
    BIN_CMD_DELETE = 0x04,
    BIN_CMD_INCREMENT = 0x05,
    BIN_CMD_DECREMENT = 0x06,
    BIN_CMD_QUIT = 0x07,
    BIN_CMD_FLUSH = 0x08,
    BIN_CMD_GETQ = 0x09,
    BIN_CMD_NOOP = 0x0a,
    BIN_CMD_VERSION = 0x0b,
    BIN_CMD_GETK = 0x0c,
    BIN_CMD_GETKQ = 0x0d,
    BIN_CMD_APPEND = 0x0e,
    BIN_CMD_PREPEND = 0x0f,
    BIN_CMD_STAT = 0x10,
    BIN_CMD_SETQ = 0x11,
    BIN_CMD_ADDQ = 0x12,
    BIN_CMD_REPLACEQ = 0x13,
    BIN_CMD_DELETEQ = 0x14,
    BIN_CMD_INCREMENTQ = 0x15,
    BIN_CMD_DECREMENTQ = 0x16,
    BIN_CMD_QUITQ = 0x17,
    BIN_CMD_FLUSHQ = 0x18,
    BIN_CMD_APPENDQ = 0x19,
    BIN_CMD_PREPENDQ = 0x1a,
    BIN_CMD_VERBOSITY =
        0x1b, /* defined, but memcached 1.6.18 never served it */
    BIN_CMD_TOUCH = 0x1c,
    BIN_CMD_GAT = 0x1d,
    BIN_CMD_GATQ = 0x1e,
    BIN_CMD_SASL_LIST_MECHS = 0x20,
    BIN_CMD_SASL_AUTH = 0x21,
    BIN_CMD_SASL_STEP = 0x22,
    BIN_CMD_GATK = 0x23,
    BIN_CMD_GATKQ = 0x24,
};

enum bin_status {
    BIN_OK = 0x0000,
    BIN_KEY_ENOENT = 0x0001,
    BIN_KEY_EEXISTS = 0x0002,
    BIN_E2BIG = 0x0003,
    BIN_EINVAL = 0x0004,
    BIN_NOT_STORED = 0x0005,
    BIN_DELTA_BADVAL = 0x0006,
    BIN_AUTH_ERROR = 0x0020,
    BIN_AUTH_CONTINUE = 0x0021,
    BIN_UNKNOWN_COMMAND = 0x0081,
    BIN_ENOMEM = 0x0082,
};

/* Extras of requests: SET/ADD/REPLACE carry flags and expiration. */
#define BIN_SET_EXTLEN     8
#define BIN_SET_OFF_FLAGS  0
#define BIN_SET_OFF_EXPIRY 4

/* INCREMENT/DECREMENT: delta, initial value, expiration (0xffffffff: do
 * not create a missing item). */
#define BIN_ARITH_EXTLEN      20
#define BIN_ARITH_OFF_DELTA   0
#define BIN_ARITH_OFF_INITIAL 8
#define BIN_ARITH_OFF_EXPIRY  16
#define BIN_ARITH_NO_CREATE   0xffffffffu

/* TOUCH/GAT(K)(Q) and FLUSH (optional there) carry one expiration. */
#define BIN_EXPIRY_EXTLEN 4

/* Extras of responses: a GET family hit carries the item's flags; an
 * INCREMENT/DECREMENT success has a body of the new 64-bit value. */
#define BIN_GET_RES_EXTLEN 4
#define BIN_ARITH_RES_LEN  8

#endif /* MEMCACHED_PROTO_BIN_WIRE_H */
