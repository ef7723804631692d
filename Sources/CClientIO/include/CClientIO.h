// The few Linux calls the client loop makes that Swift's Glibc module does not export (epoll, eventfd), as typed
// inline shims: one UDP socket per bot, an epoll set per loop, an eventfd to wake it.
#ifndef SKIRMISH_CCLIENTIO_H
#define SKIRMISH_CCLIENTIO_H

#include <stdint.h>
#include <sys/socket.h>

/// One ready socket from `skirmish_epoll_wait`: the 64-bit tag it was registered with.
typedef struct {
    uint32_t events;
    uint64_t tag;
} skirmish_ready;

/// A new epoll set (close-on-exec), or -errno.
int skirmish_epoll_create(void);
/// A non-blocking close-on-exec eventfd, or -errno.
int skirmish_eventfd(void);
/// Adds `fd` for reading with `tag`; 0 or -errno.
int skirmish_epoll_add(int epfd, int fd, uint64_t tag);
/// Waits at most `timeout_ns` (epoll_pwait2's nanosecond timeout) and fills up to `capacity` entries; the count, or
/// -errno.
int skirmish_epoll_wait(int epfd, skirmish_ready *ready, int capacity, int64_t timeout_ns);
/// A non-blocking close-on-exec UDP socket of `family`, bound to `local_port` when it is not 0, connected to
/// `remote`; the descriptor, or -errno.
int skirmish_udp_open(int family, const struct sockaddr *remote, socklen_t length, int local_port);
/// Writes 1 to an eventfd; reads (and so clears) it.
void skirmish_eventfd_signal(int fd);
void skirmish_eventfd_clear(int fd);
/// Pins the calling thread to CPU `cpu`; 0 or -errno.
int skirmish_pin_current_thread(int cpu);

/// Names the calling thread (the first 15 bytes of `name`) for top -H, perf and /proc.
void skirmish_name_current_thread(const char *name);

/// The calling thread's kernel id (its entry in /proc/self/task).
int skirmish_current_thread_id(void);

/// With `batch` nonzero, moves thread `tid` from the default policy (SCHED_OTHER) to SCHED_BATCH: the same share of
/// the CPU, but a wakeup of it no longer preempts the thread running on its core; with `batch` 0, moves it back. 1
/// when moved, 0 when it had another policy (left alone), or -errno.
int skirmish_thread_set_batch(int tid, int batch);

#endif
