/*
 * Relay: passes bytes both ways between two connected sockets, as a proxy's tunnel does once a
 * connection was upgraded (the agent's tunnel into a replica's namespace, the controller's
 * WebSocket and tunnel passing).
 */
#ifndef GP_NET_RELAY_H
#define GP_NET_RELAY_H

#include <stddef.h>

/* Copies what a sends to b and what b sends to a, blocking, until both directions ended: the end
 * of one side's stream is passed on as shutdown(SHUT_WR) of the other, and an error on either
 * ends both. first (first_len bytes, may be 0) is written to b before anything else (bytes that
 * came with a's request head). on_data, when not NULL, is called with ctx after each piece passed
 * (either way). Neither socket is closed. Sockets must be blocking. On TCP sockets it sets
 * TCP_NODELAY (each piece is passed on at once) and acknowledges every read at once
 * (TCP_QUICKACK), so that neither end's Nagle algorithm waits on a delayed ACK. */
void gp_relay_run(int a, int b, const char *first, size_t first_len, void (*on_data)(void *ctx),
                  void *ctx);

#endif
