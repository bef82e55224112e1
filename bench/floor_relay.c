/*
 * The kernel floor for bench/proxy.sh: the least work any epoll proxy on this machine can do
 * per request. One thread, edge-triggered epoll, non-blocking sockets with TCP_NODELAY; each
 * accepted client connection gets its own upstream connection (opened once, kept for the
 * client connection's life: reuse is total), and bytes are relayed as they come: on a readable
 * event, recv() until a short read or EAGAIN and send() what was read to the other side. So per request it
 * makes two reads and two writes, plus the epoll waits: what a proxy cannot avoid.
 *
 * No parsing, no framing, no header rewriting, no pool, no timers, no backpressure beyond a
 * blocking-free send that must take everything (fine for small responses under a closed loop;
 * it gives up the pair otherwise): it is NOT a proxy, it is the measuring stick that tells how
 * much of a real proxy's CPU per request is the kernel's.
 *
 * build: cc -O2 -o floor_relay bench/floor_relay.c
 * run:   ./floor_relay LISTEN_PORT UPSTREAM_PORT     (both on 127.0.0.1)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 65536
#define BUF 65536

/* The other end of each relayed socket (-1: none). */
static int peer[MAX_FDS];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void drop_pair(int ep, int fd) {
    int other = peer[fd];
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    peer[fd] = -1;
    if (other >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, other, NULL);
        close(other);
        peer[other] = -1;
    }
}

/* Writes all of buf to fd (non-blocking; a full socket buffer gives up: see above). */
static int send_all(int fd, const char *buf, ssize_t n) {
    while (n > 0) {
        ssize_t w = send(fd, buf, (size_t)n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        n -= w;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LISTEN_PORT UPSTREAM_PORT\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < MAX_FDS; i++)
        peer[i] = -1;
    struct sockaddr_in up = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    inet_pton(AF_INET, "127.0.0.1", &up.sin_addr);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (lfd < 0)
        die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0)
        die("bind");
    if (listen(lfd, 4096) < 0)
        die("listen");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    static char buf[BUF];
    struct epoll_event events[512];
    for (;;) {
        int n = epoll_wait(ep, events, 512, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == lfd) {
                for (;;) {
                    int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
                    if (c < 0)
                        break;
                    /* The upstream connection, connected before the client is served (a
                     * blocking connect on loopback: once per client connection). */
                    int u = socket(AF_INET, SOCK_STREAM, 0);
                    if (u < 0 || c >= MAX_FDS || u >= MAX_FDS ||
                        connect(u, (struct sockaddr *)&up, sizeof up) < 0) {
                        close(c);
                        if (u >= 0)
                            close(u);
                        continue;
                    }
                    if (fcntl(u, F_SETFL, fcntl(u, F_GETFL) | O_NONBLOCK) < 0)
                        die("fcntl");
                    nodelay(c);
                    nodelay(u);
                    peer[c] = u;
                    peer[u] = c;
                    struct epoll_event e1 = {.events = EPOLLIN | EPOLLET, .data.fd = c};
                    struct epoll_event e2 = {.events = EPOLLIN | EPOLLET, .data.fd = u};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &e1);
                    epoll_ctl(ep, EPOLL_CTL_ADD, u, &e2);
                }
                continue;
            }
            for (;;) {
                ssize_t r = recv(fd, buf, BUF, 0);
                if (r > 0) {
                    if (peer[fd] < 0 || send_all(peer[fd], buf, r) < 0) {
                        drop_pair(ep, fd);
                        break;
                    }
                    if (r < BUF)
                        break; /* a short read: the socket is drained */
                    continue;
                }
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                    break;
                if (r < 0 && errno == EINTR)
                    continue;
                drop_pair(ep, fd);
                break;
            }
        }
    }
}
