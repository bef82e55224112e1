/*
 * The kernel floor for bench/servers.sh: the least work any epoll server on this machine can do
 * per plaintext request. One thread, edge-triggered epoll, non-blocking sockets with
 * TCP_NODELAY; on each readable event it recv()s until EAGAIN, counts complete heads
 * ("\r\n\r\n") and answers each with the same canned TechEmpower response in one send().
 * No parsing, no validation, no timers, no Date formatting: it is NOT a server, it is the
 * measuring stick that tells how much of a real server's CPU per request is the kernel's
 * (syscalls, loopback TCP, wake-ups) and therefore out of any server's reach.
 *
 * build: cc -O2 -o floor_epoll bench/floor_epoll.c
 * run:   ./floor_epoll PORT
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define RESPONSE                                                                               \
    "HTTP/1.1 200 OK\r\nServer: floor\r\nContent-Type: text/plain\r\n"                           \
    "Date: Sat, 21 Nov 2026 00:00:00 GMT\r\nContent-Length: 13\r\n\r\nHello, World!"
#define MAX_CONNS 65536
#define BUF 65536

/* Bytes of a head terminator seen at the end of the previous read, per connection. */
static unsigned char partial[MAX_CONNS];

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Counts "\r\n\r\n" in buf, continuing a match of *state bytes from the previous read. */
static int count_heads(const char *buf, ssize_t n, unsigned char *state) {
    static const char term[] = "\r\n\r\n";
    int heads = 0;
    unsigned char s = *state;
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == term[s]) {
            if (++s == 4) {
                heads++;
                s = 0;
            }
        } else {
            s = buf[i] == '\r' ? 1 : 0;
        }
    }
    *state = s;
    return heads;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    static char in[BUF], out[BUF];
    const size_t rlen = sizeof(RESPONSE) - 1;
    const int per_send = BUF / rlen;
    for (int i = 0; i < per_send; i++) memcpy(out + i * rlen, RESPONSE, rlen);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (ls < 0) die("socket");
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    if (listen(ls, 4096) < 0) die("listen");
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev) < 0) die("epoll_ctl");

    struct epoll_event events[512];
    for (;;) {
        int n = epoll_wait(ep, events, 512, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == ls) {
                int c;
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (c >= MAX_CONNS) {
                        close(c);
                        continue;
                    }
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    partial[c] = 0;
                    struct epoll_event cev = {.events = EPOLLIN | EPOLLET, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
                }
                continue;
            }
            for (;;) {
                ssize_t r = recv(fd, in, sizeof in, 0);
                if (r <= 0) {
                    if (r < 0 && errno == EAGAIN) break;
                    close(fd);
                    break;
                }
                int heads = count_heads(in, r, &partial[fd]);
                while (heads > 0) {
                    int k = heads < per_send ? heads : per_send;
                    /* Loopback with small responses: a short send does not happen in the
                     * benchmark; a real server would buffer the rest. */
                    if (send(fd, out, k * rlen, MSG_NOSIGNAL) < 0) break;
                    heads -= k;
                }
                /* Like nginx and peregrine: a short read drained the socket. */
                if ((size_t)r < sizeof in) break;
            }
        }
    }
}
