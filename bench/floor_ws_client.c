/*
 * The kernel floor for the WebSocket load generator (bench/ws.sh, GEN=1): the least work any
 * epoll WebSocket echo client on this machine can do per message. One thread, level-triggered
 * epoll (each socket registered once, never modified), non-blocking sockets with TCP_NODELAY;
 * each connection opens with a canned handshake (a fixed Sec-WebSocket-Key; the 101 is read
 * once, blocking, and not checked beyond its status) and re-sends one pre-masked binary frame
 * of SIZE bytes: per message exactly one send() and, on the echo's readable event, one recv().
 * An echo is counted by length alone (the server's unmasked frame: 2, 4 or 10 header bytes and
 * the payload). No parsing, no unmasking, no validation, no timers, no latency record: it is NOT
 * a load generator, it is the measuring stick that tells how much of a real generator's CPU per
 * message is the kernel's (syscalls, loopback TCP, wake-ups) and therefore out of any
 * generator's reach.
 *
 * build: cc -O2 -o floor_ws_client bench/floor_ws_client.c
 * run:   ./floor_ws_client PORT CONNS SECONDS SIZE
 * prints: messages N, seconds S, msg/s R, cpu_us_per_msg C (utime+stime from getrusage(RUSAGE_SELF))
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
#define BUF (1 << 20)

/* Bytes of the current echo received so far, per connection (indexed by fd). */
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

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PORT CONNS SECONDS SIZE\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), conns = atoi(argv[2]);
    double seconds = atof(argv[3]);
    size_t size = strtoul(argv[4], NULL, 10);
    if (conns < 1 || conns > MAX_CONNS - 16 || size > BUF / 2) {
        fprintf(stderr, "floor_ws_client: CONNS must be 1..%d, SIZE at most %d\n",
                MAX_CONNS - 16, BUF / 2);
        return 2;
    }
    static char req[1024], in[BUF], frame[BUF];
    int reqlen = snprintf(req, sizeof req,
                          "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n",
                          port);
    /* One masked binary frame, its payload pseudo-random bytes. */
    size_t h = 2, echo = 0;
    frame[0] = (char)0x82;
    if (size < 126) {
        frame[1] = (char)(0x80 | size);
    } else if (size < 65536) {
        frame[1] = (char)(0x80 | 126), frame[2] = (char)(size >> 8), frame[3] = (char)size;
        h = 4;
    } else {
        frame[1] = (char)(0x80 | 127);
        for (int i = 0; i < 8; i++) frame[2 + i] = (char)((unsigned long long)size >> (56 - 8 * i));
        h = 10;
    }
    memcpy(frame + h, "\x12\x34\x56\x78", 4);
    unsigned long long x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < size; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        frame[h + 4 + i] = (char)(x * 0x2545f4914f6cdd1dULL >> 56);
    }
    size_t flen = h + 4 + size;
    echo = (size < 126 ? 2 : size < 65536 ? 4 : 10) + size;

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    for (int i = 0; i < conns; i++) {
        /* Blocking connect and handshake (loopback: immediate), then non-blocking. */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (fd >= MAX_CONNS) die("fd too large");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (send(fd, req, reqlen, MSG_NOSIGNAL) != reqlen) die("send");
        size_t n = 0;
        while (!memmem(in, n, "\r\n\r\n", 4)) {
            ssize_t r = recv(fd, in + n, sizeof in - n, 0);
            if (r <= 0) die("recv (handshake)");
            n += r;
        }
        if (n < 12 || memcmp(in, "HTTP/1.1 101", 12) != 0) {
            fprintf(stderr, "floor_ws_client: the handshake was refused\n");
            return 1;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
        got[fd] = 0;
        if (send(fd, frame, flen, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)flen) die("send");
    }

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
            ssize_t r = recv(fd, in, sizeof in, MSG_DONTWAIT);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                fprintf(stderr, "floor_ws_client: connection closed or failed\n");
                return 1;
            }
            got[fd] += r;
            /* One message in flight per connection: a whole echo, and the next message. */
            if (got[fd] >= echo) {
                got[fd] -= echo;
                done++;
                if (send(fd, frame, flen, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)flen)
                    die("send");
            }
        }
        t = now_s();
    }
    double elapsed = t - start;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    printf("messages %llu\nseconds %.3f\nmsg/s %.0f\ncpu_us_per_msg %.3f\n", done, elapsed,
           done / elapsed, done ? cpu * 1e6 / done : 0.0);
    return 0;
}
