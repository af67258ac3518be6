/* What the sharing tests and bench/cpu/share_bench.cpp need to talk to
 * another process the way a user's program would: a file descriptor and a
 * few bytes over a Unix socket (SCM_RIGHTS), and the process's own memory
 * figures from /proc/self/status. C99 and C++.
 *
 * sm_send_with_fd: one message of n bytes, with fd attached when fd >= 0.
 * sm_recv_with_fd: exactly n bytes; *fd is the attached fd (close-on-exec)
 * or -1. Both return 1 on success, 0 otherwise (errno says why).
 * sm_status_kb: a field of /proc/self/status in kB ("VmRSS:", "RssShmem:"),
 * -1 when absent. */
#ifndef SM_TEST_PROCESS_UTIL_H
#define SM_TEST_PROCESS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Room for one fd, aligned as a cmsghdr must be. */
typedef union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
} sm_fd_control;

/* One iovec over bytes and room for one fd. */
static inline void sm_fd_message(struct msghdr* msg, struct iovec* iov, sm_fd_control* control,
                                 void* bytes, size_t n) {
    memset(msg, 0, sizeof *msg);
    memset(control, 0, sizeof *control);
    iov->iov_base = bytes;
    iov->iov_len = n;
    msg->msg_iov = iov;
    msg->msg_iovlen = 1;
    msg->msg_control = control->buf;
    msg->msg_controllen = sizeof control->buf;
}

static inline int sm_send_with_fd(int sock, const void* bytes, size_t n, int fd) {
    struct iovec iov;
    struct msghdr msg;
    sm_fd_control control;
    sm_fd_message(&msg, &iov, &control, (void*)bytes, n);
    if (fd >= 0) {
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    } else {
        msg.msg_control = NULL;
        msg.msg_controllen = 0;
    }
    return sendmsg(sock, &msg, 0) == (ssize_t)n;
}

static inline int sm_recv_with_fd(int sock, void* bytes, size_t n, int* fd) {
    struct iovec iov;
    struct msghdr msg;
    sm_fd_control control;
    struct cmsghdr* c;
    sm_fd_message(&msg, &iov, &control, bytes, n);
    *fd = -1;
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)n) return 0;
    for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return 1;
}

static inline int64_t sm_status_kb(const char* field) {
    char line[256];
    const size_t len = strlen(field);
    int64_t kb = -1;
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0) {
            kb = atoll(line + len);
            break;
        }
    fclose(f);
    return kb;
}

#endif
