#define _GNU_SOURCE
#include "CClientIO.h"

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int skirmish_epoll_create(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int skirmish_eventfd(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int skirmish_epoll_add(int epfd, int fd, uint64_t tag) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN;
    event.data.u64 = tag;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event) == 0 ? 0 : -errno;
}

int skirmish_epoll_wait(int epfd, skirmish_ready *ready, int capacity, int64_t timeout_ns) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    // epoll_pwait2 (Linux 5.11) takes a nanosecond timeout; an older kernel, or a seccomp profile that does not know
    // it, refuses it with ENOSYS or EPERM, and from then on epoll_wait's milliseconds (rounded up) do.
    static int no_pwait2 = 0;
    int count = -1;
    if (!no_pwait2) {
        struct timespec timeout = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
        count = epoll_pwait2(epfd, events, capacity, timeout_ns < 0 ? NULL : &timeout, NULL);
        if (count < 0 && (errno == ENOSYS || errno == EPERM)) no_pwait2 = 1;
    }
    if (no_pwait2) {
        int milliseconds = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
        count = epoll_wait(epfd, events, capacity, milliseconds);
    }
    if (count < 0) return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < count; i++) {
        ready[i].events = events[i].events;
        ready[i].tag = events[i].data.u64;
    }
    return count;
}

int skirmish_udp_open(int family, const struct sockaddr *remote, socklen_t length, int local_port) {
    int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (local_port != 0) {
        int result;
        if (family == AF_INET6) {
            struct sockaddr_in6 local;
            memset(&local, 0, sizeof local);
            local.sin6_family = AF_INET6;
            local.sin6_port = htons((uint16_t)local_port);
            result = bind(fd, (struct sockaddr *)&local, sizeof local);
        } else {
            struct sockaddr_in local;
            memset(&local, 0, sizeof local);
            local.sin_family = AF_INET;
            local.sin_port = htons((uint16_t)local_port);
            result = bind(fd, (struct sockaddr *)&local, sizeof local);
        }
        if (result != 0) {
            int code = errno;
            close(fd);
            return -code;
        }
    }
    if (connect(fd, remote, length) != 0) {
        int code = errno;
        close(fd);
        return -code;
    }
    return fd;
}

void skirmish_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;
}

void skirmish_eventfd_clear(int fd) {
    uint64_t value;
    ssize_t got = read(fd, &value, sizeof value);
    (void)got;
}

int skirmish_pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -errno;
}

#include <pthread.h>

void skirmish_name_current_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

int skirmish_current_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

int skirmish_thread_set_batch(int tid, int batch) {
    int from = batch ? SCHED_OTHER : SCHED_BATCH;
    int policy = sched_getscheduler(tid);
    if (policy < 0) return -errno;
    if (policy != from) return 0;
    struct sched_param param;
    memset(&param, 0, sizeof param);
    return sched_setscheduler(tid, batch ? SCHED_BATCH : SCHED_OTHER, &param) == 0 ? 1 : -errno;
}
