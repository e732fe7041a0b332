/* net.c — blocking TCP helpers with deadlines (poll-based), used by the store and the
 * process-group transport; every failure is a status plus a message naming the peer. */
#include "dist/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static _Thread_local tn_dist_err tn_dist_kind;

tn_status tn_dist_fail(tn_dist_err kind, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tn_dist_kind = kind;
    return tn_error(TN_ERR_RUNTIME, "%s", buf);
}

tn_dist_err tn_dist_error_kind(void) { return tn_dist_kind; }
void tn_dist_clear(void) { tn_dist_kind = TN_DIST_ERR_NONE; }
void tn_dist_set_kind(tn_dist_err kind) { tn_dist_kind = kind; }

int64_t tn_net_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tn_net_deadline(int64_t timeout_ms) {
    return timeout_ms > 0 ? tn_net_now_ms() + timeout_ms : -1;
}

/* Milliseconds left before deadline for poll(): -1 forever, 0 expired. */
static int poll_ms(int64_t deadline) {
    if (deadline < 0) return -1;
    int64_t left = deadline - tn_net_now_ms();
    if (left <= 0) return 0;
    return left > 1000000000 ? 1000000000 : (int)left;
}

static void tune(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int try_listen(int family, int port, int *fd_out) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (family == AF_INET6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof a);
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons((uint16_t)port);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons((uint16_t)port);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc < 0 || listen(fd, 512) < 0) {
        int e = errno;
        close(fd);
        return e;
    }
    *fd_out = fd;
    return 0;
}

tn_status tn_net_listen(int port, int *fd, int *bound_port) {
    if (port < 0 || port > 65535) return tn_error(TN_ERR_VALUE, "port must be in [0, 65535], got %d", port);
    int e = try_listen(AF_INET6, port, fd);
    if (e == EAFNOSUPPORT || e == EADDRNOTAVAIL) e = try_listen(AF_INET, port, fd);
    if (e)
        return tn_dist_fail(TN_DIST_ERR_NETWORK,
                            "The server socket has failed to listen on any local network address. "
                            "port: %d, code: %d, name: %s, message: %s",
                            port, -e, e == EADDRINUSE ? "EADDRINUSE" : "E", strerror(e));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(*fd, (struct sockaddr *)&ss, &sl);
    *bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                           : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return TN_OK;
}

tn_status tn_net_accept(int lfd, int64_t deadline, int *fd) {
    for (;;) {
        int r = tn_net_wait_readable(lfd, deadline);
        if (r == 0) return tn_dist_fail(TN_DIST_ERR_NETWORK, "Timed out waiting for an incoming connection");
        if (r < 0) return tn_dist_fail(TN_DIST_ERR_NETWORK, "accept failed: %s", strerror(errno));
        int c = accept(lfd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
            return tn_dist_fail(TN_DIST_ERR_NETWORK, "accept failed: %s", strerror(errno));
        }
        tune(c);
        *fd = c;
        return TN_OK;
    }
}

/* One non-blocking connect attempt bounded by the deadline: 0 connected, else errno. */
static int connect_once(const struct addrinfo *ai, int64_t deadline, int *fd_out) {
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int e = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        e = errno;
        if (e == EINPROGRESS) {
            struct pollfd p = {fd, POLLOUT, 0};
            int ms = poll_ms(deadline);
            if (ms < 0 || ms > 1000) ms = 1000; /* retry slow SYNs at least once a second */
            int r = poll(&p, 1, ms);
            if (r <= 0) e = ETIMEDOUT;
            else {
                socklen_t l = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
            }
        }
    }
    if (e) {
        close(fd);
        return e;
    }
    fcntl(fd, F_SETFL, fl);
    tune(fd);
    *fd_out = fd;
    return 0;
}

tn_status tn_net_connect(const char *host, int port, int64_t deadline, int *fd) {
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    int64_t start = tn_net_now_ms();
    int delay = 10, last = 0;
    for (;;) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        int g = getaddrinfo(host, ports, &hints, &res);
        if (g == 0) {
            for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                last = connect_once(ai, deadline, fd);
                if (!last) {
                    freeaddrinfo(res);
                    return TN_OK;
                }
            }
            freeaddrinfo(res);
        } else {
            last = -g;
        }
        if (deadline >= 0 && tn_net_now_ms() + delay >= deadline)
            return tn_dist_fail(TN_DIST_ERR_NETWORK,
                                "The client socket has timed out after %lldms while trying to connect to (%s, %d). "
                                "Last error: %s",
                                (long long)(tn_net_now_ms() - start), host, port,
                                last > 0 ? strerror(last) : gai_strerror(-last));
        struct timespec ts = {0, (long)delay * 1000000L};
        nanosleep(&ts, NULL);
        if (delay < 200) delay *= 2;
    }
}

int tn_net_wait_readable(int fd, int64_t deadline) {
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, poll_ms(deadline));
        if (r < 0 && errno == EINTR) continue;
        return r;
    }
}

tn_status tn_net_send_all(int fd, const void *buf, size_t n, int64_t deadline, const char *who) {
    const char *p = buf;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int r = poll(&pf, 1, poll_ms(deadline));
            if (r == 0) return tn_dist_fail(TN_DIST_ERR_BACKEND, "Timed out sending to %s", who);
            continue;
        }
        return tn_dist_fail(TN_DIST_ERR_BACKEND, "Connection closed by peer %s (send: %s)", who,
                            w < 0 ? strerror(errno) : "closed");
    }
    return TN_OK;
}

tn_status tn_net_recv_all(int fd, void *buf, size_t n, int64_t deadline, const char *who, int *eof) {
    char *p = buf;
    size_t got = 0;
    if (eof) *eof = 0;
    while (got < n) {
        ssize_t r = recv(fd, p + got, n - got, MSG_DONTWAIT);
        if (r > 0) {
            got += (size_t)r;
            continue;
        }
        if (r == 0) {
            if (eof && got == 0) *eof = 1;
            return tn_dist_fail(TN_DIST_ERR_BACKEND, "Connection closed by peer %s", who);
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = tn_net_wait_readable(fd, deadline);
            if (w == 0) return tn_dist_fail(TN_DIST_ERR_BACKEND, "Timed out receiving from %s", who);
            continue;
        }
        return tn_dist_fail(TN_DIST_ERR_BACKEND, "Connection closed by peer %s (recv: %s)", who, strerror(errno));
    }
    return TN_OK;
}

tn_status tn_net_local_host(int fd, char *buf, size_t buflen) {
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
        return tn_dist_fail(TN_DIST_ERR_NETWORK, "getsockname failed: %s", strerror(errno));
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
            struct in_addr v4;
            memcpy(&v4, &a->sin6_addr.s6_addr[12], 4);
            inet_ntop(AF_INET, &v4, buf, (socklen_t)buflen);
        } else {
            inet_ntop(AF_INET6, &a->sin6_addr, buf, (socklen_t)buflen);
        }
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, buf, (socklen_t)buflen);
    }
    return TN_OK;
}
