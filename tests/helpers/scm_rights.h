/* Passing a file descriptor with a few bytes over a Unix socket (SCM_RIGHTS):
 * how the sharing tests and bench/cpu/share_bench.cpp send a descriptor and
 * its fd to another process, the way a user's program would. C99 and C++.
 *
 * sm_send_with_fd: one message of n bytes, with fd attached when fd >= 0.
 * sm_recv_with_fd: exactly n bytes; *fd is the attached fd (close-on-exec)
 * or -1. Both return 1 on success, 0 otherwise (errno says why). */
#ifndef SM_TEST_SCM_RIGHTS_H
#define SM_TEST_SCM_RIGHTS_H

#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

static inline int sm_send_with_fd(int sock, const void* bytes, size_t n, int fd) {
    struct iovec iov;
    struct msghdr msg;
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&msg, 0, sizeof msg);
    memset(&control, 0, sizeof control);
    iov.iov_base = (void*)bytes;
    iov.iov_len = n;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        struct cmsghdr* c;
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(sock, &msg, 0) == (ssize_t)n;
}

static inline int sm_recv_with_fd(int sock, void* bytes, size_t n, int* fd) {
    struct iovec iov;
    struct msghdr msg;
    struct cmsghdr* c;
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&msg, 0, sizeof msg);
    memset(&control, 0, sizeof control);
    iov.iov_base = bytes;
    iov.iov_len = n;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    *fd = -1;
    if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)n) return 0;
    for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    return 1;
}

#endif
