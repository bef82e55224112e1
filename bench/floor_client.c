/*
 * The kernel floor for bench/load.sh: the least work any epoll HTTP/1.1 keep-alive load
 * generator on this machine can do per request. One thread, level-triggered epoll (each socket
 * registered once, never modified), non-blocking sockets with TCP_NODELAY, one pre-encoded GET
 * per connection; per request exactly one send() and, on the response's readable event, one
 * recv(). A response is counted by length alone: the first response's head is read once for its
 * Content-Length, after which every response is assumed to be that same size (true of the
 * plaintext example and of nginx serving a fixed file: both send a fixed-width Date).
 * No parsing, no validation, no timers, no latency record: it is NOT a load generator, it is
 * the measuring stick that tells how much of a real generator's CPU per request is the
 * kernel's (syscalls, loopback TCP, wake-ups) and therefore out of any generator's reach.
 *
 * build: cc -O2 -o floor_client bench/floor_client.c
 * run:   ./floor_client PORT CONNS SECONDS [PATH]
 * prints: requests N, seconds S, req/s R, cpu_us_per_req C (utime+stime from getrusage(RUSAGE_SELF))
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 4096
#define BUF 65536

/* Bytes of the current response received so far, per connection (indexed by fd). */
static size_t got[MAX_CONNS];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The size of the first response: head up to "\r\n\r\n" plus its Content-Length; 0 if the
 * head is not complete in buf yet; exits if the response is not a 200 with a Content-Length. */
static size_t response_size(const char *buf, size_t n) {
    const char *end = memmem(buf, n, "\r\n\r\n", 4);
    if (end == NULL) return 0;
    if (n < 12 || memcmp(buf, "HTTP/1.1 200", 12) != 0) {
        fprintf(stderr, "floor_client: not an HTTP/1.1 200 response\n");
        exit(1);
    }
    const char *cl = memmem(buf, end - buf, "\r\nContent-Length:", 17);
    if (cl == NULL) cl = memmem(buf, end - buf, "\r\ncontent-length:", 17);
    if (cl == NULL) {
        fprintf(stderr, "floor_client: no Content-Length in the first response\n");
        exit(1);
    }
    return (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: %s PORT CONNS SECONDS [PATH]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), conns = atoi(argv[2]);
    double seconds = atof(argv[3]);
    const char *path = argc == 5 ? argv[4] : "/plaintext";
    if (conns < 1 || conns > MAX_CONNS - 16) {
        fprintf(stderr, "floor_client: CONNS must be 1..%d\n", MAX_CONNS - 16);
        return 2;
    }
    static char req[1024], in[BUF];
    int reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", path,
                          port);

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    for (int i = 0; i < conns; i++) {
        /* Blocking connect (loopback: immediate), then non-blocking for the run. */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (fd >= MAX_CONNS) die("fd too large");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
        got[fd] = 0;
        if (send(fd, req, reqlen, MSG_NOSIGNAL | MSG_DONTWAIT) != reqlen) die("send");
    }

    size_t size = 0; /* response size, known after the first response head */
    unsigned long long done = 0;
    double start = now_s(), deadline = start + seconds, t = start;
    struct epoll_event events[512];
    while (t < deadline) {
        int n = epoll_wait(ep, events, 512, 100);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            ssize_t r = recv(fd, in + (size ? 0 : got[fd]), size ? sizeof in : sizeof in - got[fd],
                             MSG_DONTWAIT);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                fprintf(stderr, "floor_client: connection closed or failed\n");
                return 1;
            }
            got[fd] += r;
            if (size == 0) size = response_size(in, got[fd]);
            /* One request in flight per connection: a full response, and the next request. */
            if (size != 0 && got[fd] >= size) {
                got[fd] -= size;
                done++;
                if (send(fd, req, reqlen, MSG_NOSIGNAL | MSG_DONTWAIT) != reqlen) die("send");
            }
        }
        t = now_s();
    }
    double elapsed = t - start;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    printf("requests %llu\nseconds %.3f\nreq/s %.0f\ncpu_us_per_req %.3f\n", done, elapsed,
           done / elapsed, done ? cpu * 1e6 / done : 0.0);
    return 0;
}
